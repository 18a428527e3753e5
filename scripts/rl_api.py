#!/usr/bin/env python3
"""The public API's declarations (functions and extern objects at file scope of
include/runlab/*.h) and their RL_API export mark: lists them, checks a shared library's
dynamic symbols against them, or prefixes RL_API where a declaration lacks it.

  rl_api.py list [HEADER...]            name<TAB>header<TAB>marked(1/0), one per line
  rl_api.py check LIB.so [HEADER...]    exit 1 naming each missing / extra symbol
  rl_api.py annotate [HEADER...]        add `RL_API ` in front of unmarked declarations (and
                                        #include "runlab/export.h" where it is missing)
Headers default to include/runlab/*.h beside this script."""
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_GLOB = os.path.join(HERE, "..", "include", "runlab", "*.h")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def blank_comments(text):
    """Comments, string and char literals and preprocessor lines become spaces (newlines
    kept), so offsets into the result are offsets into `text`."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" :
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                j += 1
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
            continue
        i += 1
    return "".join(out)


def declarations(path):
    """[(name, start offset of the declaration, marked)] for each file-scope function or
    extern object declaration; typedefs, struct/enum bodies and inline definitions skipped."""
    text = open(path, encoding="utf-8").read()
    code = blank_comments(text)
    result = []
    depth = 0
    start = None
    i = 0
    while i < len(code):
        c = code[i]
        if depth == 0 and start is None and not c.isspace() and c not in ";}":
            start = i
        if c == "{" and depth == 0 and start is not None and re.fullmatch(r'extern\s*"\s*"\s*', code[start:i]):
            start = None  # extern "C" {: its body is file scope
        elif c == "{":
            depth += 1
        elif c == "}" and depth == 0:
            start = None  # the closing brace of extern "C"
        elif c == "}":
            depth -= 1
            if depth == 0 and start is not None:
                stmt = code[start:i + 1]
                # A definition at file scope (static inline ... { }) ends here.
                if re.search(r"\)\s*\{", stmt) and not stmt.lstrip().startswith(("typedef", "struct", "enum", "union")):
                    start = None
        elif c == ";" and depth == 0 and start is not None:
            stmt = code[start:i]
            words = IDENT.findall(stmt)
            if words and words[0] not in ("typedef", "static") and not (
                    words[0] in ("struct", "enum", "union") and "(" not in stmt
                    and words[0] == words[0] and not re.search(r"\bextern\b", stmt)
                    and len(words) <= 2):
                name = declared_name(stmt)
                if name:
                    result.append((name, start, bool(re.match(r"\s*RL_API\b", stmt))))
            start = None
        i += 1
    return text, result


def declared_name(stmt):
    """The identifier a declaration declares: before its first parameter list for a
    function, else the last identifier before any array bound or initialiser."""
    flat = re.sub(r"\s+", " ", stmt).strip()
    if re.match(r"^(struct|enum|union) \w+( \{.*\})?$", flat):
        return None
    m = re.match(r"^(.*?)\(", flat)
    if m and not re.search(r"\(\s*\*", flat[:m.end() + 2]):
        ids = IDENT.findall(m.group(1))
        return ids[-1] if ids else None
    head = flat.split("[")[0].split("=")[0]
    ids = IDENT.findall(head)
    if "extern" in ids and ids:
        return ids[-1]
    return None


def headers(args):
    return sorted(args) if args else sorted(glob.glob(DEFAULT_GLOB))


def cmd_list(args):
    for h in headers(args):
        _, decls = declarations(h)
        for name, _, marked in decls:
            print(f"{name}\t{os.path.basename(h)}\t{int(marked)}")
    return 0


def cmd_check(args):
    if not args:
        print("usage: rl_api.py check LIB.so [HEADER...]", file=sys.stderr)
        return 2
    lib, hs = args[0], headers(args[1:])
    declared = {}
    unmarked = []
    for h in hs:
        _, decls = declarations(h)
        for name, _, marked in decls:
            declared[name] = os.path.basename(h)
            if not marked:
                unmarked.append((name, os.path.basename(h)))
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    if nm.returncode != 0:
        print(f"nm -D --defined-only {lib} failed: {nm.stderr.strip()}", file=sys.stderr)
        return 1
    exported = set()
    for line in nm.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TDBRVWiu":
            exported.add(parts[2].split("@")[0])
    # Symbols the toolchain always defines in a shared object are not the API's.
    exported -= {"_init", "_fini", "_edata", "_end", "__bss_start"}
    # Nor are a sanitizer's instrumentation symbols (ASan's ODR indicators of exported
    # objects: __odr_asan.rl_mcap_magic).
    exported = {s for s in exported if not s.startswith(("__odr_asan", "__asan_", "__tsan_", "__ubsan_"))}
    failures = 0
    for name, h in unmarked:
        print(f"UNMARKED: {name} (include/runlab/{h}) has no RL_API in front of its declaration")
        failures += 1
    for name in sorted(set(declared) - exported):
        print(f"MISSING: {name} is declared in include/runlab/{declared[name]} but "
              f"{os.path.basename(lib)} does not export it (RL_API missing, or never defined)")
        failures += 1
    for name in sorted(exported - set(declared)):
        print(f"EXTRA: {os.path.basename(lib)} exports {name}, which no include/runlab/*.h "
              f"declares (mark it static, or declare it in a public header with RL_API)")
        failures += 1
    print(f"{len(declared)} declarations, {len(exported)} exported symbols, {failures} problems")
    return 1 if failures else 0


def cmd_annotate(args):
    changed = 0
    for h in headers(args):
        text, decls = declarations(h)
        for name, start, marked in sorted(decls, key=lambda d: -d[1]):
            if not marked:
                text = text[:start] + "RL_API " + text[start:]
                changed += 1
        # A header that declares anything needs the macro: after its include guard.
        if decls and '#include "runlab/export.h"' not in text and not h.endswith("export.h"):
            m = re.search(r"#define RUNLAB_\w+_H\n", text)
            if m:
                text = text[:m.end()] + '\n#include "runlab/export.h"\n' + text[m.end():]
        with open(h, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"annotate: {changed} declarations marked RL_API")
    return 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("list", "check", "annotate"):
        print(__doc__, file=sys.stderr)
        return 2
    return {"list": cmd_list, "check": cmd_check, "annotate": cmd_annotate}[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
