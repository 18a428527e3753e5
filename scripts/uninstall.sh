#!/usr/bin/env bash
# `make uninstall`: removes exactly what the last `make install` (cmake --install) put in
# place, as listed in the build tree's install_manifest.txt, under DESTDIR (the manifest
# lists paths without it), then the directories of runlab's own that are left empty
# (share/runlab/..., include/runlab, lib/cmake/runlab, share/doc/librunlab0); directories
# shared with others (bin, lib, share/man/man1) stay.
set -euo pipefail
manifest=${1:?usage: uninstall.sh BUILD/install_manifest.txt [DESTDIR]}
destdir=${2:-}
destdir=${destdir%/}
if [ ! -f "$manifest" ]; then
    echo "uninstall: $manifest not found: nothing was installed from this build tree (make install first)" >&2
    exit 1
fi
removed=0
dirs=()
while IFS= read -r f || [ -n "$f" ]; do
    [ -n "$f" ] || continue
    f=$destdir$f
    if [ -e "$f" ] || [ -L "$f" ]; then
        rm -f -- "$f"
        removed=$((removed + 1))
    fi
    dirs+=("$(dirname -- "$f")")
done <"$manifest"
# Deepest first, so share/runlab/maps goes before share/runlab.
for d in $(printf '%s\n' "${dirs[@]}" | sort -u | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-); do
    while [[ "$(basename -- "$d")" == *runlab* || "$d" == */runlab/* ]]; do
        rmdir -- "$d" 2>/dev/null || break
        d=$(dirname -- "$d")
    done
done
echo "uninstall: removed $removed files listed in $manifest"
