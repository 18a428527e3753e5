# Which way `runlab bench` follows a run's processes, and that manifest.json says so
# (issue 16, item 2's cgroup v2 part): RUNLAB_BENCH_TREE=cgroup2 tries cgroup v2 only (a
# delegated, writable cgroup whose children get the memory controller) and falls back to
# /proc with the reason. The expected decision is worked out here from /proc/self/mountinfo
# and the cgroup files, independently of runlab; on machines whose cgroup v2 has no memory
# controller (such as the one this was written on) only the fallback can be checked.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }

cat >"$TMP/spec.yaml" <<'YAML'
experiment: tree modes
problem: maze2d
runs: 1
max_time: 120
planners:
  - {name: RRTConnect, planner: rrtconnect, settings: {max_iterations: 100000}}
YAML
tree_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("process_tree", ""))' "$1/manifest.json"; }

# the expected cgroup v2 decision
v2=none
mnt=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' /proc/self/mountinfo | head -n1)
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
[ "$own" = / ] && own=
if [ -n "$mnt" ] && grep -qw memory "$mnt$own/cgroup.subtree_control" 2>/dev/null && [ -w "$mnt$own" ]; then
    v2=usable
fi
echo "cgroup v2 mount: '${mnt:-none}', own cgroup: '${own:-/}', memory for children: $v2"

RUNLAB_BENCH_TREE=cgroup2 "$RUNLAB" bench "$TMP/spec.yaml" --out-dir "$TMP/v2" >"$TMP/out" 2>"$TMP/err"
rc=$?
dir=$(tail -n1 "$TMP/out")
check "cgroup2 mode: the benchmark runs (exit 0)" rc_is 0
check "... and solves" grep -q "1 Exact solution" "$TMP/out"
t=$(tree_of "$dir")
if [ "$v2" = usable ]; then
    check "... in a cgroup v2 below the own one (manifest: $t)" grep -q "^cgroup v2 $mnt$own/runlab-" <<<"$t"
else
    check "... falls back to /proc, saying why (manifest: $t)" grep -q "^proc (cgroup v1 not tried.*cgroup v2" <<<"$t"
    [ -n "$mnt" ] && check "... naming the cgroup v2 it looked at" grep -qF "cgroup v2 at $mnt" <<<"$t"
fi

RUNLAB_BENCH_TREE=proc "$RUNLAB" bench "$TMP/spec.yaml" --out-dir "$TMP/proc" >"$TMP/out" 2>"$TMP/err"
rc=$?
check "proc mode: forced, and the manifest says so" \
    test "$(tree_of "$(tail -n1 "$TMP/out")")" = "proc (forced by RUNLAB_BENCH_TREE=proc)"

RUNLAB_BENCH_TREE=auto "$RUNLAB" bench "$TMP/spec.yaml" --out-dir "$TMP/auto" >"$TMP/out" 2>"$TMP/err"
rc=$?
t=$(tree_of "$(tail -n1 "$TMP/out")")
check "auto mode: the manifest names the mode used ($t)" grep -qE '^(cgroup v1 /|cgroup v2 /|proc \()' <<<"$t"
if [ "$v2" != usable ]; then
    check "... never a cgroup v2 without a memory controller" test "${t#cgroup v2}" = "$t"
fi
case "$t" in
"cgroup v"*) check "... and its cgroup is removed at the end" test ! -e "${t#cgroup v? }" ;;
esac
finish
