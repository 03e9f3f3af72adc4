# Shared by the scale-out tests (slurm.sh, k8s.sh), which source it: the binary under test,
# the unsharded reference run, the comparison of result folders, bounded waits and timing.
# The script that sources it sets test_name first, and bin (from jitterlab_bin) before reference.
# shellcheck shell=bash disable=SC2154

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
scenario="$repo/sims/choose-base-and-cap.toml" # a 4 x 4 grid, 640 units: seconds of work
started=$SECONDS

say() { printf '[%s %3ds] %s\n' "$test_name" "$((SECONDS - started))" "$*"; }
fail() {
  say "FAILED: $*" >&2
  exit 1
}
# A test that cannot run here says so and exits 0 without claiming to pass.
skip() {
  say "SKIPPED: $*"
  exit 0
}

# The release binary of this checkout (built when missing or stale), or $JITTERLAB.
jitterlab_bin() {
  if [[ -n ${JITTERLAB:-} ]]; then
    echo "$JITTERLAB"
    return
  fi
  local t0=$SECONDS
  (cd "$repo" && cargo build --release --locked --quiet --bin jitterlab) >&2
  say "release binary built (or up to date) in $((SECONDS - t0))s" >&2
  echo "${CARGO_TARGET_DIR:-$repo/target}/release/jitterlab"
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, fails after SECONDS.
wait_until() {
  local limit=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@"; do
    ((SECONDS < deadline)) || fail "no $what within ${limit}s"
    sleep 0.1
  done
}

# Finished units in a shard folder's journal: complete lines after the header. A run in
# progress or cut off keeps its journal in the folder's staging folder until it is complete.
journal_records() {
  local lines=0 file=$1/units.jsonl
  [[ -f $1/.jitterlab-partial/units.jsonl ]] && file=$1/.jitterlab-partial/units.jsonl
  [[ -f $file ]] && lines=$(wc -l <"$file")
  echo $((lines > 0 ? lines - 1 : 0))
}

# A number from a result folder's meta.json.
meta_number() { sed -n "s/^ *\"$2\": \([0-9]*\),\{0,1\}$/\1/p" "$1/meta.json"; }

# check_resumed DIR BEFORE: the shard in DIR was cut off after BEFORE of its units and the
# run that finished it ran only the rest (so it resumed rather than started over).
check_resumed() {
  local dir=$1 before=$2 total count index size ran
  total=$(meta_number "$dir" units)
  IFS=/ read -r index count < <(sed -n 's/^ *"shard": "\([0-9]*\/[0-9]*\)",$/\1/p' "$dir/meta.json")
  size=$(((total - index + count - 1) / count)) # units index, index + count, ... below total
  ran=$(meta_number "$dir" units_run)
  ((before > 0 && before < size)) || fail "shard $index/$count was not cut off half-way ($before of $size units done)"
  ((ran == size - before)) || fail "shard $index/$count ran $ran units after resuming, expected $((size - before))"
  say "shard $index/$count resumed: $before of $size units kept, $ran run again"
}

# same_results REFERENCE MERGED: every CSV (the same set of files) and the resolved scenario
# are byte-identical; meta.json differs by nature (command, timings).
same_results() {
  local ref=$1 got=$2 names=() found=() f
  for f in "$ref"/*.csv; do names+=("${f##*/}"); done
  for f in "$got"/*.csv; do [[ -f $f ]] && found+=("${f##*/}"); done
  ((${#names[@]} > 0)) || fail "no CSV files in the reference $ref"
  [[ ${names[*]} == "${found[*]}" ]] || fail "$got holds ${found[*]:-no CSV files}, not ${names[*]}"
  for f in "${names[@]}" scenario.toml; do
    cmp -s "$ref/$f" "$got/$f" || fail "$got/$f differs from the unsharded run's"
  done
  [[ -s $got/report.html ]] || fail "the merge drew no report.html in $got"
  say "merged result byte-identical to the unsharded run: ${names[*]} scenario.toml"
}

# reference DIR: the unsharded run of the scenario, what every merge must reproduce.
reference() {
  local t0=$SECONDS
  "$bin" run "$scenario" --out "$1" --quiet --no-plots >/dev/null
  say "unsharded reference run: $(meta_number "$1" units) units in $((SECONDS - t0))s"
}
