# `runlab plot csv` as users run it: figures in every format from CSV columns, the .yaml
# record beside them, missing values counted, and errors in the "runlab: plot: <why>" form
# with exit codes 1 (bad input) and 2 (usage).
. "$(dirname "$0")/lib.sh"

cat >"$TMP/log.csv" <<'CSV'
time,pos x,vel,name
0,1,0.5,a
1,2,,b
2,4,0.7,c
3,8,nan,d
4,16,0.9,e
CSV

run plot --help
check "--help exits 0" rc_is 0
check "--help shows usage" out_has "Usage: runlab plot csv FILE"
check "--help lists --logy" out_has "--logy"

for ext in png svg pdf; do
    run plot csv "$TMP/log.csv" --x time --y "pos x" --y vel -o "$TMP/fig.$ext" --title "Log <1>"
    check "plot csv prints Wrote ($ext)" out_has "Wrote $TMP/fig.$ext"
    check "plot to .$ext exits 0" rc_is 0
    check "plot to .$ext is silent" err_empty
    check "plot wrote fig.$ext" test -s "$TMP/fig.$ext"
done
run plot csv "$TMP/log.csv" --x time --y vel -o "$TMP/new/dir/fig.png"
check "plot into a folder that does not exist yet exits 0" rc_is 0
check "it makes the folder and the figure" test -s "$TMP/new/dir/fig.png"
check "it prints Wrote with that path" out_has "Wrote $TMP/new/dir/fig.png"
: >"$TMP/afile"
run plot csv "$TMP/log.csv" --x time --y vel -o "$TMP/afile/fig.png"
check "output under a regular file exits 1" rc_is 1
check "output under a regular file names it" err_has "$TMP/afile"
check "PNG signature" bash -c "head -c 8 '$TMP/fig.png' | od -An -c | grep -q 'P   N   G'"
check "PDF signature" bash -c "head -c 5 '$TMP/fig.pdf' | grep -q '%PDF-'"
svg=$(cat "$TMP/fig.svg")
check "SVG keeps the title as text, escaped" grep -qF '>Log &lt;1&gt;</text>' <<<"$svg"
check "SVG has the legend entry" grep -qF '>pos x</text>' <<<"$svg"
check "SVG notes the two missing values" grep -qF 'Not drawn: 2 NaN or infinite values' <<<"$svg"
check "SVG is well-formed" python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$TMP/fig.svg"

check "record written beside the figure" test -s "$TMP/fig.yaml"
rec=$(cat "$TMP/fig.yaml")
check "record lists the formats" bash -c "grep -q 'fig.png' <<<'$rec' && grep -q 'fig.svg' <<<'$rec' && grep -q 'fig.pdf' <<<'$rec'"
check "record has the input" grep -qF "$TMP/log.csv" <<<"$rec"
check "record has the command line" grep -qF -- '--title' <<<"$rec"
check "record has the UTC time" grep -qE 'created_utc: "?[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z' <<<"$rec"
check "record has the git sha" grep -qE 'git_sha: "?([0-9a-f]{40}|unknown)' <<<"$rec"

run plot csv "$TMP/log.csv" --y 2 --kind scatter --logy -o "$TMP/idx.png" --no-record
check "column by number, scatter, log y" rc_is 0
check "--no-record writes no record" test ! -e "$TMP/idx.yaml"

# Distribution kinds draw each --y column on its own.
for kind in ecdf hist box; do
    run plot csv "$TMP/log.csv" --y "pos x" --y vel --kind $kind -o "$TMP/$kind.svg" --no-record
    check "--kind $kind exits 0" rc_is 0
done
check "box names each column on the axis" bash -c "grep -qF '>pos x</text>' '$TMP/box.svg' && grep -qF '>vel</text>' '$TMP/box.svg'"
check "hist has counts" grep -qF '>Count</text>' "$TMP/hist.svg"
run plot csv "$TMP/log.csv" --x time --y vel --kind hist -o "$TMP/e.svg"
check "--x with a distribution kind is a usage error" rc_is 2

