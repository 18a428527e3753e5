#!/usr/bin/env bash
# Links inside a run (issue 29 item 7): `evaluate` creates RUN/evaluations and each
# evaluation's figures/ without following a symbolic link there; a link in their place is
# refused with "PATH: is a symbolic link" and nothing is written at its target. Every
# command runs under `timeout`, so a hang fails here.
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
export RUNLAB_HOME="$H"
printf 'speed: 1.2\n' >"$TMP/spec.yaml"
bounded() { # bounded ARGS...: run with a 120 s limit (124 = it hung)
    timeout 120 "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}
bounded sim "$TMP/spec.yaml" --offline "$H" --vehicles 1 --duration 3 --seed 3
check "sim exits 0" rc_is 0
RUN=$(tail -n 1 <<<"$out")

mkdir "$TMP/outside"
for kind in directory dangling; do
    R="$TMP/run-$kind"
    cp -r "$RUN" "$R"
    rm -rf "$R/evaluations"
    if [ $kind = directory ]; then
        ln -s "$TMP/outside" "$R/evaluations"
    else
        ln -s "$TMP/outside/none" "$R/evaluations"
    fi
    bounded evaluate "$R"
    check "evaluate, evaluations is a link to a $kind: exit 2" rc_is 2
    check "evaluate, evaluations is a link to a $kind: says so" \
        err_has "$R/evaluations: is a symbolic link"
    check "evaluate, evaluations is a link to a $kind: nothing written there" \
        [ -z "$(ls -A "$TMP/outside")" ]
    check "evaluate, evaluations is a link to a $kind: the link is left as it was" \
        [ -L "$R/evaluations" ]
done

# A file in its place is refused too; the run's own evaluations/ still works.
R="$TMP/run-file"
cp -r "$RUN" "$R"
rm -rf "$R/evaluations"
echo x >"$R/evaluations"
bounded evaluate "$R"
check "evaluate, evaluations is a file: exit 2" rc_is 2
check "evaluate, evaluations is a file: says so" err_has "$R/evaluations: exists and is not a directory"
bounded evaluate "$RUN"
check "evaluate of the untouched run exits 0" rc_is 0
check "its evaluation is inside the run" [ "$(ls "$RUN/evaluations" | wc -l)" -eq 1 ]

finish
