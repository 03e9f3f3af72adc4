#!/usr/bin/env bash
# Cold build of the retry engine against backon, the popular retry crate, on this machine.
#
# Three fresh crates, each with a main that really retries a closure: one on this repository's
# jitterlab-retry (default features), one on jitterlab-retry with `tokio` (backon's defaults
# bring tokio's timer too), one on backon (default features, the newest 1.x). Each has its own
# target folder; the registry is fetched once (online), then every build is offline, debug,
# one after the other. Prints each crate's dependency count, its cold build's wall time and CPU
# time (user + system, all of cargo's processes: what the build costs whatever the load), and
# the ratio of the engine's CPU time with `tokio` to backon's (issue 45 asks for at most 2).
#
# Incremental compilation is off for all three: a user gets the engine from crates.io, and
# cargo compiles registry crates without it; here the engine is a path dependency, which
# cargo would otherwise compile incrementally (writing a cache the user never pays for).
#
#   scripts/cold-build-vs-backon.sh            # debug builds
#   scripts/cold-build-vs-backon.sh --release  # release builds
set -euo pipefail
profile=("$@")
dir=debug
[ "${1:-}" = "--release" ] && dir=release
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# make NAME DEPENDENCY-LINE MAIN.RS
make() {
  mkdir -p "$work/$1/src"
  cat >"$work/$1/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$2

[workspace]
TOML
  printf '%s\n' "$3" >"$work/$1/src/main.rs"
}

# The same main for both builds of the engine: a blocking retry of a closure.
engine_main='
use std::time::Duration;
use jitterlab_retry::prelude::*;

fn main() {
    let retrier = Retrier::builder().base(Duration::from_millis(1)).build().expect("valid");
    let mut calls = 0;
    let answer = retrier.call(|_| {
        calls += 1;
        if calls < 3 { Err(Outcome::Status(503)) } else { Ok("ok") }
    });
    assert_eq!(answer.ok(), Some("ok"));
}'
make engine "jitterlab-retry = { path = \"$repo/crates/jitterlab-retry\" }" "$engine_main"
make engine-tokio \
  "jitterlab-retry = { path = \"$repo/crates/jitterlab-retry\", features = [\"tokio\"] }" \
  "$engine_main"

make backon 'backon = "1"' '
use std::time::Duration;
use backon::{BlockingRetryable, ExponentialBuilder};

fn main() {
    let mut calls = 0;
    let answer = (|| {
        calls += 1;
        if calls < 3 { Err("503") } else { Ok("ok") }
    })
    .retry(ExponentialBuilder::default().with_min_delay(Duration::from_millis(1)))
    .call();
    assert_eq!(answer.ok(), Some("ok"));
}'

for crate in engine engine-tokio backon; do
  (cd "$work/$crate" && cargo fetch --quiet)
done

export CARGO_INCREMENTAL=0
echo "cold $dir builds on $(nproc) cores (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
declare -A cpu
for crate in engine engine-tokio backon; do
  cd "$work/$crate"
  count="$(cargo tree --offline -e normal --prefix none | sed 's/ (\*)$//' | sort -u | grep -vc "^$crate ")"
  began=$(date +%s%N)
  { TIMEFORMAT='%U %S'; time CARGO_TARGET_DIR="$work/$crate/target" \
      cargo build --offline --quiet "${profile[@]}" 2>"$work/$crate.log"; } 2>"$work/$crate.cpu" \
    || { cat "$work/$crate.log" >&2; exit 1; }
  took_ms=$((($(date +%s%N) - began) / 1000000))
  cpu[$crate]="$(awk '{ printf "%.2f", $1 + $2 }' "$work/$crate.cpu")"
  "$work/$crate/target/$dir/$crate" >/dev/null
  printf '  %-13s %2d crates  %d.%03d s wall  %5s CPU-s\n' "$crate" "$count" \
    $((took_ms / 1000)) $((took_ms % 1000)) "${cpu[$crate]}"
done
awk -v e="${cpu[engine-tokio]}" -v b="${cpu[backon]}" \
  'BEGIN { printf "engine with tokio / backon, CPU time: %.2f\n", e / b }'
