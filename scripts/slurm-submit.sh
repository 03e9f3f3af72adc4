#!/usr/bin/env bash
# Submits a sharded sweep to Slurm: an array of N shard tasks, then a merge job that runs when
# every task succeeded and draws the charts.
#
#   scripts/slurm-submit.sh 8 sims/brooker-2015-sweep.toml results/brooker
#
# When a task failed, its merge job never starts (squeue: DependencyNeverSatisfied; scancel
# it). Once the array's other tasks are done, submit the failed shards again with the same N,
# scenario and folder plus their indices (a Slurm array list: 3, or 2,5): they continue with
# --resume, and a new merge job waits for them.
#
#   scripts/slurm-submit.sh 8 sims/brooker-2015-sweep.toml results/brooker 3
#
# Run it from the folder that should hold the jobs' logs. JITTERLAB names the binary when it
# is not `jitterlab` on the PATH; sbatch's own variables (SBATCH_PARTITION, SBATCH_ACCOUNT,
# SBATCH_TIMELIMIT, ...) choose where the jobs run.
set -euo pipefail
n=${1:?usage: slurm-submit.sh N SCENARIO RESULT_FOLDER [INDICES]}
scenario=${2:?scenario file}
out=${3:?result folder}
[[ $n =~ ^[1-9][0-9]*$ ]] || {
  echo "slurm-submit.sh: N must be a number of shards (1 or more), not '$n'" >&2
  exit 2
}
indices=${4:-0-$((n - 1))}
here=$(cd "$(dirname "$0")" && pwd)
array=$(sbatch --parsable --array="$indices" "$here/slurm-sweep.sh" "$scenario" "$out" "$n")
array=${array%%;*} # "id;cluster" on a site with several clusters
merge=("${JITTERLAB:-jitterlab}" merge)
for ((i = 0; i < n; i++)); do merge+=("$out/shard-$i"); done
merge+=(--out "$out/merged")
mergejob=$(sbatch --parsable --dependency="afterok:$array" --job-name=jitterlab-merge \
  --output=jitterlab-merge-%j.log --wrap "$(printf '%q ' "${merge[@]}")")
mergejob=${mergejob%%;*}
echo "submitted shards $indices of $n as job array $array and the merge as job $mergejob"
echo "the merged result will be in $out/merged"
