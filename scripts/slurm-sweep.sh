#!/usr/bin/env bash
# One shard of a jitterlab sweep per Slurm array task. Submit the array and a merge job that
# waits for it with scripts/slurm-submit.sh, or by hand:
#
#   jobid=$(sbatch --parsable --array=0-7 scripts/slurm-sweep.sh sims/brooker-2015-sweep.toml results/brooker 8)
#   sbatch --dependency=afterok:$jobid --wrap "jitterlab merge results/brooker/shard-* --out results/brooker/merged"
#
# Every task must see the same scenario file and jitterlab version; the result folder must be
# on a shared file system. Each task runs with --resume, so a failed (or requeued) task that is
# submitted again continues where it stopped: `sbatch --array=3 scripts/slurm-sweep.sh ... 8`.
# N, the number of shards, defaults to the array's size: give it whenever the array holds
# only some of the shards (a resubmission), or the shards are numbered wrong.
#SBATCH --job-name=jitterlab-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --output=jitterlab-%A_%a.log
set -euo pipefail
scenario=${1:?usage: slurm-sweep.sh SCENARIO RESULT_FOLDER [N]}
out=${2:?result folder}
index=${SLURM_ARRAY_TASK_ID:?run as a Slurm array job (sbatch --array=0-N)}
# Tasks are numbered from 0, so the array's size is its highest index + 1.
count=${3:-${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX + 1))}}
mkdir -p "$out"
exec "${JITTERLAB:-jitterlab}" run "$scenario" --shard "$index/$count" --out "$out/shard-$index" \
  --resume --threads "${SLURM_CPUS_PER_TASK:-0}" --quiet --no-plots
