#!/usr/bin/env bash
# The Slurm recipe on a real, one-node Slurm: installs Debian's slurm-wlm and munge when
# missing, starts munged, slurmctld and slurmd on private sockets, ports and folders, submits
# a 4-shard sweep and its merge with scripts/slurm-submit.sh, cancels one array task half-way
# (held at its start and run in slices, so the cancel cannot come too late on a fast machine),
# resubmits that index (it resumes), and checks the merge is byte-identical to an unsharded
# run. Every daemon it started is stopped by process id on exit, whatever happened. Skipped,
# with a notice, where Slurm cannot be brought up (not root, no apt-get).
#
#   bash tests/scaleout/slurm.sh        # JITTERLAB=path to test another binary
set -euo pipefail
test_name=slurm
# shellcheck source=tests/scaleout/lib.sh
source "$(dirname "$0")/lib.sh"

shards=4
killed=1 # the array task cancelled half-way and resubmitted

[[ $(id -u) == 0 ]] || skip "needs root to run slurmctld and slurmd"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
  ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || skip "Slurm is not installed and there is no apt-get to install it"
  say "installing slurm-wlm and munge from Debian"
  apt-get update -qq >/dev/null || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null ||
    fail "could not install slurm-wlm and munge"
  say "installed $(slurmctld -V)"
fi
bin=$(jitterlab_bin)

tmp=$(mktemp -d /tmp/jitterlab-slurm.XXXXXX)
chmod 755 "$tmp" # munged wants every folder above its socket to be searchable by all
mkdir -p "$tmp"/{munge,state,spool,log,jobs}
conf=$tmp/slurm.conf
# Every process of this cluster carries the marker: the daemons, their job steps, the jobs.
marker="JITTERLAB_SCALEOUT_TEST=$tmp"
slurm() { env "$marker" SLURM_CONF="$conf" "$@"; }
daemons=()

