#!/usr/bin/env bash
# `make fuzz`: runs every libFuzzer target of build-clang/ (fuzz/fuzz_<name>.c) for
# FUZZ_SECONDS each (default 60), FUZZ_JOBS at a time (default 2), each from a copy of its
# seeds (fuzz/corpus/<name>/) with the per-input time limit fuzz/CMakeLists.txt sets for it
# (RL_FUZZ_INPUT_TIMEOUT_<name>; libFuzzer's 1200 s otherwise), then prints per target the
# executions, coverage (libFuzzer's cov: edges and ft: features at the end) and findings
# (crash-, timeout-, leak-, oom- files). Exit 1 when any target has a finding or failed.
# Work files: build-clang/fuzz-run/<name>/ (log, corpus, findings), new on each run.
set -u
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-2}
BIN=${FUZZ_BIN:-build-clang/bin}
OUT=build-clang/fuzz-run
case "$SECONDS_EACH$JOBS" in *[!0-9]*) echo "fuzz: FUZZ_SECONDS and FUZZ_JOBS are whole numbers" >&2; exit 2;; esac
targets=$(ls "$BIN"/fuzz_* 2>/dev/null | sed 's|.*/fuzz_||' | sort)
[ -n "$targets" ] || { echo "fuzz: no fuzz_* in $BIN (build build-clang with -DRUNLAB_FUZZ=ON)" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"

run_one() { # run_one NAME: one target, bounded: libFuzzer stops itself; `timeout` backs it up
    local name=$1 w="$OUT/$1" limit
    mkdir -p "$w/corpus"
    [ -d "fuzz/corpus/$name" ] && cp -r "fuzz/corpus/$name/." "$w/corpus/"
    limit=$(sed -n "s/^set(RL_FUZZ_INPUT_TIMEOUT_${name} \([0-9]*\)).*/\1/p" fuzz/CMakeLists.txt)
    ASAN_OPTIONS=detect_leaks=1 timeout --kill-after=30 $((SECONDS_EACH + 300)) \
        "$BIN/fuzz_$name" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
        ${limit:+-timeout=$limit} -artifact_prefix="$w/" "$w/corpus" >"$w/log" 2>&1
    echo $? >"$w/rc"
}

running=0
for name in $targets; do
    run_one "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

status=0
printf '%-14s %8s %12s %8s %8s %8s  %s\n' target seconds executions cov ft corpus findings
for name in $targets; do
    w="$OUT/$name"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/log" | tail -n 1)
    last=$(grep -E '^#[0-9]+.*cov: ' "$w/log" | tail -n 1)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(ls "$w/corpus" | wc -l)
    findings=$(cd "$w" && ls -d crash-* timeout-* leak-* oom-* slow-unit-* 2>/dev/null | grep -v '^slow-unit' | tr '\n' ' ')
    rc=$(cat "$w/rc")
    if [ -n "$findings" ] || [ "$rc" -ne 0 ]; then
        status=1
        [ -n "$findings" ] || findings="exit $rc (see $w/log)"
    fi
    printf '%-14s %8s %12s %8s %8s %8s  %s\n' "$name" "$SECONDS_EACH" "${execs:-?}" "${cov:-?}" \
        "${ft:-?}" "$corp" "${findings:-none}"
done
exit $status
