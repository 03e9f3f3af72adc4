#!/usr/bin/env bash
# The engine must stay a light dependency (issues 16 and 25): a fresh crate that depends on
# jitterlab-retry (crates/jitterlab-retry, default features) gets at most MAX_CRATES crates in
# its normal dependency tree (jitterlab-retry included, the fresh crate itself not), none of
# them a proc-macro, and builds and runs.
#
# The limit is documented in docs/architecture.md ("Layout"); raise it only with a reason
# there. The fresh crate reuses our Cargo.lock, so it resolves offline to the versions the
# repository pins. It prints the crates, their count and the cold build time (its own target
# folder, nothing shared).
set -euo pipefail
MAX_CRATES=8

repo="$(cd "$(dirname "$0")/.." && pwd)"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
mkdir -p "$probe/src"
cat >"$probe/Cargo.toml" <<TOML
[package]
name = "engine-size-probe"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
jitterlab-retry = { path = "$repo/crates/jitterlab-retry" }

[workspace]
TOML
# A real use of the engine: the prelude, a builder with entropy seeding, a virtual clock.
cat >"$probe/src/main.rs" <<'RUST'
use std::time::Duration;

use jitterlab_retry::prelude::*;

fn main() {
    let retrier = Retrier::builder()
        .base(Duration::from_millis(10))
        .build()
        .expect("the defaults are valid");
    let clock = VirtualClock::new();
    let answer = retrier.retry(
        &clock,
        &CancelToken::new(),
        |ctx| if ctx.attempt < 3 { Err(Outcome::Status(503)) } else { Ok("ok") },
        |event| println!("{event}"),
    );
    assert_eq!(answer.ok(), Some("ok"));
}
RUST
cp "$repo/Cargo.lock" "$probe/Cargo.lock"

cd "$probe"
export CARGO_TARGET_DIR="$probe/target"
crates="$(cargo tree --offline -e normal --prefix none | sed 's/ (\*)$//' | sort -u \
  | grep -v '^engine-size-probe ')"
count="$(printf '%s\n' "$crates" | wc -l)"
echo "engine-size: the engine pulls $count crates (limit $MAX_CRATES):"
printf '%s\n' "$crates" | sed 's/^/  /'
began=$(date +%s%N)
cargo build --offline --quiet
took_ms=$((($(date +%s%N) - began) / 1000000))
echo "engine-size: cold debug build of the fresh crate: $((took_ms / 1000)).$(printf %03d $((took_ms % 1000))) s" \
  "on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg))"
"$CARGO_TARGET_DIR/debug/engine-size-probe" | tail -1
# No proc-macro in the engine's default build: its compile time is what users pay first.
macros="$(cargo metadata --offline --format-version 1 | python3 -c '
import json, sys
meta = json.load(sys.stdin)
normal = set()
resolve = {n["id"]: n for n in meta["resolve"]["nodes"]}
todo = [meta["resolve"]["root"]]
while todo:
    node = resolve[todo.pop()]
    for dep in node["deps"]:
        if any(k["kind"] in (None, "normal") for k in dep["dep_kinds"]) and dep["pkg"] not in normal:
            normal.add(dep["pkg"])
            todo.append(dep["pkg"])
for p in meta["packages"]:
    if p["id"] in normal and any("proc-macro" in t["kind"] for t in p["targets"]):
        print(p["name"])
')"
if [ -n "$macros" ]; then
  echo "engine-size: FAILED: proc-macro crates in the engine's build: $macros" >&2
  exit 1
fi
if [ "$count" -gt "$MAX_CRATES" ]; then
  echo "engine-size: FAILED: $count crates is above the limit of $MAX_CRATES" >&2
  exit 1
fi
echo "engine-size: OK"
