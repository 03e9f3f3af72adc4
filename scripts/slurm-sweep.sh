#!/usr/bin/env bash
# One shard of a jitterlab sweep per Slurm array task. Submit the array and a merge job that
# waits for it with scripts/slurm-submit.sh, or by hand:
#
#   jobid=$(sbatch --parsable --array=0-7 scripts/slurm-sweep.sh sims/brooker-2015-sweep.toml results/brooker)
#   sbatch --dependency=afterok:$jobid --wrap "jitterlab merge results/brooker/shard-* --out results/brooker/merged"
#
# Every task must see the same scenario file and jitterlab version; the result folder must be
# on a shared file system. A failed task can simply be resubmitted: add --resume to continue.
#SBATCH --job-name=jitterlab-sweep
#SBATCH --cpus-per-task=2
#SBATCH --time=01:00:00
#SBATCH --output=jitterlab-%A_%a.log
set -euo pipefail
scenario=${1:?usage: slurm-sweep.sh SCENARIO RESULT_FOLDER}
out=${2:?result folder}
index=${SLURM_ARRAY_TASK_ID:?run as a Slurm array job (sbatch --array=0-N)}
# Tasks are numbered from 0, so the count is the highest index + 1.
count=${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX + 1))}
mkdir -p "$out"
exec "${JITTERLAB:-jitterlab}" run "$scenario" --shard "$index/$count" --out "$out/shard-$index" \
  --threads "${SLURM_CPUS_PER_TASK:-0}" --quiet --no-plots
