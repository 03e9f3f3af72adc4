#!/usr/bin/env bash
# Runs a scenario as N shards in parallel on this machine, then merges them: the same steps a
# cluster job array takes, handy to try sharding before submitting anything.
#
#   scripts/shards-local.sh 4 sims/brooker-2015-sweep.toml out/brooker-sharded
#
# The merged folder's CSVs are byte-identical to `jitterlab run SCENARIO` without shards.
set -euo pipefail
n=${1:?usage: shards-local.sh N SCENARIO OUT [jitterlab binary]}
scenario=${2:?scenario file}
out=${3:?result folder}
bin=${4:-${JITTERLAB:-jitterlab}}

mkdir -p "$out"
pids=()
for ((i = 0; i < n; i++)); do
  "$bin" run "$scenario" --shard "$i/$n" --out "$out/shard-$i" --threads 1 --quiet --no-plots &
  pids+=("$!")
done
for pid in "${pids[@]}"; do wait "$pid"; done
shards=()
for ((i = 0; i < n; i++)); do shards+=("$out/shard-$i"); done
"$bin" merge "${shards[@]}" --out "$out/merged"
