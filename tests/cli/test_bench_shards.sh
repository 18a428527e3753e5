#!/usr/bin/env bash
# Issue 34: `runlab bench SPEC --shard K/N` and `bench merge SHARDS --out DIR`. The shards of
# N = 3 and of N = 2 each merge into a benchmark equal to the single-machine run of the same
# spec (every run's status and non-timing properties, so the same seeds); each shard ran
# exactly the cells rl_bench_cell_shard deals it; a shard cut short is "stopped" in
# `bench status`, refused by merge with how to resume it, and resumed by running it again;
# mixed specs, missing, doubled and other-version shards are refused naming them.
source "$(dirname "$0")/lib.sh"

cat >"$TMP/spec.yaml" <<'YAML'
experiment: shard test
problem: maze2d
seed: 7
max_time: 0.3
max_mem: 512
runs: 5
planners:
  - {name: RRT, planner: rrt}
  - {name: PRM, planner: prm}
  - {name: RRTConnect, planner: rrtconnect}
YAML

run bench "$TMP/spec.yaml" --out-dir "$TMP/single"
check "the single-machine benchmark exits 0" rc_is 0
single=$(ls -d "$TMP"/single/*/)

run bench "$TMP/spec.yaml" --shard 0/3
check "--shard 0/3 is a usage error" rc_is 2
run bench "$TMP/spec.yaml" --shard 4/3
check "--shard 4/3 is a usage error" rc_is 2
run bench "$TMP/spec.yaml" --shard 1/x
check "--shard 1/x is a usage error" rc_is 2

for n in 3 2; do
    for k in $(seq 1 "$n"); do
        run bench "$TMP/spec.yaml" --shard "$k/$n" --out-dir "$TMP/s$n"
        check "shard $k/$n exits 0" rc_is 0
        check "shard $k/$n's directory is <experiment>_shard-$k-of-$n" \
            test "$(tail -n1 <<<"$out")" = "$TMP/s$n/shard_test_shard-$k-of-$n"
    done
    run bench status "$TMP/s$n"
    check "status: all $n shards done (exit 0)" rc_is 0
    check "status says $n of $n shards done" out_has "$n of $n shards done, 0 running, 0 stopped, 0 missing"
    run bench merge "$TMP/s$n"/shard_test_shard-* --out "$TMP/merged$n"
    check "merge of the $n shards exits 0" rc_is 0
    check "merge prints the merged directory last" test "$(tail -n1 <<<"$out")" = "$TMP/merged$n"
    check "merge writes nothing to stderr (no progress bar: nothing runs)" err_empty
    problems=$(python3 - "$single" "$TMP/merged$n" "$TMP/s$n" "$n" <<'PY'
import glob, json, sys
single, merged, shards, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
TIMING = ("time", "memory", "cpu time", "wall time", "memory with startup", "simplification time")
def runs(d):
    """Every run's status and properties but its timings and memory (the seed decides them)."""
    j = json.load(open(d + "/results.json"))
    out = []
    for p in j["planners"]:
        for i, r in enumerate(p["runs"]):
            r = dict(r)
            r["properties"] = {k: v for k, v in r.get("properties", {}).items() if k not in TIMING}
            out.append((p["name"], i, r))
    return out
problems = []
a, b = runs(single), runs(merged)
if len(a) != 15 or a != b or not all(r[2]["properties"].get("graph states") for r in a):
    diff = next(("%s run %d" % (x[0], x[1]) for x, y in zip(a, b) if x != y), "")
    problems.append("merged runs differ from the single run's (%d vs %d runs; first: %s)"
                    % (len(b), len(a), diff))
m = json.load(open(merged + "/manifest.json"))
if len(m.get("shards", [])) != n or sorted(s["index"] for s in m["shards"]) != list(range(1, n + 1)):
    problems.append("manifest shards: %r" % m.get("shards"))
if any(not s["host"] or not s["cpu_model"] or not s["version"] for s in m.get("shards", [])):
    problems.append("a shard without host, cpu_model or version")
if sorted(m.get("run_hosts", {})) != ["PRM", "RRT", "RRTConnect"] or \
        any(len(v) != 5 for v in m["run_hosts"].values()):
    problems.append("run_hosts: %r" % m.get("run_hosts"))
# each shard ran exactly its cells: (run * planners + planner) % n == k - 1, none twice
seen = set()
for k in range(1, n + 1):
    for line in open("%s/shard_test_shard-%d-of-%d/journal.tsv" % (shards, k, n)):
        f = line.split("\t")
        if f[0] != "run":
            continue
        cell = (int(f[1]), int(f[2]))
        if (cell[1] * 3 + cell[0]) % n != k - 1:
            problems.append("shard %d ran cell %r" % (k, cell))
        if cell in seen:
            problems.append("cell %r ran twice" % (cell,))
        seen.add(cell)
if len(seen) != 15:
    problems.append("%d cells ran, not 15" % len(seen))
# each shard's own outputs hold its runs only, none empty
for k in range(1, n + 1):
    d = "%s/shard_test_shard-%d-of-%d" % (shards, k, n)
    mine = sum(1 for p in range(3) for r in range(5) if (r * 3 + p) % n == k - 1)
    sj = json.load(open(d + "/results.json"))
    got = [r for p in sj["planners"] for r in p["runs"]]
    if len(got) != mine or any(not r.get("properties", {}).get("graph states") for r in got):
        problems.append("shard %d's results.json: %d runs (want %d), or an empty one" % (k, len(got), mine))
    if json.load(open(d + "/manifest.json"))["shard"]["cells"] != mine:
        problems.append("shard %d's manifest: cells != %d" % (k, mine))
print("; ".join(problems))
PY
)
    check "N=$n: merged equals the single run; shards in the manifest; each shard ran its cells ($problems)" test -z "$problems"
done
check "the merged OMPL log reads back into a database" \
    "$RUNLAB" bench import "$TMP"/merged3/*.log --db "$TMP/check.db"
check "... with 15 runs" test "$(sqlite3 "$TMP/check.db" 'SELECT count(*) FROM runs')" -eq 15

# A shard cut short (its journal keeps 2 runs, as after a kill): stopped, refused, resumed.
cp -r "$TMP/s3" "$TMP/cut"
python3 - "$TMP/cut/shard_test_shard-2-of-3" <<'PY'
import glob, os, sys
d = sys.argv[1]
out, runs = [], 0
for l in open(d + "/journal.tsv"):
    if l.startswith("run\t"):
        if runs == 2:
            break
        runs += 1
    out.append(l)
open(d + "/journal.tsv", "w").writelines(out)
for f in ["manifest.json", "report.html", "results.db"] + glob.glob(d + "/*.log"):
    os.remove(f if f.startswith("/") else os.path.join(d, f))
PY
run bench status "$TMP/cut"
check "status of a cut shard exits 1" rc_is 1
check "... and shows it stopped with its 2 runs" grep -qE '^2/3 +stopped +2 ' <<<"$out"
run bench merge "$TMP"/cut/shard_test_shard-* --out "$TMP/m-cut"
check "merge refuses an unfinished shard" rc_is 1
check "... naming it, its runs, and how to resume" \
    err_has "shard 2/3 ($TMP/cut/shard_test_shard-2-of-3) is incomplete: 2 run(s) done and no manifest.json; finish it with runlab bench --resume"
run bench "$TMP/spec.yaml" --shard 2/3 --out-dir "$TMP/cut"
check "running the shard again resumes it (exit 0)" rc_is 0
check "... keeping the 2 runs and adding the rest (5 in its journal)" \
    test "$(grep -c '^run[[:space:]]' "$TMP/cut/shard_test_shard-2-of-3/journal.tsv")" -eq 5
run bench "$TMP/spec.yaml" --shard 2/3 --out-dir "$TMP/cut"
check "a finished shard run again does nothing" out_has "finished already"
run bench merge "$TMP"/cut/shard_test_shard-* --out "$TMP/m-cut"
check "merge after the resume exits 0" rc_is 0

# What merge refuses.
run bench merge "$TMP"/s3/shard_test_shard-1-of-3 "$TMP"/s3/shard_test_shard-2-of-3 --out "$TMP/m1"
check "missing shards: exit 1" rc_is 1
check "... named" err_has "1 of 3 shards missing: 3/3"
check "... and nothing is made" test ! -e "$TMP/m1"
run bench merge "$TMP"/s3/shard_test_shard-* "$TMP"/s3/shard_test_shard-2-of-3 --out "$TMP/m2"
check "a shard given twice is refused" err_has "shard 2/3 given twice"
run bench merge "$TMP"/s3/shard_test_shard-1-of-3 "$TMP"/s2/shard_test_shard-2-of-2 --out "$TMP/m3"
check "shards of different N are refused" err_has "is shard 2/2 but"
sed 's/^seed: 7/seed: 8/' "$TMP/spec.yaml" >"$TMP/other.yaml"
run bench "$TMP/other.yaml" --shard 1/3 --out-dir "$TMP/other"
run bench merge "$TMP"/other/shard_test_shard-1-of-3 "$TMP"/s3/shard_test_shard-2-of-3 \
    "$TMP"/s3/shard_test_shard-3-of-3 --out "$TMP/m4"
check "shards of another spec are refused, naming the key that differs" err_has "(they differ in: seed)"
run bench "$TMP/other.yaml" --shard 1/3 --out-dir "$TMP/s3"
check "a shard directory of another spec is never resumed by this one" rc_is 1
check "... it says so" err_has "holds a shard of another spec"
run bench merge "$TMP"/s3/shard_test_shard-* --out "$TMP/merged3"
check "merging into a directory that holds a benchmark is refused" err_has "already holds a benchmark"
cp -r "$TMP/s3" "$TMP/ver"
python3 - "$TMP/ver/shard_test_shard-3-of-3/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["provenance"]["version"] = "9.9.9"; json.dump(m, open(sys.argv[1], "w"))
PY
run bench merge "$TMP"/ver/shard_test_shard-* --out "$TMP/m5"
check "shards of another runlab version are refused" err_has "the shards ran different runlab versions"
run bench merge "$TMP"/ver/shard_test_shard-* --out "$TMP/m5" --force
check "... unless --force" rc_is 0

# An adaptive spec cannot be sharded.
printf 'experiment: a\nproblem: maze2d\nruns: auto\nplanners:\n  - {name: RRT, planner: rrt}\n' >"$TMP/auto.yaml"
run bench "$TMP/auto.yaml" --shard 1/2 --out-dir "$TMP/auto"
check "an adaptive spec with --shard fails" rc_is 1
check "... saying why" err_has "cannot be split into shards"

# --slurm --dry-run: the scripts, nothing submitted.
run bench "$TMP/spec.yaml" --slurm --dry-run --shards 4 --partition short --time 10 \
    --cpus-per-task 2 --mem 1G --array-limit 2 --out-dir "$TMP/slurm"
check "--slurm --dry-run exits 0" rc_is 0
sdir=$(tail -n1 <<<"$out")
check "--slurm --dry-run prints the benchmark directory last" test -d "$sdir/slurm"
script=$(cat "$sdir/slurm/array.sbatch" 2>/dev/null)
for line in '#SBATCH --array=1-4%2' '#SBATCH --cpus-per-task=2' '#SBATCH --mem=1G' \
    '#SBATCH --partition=short' '#SBATCH --time=10' "--shard \"\${SLURM_ARRAY_TASK_ID}/4\""; do
    check "array.sbatch has: $line" grep -qF -- "$line" <<<"$script"
done
check "merge.sbatch merges the 4 shards into the benchmark directory" \
    grep -qF "bench merge '$sdir/shards'/*_shard-*-of-4 --out '$sdir'" "$sdir/slurm/merge.sbatch"
check "bash reads both scripts" bash -n "$sdir/slurm/array.sbatch"
run bench "$TMP/spec.yaml" --slurm --partition 'a b'
check "a Slurm value with a space is a usage error" rc_is 2

finish
