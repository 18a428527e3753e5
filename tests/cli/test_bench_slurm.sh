#!/usr/bin/env bash
# Issue 34: `runlab bench SPEC --slurm` against a real single-node Slurm that this script
# starts on this machine (Debian 12's slurm-wlm and munge: its own munge key and socket, a
# minimal slurm.conf for localhost with proctrack/linuxproc and task/none, ports of its own,
# everything under $TMP, stopped at exit). The array job runs the shards one at a time; one
# shard is cancelled with scancel mid-way, so the dependent merge job fails naming it and
# `bench status` shows it stopped; the shard is resubmitted (it resumes), the merge job is
# submitted again, and the benchmark directory ends merged with every run. Then `runlab
# evaluate --slurm` evaluates 6 simulated runs in an array of 3 tasks, and its summary job
# writes evaluations.csv with every run. Skipped, with
# the reason, where Slurm is not installed, this is not root, or the daemons do not start.
source "$(dirname "$0")/lib.sh"

skip() { echo "SKIP: $*"; exit 77; }
for b in munged slurmctld slurmd sbatch squeue scancel sinfo; do
    command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] ||
        skip "$b not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" -eq 0 ] || skip "the single-node Slurm of this test runs as root"
PATH="$PATH:/usr/sbin"

S="$TMP/slurm"
mkdir -p "$S/state" "$S/spool"
chmod 700 "$S"
head -c 1024 /dev/urandom >"$S/munge.key"
chmod 400 "$S/munge.key"
stop_slurm() {
    scancel -u root 2>/dev/null # only this test's own Slurm (SLURM_CONF) knows its jobs
    for f in slurmd slurmctld munged; do
        [ -f "$S/$f.pid" ] && kill "$(cat "$S/$f.pid")" 2>/dev/null
    done
    sleep 0.5
    for f in slurmd slurmctld munged; do
        [ -f "$S/$f.pid" ] && kill -9 "$(cat "$S/$f.pid")" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap stop_slurm EXIT
munged --socket="$S/munge.sock" --key-file="$S/munge.key" --pid-file="$S/munged.pid" \
    --log-file="$S/munged.log" --seed-file="$S/munge.seed" --force ||
    skip "munged does not start ($(tail -n1 "$S/munged.log" 2>/dev/null))"
# Two free TCP ports on loopback for slurmctld and slurmd.
read -r ctl_port d_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
cat >"$S/slurm.conf" <<EOF
ClusterName=runlabtest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerParameters=sched_interval=1
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$S/slurm.conf"
slurmctld -i || skip "slurmctld does not start: $(tail -n2 "$S/slurmctld.log" 2>/dev/null)"
slurmd -N localhost || skip "slurmd does not start: $(tail -n2 "$S/slurmd.log" 2>/dev/null)"
# wait_until SECONDS COMMAND...: polls (never a fixed sleep: a loaded machine is slow)
wait_until() {
    local limit=$1 i
    shift
    for i in $(seq 1 $((limit * 10))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}
wait_until 60 bash -c 'sinfo -h -o %t | grep -qx idle' ||
    skip "the Slurm node did not come up: $(tail -n2 "$S/slurmd.log" "$S/slurmctld.log" 2>/dev/null)"

cat >"$TMP/spec.yaml" <<'YAML'
experiment: slurm test
problem: maze2d
seed: 3
max_time: 1
runs: 3
planners:
  - {name: RRTstar, planner: rrtstar}
  - {name: PRM, planner: prm}
YAML

run bench "$TMP/spec.yaml" --slurm --shards 3 --array-limit 1 --time 10 --out-dir "$TMP/bench"
check "bench --slurm submits (exit 0)" rc_is 0
check "it prints both job ids" grep -qE '^submitted: array job [0-9]+ \(3 tasks\), merge job [0-9]+' <<<"$out"
dir=$(tail -n1 <<<"$out")
array=$(sed -n 's/^submitted: array job \([0-9]*\).*/\1/p' <<<"$out")
check "slurm/jobs.json records the jobs" grep -q "\"array_job\": *\"$array\"" "$dir/slurm/jobs.json"

# Cancel the first shard that is under way (a run journaled, not finished).
victim=""
find_victim() {
    local d
    for d in "$dir"/shards/*_shard-*-of-3; do
        [ -f "$d/journal.tsv" ] && [ ! -f "$d/manifest.json" ] &&
            grep -q '^run' "$d/journal.tsv" && { victim=$d; return 0; }
    done
    return 1
}
for _ in $(seq 1 1800); do find_victim && break; sleep 0.1; done
check "a shard got under way" test -n "$victim"
k=$(sed -n 's/.*_shard-\([0-9]*\)-of-3$/\1/p' <<<"$victim")
scancel "${array}_$k"
# The array ends, then the merge job (afterany) runs and fails on the cancelled shard.
check "the merge job ran after the array" wait_until 300 grep -q "incomplete" "$dir/slurm/merge.out"
check "... and named the cancelled shard and how to resume it" \
    grep -qF "shard $k/3 ($victim) is incomplete" "$dir/slurm/merge.out"
wait_until 60 bash -c "[ -z \"\$(squeue -h)\" ]"
run bench status "$dir"
check "bench status: not all done (exit 1)" rc_is 1
check "... the cancelled shard stopped" grep -qE "^$k/3 +stopped " <<<"$out"
check "... the others done" test "$(grep -cE '^[0-9]/3 +done ' <<<"$out")" -eq 2

# Resubmit the shard (it resumes its directory), then the merge after it.
id=$(sbatch --parsable --array="$k" "$dir/slurm/array.sbatch")
check "the shard is resubmitted" test -n "$id"
mid=$(sbatch --parsable --dependency="afterok:${id%%;*}" "$dir/slurm/merge.sbatch")
check "the merge job is resubmitted" test -n "$mid"
check "the benchmark directory ends merged" wait_until 300 test -f "$dir/report.html"
run bench status "$dir"
check "bench status: every shard done (exit 0), merged" out_has "3 of 3 shards done, 0 running, 0 stopped, 0 missing; merged"
check "the merged database has all 6 runs" \
    test "$(sqlite3 "$dir/results.db" 'SELECT count(*) FROM runs')" -eq 6
check "the resumed shard kept its first runs (6 runs, none twice, in the journals)" \
    test "$(cat "$dir"/shards/*/journal.tsv | grep -c '^run[[:space:]]')" -eq 6
check "the manifest lists the 3 shards" \
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(len(m["shards"]) != 3)' "$dir/manifest.json"

# Evaluations at scale: 6 simulated runs, 2 per task, then the summary job.
printf 'speed: 1.2\n' >"$TMP/sim.yaml"
: >"$TMP/runs.txt"
for seed in 1 2 3 4 5 6; do
    run sim "$TMP/sim.yaml" --offline "$TMP/home" --count 2 --duration 5 --seed "$seed"
    tail -n1 <<<"$out" >>"$TMP/runs.txt"
done
check "six simulated runs" test "$(wc -l <"$TMP/runs.txt")" -eq 6
run evaluate --slurm --runs-from "$TMP/runs.txt" --figures pdf --dry-run --out-dir "$TMP/evals"
check "evaluate --slurm --figures pdf: exit 2 naming the choices" bash -c "[ $rc = 2 ] && grep -q \"'pdf': expected png,svg or svg\" '$TMP/err'"
run evaluate --slurm --runs-from "$TMP/runs.txt" --batch 2 --time 10 --out-dir "$TMP/evals" \
    --figures svg
check "evaluate --slurm submits (exit 0)" rc_is 0
check "... 6 runs in 3 tasks" out_has "6 runs in 3 task(s) of up to 2"
edir=$(tail -n1 <<<"$out")
check "the summary job writes evaluations.csv" wait_until 300 test -f "$edir/evaluations.csv"
problems=$(python3 - "$edir" "$TMP/runs.txt" <<'PY'
import csv, os, sys
d, runs = sys.argv[1], [l.strip() for l in open(sys.argv[2]) if l.strip()]
problems = []
rows = list(csv.DictReader(open(d + "/evaluations.csv")))
seen = {r["run"] for r in rows}  # run ids; a run's directory name ends with its id
if len(seen) != 6 or not all(any(os.path.basename(r).endswith(i) for i in seen) for r in runs):
    problems.append("runs in evaluations.csv: %r" % sorted(seen))
if rows and "metric" not in rows[0]:
    problems.append("no metric column: %r" % list(rows[0]))
for r in runs:  # each run got its evaluation from a task, not only from the summary job
    if not os.path.isdir(r + "/evaluations") or not os.listdir(r + "/evaluations"):
        problems.append("no evaluation in " + r)
        continue
    for e in os.listdir(r + "/evaluations"):  # --figures svg reached the tasks
        figs = os.listdir(r + "/evaluations/" + e + "/figures")
        if any(f.endswith(".png") for f in figs) or not any(f.endswith(".svg") for f in figs):
            problems.append("figures of %s/%s: %r" % (r, e, sorted(figs)))
codes = [l.split("\t") for f in sorted(os.listdir(d + "/status")) for l in open(d + "/status/" + f)]
if len(codes) != 6 or any(c[1].strip() not in ("0", "1", "3") for c in codes):
    problems.append("status/: %r" % codes)
print("; ".join(problems))
PY
)
check "evaluations.csv has every run, each evaluated by its task ($problems)" test -z "$problems"

finish
