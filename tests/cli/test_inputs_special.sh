#!/usr/bin/env bash
# Inputs that are not regular files (issue 29 item 2): a FIFO or a link to /dev/zero given as
# the bag, the runtime map, a map source, a configuration or a CSV is refused at once with
# "PATH: not a regular file" (exit 2 for evaluate, 1 for mcap/map/plot: their "unreadable
# input" code), never opened blocking nor read without end. Every command runs under
# `timeout`, so a hang is a failure here, not a stuck test.
. "$(dirname "$0")/lib.sh"

H="$TMP/home"
export RUNLAB_HOME="$H"
printf 'speed: 1.2\n' >"$TMP/spec.yaml"
bounded() { # bounded ARGS...: run with a 30 s limit (124 = it hung)
    timeout 30 "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
}
not_hung() { [ "$rc" -ne 124 ]; }

bounded sim "$TMP/spec.yaml" --offline "$H" --vehicles 1 --duration 3 --seed 3
check "sim exits 0" rc_is 0
RUN=$(tail -n 1 <<<"$out")

mkfifo "$TMP/pipe"
ln -s /dev/zero "$TMP/zero"
for special in pipe zero; do
    P="$TMP/$special"
    for cmd in "mcap info" "mcap cat" "mcap doctor" "map info" "map compile"; do
        if [ "$cmd" = "map compile" ]; then
            bounded $cmd "$P" -o "$TMP/out-$special.bin"
        else
            bounded $cmd "$P"
        fi
        check "$cmd on $special: does not hang" not_hung
        check "$cmd on $special: exit 1" rc_is 1
        check "$cmd on $special: says not a regular file" err_has "$P: not a regular file"
    done
    bounded mcap export "$P" --topic /t --out-dir "$TMP/exp-$special"
    check "mcap export on $special: does not hang" not_hung
    check "mcap export on $special: says not a regular file" err_has "$P: not a regular file"
    bounded plot csv "$P" --y a -o "$TMP/fig-$special.svg"
    check "plot csv on $special: does not hang" not_hung
    check "plot csv on $special: says not a regular file" err_has "$P: not a regular file"
    bounded evaluate "$RUN" --config "$P"
    check "evaluate --config $special: does not hang" not_hung
    check "evaluate --config $special: exit 2" rc_is 2
    check "evaluate --config $special: says not a regular file" err_has "$P: not a regular file"

    # The bag, then the runtime map of a copy of the run, replaced by the special file.
    cp -r "$RUN" "$TMP/bag-$special"
    bag=$(ls "$TMP/bag-$special"/bag/*.mcap)
    rm "$bag"
    if [ $special = pipe ]; then mkfifo "$bag"; else ln -s /dev/zero "$bag"; fi
    bounded evaluate "$TMP/bag-$special"
    check "evaluate, bag is $special: does not hang" not_hung
    check "evaluate, bag is $special: exit 2" rc_is 2
    check "evaluate, bag is $special: says not a regular file" err_has "$bag: not a regular file"

    cp -r "$RUN" "$TMP/map-$special"
    map="$TMP/map-$special/map/runtime_map.bin"
    rm "$map"
    if [ $special = pipe ]; then mkfifo "$map"; else ln -s /dev/zero "$map"; fi
    bounded evaluate "$TMP/map-$special"
    check "evaluate, runtime map is $special: does not hang" not_hung
    check "evaluate, runtime map is $special: exit 2" rc_is 2
    check "evaluate, runtime map is $special: says not a regular file" \
        err_has "$map: not a regular file"
    check "evaluate, runtime map is $special: names the path once" \
        [ "$(grep -o "runtime_map.bin" <<<"$err" | wc -l)" -eq 1 ]
done

# The regular files of the same run still evaluate.
bounded evaluate "$RUN"
check "evaluate of the untouched run exits 0" rc_is 0

finish