# ISO 8601 times on x become seconds since the first row's time.
cat >"$TMP/times.csv" <<'CSV'
stamp,lat
2026-11-29T20:15:00Z,1.5
2026-11-29T20:15:00.5Z,1.7
2026-11-29T20:15:02+00:00,1.2
CSV
run plot csv "$TMP/times.csv" --x stamp --y lat -o "$TMP/times.svg" --no-record
check "time axis exits 0" rc_is 0
check "time axis names its origin" grep -qF '>stamp [s since 2026-11-29T20:15:00Z]</text>' "$TMP/times.svg"
check "time axis in seconds" grep -qF '>2.0</text>' "$TMP/times.svg"
printf 'stamp,v\n2026-11-29T20:15:00Z,1\n5,2\n' >"$TMP/mixed.csv"
run plot csv "$TMP/mixed.csv" --x stamp --y v -o "$TMP/e.png"
check "a number among times exits 1" rc_is 1
check "a number among times says so" err_has "mixed.csv:3: column 'stamp': '5' is not a time like the first row's"

# Errors.
run plot csv "$TMP/log.csv" --x time --y nosuch -o "$TMP/e.png"
check "unknown column exits 1" rc_is 1
check "unknown column names it and lists columns" err_has "runlab: plot: $TMP/log.csv: no column 'nosuch' (columns: 'time', 'pos x'"
run plot csv "$TMP/log.csv" --x time --y name -o "$TMP/e.png"
check "text column exits 1" rc_is 1
check "text column error names line and column" err_has "log.csv:2: column 'name': 'a' is not a number"
check "nothing written on error" test ! -e "$TMP/e.png"
run plot csv "$TMP/missing.csv" --y a -o "$TMP/e.png"
check "missing file exits 1" rc_is 1
check "missing file error form" err_has "runlab: plot: "
run plot csv "$TMP/log.csv" --y vel -o "$TMP/e.gif"
check "bad extension is a usage error" rc_is 2
check "bad extension says why" err_has "must end in .png, .svg or .pdf"
run plot csv "$TMP/log.csv" -o "$TMP/e.png"
check "missing --y is a usage error" rc_is 2
check "usage error points to --help" err_has "Try 'runlab plot --help'."
run plot csv "$TMP/log.csv" --y vel -o "$TMP/e.png" --kind pie
check "unknown kind exits 2" rc_is 2
run plot csv "$TMP/log.csv" --y vel -o "$TMP/e.png" --width 10
check "tiny width exits 2" rc_is 2
run plot csv "$TMP/log.csv" --y vel -o "$TMP/e.png" --width 20000 --dpi 72
check "huge figure exits 2" rc_is 2
check "huge figure says the limit" err_has "need 1..100 in"
run plot csv "$TMP/log.csv" --y vel -o "$TMP/hi.png" --width 1200 --height 900 --dpi 200 --no-record
check "px size at a dpi" rc_is 0
check "PNG has the asked size" bash -c "od -An -tx1 -j16 -N8 '$TMP/hi.png' | tr -d ' \n' | grep -q '000004b000000384'"
run plot json x --y a -o "$TMP/e.png"
check "unknown source exits 2" rc_is 2
printf '' >"$TMP/empty.csv"
run plot csv "$TMP/empty.csv" --y a -o "$TMP/e.png"
check "empty file exits 1" rc_is 1
check "empty file says so" err_has "empty file"

# A header-only file is an empty plot, not an error.
printf 'a,b\n' >"$TMP/header.csv"
run plot csv "$TMP/header.csv" --x a --y b -o "$TMP/h.svg" --no-record
check "header-only file plots" rc_is 0
check "header-only plot says no data" grep -qF '>no data</text>' "$TMP/h.svg"

finish
