#!/usr/bin/env python3
# Independent check of the numbers in a bench report.html: every cell of the status,
# first-failure, medians and rank-sum tables recomputed from results.json with the
# definitions in docs/bench.md ("The report", "Statistics"), written here without
# runlab's code. Usage: bench_report_check.py DIR  (exit 0, or 1 listing each wrong cell)
import html.parser
import json
import math
import os
import statistics
import sys

d = sys.argv[1]
res = json.load(open(os.path.join(d, "results.json")))
page = open(os.path.join(d, "report.html"), encoding="utf-8").read()


class Tables(html.parser.HTMLParser):
    """Tables by caption: rows of cells, each (text, data-v or None)."""

    def __init__(self):
        super().__init__()
        self.tables, self.cur, self.row, self.cell, self.cap = {}, None, None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.cur = []
        elif tag == "caption":
            self.cap = ""
        elif tag == "tr" and self.cur is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ["", a.get("data-v")]

    def handle_endtag(self, tag):
        if tag == "caption":
            self.capname = self.cap
            self.cap = None
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append((self.cell[0].strip(), self.cell[1]))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.cur.append(self.row)
            self.row = None
        elif tag == "table" and self.cur is not None:
            self.tables[getattr(self, "capname", "") or "kv"] = self.cur
            self.capname = ""
            self.cur = None

    def handle_data(self, data):
        if self.cap is not None:
            self.cap += data
        elif self.cell is not None:
            self.cell[0] += data


p = Tables()
p.feed(page)
T = p.tables
bad = []


def expect(what, ok, got=None):
    if not ok:
        bad.append("%s (got %r)" % (what, got))


def close(a, b):
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def table(prefix):
    for cap, rows in T.items():
        if cap.startswith(prefix):
            return {r[0][0]: r for r in rows[1:]}, rows[0]
    bad.append("no table '%s'" % prefix)
    return {}, []


planners = res["planners"]
names = [pl["name"] for pl in planners]


