#!/usr/bin/env bash
# The Kubernetes recipe without a cluster: reads scripts/k8s-indexed-job.yaml, runs its
# container's command once per JOB_COMPLETION_INDEX from 0 to completions - 1 (volumes mapped
# to a temporary folder, `jitterlab` on the PATH as in the image), kills one index half-way (run
# in slices, so the kill cannot come too late on a fast machine) and
# runs it again as the Job's per-index retry does, runs scripts/k8s-merge-job.yaml's command,
# and checks the merge is byte-identical to an unsharded run. A manifest whose command no
# longer works (a renamed flag, a wrong shard count, a missing folder) fails it.
#
#   bash tests/scaleout/k8s.sh        # JITTERLAB=path to test another binary
set -euo pipefail
test_name=k8s
# shellcheck source=tests/scaleout/lib.sh
source "$(dirname "$0")/lib.sh"

bin=$(jitterlab_bin)
tmp=$(mktemp -d /tmp/jitterlab-k8s.XXXXXX)
pgid=
cleanup() {
  local rc=$?
  set +e
  [[ -n $pgid ]] && kill -KILL -- "-$pgid" 2>/dev/null
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT

# PyYAML: Python's own when it has it, else a pinned one in a venv of this run.
py=python3
if ! python3 -c 'import yaml' 2>/dev/null; then
  python3 -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install --quiet PyYAML==6.0.3
  py=$tmp/venv/bin/python
fi
# plan MANIFEST: sets completions, command (and scenario_file for the shards' manifest).
completions=0 command=() scenario_file=
plan() {
  local said
  said=$("$py" "$repo/tests/scaleout/k8s_command.py" "$repo/scripts/$1" "$tmp/volumes") ||
    fail "cannot read scripts/$1"
  eval "$said"
}

# The pod: `jitterlab` on the PATH as in the image, an empty working folder and environment.
mkdir -p "$tmp/image-bin" "$tmp/pod" "$tmp/volumes/results"
ln -s "$bin" "$tmp/image-bin/jitterlab"
pod() {
  (cd "$tmp/pod" && exec env -i PATH="$tmp/image-bin:/usr/bin:/bin" HOME="$tmp/pod" "$@" "${command[@]}")
}

reference "$tmp/reference"

plan k8s-indexed-job.yaml
[[ -n $scenario_file ]] || fail "k8s-indexed-job.yaml mounts no scenario ConfigMap"
mkdir -p "$(dirname "$scenario_file")"
cp "$scenario" "$scenario_file"
say "k8s-indexed-job.yaml: $completions completions of: ${command[*]}"
((completions >= 2)) || fail "completions is $completions: nothing to shard"

# One index first, alone, so that its journal is the only one: killed half-way (as a
# preempted pod is), then run again as the Job's retry of that index does. An index is a
# fraction of a second of work on a fast machine, less than a poll, so the pod runs in slices
# of 20 ms (stopped between them) until its journal holds a finished unit: the kill then
# lands half-way however fast the machine is.
t0=$SECONDS
killed=$((completions / 2))
# The result folder whose journal exists (a run in progress has it in .jitterlab-partial/).
journal() { find "$tmp/volumes" -name units.jsonl -printf '%h\n' | head -n 1 | sed 's|/\.jitterlab-partial$||'; }
# Stops waiting when the pod has ended too (the wait below then says how).
has_records() { [[ -n $(journal) ]] && (($(journal_records "$(journal)") > 0)) || ! kill -0 "$pgid" 2>/dev/null; }
run_slice() {
  kill -CONT -- "-$pgid" 2>/dev/null
  sleep 0.02
  kill -STOP -- "-$pgid" 2>/dev/null
  has_records
}
set -m # the pod in its own process group, to stop, resume and kill all of it
pod JOB_COMPLETION_INDEX="$killed" &
pgid=$!
set +m
kill -STOP -- "-$pgid" 2>/dev/null || true
wait_until 600 "finished unit in index $killed's journal" run_slice
kill -TERM -- "-$pgid" 2>/dev/null || true
kill -CONT -- "-$pgid" 2>/dev/null || true # a stopped process takes its TERM when resumed
rc=0
wait "$pgid" || rc=$?
((rc == 128 + 15)) || fail "index $killed ended (exit code $rc) before it could be killed"
pgid=
shard=$(journal)
before=$(journal_records "$shard")
say "killed index $killed after $before finished units; retrying it"
pod JOB_COMPLETION_INDEX="$killed" || fail "the retry of index $killed failed"
check_resumed "$shard" "$before"
for ((i = 0; i < completions; i++)); do
  ((i == killed)) && continue
  pod JOB_COMPLETION_INDEX="$i" || fail "index $i failed"
done
say "$completions indices done in $((SECONDS - t0))s"

plan k8s-merge-job.yaml
say "k8s-merge-job.yaml: ${command[*]}"
t0=$SECONDS
pod >/dev/null || fail "the merge failed"
merged=$(grep -l '"shard": "merged"' "$tmp"/volumes/*/*/meta.json | head -n 1) ||
  fail "the merge wrote no result folder"
say "merged in $((SECONDS - t0))s into $(dirname "${merged#"$tmp/volumes/"}")"
same_results "$tmp/reference" "$(dirname "$merged")"
say "PASSED in $((SECONDS - started))s"
