#!/usr/bin/env bash
# A reqwest user's crate, as the engine's README tells them to write it (issue 25): its
# dependency block (the engine with `reqwest`, their own reqwest and tokio) and its async
# example, compiled in a fresh crate. The engine's adapters take the user's own
# `reqwest::RequestBuilder`, so the engine's reqwest must be the version the README names:
# on another one the example fails with E0308 (two `reqwest` crates in one build).
#
# The block is taken from crates/jitterlab-retry/README.md as written, with two changes that
# keep the build small and offline: the engine is this repository's, and reqwest's default
# features (TLS) are off. The fresh crate reuses our Cargo.lock, so it resolves offline.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
readme="$repo/crates/jitterlab-retry/README.md"
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
mkdir -p "$probe/src"

# The README's `toml` block under "## Async", and the `rust` block after it.
block() {
  awk -v lang="$1" '
    /^## Async/ { on = 1 }
    on && $0 == "```" lang { inside = 1; next }
    inside && /^```/ { exit }
    inside { print }
  ' "$readme"
}
deps="$(block toml | grep -v '^\[dependencies\]')"
code="$(block rust)"
[ -n "$deps" ] && [ -n "$code" ] || { echo "reqwest-user: no toml or rust block under ## Async" >&2; exit 1; }
grep -q '^reqwest = ' <<<"$deps" || { echo "reqwest-user: the README shows no reqwest dependency" >&2; exit 1; }
deps="$(sed -E \
  -e "s|^jitterlab-retry = \\{ version = \"[^\"]*\"|jitterlab-retry = { path = \"$repo/crates/jitterlab-retry\"|" \
  -e 's|^reqwest = "([^"]*)".*|reqwest = { version = "\1", default-features = false }|' \
  <<<"$deps")"

cat >"$probe/Cargo.toml" <<TOML
[package]
name = "reqwest-user-probe"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
$deps

[workspace]
TOML
{
  echo '#![allow(dead_code)]'
  printf '%s\n' "$code"
  echo 'fn main() {}'
} >"$probe/src/main.rs"
cp "$repo/Cargo.lock" "$probe/Cargo.lock"

echo "reqwest-user: the README's dependencies:"
sed 's/^/  /' <<<"$deps"
cd "$probe"
CARGO_TARGET_DIR="$repo/target/reqwest-user" cargo build --offline --quiet
echo "reqwest-user: OK (the README's async example builds against the user's reqwest)"