def prop(run, name):
    v = run.get("properties", {}).get(name)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def ci(xs):
    """Distribution-free 95% interval of the median: [x(k), x(n+1-k)], largest k whose
    coverage 1 - 2 P(B <= k-1) >= 95%, B ~ Binomial(n, 1/2); None below 6 samples."""
    xs = sorted(xs)
    n = len(xs)
    best = None
    for k in range(1, n // 2 + 1):
        tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
        if 1 - 2 * tail >= 0.95:
            best = k
    return None if best is None else (xs[best - 1], xs[n - best])


def g3(x):
    return "%.3g" % x


# ---- Runs by status -------------------------------------------------------------------------
rows, head = table("Runs by status")
statuses = [h[0] for h in head[3:]]
for pl in planners:
    r = rows.get(pl["name"])
    if not r:
        bad.append("status table: no row for " + pl["name"])
        continue
    runs = pl["runs"]
    n_exact = sum(1 for x in runs if x["status"] == "Exact solution")
    expect(pl["name"] + ": runs", r[1][1] == str(len(runs)), r[1])
    expect(pl["name"] + ": solved %", r[2][0] == "%d%%" % round(100 * n_exact / len(runs)), r[2])
    for i, st in enumerate(statuses):
        want = sum(1 for x in runs if x["status"] == st)
        expect("%s: %s count" % (pl["name"], st), r[3 + i][0] == str(want), r[3 + i])
seen = {x["status"] for pl in planners for x in pl["runs"]}
expect("status columns = the statuses that occur", set(statuses) == seen, (statuses, seen))

# ---- First failure ------------------------------------------------------------------------
rows, _ = table("First failure")
for pl in planners:
    runs = pl["runs"]
    failed = [i for i, x in enumerate(runs) if x["status"] not in ("Exact solution", "Approximate solution")]
    r = rows.get(pl["name"])
    expect(pl["name"] + ": in the first-failure table iff a run failed", bool(r) == bool(failed), r)
    if r and failed:
        solved = sum(1 for x in runs if x["status"] == "Exact solution")
        expect(pl["name"] + ": failed runs", r[1][0] == "%d of %d" % (len(failed), len(runs)), r[1])
        expect(pl["name"] + ": solved none", r[2][0] == ("yes" if solved == 0 else "no"), r[2])
        expect(pl["name"] + ": first failed run (1-based)", r[3][0] == str(failed[0] + 1), r[3])
        expect(pl["name"] + ": its status", r[4][0] == runs[failed[0]]["status"], r[4])
        expect(pl["name"] + ": its reason", r[5][0] == (runs[failed[0]].get("reason") or ""), r[5])

# ---- Medians with 95% confidence intervals ------------------------------------------------
rows, _ = table("Medians with 95% confidence intervals")


def check_ci(what, cell, xs):
    c = ci(xs)
    if c is None:
        expect(what + " CI n/a below 6", cell[0] == "n/a (n = %d < 6)" % len(xs), cell)
    else:
        lo, _, hi = cell[0].partition("\u2013")
        lo, hi = lo.strip("\u00a0 \u2060"), hi.strip("\u00a0 \u2060")
        expect(what + " CI", (lo, hi) == (g3(c[0]), g3(c[1])), (cell[0], g3(c[0]), g3(c[1])))


medians = {}
for pl in planners:
    r = rows.get(pl["name"])
    if not r:
        bad.append("medians table: no row for " + pl["name"])
        continue
    times = [t for t in (prop(x, "time") for x in pl["runs"]) if t is not None]
    mem = [m for m in (prop(x, "memory") for x in pl["runs"]) if m is not None]
    exact = [x for x in pl["runs"] if x["status"] == "Exact solution"]
    lengths = [v for v in (prop(x, "solution length") for x in exact) if v is not None]
    expect(pl["name"] + ": n", r[1][1] == str(len(times)), r[1])
    medians[pl["name"]] = (statistics.median(times), times, len(exact))
    expect(pl["name"] + ": median time", r[2][0] == g3(statistics.median(times)), (r[2], statistics.median(times)))
    check_ci(pl["name"] + ": time", r[3], times)
    expect(pl["name"] + ": median memory", r[4][0] == g3(statistics.median(mem)), (r[4], statistics.median(mem)))
    check_ci(pl["name"] + ": memory", r[5], mem)
    expect(pl["name"] + ": n solved", r[6][1] == str(len(exact)), r[6])
    if lengths:
        expect(pl["name"] + ": median length", r[7][0] == g3(statistics.median(lengths)), (r[7], statistics.median(lengths)))
        check_ci(pl["name"] + ": length", r[8], lengths)
    else:
        expect(pl["name"] + ": no length", r[7][0] == "\u2014" and r[8][0] == "\u2014", (r[7], r[8]))
    for x in pl["runs"]:
        t, w = prop(x, "time"), prop(x, "wall time")
        expect(pl["name"] + ": 0 <= time <= wall time in every run", t is None or (0 <= t and (w is None or t <= w)), (t, w))

# ---- Rank-sum test against the best -------------------------------------------------------
solvers = [n for n in names if medians.get(n) and medians[n][2] > 0]
best = min(solvers, key=lambda n: medians[n][0]) if solvers else None
rows, _ = table("Time of each planner against " + str(best))
for name in names:
    r = rows.get(name)
    if not r:
        bad.append("rank-sum table: no row for " + name)
        continue
    if name == best:
        expect(name + ": the reference", r[-1][0] == "best (reference)", r[-1])
        continue
    x, y = medians[name][1], medians[best][1]
    n1, n2 = len(x), len(y)
    U = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)
    N = n1 + n2
    ranks = sorted(x + y)
    ties = [ranks.count(v) for v in set(ranks)]
    var = n1 * n2 / 12 * ((N + 1) - sum(t ** 3 - t for t in ties) / (N * (N - 1)))
    mu = n1 * n2 / 2
    z = 0.0 if var == 0 else (U - mu - math.copysign(0.5, U - mu) if U != mu else 0.0) / math.sqrt(var)
    pval = math.erfc(abs(z) / math.sqrt(2))
    eff = 2 * U / (n1 * n2) - 1
    expect(name + ": U", close(float(r[3][1]), U), (r[3], U))
    expect(name + ": z", abs(float(r[4][1]) - round(z, 2)) < 0.0051, (r[4], z))
    expect(name + ": p", abs(float(r[5][1]) - pval) <= 0.01 * pval + 1e-4, (r[5], pval))
    expect(name + ": effect r", abs(float(r[6][1]) - eff) < 0.0051, (r[6], eff))
    verdict = ("slower" if eff > 0 else "faster") if pval < 0.05 else "no significant difference"
    expect(name + ": verdict", r[7][0] == verdict, (r[7], verdict))
expect("the summary names the best planner", best is None or ("Best planner: " + best) in page.replace("&lt;", "<").replace("&gt;", ">"), best)

for b in bad:
    print("  report:", b)
sys.exit(1 if bad else 0)
