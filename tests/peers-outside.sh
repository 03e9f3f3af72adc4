#!/usr/bin/env bash
# The peers member (crates/peers) stays out of the root's commands: the dependency tree that
# `cargo build`, `cargo test` and `cargo clippy` at the root resolve (the default members,
# every kind of dependency) names no peer crate. Fails with the crates it found, and fails
# when `cargo tree` itself fails (an empty tree proves nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
peers='^(jitterlab-peers|backon|backoff|exponential-backoff|retry-policies|tokio-retry) '
# Under set -e a failing cargo tree ends the script here, with its own error on stderr.
tree=$(cargo tree --locked --offline -e normal,dev,build --prefix none --no-dedupe)
if ! grep -q '^jitterlab ' <<<"$tree"; then
  echo "error: cargo tree listed no jitterlab package: is this the repository root?" >&2
  exit 1
fi
# grep exits 1 when nothing matches: the one failure tolerated.
found=$(grep -E "$peers" <<<"$tree" | sort -u) || [ $? -eq 1 ]
if [ -n "$found" ]; then
  echo "error: the root's commands would build peer crates:" >&2
  echo "$found" >&2
  exit 1
fi
echo "peers-outside: the root's dependency tree names no peer crate"
