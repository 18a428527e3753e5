# Every key of a recorder's manifest.json (docs/record.md), read and checked against what
# the test knows independently: the command line it gave, its own clock around the run,
# the pid it started, the host, git, and the bag as read by tests/tools/mcap_summary.py
# (an MCAP reader written from the specification, not from runlab's code).
. "$(dirname "$0")/lib.sh"
test_domain
HOME_DIR="$TMP/home"

t0=$(date +%s%N)
"$RUNLAB" record --synthetic --vehicles 3 --rate 40 --payload 200 --start-after 0.4 --duration 1.2 \
    --run-id values-1 --planner rrt_star --domain "$DOMAIN" --compression none --root "$HOME_DIR" \
    -q >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait $pid
rc=$?
t1=$(date +%s%N)
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
check "synthetic run exits 0" rc_is 0
dir=$(tail -n 1 "$TMP/out")
check "the last line is the run directory" test -f "$dir/manifest.json"
version=$("$RUNLAB" --version)
check "runlab --version answers" test -n "$version"
python3 "${RUNLAB_SOURCE:?}/tests/tools/mcap_summary.py" "$dir"/bag/*.mcap >"$TMP/bag.json"
check "the bag reads with the independent reader" test -s "$TMP/bag.json"
if git -C "$RUNLAB_SOURCE" rev-parse HEAD >/dev/null 2>&1; then src_git=1; else src_git=0; fi

check "every manifest key has its expected value" python3 - "$dir" "$TMP/bag.json" "$t0" "$t1" \
    "$pid" "$DOMAIN" "$(hostname)" "$version" "$RUNLAB_SOURCE" "$src_git" <<'PY'
import datetime, json, os, re, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["RUNLAB_SOURCE"], "tests", "tools"))
from value_checks import Expectations, iso_ns

d, bagf, t0, t1, pid, domain, host, version, src, src_git = sys.argv[1:]
t0, t1, pid, domain = int(t0), int(t1), int(pid), int(domain)
m = json.load(open(os.path.join(d, "manifest.json")))
bag = json.load(open(bagf))
expect = Expectations("manifest")
ns = iso_ns


want_keys = {"format", "format_version", "run_id", "directory", "host", "lab_domain", "state",
             "result", "vehicles", "planner", "map", "stamps", "bag", "totals", "topics",
             "unmatched", "recorder", "runlab"}
expect("exactly the documented keys", set(m) == want_keys, sorted(set(m) ^ want_keys))
expect("unmatched: nothing (runlab record records what it is given)", m["unmatched"] == [], m["unmatched"])
expect("format", m["format"] == "runlab.record.manifest", m["format"])
expect("format_version", m["format_version"] == 1, m["format_version"])
expect("run_id as given", m["run_id"] == "values-1", m["run_id"])
expect("directory is the run directory's name", m["directory"] == os.path.basename(d), m["directory"])
expect("directory is <UTC time>_<run id>", re.fullmatch(r"\d{8}T\d{6}Z_values-1", m["directory"]), m["directory"])
expect("host", m["host"] == host, m["host"])
expect("lab_domain as given", m["lab_domain"] == domain, m["lab_domain"])
expect("state", m["state"] == "COMPLETE", m["state"])
expect("result", isinstance(m["result"], dict) and m["result"].get("state") == "COMPLETE"
       and isinstance(m["result"].get("reason"), str), m["result"])
expect("vehicles 1..3", m["vehicles"] == [1, 2, 3], m["vehicles"])
expect("planner as given", m["planner"] == "rrt_star", m["planner"])
expect("no map given, map null", m["map"] is None, m["map"])

st = {k: ns(m["stamps"].get(k)) for k in ("prepare", "begin", "start", "stop", "finish")}
expect("five stamps, ISO 8601 UTC with ns", set(m["stamps"]) == set(st) and None not in st.values(), m["stamps"])
if None not in st.values():
    order = [st[k] for k in ("prepare", "begin", "start", "stop", "finish")]
    expect("stamps in order", order == sorted(order), m["stamps"])
    # The directory's name is prepare's second.
    expect("directory time = prepare's second",
           m["directory"][:16] == datetime.datetime.fromtimestamp(st["prepare"] // 10**9, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
           (m["directory"], m["stamps"]["prepare"]))
    # Inside the test's own clock (the clocks agree to the ms; the run was inside [t0, t1]).
    expect("stamps within the process's lifetime",
           t0 - 10**6 <= st["prepare"] and st["finish"] <= t1 + 10**6, (t0, m["stamps"], t1))
    expect("START at least --start-after (0.4 s) after begin", st["start"] - st["begin"] >= 400 * 10**6,
           st["start"] - st["begin"])
    expect("STOP at least --duration (1.2 s) after START", st["stop"] - st["start"] >= 1200 * 10**6,
           st["stop"] - st["start"])

b = m["bag"]
expect("bag keys", set(b) == {"file", "format", "profile", "compression", "keep_outside"}, sorted(b))
expect("bag file exists", os.path.isfile(os.path.join(d, b["file"])), b["file"])
expect("bag file is bag/<run id>.mcap", b["file"] == "bag/values-1.mcap", b["file"])
expect("bag format", b["format"] == "mcap", b["format"])
expect("bag profile = the MCAP header's", b["profile"] == bag["profile"], (b["profile"], bag["profile"]))
expect("compression as given", b["compression"] == "none", b["compression"])
expect("keep_outside by default", b["keep_outside"] is True, b["keep_outside"])

counters = ("received", "inside", "outside", "written", "dropped", "bytes")
tot = m["totals"]
expect("totals keys", set(tot) == set(counters), sorted(tot))
expect("received = inside + outside + dropped", tot["received"] == tot["inside"] + tot["outside"] + tot["dropped"], tot)
expect("written = messages in the bag", tot["written"] == bag["messages"], (tot["written"], bag["messages"]))
topics = {t["topic"]: t for t in m["topics"]}
expect("topics = the bag's channels", set(topics) == set(bag["channels"]), (sorted(topics), sorted(bag["channels"])))
expect("topics are /vehicle/N/state", set(topics) == {"/vehicle/%d/state" % i for i in (1, 2, 3)}, sorted(topics))
for name, t in topics.items():
    ch = bag["channels"].get(name)
    if not ch:
        continue
    expect(name + ": keys", set(t) == set(counters) | {"topic", "schema", "message_encoding", "qos"}, sorted(t))
    expect(name + ": qos not stated (no producer's description)", t["qos"] is None, t["qos"])
    expect(name + ": schema = the bag's", t["schema"] == ch["schema"], (t["schema"], ch["schema"]))
    expect(name + ": message_encoding = the bag's", t["message_encoding"] == ch["message_encoding"], t["message_encoding"])
    expect(name + ": written = its messages in the bag", t["written"] == ch["count"], (t["written"], ch["count"]))
    inside = sum(1 for lt in ch["log_times"] if st["start"] <= lt <= st["stop"])
    expect(name + ": inside = bag messages with START <= log time <= STOP", t["inside"] == inside, (t["inside"], inside))
    expect(name + ": outside = the rest (kept)", t["outside"] == ch["count"] - inside, (t["outside"], ch["count"] - inside))
    expect(name + ": outside > 0 (0.4 s before START at 40 Hz)", t["outside"] > 0, t["outside"])
    expect(name + ": received = inside + outside + dropped", t["received"] == t["inside"] + t["outside"] + t["dropped"], t)
    # bytes: payload bytes received; nothing dropped here means the bag's payload bytes
    if t["dropped"] == 0:
        expect(name + ": bytes = the bag's payload bytes", t["bytes"] == ch["bytes"], (t["bytes"], ch["bytes"]))
        expect(name + ": every payload --payload 200 bytes", ch["bytes"] == 200 * ch["count"], ch["bytes"])
    # At 40 Hz on a fixed schedule (it catches up after a delay, so a window alone may hold
    # a burst), no source can have sent more than 40 per second since prepare, plus one.
    since = (ch["log_times"][-1] - st["prepare"]) / 1e9 if ch["log_times"] else 0
    expect(name + ": 0 < inside, messages <= 40 Hz x time since prepare + 1",
           0 < t["inside"] and ch["count"] <= 40 * since + 1, (t["inside"], ch["count"], since))
for k in counters:
    expect("totals." + k + " = sum over topics", tot[k] == sum(t[k] for t in m["topics"]), k)

r = m["recorder"]
expect("recorder keys", set(r) == {"pid", "pauses", "paused_ms"}, sorted(r))
expect("recorder pid = the process started", r["pid"] == pid, (r["pid"], pid))
expect("pauses a count", isinstance(r["pauses"], int) and r["pauses"] >= 0, r["pauses"])
expect("paused_ms within the run", 0 <= r["paused_ms"] <= (t1 - t0) / 1e6, r["paused_ms"])
expect("no pauses, no paused time", (r["pauses"] == 0) == (r["paused_ms"] == 0), r)

rl = m["runlab"]
expect("runlab keys", set(rl) == {"version", "build_revision", "build_dirty"}, sorted(rl))
expect("runlab version = runlab --version's", version.startswith("runlab %s " % rl["version"]), (rl["version"], version))
rev = rl["build_revision"]
expect("build_revision a full git sha", re.fullmatch(r"[0-9a-f]{40}", rev), rev)
expect("build_revision as in runlab --version", ("git %s" % rev[:12]) in version, (rev, version))
expect("build_dirty as in runlab --version", rl["build_dirty"] == ("dirty" in version), (rl["build_dirty"], version))
if src_git == "1" and re.fullmatch(r"[0-9a-f]{40}", rev):
    # built from this checkout: the revision is its HEAD or an ancestor (a commit made after the build)
    ok = subprocess.run(["git", "-C", src, "merge-base", "--is-ancestor", rev, "HEAD"]).returncode == 0
    expect("build_revision is in the source's history", ok, rev)
expect.finish()
PY
check "the manifest follows the published JSON Schema" python3 -c '
import json, sys
try:
    import jsonschema
except ImportError:
    sys.exit("python3-jsonschema is installed by scripts/install-deps.sh")
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
' "$RUNLAB_SOURCE/docs/record-manifest.schema.json" "$dir/manifest.json"

echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
