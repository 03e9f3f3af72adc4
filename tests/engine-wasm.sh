#!/usr/bin/env bash
# The engine on wasm32-unknown-unknown, where std has no clock, no process id and no
# randomness (issue 25): a retrier built with entropy seeding retries on a VirtualClock
# without a panic. A fresh cdylib exports one function, built for the target (panic = abort,
# so a panic is a trap) and run by Node's WebAssembly. Needs rustup and node.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
# The target comes from rustup's dist server; where it cannot be had (an offline machine),
# say so and skip, as .ci/run does for Chromium: nothing else in CI needs it.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown \
  && ! rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
  echo "engine-wasm: SKIPPED: the wasm32-unknown-unknown target cannot be installed here"
  exit 0
fi
if ! command -v node >/dev/null 2>&1; then
  echo "engine-wasm: SKIPPED: no node to run the probe"
  exit 0
fi
mkdir -p "$probe/src"
cat >"$probe/Cargo.toml" <<TOML
[package]
name = "engine-wasm-probe"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
jitterlab-retry = { path = "$repo/crates/jitterlab-retry" }

[profile.release]
panic = "abort"

[workspace]
TOML
cat >"$probe/src/lib.rs" <<'RUST'
use jitterlab_retry::prelude::*;

/// A retrier seeded from "entropy" retries a 503 twice on a virtual clock: the virtual time
/// it took, in microseconds (above zero: it slept).
#[unsafe(no_mangle)]
pub extern "C" fn probe() -> u32 {
    let retrier = Retrier::builder().build().expect("the defaults are valid");
    let clock = VirtualClock::new();
    let answer = retrier.retry(
        &clock,
        &CancelToken::new(),
        |ctx| if ctx.attempt < 3 { Err(Outcome::Status(503)) } else { Ok(()) },
        |_| {},
    );
    assert!(answer.is_ok());
    clock.now().as_micros() as u32
}
RUST
cp "$repo/Cargo.lock" "$probe/Cargo.lock"
(cd "$probe" && CARGO_TARGET_DIR="$repo/target/engine-wasm" \
  cargo build --offline --quiet --release --target wasm32-unknown-unknown)
node -e '
const bytes = require("fs").readFileSync(process.argv[1]);
WebAssembly.instantiate(bytes, {}).then(({ instance }) => {
  const slept = instance.exports.probe();
  if (!(slept > 0)) { console.error("engine-wasm: FAILED: slept " + slept); process.exit(1); }
  console.log("engine-wasm: OK (a retrier with entropy seeding ran on wasm32-unknown-unknown)");
}).catch((e) => { console.error("engine-wasm: FAILED: " + e.message); process.exit(1); });
' "$repo/target/engine-wasm/wasm32-unknown-unknown/release/engine_wasm_probe.wasm"
