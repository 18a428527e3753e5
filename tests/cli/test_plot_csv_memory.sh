#!/usr/bin/env bash
# `plot csv` reads its file through a bounded window (issue 29 item 6): a 120 MB CSV of
# 120,000 rows (two plotted numbers and a 1 KB text column each) is drawn with a peak RSS
# (/usr/bin/time -f %M) at most 24 MiB above that of the same command on a 3-row file;
# reading the whole file first, as before, costs its 120 MB. The figure still holds every
# row (its record counts them). Every command runs under `timeout`.
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time (Debian package 'time') is missing"; exit 77; }
python3 - "$TMP/big.csv" "$TMP/small.csv" <<'EOF'
import sys
pad = 'p' * 1000
with open(sys.argv[1], 'w') as f:
    f.write('t,y,note\n')
    for i in range(120000):
        f.write(f'{i},{(i * 7919) % 1000 / 10},"{pad}"\n')
with open(sys.argv[2], 'w') as f:
    f.write('t,y,note\n1,2,"a"\n2,3,"b"\n3,1,"c"\n')
EOF
peak() { # peak ARGS...: runs the command; its peak RSS in KiB goes to $kib
    # ASan's quarantine would keep every freed byte for a while: off, so RSS is the memory
    # held (the ASan build measures the same thing, with its own overhead per allocation).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" \
        timeout 300 /usr/bin/time -f %M -o "$TMP/rss" "$RUNLAB" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    out=$(cat "$TMP/out")
    err=$(cat "$TMP/err")
    kib=$(tail -n 1 "$TMP/rss")
}
peak plot csv "$TMP/small.csv" --x t --y y -o "$TMP/small.svg"
small=$kib
check "plot of the small file exits 0" rc_is 0
peak plot csv "$TMP/big.csv" --x t --y y -o "$TMP/big.svg"
big=$kib
check "plot of the 120 MB file exits 0" rc_is 0
check "the figure is written" [ -s "$TMP/big.svg" ]
echo "plot csv: peak RSS $small KiB (3 rows), $big KiB (120 MB, 120,000 rows)"
check "plot csv: peak RSS at most 24 MiB above the small file's ($big vs $small KiB)" \
    [ "$big" -le $((small + 24 * 1024)) ]
# A row cut at a window's edge or longer than the window reads as one row: an error far
# into the file names its line and byte as for a small file.
printf '1,2,"x\n2,3,"unterminated\n' >>"$TMP/big.csv"
timeout 300 "$RUNLAB" plot csv "$TMP/big.csv" --x t --y y -o "$TMP/bad.svg" >"$TMP/out" 2>"$TMP/err"
rc=$?
err=$(cat "$TMP/err")
check "an error at the end of the big file: exit 1" rc_is 1
check "an error at the end of the big file: its line, column and byte" \
    err_has "big.csv:120003:6: byte 121676911: 'u' after the closing quote of a field"
finish
