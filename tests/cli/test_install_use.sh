# Issue 32: runlab installed as a lab adopts it. Installs into a temporary prefix, then
# (a) builds and runs a C program with `pkg-config --cflags --libs runlab`, (b) a CMake
# project with find_package(runlab 0.2 CONFIG REQUIRED) linking runlab::runlab and
# runlab::runlab_static, (c) a C++17 planner built against runlab/bench.h that the
# installed `runlab bench` runs; (d) runs the installed `runlab demo` and `runlab evaluate`
# with the source and build trees hidden (a private mount namespace lays an empty tmpfs
# over them: "moved away" without disturbing tests running beside this one); (e) removes
# the installation with scripts/uninstall.sh from its install_manifest.txt: nothing stays.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "${RUNLAB_SOURCE:?}" && pwd)
BUILD=$(cd "${RUNLAB_BIN:?}/.." && pwd)
P="$TMP/prefix"
rc=0 out="" err=""

# cmake --install writes BUILD/install_manifest.txt: the tests that install from this build
# tree take turns (the same lock in test_install.sh and test_ros2_package.sh).
{
    flock 9
    cmake --install "$BUILD" --prefix "$P" >"$TMP/install.out" 2>&1
    rc=$?
    cp "$BUILD/install_manifest.txt" "$TMP/manifest.txt"
} 9>>"$BUILD/.install.lock"
out=$(tail -n 5 "$TMP/install.out")
check "cmake --install exits 0" rc_is 0
libdir=$(sed -n "s|^$P/\(.*\)/librunlab.so\$|\1|p" "$TMP/manifest.txt")
check "the manifest lists librunlab.so under the prefix (libdir '$libdir')" test -n "$libdir"
for f in "$libdir/pkgconfig/runlab.pc" "$libdir/cmake/runlab/runlabConfig.cmake" \
    "$libdir/cmake/runlab/runlabConfigVersion.cmake" "$libdir/cmake/runlab/runlabTargets.cmake" \
    include/runlab/version.h include/runlab/export.h; do
    check "installed: $f" test -e "$P/$f"
done

for f in share/man/man1/runlab.1.gz share/man/man1/runlab-evaluate.1.gz \
    share/bash-completion/completions/runlab; do
    check "installed: $f" test -e "$P/$f"
done
out=$(man -M "$P/share/man" -w runlab-evaluate 2>&1)
check "man finds runlab-evaluate(1) in the prefix's man path" test "$out" = "$P/share/man/man1/runlab-evaluate.1.gz"

# The Python package (where this build made it): under P/lib/python3.X/dist-packages, the
# directory Debian's python3 searches for P=/usr/local; importable from there alone.
pyinit=$(grep '/runlab/__init__\.py$' "$TMP/manifest.txt")
if [ -n "$pyinit" ]; then
    check "the Python package installs under P/lib/python3.X/dist-packages ($pyinit)" \
        grep -qE "^$P/lib/python3\.[0-9]+/dist-packages/runlab/__init__\.py$" <<<"$pyinit"
    pyext=$(ls "$(dirname "$pyinit")"/_runlab*.so)
    out=$(cd "$TMP" && env $(python_env "$pyext") PYTHONPATH="$(dirname "$(dirname "$pyinit")")" /usr/bin/python3 -c \
        'import runlab; print(runlab.__file__, runlab.__version__)' 2>&1)
    rc=$?
    check "Debian's python3 imports the installed package ($out)" test "$out" = "$pyinit $(sed -n 's/^Version: //p' "$P/$libdir/pkgconfig/runlab.pc")"
else
    echo "SKIP the Python package: this build has none (python3-dev, python3-numpy)"
fi

# Programs built against an ASan/TSan librunlab need the same runtime.
SAN=""
nm -D --undefined-only "$P/$libdir/librunlab.so" | grep -q __asan_init && SAN="-fsanitize=address,undefined"
nm -D --undefined-only "$P/$libdir/librunlab.so" | grep -q __tsan_init && SAN="-fsanitize=thread"
export PKG_CONFIG_PATH="$P/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

