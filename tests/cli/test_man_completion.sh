# Issue 32: the man pages and the bash completion come from the command's own --help
# (scripts/gen_cli_docs.py at build time). Each page's text is exactly `--help` of its
# command, every command has its page, the pages are valid roff; the completion offers
# the commands, sub-commands, options and the file arguments each takes.
. "$(dirname "$0")/lib.sh"
DOCS="${RUNLAB_BIN:?}/../generated/cli-docs"
rc=0 out="" err=""

# The page's DESCRIPTION block, un-escaped, is the help text (roff's escapes reversed).
page_text() {
    zcat "$1" | awk '/^\.SH DESCRIPTION/{d=1; next} d && /^\.nf$/{p=1; next} p && /^\.fi$/{exit} p' |
        sed -e 's/^\\&//' -e 's/\\-/-/g' -e 's/\\e/\\/g'
}
run --help
top_help=$out
commands=$(awk '/^Commands:$/{c=1; next} c && /^  [a-z]/{print $1; next} c{exit}' <<<"$top_help")
check "runlab --help lists the commands" test "$(wc -w <<<"$commands")" -ge 10
check "runlab.1.gz is the text of runlab --help" test "$(page_text "$DOCS/man1/runlab.1.gz")" = "$top_help"
for c in $commands; do
    run "$c" --help
    check "runlab-$c.1.gz is the text of runlab $c --help" test "$(page_text "$DOCS/man1/runlab-$c.1.gz")" = "$out"
    err=$(zcat "$DOCS/man1/runlab-$c.1.gz" | groff -man -ww -z 2>&1)
    check "runlab-$c.1 is roff without warnings" test -z "$err"
    err=""
done
pages=$(cd "$DOCS/man1" && ls | wc -l)
check "one page per command plus runlab.1 ($pages)" test "$pages" -eq "$(($(wc -w <<<"$commands") + 1))"
out=$(MANWIDTH=80 man -l "$DOCS/man1/runlab-evaluate.1.gz" 2>&1)
check "man shows runlab-evaluate(1) with its NAME line" out_has "runlab-evaluate - evaluate a recorded run offline"

# Completion: COMP_WORDS as bash fills them; COMPREPLY is the offer.
mkdir -p "$TMP/w/runs/r1"
touch "$TMP/w/a.mcap" "$TMP/w/b.yaml" "$TMP/w/lab.xml" "$TMP/w/notes.txt"
complete_line() { # complete_line WORD...: the offers for the last word
    bash -c '
        [ -r /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _runlab runlab "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$DOCS/completion/runlab" "$@"
}
cd "$TMP/w" || exit 1
out=$(complete_line runlab ev)
check "runlab ev<TAB> completes to evaluate" test "$out" = "evaluate"
out=$(complete_line runlab "")
check "runlab <TAB> offers every command" test "$(wc -l <<<"$out")" -ge "$(wc -w <<<"$commands")"
out=$(complete_line runlab evaluate --m)
check "runlab evaluate --m<TAB> offers --map and --metrics" test "$out" = $'--map\n--metrics'
out=$(complete_line runlab mcap "")
check "runlab mcap <TAB> offers its sub-commands (doctor, recover)" grep -qx recover <<<"$out"
out=$(complete_line runlab mcap info "")
check "runlab mcap info <TAB> offers .mcap files and directories, not others" \
    test "$out" = $'a.mcap\nruns'
out=$(complete_line runlab bench "")
check "runlab bench <TAB> offers spec files" grep -qx b.yaml <<<"$out"
out=$(complete_line runlab sim --map "")
check "runlab sim --map <TAB> offers map files" test "$out" = $'lab.xml\nruns'
out=$(complete_line runlab evaluate r)
check "runlab evaluate r<TAB> offers run directories" test "$out" = "runs"
cd / || exit 1

echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
