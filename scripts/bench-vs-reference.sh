#!/usr/bin/env bash
# jitterlab's speed as ratios to a bare binary-heap engine on the same model, measured in one
# run on this machine (absolute times on shared machines vary by 2x from day to day; ratios
# taken in the same minute do not). See docs/performance.md.
#
# Usage: scripts/bench-vs-reference.sh [--runs N] [--no-criterion]
#        JITTERLAB_BIN=path/to/jitterlab scripts/bench-vs-reference.sh ...   (another build)
#
# The reference engine is `rdes` (about 140 lines: BinaryHeap<(time, seq, event)> and one
# Pcg64Mcg; its README states the model). It is taken from $RDES_DIR, else from
# ../shared/reference/rdes, else from scripts/rdes (a copy kept in this repository).
# Each pair of commands runs N times interleaved (default 3); the fastest of each is compared.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
criterion=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --no-criterion) criterion=0; shift ;;
    *) echo "usage: $0 [--runs N] [--no-criterion]" >&2; exit 2 ;;
  esac
done

rdes_dir="${RDES_DIR:-}"
if [ -z "$rdes_dir" ]; then
  for d in ../shared/reference/rdes scripts/rdes; do
    if [ -f "$d/Cargo.toml" ]; then rdes_dir="$d"; break; fi
  done
fi
[ -f "$rdes_dir/Cargo.toml" ] || { echo "no reference engine: set RDES_DIR" >&2; exit 2; }

cargo build --release --locked --quiet
cargo build --release --quiet --manifest-path "$rdes_dir/Cargo.toml" --target-dir target/rdes
# JITTERLAB_BIN: time another build (an older commit's, to measure a change before and after).
J=${JITTERLAB_BIN:-target/release/jitterlab}
R=target/rdes/release/rdes

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The reference model as a jitterlab scenario (rdes/README.md).
cat > "$work/ref-model.toml" <<'EOF'
name = "ref-model"
seed = 1
horizon = "3000s"
replications = 1
[workload]
kind = "closed"
clients = 1000
think = "2s"
[server]
kind = "queue"
workers = 1
queue = 0
service = { dist = "exponential", mean = "1ms" }
overload_status = 503
[client]
timeout = "off"
max_attempts = "unlimited"
[backoff]
strategies = ["full"]
base = "1ms"
multiplier = 2.0
cap = "1s"
EOF

# Wall seconds of one command (stdout and stderr discarded); its peak RSS in MiB in $work/rss.
# The files of the previous run are flushed first, so that their writeback does not take a
# core from this one.
wall() {
  local start end
  sync
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$work/rss.kb" "$@" >/dev/null 2>&1
  end=$(date +%s%N)
  awk -v kb="$(cat "$work/rss.kb")" 'BEGIN { printf "%.0f\n", kb / 1024 }' > "$work/rss"
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.4f\n", (e - s) / 1e9 }'
}

min() { sort -g | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "jitterlab against the bare engine (rdes), fastest of $runs interleaved runs each"
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-58s %10s %10s %8s  %s\n' measure jitterlab rdes ratio target

# 1. One run of the reference model, the whole process with its files written.
: > "$work/j1"; : > "$work/r1"
for _ in $(seq "$runs"); do
  wall "$J" run "$work/ref-model.toml" --out "$work/ref" --no-plots --quiet --force >> "$work/j1"
  wall "$R" bar 1000 3000 >> "$work/r1"
done
j=$(min < "$work/j1"); r=$(min < "$work/r1")
printf '%-58s %9ss %9ss %7sx  %s\n' "run ref-model --no-plots / rdes bar 1000 3000" "$j" "$r" "$(ratio "$j" "$r")" "<= 1.0x"

# 2. The 2015 sweep (19 client counts x 5 strategies x 100 replications).
: > "$work/j2"
for _ in $(seq "$runs"); do
  wall "$J" run sims/brooker-2015-sweep.toml --out "$work/sweep" --no-plots --quiet --force >> "$work/j2"
done
j=$(min < "$work/j2")
printf '%-58s %9ss %9ss %7sx  %s\n' "run brooker-2015-sweep --no-plots / rdes bar 1000 3000" "$j" "$r" "$(ratio "$j" "$r")" "<= 3.6x"

# 3. A million clients for 4 s: time and peak memory.
: > "$work/j3"; : > "$work/r3"; : > "$work/m3"
for _ in $(seq "$runs"); do
  wall "$J" run "$work/ref-model.toml" --out "$work/million" --no-plots --quiet --force \
    --set workload.clients=1000000 --set horizon=4s >> "$work/j3"
  cat "$work/rss" >> "$work/m3"
  wall "$R" bar 1000000 4 >> "$work/r3"
done
j=$(min < "$work/j3"); r=$(min < "$work/r3"); m=$(sort -g "$work/m3" | tail -1)
printf '%-58s %9ss %9ss %7sx  %s\n' "1000000 clients, 4 s / rdes bar 1000000 4" "$j" "$r" "$(ratio "$j" "$r")" "<= 0.25x"
printf '%-58s %7sMiB %10s %8s  %s\n' "  its peak memory (RSS)" "$m" "" "" "< 150 MB"

# 4. Thread scaling: choose-base-and-cap on 2 threads against 1, beside rdes's own sweep
# speed-up (8 runs of its model, sequential against rayon) measured in the same minute. Both
# sides take the same statistic: rdes prints three trials (sequential, then parallel) and the
# median is kept; ours is the median of three trials of a 1-thread run then a 2-thread run.
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
if [ "$(nproc)" -ge 2 ]; then
  for i in $(seq "$runs"); do
    : > "$work/trials"
    for _ in 1 2 3; do
      one=$(wall "$J" run sims/choose-base-and-cap.toml --out "$work/grid1" --no-plots --quiet --force --threads 1)
      two=$(wall "$J" run sims/choose-base-and-cap.toml --out "$work/grid2" --no-plots --quiet --force --threads 2)
      ratio "$one" "$two" >> "$work/trials"; echo >> "$work/trials"
    done
    bare=$("$R" sweep | sed -n 's/.*"speedup":\([0-9.]*\).*/\1/p' | median)
    ours=$(median < "$work/trials")
    printf '%-58s %9sx %9sx %7s   %s\n' "choose-base-and-cap 2 threads vs 1 (run $i)" "$ours" "$bare" "$(ratio "$ours" "$bare")" ">= 0.97 of rdes's"
  done
fi

# 5. One backoff step against one bare Pcg64Mcg uniform draw (criterion, benches/backoff.rs).
if [ "$criterion" = 1 ]; then
  cargo bench --locked --quiet --bench backoff -- --warm-up-time 1 --measurement-time 3 \
    'backoff/(full|decorrelated|bare_uniform_draw)$' 2>/dev/null > "$work/criterion" || true
  ns() {
    awk -v name="backoff/$1" '
      $1 == name && $2 == "time:" { v = $5; u = $6 }
      $1 == name && $2 != "time:" { getline; v = $4; u = $5 }
      END { if (u == "ps") v /= 1000; if (u == "µs") v *= 1000; print v }' "$work/criterion"
  }
  bare=$(ns bare_uniform_draw)
  for kind in full decorrelated; do
    t=$(ns "$kind")
    if [ -n "$t" ] && [ -n "$bare" ]; then
      printf '%-58s %8sns %8sns %7sx  %s\n' "one $kind step / one bare uniform draw" "$t" "$bare" "$(ratio "$t" "$bare")" "<= 1.1x"
    fi
  done
fi
