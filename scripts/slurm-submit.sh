#!/usr/bin/env bash
# Submits a sharded sweep to Slurm: an array of N shard tasks, then a merge job that runs when
# every task succeeded and draws the charts.
#
#   scripts/slurm-submit.sh 8 sims/brooker-2015-sweep.toml results/brooker
set -euo pipefail
n=${1:?usage: slurm-submit.sh N SCENARIO RESULT_FOLDER}
scenario=${2:?scenario file}
out=${3:?result folder}
here=$(cd "$(dirname "$0")" && pwd)
jobid=$(sbatch --parsable --array="0-$((n - 1))" "$here/slurm-sweep.sh" "$scenario" "$out")
shards=$(for ((i = 0; i < n; i++)); do printf '%s ' "$out/shard-$i"; done)
sbatch --dependency="afterok:$jobid" --job-name=jitterlab-merge \
  --wrap "${JITTERLAB:-jitterlab} merge $shards --out $out/merged"
echo "submitted shards as job $jobid; the merged result will be in $out/merged"
