# Helpers for the CLI tests: run build/bin/runlab, capture stdout, stderr and the exit
# code, and assert on them with messages that say what was expected.
set -u
RUNLAB="${RUNLAB_BIN:?RUNLAB_BIN not set}/runlab"
failures=0
checks=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

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
        echo "  stderr: ${err:0:600}"
    fi
}

rc_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -qF -- "$1" <<<"$out"; }
err_has() { grep -qF -- "$1" <<<"$err"; }
err_empty() { [ -z "$err" ]; }

finish() {
    echo "$((checks - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ]
}
