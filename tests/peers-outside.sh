#!/usr/bin/env bash
# The peers member (crates/peers) stays out of the root's commands: the dependency tree that
# `cargo build`, `cargo test` and `cargo clippy` at the root resolve (the default members,
# every kind of dependency) names no peer crate. Fails with the crates it found.
set -euo pipefail
cd "$(dirname "$0")/.."
peers='^(jitterlab-peers|backon|backoff|exponential-backoff|retry-policies|tokio-retry) '
found=$(cargo tree --locked --offline -e normal,dev,build --prefix none --no-dedupe 2>/dev/null \
  | grep -E "$peers" | sort -u || true)
if [ -n "$found" ]; then
  echo "error: the root's commands would build peer crates:" >&2
  echo "$found" >&2
  exit 1
fi
echo "peers-outside: the root's dependency tree names no peer crate"