# (a) pkg-config.
out=$(pkg-config --modversion runlab 2>&1)
hdr=$(sed -n 's/^#define RUNLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$SRC/include/runlab/version.h" | paste -sd.)
check "pkg-config --modversion runlab is $hdr" test "$out" = "$hdr"
out=$(pkg-config --print-requires-private runlab 2>&1)
for m in libzstd liblz4 libdeflate zlib libcrypto libfyaml sqlite3 cairo expat CycloneDDS; do
    check "runlab.pc Requires.private names $m" grep -qx "$m" <<<"$out"
done
cat >"$TMP/use.c" <<'C'
#include <runlab/json.h>
#include <runlab/time.h>
#include <runlab/version.h>
#include <stdio.h>
#if RUNLAB_VERSION_NUMBER < 200
#error runlab 0.2 or newer needed
#endif
int main(void)
{
    char iso[RL_TIME_ISO_LEN];
    if (rl_time_format_iso(0, iso, sizeof iso) != 0)
        return 1;
    printf("%s %d\n", iso, rl_version(NULL, NULL, NULL));
    return 0;
}
C
# shellcheck disable=SC2046,SC2086
err=$(cc -std=c17 -Wall -Wextra -Wpedantic -Werror $SAN "$TMP/use.c" -o "$TMP/use" \
    $(pkg-config --cflags --libs runlab) -Wl,-rpath,"$(readlink -f "$(pkg-config --variable=libdir runlab)")" 2>&1)
rc=$?
check "a C program builds with \`pkg-config --cflags --libs runlab\`" rc_is 0
out=$("$TMP/use" 2>&1)
rc=$?
check "... runs against the installed librunlab.so ($out)" test "$out" = "1970-01-01T00:00:00.000000000Z $((${hdr%%.*} * 10000 + $(cut -d. -f2 <<<"$hdr") * 100 + ${hdr##*.}))"
loaded=$(ldd "$TMP/use" | sed -n 's/^[[:space:]]*librunlab.so[^ ]* => \([^ ]*\) .*/\1/p')
check "... which is the installed one ($loaded)" test "$(readlink -f "$loaded")" = "$(readlink -f "$P/$libdir/librunlab.so")"

# (b) CMake.
mkdir -p "$TMP/cm"
cat >"$TMP/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(uses_runlab C)
find_package(runlab 0.2 CONFIG REQUIRED)
add_executable(use_shared ../use.c)
target_link_libraries(use_shared PRIVATE runlab::runlab)
add_executable(use_static ../use.c)
target_link_libraries(use_static PRIVATE runlab::runlab_static)
CM
cmake -S "$TMP/cm" -B "$TMP/cm/build" -G Ninja -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$SAN" -DCMAKE_EXE_LINKER_FLAGS="$SAN" >"$TMP/cm.out" 2>&1 &&
    cmake --build "$TMP/cm/build" >>"$TMP/cm.out" 2>&1
rc=$?
out=$(tail -n 20 "$TMP/cm.out")
check "a CMake project with find_package(runlab 0.2 CONFIG REQUIRED) builds" rc_is 0
out=$("$TMP/cm/build/use_shared" 2>&1)
rc=$?
check "... its runlab::runlab program runs" rc_is 0
check "... linked against librunlab.so" grep -qF "librunlab.so" <<<"$(ldd "$TMP/cm/build/use_shared")"
out=$("$TMP/cm/build/use_static" 2>&1)
rc=$?
check "... its runlab::runlab_static program runs" rc_is 0
not_linked() { ! ldd "$1" | grep -qF librunlab.so; }
check "... without librunlab.so" not_linked "$TMP/cm/build/use_static"
sed -i 's/find_package(runlab 0.2 /find_package(runlab 0.9 /' "$TMP/cm/CMakeLists.txt"
cmake -S "$TMP/cm" -B "$TMP/cm/build9" -G Ninja -DCMAKE_PREFIX_PATH="$P" >"$TMP/cm9.out" 2>&1
rc=$?
out=$(tail -n 8 "$TMP/cm9.out")
check "find_package(runlab 0.9 CONFIG REQUIRED) refuses version $hdr" test "$rc" -ne 0
check "... and says which version it found" grep -qF "$hdr" "$TMP/cm9.out"

# (c) A C++17 planner against runlab/bench.h, run by the installed `runlab bench`.
cat >"$TMP/planner.cpp" <<'CPP'
// A planner outside runlab's tree: speaks the line protocol (docs/bench.md), naming its
// property type and status through runlab/bench.h.
#include <runlab/bench.h>
#include <runlab/version.h>
#include <cstdio>
#include <cstdlib>
#include <string>
int main()
{
    const char *seed = std::getenv("RUNLAB_SEED");
    std::string settings;
    std::getline(std::cin, settings);
    std::printf("start\n");
    std::printf("property\tseed text\t%s\t%s\n", rl_bench_type_name(RL_BENCH_TEXT), seed ? seed : "none");
    std::printf("property\tlinked version\t%s\t%d\n", rl_bench_type_name(RL_BENCH_INTEGER), rl_version(nullptr, nullptr, nullptr));
    std::fprintf(stderr, "status name: %s\n", rl_bench_status_name(RL_RUN_EXACT));
    std::printf("time\t0.001\nstatus\texact\n");
    return 0;
}
CPP
sed -i 's/#include <cstdlib>/#include <cstdlib>\n#include <iostream>/' "$TMP/planner.cpp"
# shellcheck disable=SC2046,SC2086
err=$(c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror $SAN "$TMP/planner.cpp" -o "$TMP/planner" \
    $(pkg-config --cflags --libs runlab) -Wl,-rpath,"$(readlink -f "$(pkg-config --variable=libdir runlab)")" 2>&1)
rc=$?
check "a C++17 planner builds against runlab/bench.h with pkg-config" rc_is 0
cat >"$TMP/bench.yaml" <<YAML
experiment: installed cpp planner
problem: maze2d
seed: 3
max_time: 60
runs: 2
planners:
  - name: cpp planner
    command: [$TMP/planner]
YAML
mkdir -p "$TMP/res"
(cd "$TMP" && "$P/bin/runlab" bench "$TMP/bench.yaml" --out-dir "$TMP/res" >"$TMP/out" 2>"$TMP/err")
rc=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
check "the installed runlab bench runs the C++ planner" rc_is 0
dir=$(tail -n 1 <<<"$out")
summary=$(python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(";".join(r["status"] + "," + str(r["properties"].get("linked version")) for p in d["planners"] for r in p["runs"]))' "$dir/results.json" 2>&1)
n=$((${hdr%%.*} * 10000 + $(cut -d. -f2 <<<"$hdr") * 100 + ${hdr##*.}))
check "both runs solved, each reporting the librunlab version it linked ($summary)" \
    test "$summary" = "Exact solution,$n;Exact solution,$n"

# (d) The installed command finds its data (the lab map, the evaluation's defaults) in the
# prefix: source and build trees hidden under empty tmpfs mounts.
if unshare -rm true 2>/dev/null; then
    test_domain
    cp "$SRC/tests/cyclonedds-loopback.xml" "$TMP/dds.xml"
    mkdir -p "$TMP/demo"
    cat >"$TMP/hidden.sh" <<SH
mount -t tmpfs none "$BUILD" && mount -t tmpfs none "$SRC" || exit 99
[ -z "\$(ls -A "$SRC")" ] || exit 98
cd "$TMP" && "$P/bin/runlab" demo --out-dir "$TMP/demo" --domain $DOMAIN || exit \$?
run=\$(ls -d "$TMP"/demo/*/experiments/*_run-* | head -n 1)
echo "EVALUATED-RUN \$run"
# its verdict is the live run's (exit 1 FAIL or 3 INCOMPLETE on a loaded machine); only
# 2, an evaluation that cannot run, fails here
"$P/bin/runlab" evaluate "\$run" >"$TMP/eval.out"
ec=\$?
[ \$ec -eq 0 ] || [ \$ec -eq 1 ] || [ \$ec -eq 3 ] || exit \$ec
cp "\$(ls -d "\$run"/evaluations/*/ | tail -n 1)/summary.json" "$TMP/summary.json"
SH
    CYCLONEDDS_URI="file://$TMP/dds.xml" timeout 600 unshare -rm bash "$TMP/hidden.sh" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    out=$(tail -n 30 "$TMP/out")
    err=$(tail -n 20 "$TMP/err")
    check "with the source and build trees hidden, the installed runlab demo and evaluate exit 0" rc_is 0
    check "... the demo's lab section ran on the installed map" grep -q "on the CPM lab map" "$TMP/out"
    run_dir=$(sed -n 's/^EVALUATED-RUN //p' "$TMP/out")
    check "... the recorded run ($run_dir) stores the installed map" \
        cmp -s "$run_dir/map/LabMapCommonRoad.xml" "$P/share/runlab/maps/LabMapCommonRoad.xml"
    check "... runlab evaluate wrote its summary.json" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/summary.json"
else
    echo "SKIP (d): unshare -rm is not permitted here, so the trees cannot be hidden"
fi

# (e) Uninstall: exactly the manifest's files go; runlab's own directories go when empty.
touch "$P/$libdir/someone-elses.so"
out=$(bash "$SRC/scripts/uninstall.sh" "$TMP/manifest.txt" 2>&1)
rc=$?
check "scripts/uninstall.sh exits 0" rc_is 0
left=$(cd "$P" && find . -type f | sort | tr '\n' ' ')
check "after uninstall only the file it did not install is left ($left)" test "$left" = "./$libdir/someone-elses.so "
left=$(cd "$P" && find . -path '*runlab*' | tr '\n' ' ')
check "... and no runlab directory ($left)" test -z "$left"

# A staged install (DESTDIR, as packagers do): the manifest lists the paths without DESTDIR,
# so uninstall.sh is given it, and removes the staged files only.
{
    flock 9
    DESTDIR="$TMP/stage" cmake --install "$BUILD" --prefix /opt/runlab-test >"$TMP/stage.out" 2>&1
    rc=$?
    cp "$BUILD/install_manifest.txt" "$TMP/stage-manifest.txt"
} 9>>"$BUILD/.install.lock"
out=$(tail -n 5 "$TMP/stage.out")
check "DESTDIR=STAGE cmake --install --prefix /opt/runlab-test stages under STAGE" test -x "$TMP/stage/opt/runlab-test/bin/runlab"
check "... and writes nothing to /opt/runlab-test" test ! -e /opt/runlab-test
out=$(bash "$SRC/scripts/uninstall.sh" "$TMP/stage-manifest.txt" "$TMP/stage" 2>&1)
rc=$?
left=$(cd "$TMP/stage" && find . -type f | tr '\n' ' ')
check "uninstall.sh MANIFEST STAGE removes every staged file ($left)" test "$rc" -eq 0 -a -z "$left"

echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
