# Helpers for the CLI tests: run build/bin/runlab, capture stdout, stderr and the exit
# code, and assert on them with messages that say what was expected.
set -u
RUNLAB="${RUNLAB_BIN:?RUNLAB_BIN not set}/runlab"
failures=0
checks=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# kill_at_exit: from now on, the background processes listed in `pids` (pids+=($!)) are
# killed (-KILL) and waited for when the script exits, before $TMP goes.
pids=()
kill_pids() {
    local p
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    wait 2>/dev/null
}
kill_at_exit() { trap 'kill_pids; rm -rf "$TMP"' EXIT; }

# run ARGS...: runs runlab; sets $out, $err, $rc
run() {
    "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}

check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    checks=$((checks + 1))
    if ! "$@"; then
        failures=$((failures + 1))
        echo "FAIL: $what"
        echo "  rc=$rc"
        echo "  stdout: ${out:0:600}"
        echo "  stderr: ${err:0:3000}"
    fi
}

rc_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -qF -- "$1" <<<"$out"; }
err_has() { grep -qF -- "$1" <<<"$err"; }
err_empty() { [ -z "$err" ]; }

# test_domain: sets $DOMAIN to a lab/DDS domain id of this test script's own (see
# rl_test_domain in tests/unit/rl_test.h: same range, same lock files), held until the
# script exits, so parallel tests never share a domain or a recorder lock.
test_domain() {
    local id
    for id in $(seq 100 230); do
        exec {domain_fd}>>"${TMPDIR:-/tmp}/runlab-test-domain-$id.lock" || continue
        if flock -n "$domain_fd"; then
            DOMAIN=$id
            return 0
        fi
        exec {domain_fd}>&-
    done
    echo "FAIL: no free test domain in 100..230"
    exit 1
}

# python_env EXTENSION.so: what Debian's python3 needs in its environment to import that
# extension: nothing, or the sanitizer runtimes preloaded when it was built with ASan (the
# interpreter is not instrumented; it keeps objects at exit, so no leak check).
python_env() {
    if nm -D --undefined-only "$1" 2>/dev/null | grep -q __asan_init; then
        echo "LD_PRELOAD=$(cc -print-file-name=libasan.so):$(cc -print-file-name=libubsan.so)" \
            "ASAN_OPTIONS=detect_leaks=0"
    fi
}

# wait_for FILE TEXT: until TEXT appears in FILE, polling, up to 120 s (a loaded or sanitized
# build may take long to start a DDS node); returns 1 when it never does.
wait_for() {
    local i
    for i in $(seq 1 1200); do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

finish() {
    echo "$((checks - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ]
}
