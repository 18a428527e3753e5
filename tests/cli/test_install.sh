# `cmake --install` as a user runs it: the installed runlab finds the lab map in
# PREFIX/share/runlab/maps (with its licence) for `runlab sim`, every installed public
# header compiles on its own, and the libraries are there.
. "$(dirname "$0")/lib.sh"
BUILD="${RUNLAB_BIN:?}/.."
P="$TMP/prefix"
# BUILD/install_manifest.txt is shared: tests installing from this tree take turns.
{
    flock 9
    cmake --install "$BUILD" --prefix "$P" >"$TMP/install.out" 2>&1
    rc=$?
} 9>>"$BUILD/.install.lock"
out=$(cat "$TMP/install.out")
err=""
check "cmake --install exits 0" rc_is 0
for f in bin/runlab lib/librunlab.a lib/librunlab.so share/runlab/maps/LabMapCommonRoad.xml \
    share/runlab/maps/LabMapCommonRoad.LICENSE.txt include/runlab/record.h; do
    check "installed: $f" test -e "$P/$f"
done
check "the installed map is the repository's" cmp -s "$P/share/runlab/maps/LabMapCommonRoad.xml" \
    "${RUNLAB_SOURCE:?}/data/maps/LabMapCommonRoad.xml"

# The installed command, run from elsewhere, takes the installed map by default.
cd "$TMP" || exit 1
"$P/bin/runlab" sim --offline "$TMP/home" --vehicles 2 --duration 2 --seed 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
check "installed runlab sim --offline exits 0" rc_is 0
run_dir=$(tail -n 1 "$TMP/out")
check "its run stores the installed map" cmp -s "$run_dir/map/LabMapCommonRoad.xml" "$P/share/runlab/maps/LabMapCommonRoad.xml"

# Each public header compiles alone against the installed include/ (nothing from the source
# or build tree leaks into them).
for h in "$P"/include/runlab/*.h; do
    name=$(basename "$h")
    printf '#include <runlab/%s>\nint main(void) { return 0; }\n' "$name" >"$TMP/h.c"
    out=$(cc -std=c17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$P/include" "$TMP/h.c" 2>&1)
    rc=$?
    check "installed runlab/$name compiles on its own" rc_is 0
done

echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
