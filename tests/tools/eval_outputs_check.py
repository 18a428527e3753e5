#!/usr/bin/env python3
# The three views of one evaluation agree cell by cell: summary.json's checks, checks.csv's
# rows and report.html's checks tables (the CSV in the same order; the report's "Checks not
# passed" table first, then the passed checks folded per metric, each check in exactly one
# row; values exact in the CSV, to 6 significant digits in the report; intervals as
# "t0..t1;..."), and summary.json's counts and verdict follow from its checks
# (docs/eval.md). Usage: eval_outputs_check.py EVALUATION_DIR
import csv
import html.parser
import json
import os
import sys

ev = sys.argv[1]
s = json.load(open(os.path.join(ev, "summary.json")))
rows = list(csv.DictReader(open(os.path.join(ev, "checks.csv"), newline="", encoding="utf-8")))


class Checks(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.row, self.cell, self.cap, self.in_checks, self.capname = [], None, None, None, False, ""

    def handle_starttag(self, tag, attrs):
        if tag == "caption":
            self.cap = ""
        elif tag == "tr" and self.in_checks:
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "caption":
            self.in_checks = self.cap.strip().startswith("Checks")
            self.cap = None
        elif tag == "td" and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.row:
                self.rows.append(self.row)
            self.row = None
        elif tag == "table":
            self.in_checks = False

    def handle_data(self, data):
        if self.cap is not None:
            self.cap += data
        elif self.cell is not None:
            self.cell += data


h = Checks()
h.feed(open(os.path.join(ev, "report.html"), encoding="utf-8").read())
bad = []


def expect(what, ok, got=None):
    if not ok:
        bad.append("%s (got %r)" % (what, got))


def num(text):
    return None if text in ("", "null", "\u2014") else float(text)


def intervals(text):
    return [[float(a) for a in iv.split("..")] for iv in text.split(";")] if text else []


checks = s["checks"]
expect("as many CSV rows as checks", len(rows) == len(checks), (len(rows), len(checks)))
expect("as many report rows as checks", len(h.rows) == len(checks), (len(h.rows), len(checks)))
# The report lists what did not pass first, then the rest per metric, each group in
# summary.json's order.
NOT_PASSED = ("FAIL", "INSUFFICIENT", "UNAVAILABLE")
metrics = list(dict.fromkeys(c["metric"] for c in checks))
order = [c for c in checks if c["status"] in NOT_PASSED] + [
    c for m in metrics for c in checks if c["metric"] == m and c["status"] not in NOT_PASSED]
in_report = [order.index(c) for c in checks]  # report row of each check
report_rows = [h.rows[k] if k < len(h.rows) else [""] * 9 for k in in_report]
for i, (c, r, t) in enumerate(zip(checks, rows, report_rows)):
    where = "check %d (%s / %s / %s)" % (i, c["metric"], c["check"], c["vehicles"])
    expect(where + ": csv metric, check", (r["metric"], r["check"]) == (c["metric"], c["check"]), r)
    expect(where + ": report metric, check", t[0:2] == [c["metric"], c["check"]], t[0:2])
    veh = [int(v) for v in r["vehicles"].replace(";", " ").split()] if r["vehicles"] else []
    expect(where + ": csv vehicles", veh == c["vehicles"], r["vehicles"])
    expect(where + ": report vehicles", [int(v) for v in t[2].replace(",", " ").replace(";", " ").split()] == c["vehicles"], t[2])
    expect(where + ": status", r["status"] == c["status"] == t[3], (r["status"], t[3], c["status"]))
    for k, col in (("value", 4), ("threshold", 5)):
        v = c[k]
        cv = num(r[k])
        expect(where + ": csv %s exact" % k, (v is None and cv is None) or (v is not None and cv == v), (r[k], v))
        tv = num(t[col])
        expect(where + ": report %s to 6 digits" % k,
               (v is None and tv is None) or (v is not None and tv is not None and abs(tv - v) <= 5e-6 * abs(v) + 1e-300),
               (t[col], v))
    expect(where + ": unit", r["unit"] == c["unit"] == t[6], (r["unit"], t[6], c["unit"]))
    for src, text in (("csv", r["intervals"]), ("report", t[7])):
        iv = intervals(text)
        expect(where + ": %s intervals" % src, len(iv) == len(c["intervals"]) and all(
            abs(a - b) <= 1e-6 * max(1, abs(b)) for x, y in zip(iv, c["intervals"]) for a, b in zip(x, y)), (text, c["intervals"]))
    # The report follows the reason with the coverage where it is under 100 %.
    cov = c.get("coverage")
    shown = c["reason"] if cov is None or cov >= 0.9995 else "%s; coverage %.1f %% (%.2f of %.2f s)" % (
        c["reason"], 100 * cov, c["judged_s"], c["window_s"])
    expect(where + ": reason", r["reason"] == c["reason"] and t[8] == shown, (r["reason"], t[8]))
    expect(where + ": csv coverage", (cov is None and r.get("coverage") == "") or
           (cov is not None and r.get("coverage") not in (None, "") and abs(float(r["coverage"]) - cov) < 1e-9),
           (r.get("coverage"), cov))
    expect(where + ": a status of the five", c["status"] in ("PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A"), c["status"])
    expect(where + ": intervals ordered inside the window", all(
        s["window"]["start"] - 1e-9 <= a <= b <= s["window"]["stop"] + 1e-9 for a, b in c["intervals"]), c["intervals"])
counts = {k: sum(1 for c in checks if c["status"] == k) for k in ("PASS", "FAIL", "INSUFFICIENT", "UNAVAILABLE", "N/A")}
expect("counts = the checks' statuses", s["counts"] == counts, (s["counts"], counts))
expect("passed iff every check is PASS or N/A", s["passed"] == all(c["status"] in ("PASS", "N/A") for c in checks), s["passed"])
rule = "FAIL" if counts["FAIL"] else "INCOMPLETE" if counts["INSUFFICIENT"] + counts["UNAVAILABLE"] else "PASS"
expect("result by the rule (FAIL, else INCOMPLETE, else PASS)", s.get("result") == rule, (s.get("result"), rule))
expect("passed iff the result is PASS", s["passed"] == (rule == "PASS"), s["passed"])
page = open(os.path.join(ev, "report.html"), encoding="utf-8").read()
expect("the report's result badge is summary.json's result",
       'Result <span class="badge %s">%s</span>' % (rule.lower(), rule) in page, rule)
for b in bad[:30]:
    print("  evaluation:", b)
sys.exit(1 if bad else 0)
