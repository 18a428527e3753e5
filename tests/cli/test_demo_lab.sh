#!/usr/bin/env bash
# `runlab demo`'s lab part as a user reads it (issue 27, item 18): --domain picks its DDS
# domain, --help says it stays on loopback, the bag's topic table is aligned, and it ends
# with the lab loop's payoff: `runlab list` of the runs and an evaluation of the new one.
source "$(dirname "$0")/lib.sh"
test_domain

run demo --help
check "help: --domain" out_has "--domain D"
check "help: DDS on loopback only" out_has "It uses DDS (Cyclone) on loopback only"

run demo --domain 233
check "a domain above 232 is a usage error" rc_is 2
run demo --domain x
check "a domain that is no number is a usage error" rc_is 2

run demo --out-dir "$TMP" --domain "$DOMAIN"
check "demo exits 0" rc_is 0
check "demo writes nothing to stderr" err_empty
check "the lab part runs in the domain given" out_has "DDS domain $DOMAIN: recorder ARMED"
problems=$(python3 - "$TMP/out" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
problems = []
lab = lines.index(next(l for l in lines if l.startswith("== Lab over DDS")))
head = next(i for i in range(lab, len(lines)) if lines[i].strip().startswith("TOPIC "))
rows = []
for l in lines[head + 1:]:
    if not l.startswith("    rt/"):
        break
    rows.append(l)
if len(rows) < 14:
    problems.append("%d topic rows" % len(rows))
# Aligned: every count ends where the header's MESSAGES ends, every schema starts where SCHEMA does.
end = lines[head].index("MESSAGES") + len("MESSAGES")
schema = lines[head].index("SCHEMA")
for r in rows:
    m = re.match(r"^    (\S+) +(\d+)  (\S+)$", r)
    if not m or m.end(2) != end or m.start(3) != schema:
        problems.append("misaligned: %r" % r)
for t in ["rt/vehicle/1/command_trajectory", "rt/lab/ready_status", "rt/lab/parameters"]:
    if not any(r.split()[0] == t for r in rows):
        problems.append("no %s row" % t)
# The payoff: the list of runs with the new one, then its evaluation.
try:
    li = next(i for i in range(head, len(lines)) if lines[i].strip().startswith("$ runlab list "))
    ev = next(i for i in range(li, len(lines)) if lines[i].strip().startswith("$ runlab evaluate "))
except StopIteration:
    problems.append("no '$ runlab list' then '$ runlab evaluate'")
    print("; ".join(problems)); sys.exit()
run_dir = lines[ev].split("$ runlab evaluate ", 1)[1]
if not lines[li + 1].startswith("RUN ") or "SCENARIO" not in lines[li + 1]:
    problems.append("list header: %r" % lines[li + 1])
# the RUN column holds the run id where the directory's name ends with it (20..Z_<id>)
names = (run_dir.rsplit("/", 1)[1], run_dir.rsplit("/", 1)[1].split("_", 1)[-1])
if not any(l.split()[:1] and l.split()[0] in names and "COMPLETE" in l and
           re.search(r"COMPLETE\s+4\s.*\bseed 1\b", l) for l in lines[li + 2:ev]):
    problems.append("the new run is not listed COMPLETE with its scenario")
if not any(re.match(r"^result: [A-Z]+.* \(\d+ checks", l) for l in lines[ev:]):
    problems.append("no evaluation result line")
if not any(l.startswith(run_dir + "/evaluations/") for l in lines[ev:]):
    problems.append("no evaluation directory printed")
print("; ".join(problems))
PY
)
check "the topic table is aligned; list and evaluation follow ($problems)" test -z "$problems"

finish
