#!/usr/bin/env bash
# `runlab runs` memory (issue 29 item 5): listing a tree never holds every run at once.
# One explored run copied 200 and 2,000 times (files hard-linked: the loader reads each
# copy in full all the same); the peak RSS (/usr/bin/time -f %M) of `runs`, `runs --json`,
# `runs --csv` and `runs report` may grow by at most 4 KiB per extra run (the walk's path
# and, for --csv, the row kept for the header's layer columns). Before streaming each run
# stayed loaded: about 34 KiB per run of this kind. Every command runs under `timeout`.
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time (Debian package 'time') is missing"; exit 77; }
R="$TMP/root"
run explore --root "$R" --sweep --scenes 1 --seeds 1 --budget 40
check "one explored run" rc_is 0
one=$(find "$R" -name run_manifest.yaml -printf '%h\n' | head -n 1)
check "the run is there" [ -n "$one" ]
for n in 200 2000; do
    mkdir -p "$TMP/t$n"
    for ((i = 0; i < n; i++)); do cp -rl "$one" "$TMP/t$n/run$i"; done
done

peak() { # peak ARGS...: runs the command; its peak RSS in KiB goes to $kib
    # ASan's quarantine would keep every freed byte for a while: off, so RSS is the memory
    # held (the ASan build measures the same thing, with its own overhead per allocation).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
        timeout 300 /usr/bin/time -f %M -o "$TMP/rss" "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    kib=$(tail -n 1 "$TMP/rss")
}
for mode in "" --json --csv report; do
    peak runs $mode "$TMP/t200"
    small=$kib
    check "runs $mode on 200 runs exits 0" rc_is 0
    peak runs $mode "$TMP/t2000"
    large=$kib
    check "runs $mode on 2,000 runs exits 0" rc_is 0
    case "$mode" in
    "") rows=$(($(wc -l <"$TMP/out") - 1)) ;;
    --json) rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/out") ;;
    --csv) rows=$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$TMP/out") ;;
    report) rows=$(sed -n 's/^runs: \([0-9]*\).*/\1/p' "$TMP/out") ;;
    esac
    check "runs $mode lists all 2,000 runs ($rows)" [ "$rows" = 2000 ]
    per_run=$(( (large - small) * 1024 / 1800 ))
    echo "runs $mode: peak RSS $small KiB (200 runs), $large KiB (2,000 runs): $per_run bytes per run"
    check "runs $mode: at most 4 KiB per extra run ($per_run bytes)" [ "$per_run" -le 4096 ]
done
finish
