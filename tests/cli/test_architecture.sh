#!/usr/bin/env bash
# docs/ARCHITECTURE.md against the tree (issue 31 item 7): every source folder it names
# exists, and every source folder (src/** and cli, bench, fuzz, tools, examples with their
# subfolders) is named in it, written as a folder (`src/formats/msg/`).
source "$(dirname "$0")/lib.sh"
SRC=${RUNLAB_SOURCE:?RUNLAB_SOURCE not set}
DOC="$SRC/docs/ARCHITECTURE.md"

# check_architecture DOC ROOT: prints one line per problem; exit status 1 when there is one.
check_architecture() {
    python3 - "$1" "$2" <<'EOF'
import os, re, sys
doc, root = sys.argv[1], sys.argv[2]
text = open(doc, encoding="utf-8").read()
tops = ("src", "cli", "bench", "fuzz", "tools", "examples")
# A folder token: a top folder, maybe deeper, then '/'. Named as a folder when the '/' ends
# the token; a file path (src/core/fs.c) names only the folder it lies in, which must exist.
token = re.compile(r"(?<![\w/.$<>-])((?:%s)(?:/[A-Za-z0-9_]+)*)/(?=([\w*.<{-]?))" % "|".join(tops))
named, mentioned = set(), set()
for m in token.finditer(text):
    folder = m.group(1)
    mentioned.add(folder)
    if not m.group(2):
        named.add(folder)
problems = []
for folder in sorted(mentioned):
    if not os.path.isdir(os.path.join(root, folder)):
        problems.append("named in ARCHITECTURE.md but missing: %s/" % folder)
source_ext = (".c", ".h", ".py", ".idl", ".yaml")
for top in tops:
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
        dirnames[:] = [d for d in dirnames if d != "corpus" and not d.startswith(".")]
        rel = os.path.relpath(dirpath, root)
        holds_source = any(f.endswith(source_ext) for f in filenames)
        if (holds_source or (rel in tops and rel != "src")) and rel not in named:
            problems.append("source folder not named in ARCHITECTURE.md: %s/" % rel)
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
EOF
}

rc=0
out=$(check_architecture "$DOC" "$SRC" 2>&1) || rc=$?
err=""
check "ARCHITECTURE.md names every source folder and only folders that exist" rc_is 0

# The checker itself: a folder the document does not name, and one it names that is gone.
FAKE="$TMP/tree"
mkdir -p "$FAKE/docs" "$FAKE/src/core" "$FAKE/src/extra" "$FAKE/cli" "$FAKE/bench" "$FAKE/fuzz/corpus/x" \
         "$FAKE/tools" "$FAKE/examples"
touch "$FAKE/src/core/a.c" "$FAKE/src/extra/b.c" "$FAKE/fuzz/corpus/x/seed.c"
printf '%s\n' '`src/core/` `src/gone/` `cli/` `bench/` `fuzz/` `tools/` `examples/`' \
    'a file path names no folder: `src/extra/b.c`' >"$FAKE/docs/ARCHITECTURE.md"
rc=0
out=$(check_architecture "$FAKE/docs/ARCHITECTURE.md" "$FAKE" 2>&1) || rc=$?
check "the checker fails on a stale or incomplete document" rc_is 1
check "the checker names the missing folder" out_has "named in ARCHITECTURE.md but missing: src/gone/"
check "the checker names the unnamed folder" out_has "source folder not named in ARCHITECTURE.md: src/extra/"
check "the fuzz corpus is data, not a source folder" bash -c "! grep -q corpus <<<'$out'"

finish