stop_cluster() {
  local rc=$? pid t
  set +e
  trap - EXIT
  if ((rc != 0)); then
    for f in "$tmp"/log/*.log "$tmp"/jobs/*.log; do
      [[ -f $f ]] && {
        echo "--- tail of $f"
        tail -n 15 "$f"
      }
    done >&2
  fi
  # Jobs first, so that no job step outlives its slurmd.
  local jobs=()
  ((${#daemons[@]} > 1)) && read -ra jobs < <(slurm squeue -h -o %A 2>/dev/null | tr '\n' ' ')
  if ((${#jobs[@]} > 0)); then
    slurm scancel --quiet "${jobs[@]}"
    for ((t = 0; t < 100; t++)); do
      [[ -z $(slurm squeue -h -o %A 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  for pid in "${daemons[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for ((t = 0; t < 100; t++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # Anything left of this cluster (a job step, a job's process), found by the marker.
  grep -lzx -- "$marker" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | while read -r pid; do
    [[ $pid != "$$" ]] && kill -KILL "$pid" 2>/dev/null && say "killed leftover process $pid"
  done
  rm -rf "$tmp"
  say "stopped munged, slurmctld and slurmd (pids ${daemons[*]:-none})"
  exit "$rc"
}
trap stop_cluster EXIT

# munge: its own key, socket and logs; Slurm finds the socket through AuthInfo.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
socket=$tmp/munge/munge.socket
env "$marker" munged --foreground --key-file="$tmp/munge/munge.key" --socket="$socket" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" \
  --seed-file="$tmp/munge/munged.seed" </dev/null >>"$tmp/log/munged.log" 2>&1 &
daemons+=("$!")
munge_works() { munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1; }
wait_until 20 "working munged" munge_works

# Two free TCP ports, so that this cluster never meets another one on the same host.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
host=$(hostname -s)
# The node as slurmd detects it (short host name, CPUs, cores, memory), so it never drains.
node=$(slurmd -C | head -n 1)
[[ $node == NodeName=* ]] || fail "slurmd -C printed no node line: $node"
cat >"$conf" <<CONF
ClusterName=jitterlab-test
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
# No cgroups: plain process tracking, no task binding, no accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600 # keep finished jobs in scontrol for the checks
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
t0=$SECONDS
# Started through env (not the slurm function, which would fork once more) so that $! is
# the daemon itself.
env "$marker" SLURM_CONF="$conf" slurmctld -D -f "$conf" </dev/null >>"$tmp/log/slurmctld.out" 2>&1 &
daemons+=("$!")
env "$marker" SLURM_CONF="$conf" slurmd -D -f "$conf" </dev/null >>"$tmp/log/slurmd.out" 2>&1 &
daemons+=("$!")
node_idle() { [[ $(slurm sinfo -h -n "$host" -o %T 2>/dev/null) == idle ]]; }
wait_until 60 "idle node $host in sinfo" node_idle
say "one-node Slurm up in $((SECONDS - t0))s: $host ($node), ports $ctld_port/$slurmd_port, pids ${daemons[*]}"

reference "$tmp/reference"

# job_state ID: Slurm's state of a job (or array task, ID_INDEX), e.g. PENDING, COMPLETED.
job_state() { slurm scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
job_done() { [[ $(job_state "$1") =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL)$ ]]; }
# submit [INDICES]: scripts/slurm-submit.sh from the jobs' folder, the jobs running
# $jobs_bin; sets $array and $merge.
jobs_bin=$bin
submit() {
  local said
  said=$(cd "$tmp/jobs" && slurm JITTERLAB="$jobs_bin" "$repo/scripts/slurm-submit.sh" \
    "$shards" "$scenario" "$tmp/results" "$@")
  printf '[%s]   %s\n' "$test_name" "${said//$'\n'/$'\n'"[$test_name]   "}"
  [[ $said =~ job\ array\ ([0-9]+)\ and\ the\ merge\ as\ job\ ([0-9]+) ]] ||
    fail "cannot read the job ids from slurm-submit.sh's output"
  array=${BASH_REMATCH[1]} merge=${BASH_REMATCH[2]}
}

# A shard is a fraction of a second of work on a fast machine (the node's 2 CPUs run one task
# at a time), less than it takes to see a finished unit and cancel the task. So the first
# submission's binary is a wrapper that, in task $killed, stops itself before it becomes
# jitterlab; the test then lets it run in slices of 20 ms until its journal holds a finished
# unit, and cancels it there, half-way however fast the machine is.
paused=$tmp/paused.pid
cat >"$tmp/jitterlab-paused" <<WRAPPER
#!/usr/bin/env bash
if [[ \${SLURM_ARRAY_TASK_ID:-} == $killed && \$1 == run ]]; then
  echo \$\$ >"$paused.new" && mv "$paused.new" "$paused"
  kill -STOP \$\$
fi
exec "$bin" "\$@"
WRAPPER
chmod +x "$tmp/jitterlab-paused"

t0=$SECONDS
jobs_bin=$tmp/jitterlab-paused
submit
jobs_bin=$bin
first_array=$array first_merge=$merge
journal="$tmp/results/shard-$killed"
# Each wait stops when the task has ended too (then it could not be cancelled half-way).
is_paused() { [[ -s $paused && $(ps -o stat= -p "$(<"$paused")") == T* ]] || job_done "${array}_$killed"; }
wait_until 600 "task ${array}_$killed stopped at its start" is_paused
pid=$(<"$paused")
run_slice() {
  kill -CONT "$pid" 2>/dev/null
  sleep 0.02
  kill -STOP "$pid" 2>/dev/null
  (($(journal_records "$journal") > 0)) || job_done "${array}_$killed"
}
wait_until 600 "finished unit in shard $killed's journal" run_slice
job_done "${array}_$killed" && fail "task ${array}_$killed ended ($(job_state "${array}_$killed")) before it could be cancelled"
slurm scancel "${array}_$killed"
kill -CONT "$pid" 2>/dev/null || true # a stopped process takes its TERM when resumed
say "cancelled array task ${array}_$killed after $(journal_records "$journal") finished units"
states=""
for ((i = 0; i < shards; i++)); do
  wait_until 600 "end of task ${array}_$i" job_done "${array}_$i"
  states+="${array}_$i=$(job_state "${array}_$i") "
done
say "array $array: $states"
[[ $(job_state "${array}_$killed") == CANCELLED ]] || fail "task ${array}_$killed was not cancelled"
never() { [[ $(slurm squeue -h -j "$merge" -o %T:%r) == PENDING:DependencyNeverSatisfied ]]; }
wait_until 60 "DependencyNeverSatisfied for merge job $merge" never
say "merge job $merge will never run (DependencyNeverSatisfied); cancelling it"
slurm scancel "$merge"
before=$(journal_records "$journal")

submit "$killed"
wait_until 600 "end of task ${array}_$killed" job_done "${array}_$killed"
[[ $(job_state "${array}_$killed") == COMPLETED ]] || fail "resubmitted task ${array}_$killed: $(job_state "${array}_$killed")"
wait_until 600 "end of merge job $merge" job_done "$merge"
[[ $(job_state "$merge") == COMPLETED ]] || fail "merge job $merge: $(job_state "$merge")"
say "jobs seen: array $first_array (tasks 0-$((shards - 1))), merge $first_merge (cancelled), array $array (task $killed resubmitted), merge $merge; all done in $((SECONDS - t0))s"
check_resumed "$journal" "$before"
same_results "$tmp/reference" "$tmp/results/merged"
say "PASSED in $((SECONDS - started))s"
