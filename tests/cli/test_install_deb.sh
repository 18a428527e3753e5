# Issue 32: the Debian packages (CPack, cmake/deb.cmake) from this build tree: runlab (command,
# man pages, completion, maps), librunlab0 (the shared library, with shlibs and the ldconfig
# trigger), librunlab-dev (headers, static library, runlab.pc, CMake files) and, where this
# build made the Python package, python3-runlab (issue 33), with runtime
# dependencies computed by dpkg-shlibdeps; inspected with dpkg-deb --contents, checked by
# lintian (no errors); installed, used and purged where this test runs as root and no
# runlab package is installed already (skipped with a message otherwise).
. "$(dirname "$0")/lib.sh"
BUILD=$(cd "${RUNLAB_BIN:?}/.." && pwd)
rc=0 out="" err=""
command -v cpack >/dev/null && command -v dpkg-deb >/dev/null ||
    { echo "SKIP: cpack or dpkg-deb missing (scripts/install-deps.sh installs them)"; exit 77; }

{
    flock 9
    cpack --config "$BUILD/CPackConfig.cmake" -B "$TMP/pkg" >"$TMP/cpack.out" 2>&1
    rc=$?
} 9>>"$BUILD/.install.lock"
out=$(tail -n 20 "$TMP/cpack.out")
check "cpack builds the packages" rc_is 0
abi=$(sed -n 's/^set(RUNLAB_ABI_VERSION \([0-9]*\))$/\1/p' "${RUNLAB_SOURCE:?}/CMakeLists.txt")
deb_runlab=$(ls "$TMP"/pkg/runlab_*.deb 2>/dev/null)
deb_lib=$(ls "$TMP"/pkg/librunlab"${abi}"_*.deb 2>/dev/null)
deb_dev=$(ls "$TMP"/pkg/librunlab-dev_*.deb 2>/dev/null)
check "three packages: runlab, librunlab$abi, librunlab-dev" test -f "$deb_runlab" -a -f "$deb_lib" -a -f "$deb_dev"
# The Python package is built where python3-dev and python3-numpy are (python/CMakeLists.txt).
deb_py=""
if ls "$BUILD"/python/runlab/_runlab*.so >/dev/null 2>&1; then
    deb_py=$(ls "$TMP"/pkg/python3-runlab_*.deb 2>/dev/null)
    check "python3-runlab is packaged beside them" test -f "$deb_py"
else
    echo "SKIP python3-runlab: this build has no Python package (python3-dev, python3-numpy)"
fi

not() { ! "$@"; }
contents() { dpkg-deb --contents "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
has() { grep -qE "$2" <<<"$(contents "$1")"; }
for f in '^/usr/bin/runlab$' '^/usr/share/man/man1/runlab\.1\.gz$' '^/usr/share/man/man1/runlab-evaluate\.1\.gz$' \
    '^/usr/share/bash-completion/completions/runlab$' '^/usr/share/runlab/maps/LabMapCommonRoad\.xml$' \
    '^/usr/share/doc/runlab/copyright$'; do
    check "runlab.deb holds $f" has "$deb_runlab" "$f"
done
check "runlab.deb holds no library or header" not has "$deb_runlab" '\.so|\.a$|/include/'
for f in "^/usr/lib/(.*/)?librunlab\\.so\\.$abi\$" '^/usr/lib/(.*/)?librunlab\.so\.[0-9]+\.[0-9]+\.[0-9]+$' '^/usr/share/doc/librunlab[0-9]+/copyright$'; do
    check "librunlab$abi.deb holds $f" has "$deb_lib" "$f"
done
check "librunlab$abi.deb holds no development file" not has "$deb_lib" 'librunlab\.so$|\.a$|/include/|pkgconfig'
for f in '^/usr/include/runlab/version\.h$' '^/usr/lib/(.*/)?librunlab\.a$' '^/usr/lib/(.*/)?librunlab\.so$' \
    '^/usr/lib/(.*/)?pkgconfig/runlab\.pc$' '^/usr/lib/(.*/)?cmake/runlab/runlabConfig\.cmake$'; do
    check "librunlab-dev.deb holds $f" has "$deb_dev" "$f"
done
if [ -f "$deb_py" ]; then
    for f in '^/usr/lib/python3(\.[0-9]+)?/dist-packages/runlab/__init__\.py$' \
        '^/usr/lib/python3(\.[0-9]+)?/dist-packages/runlab/_runlab\.cpython-[0-9]+-[^/]*\.so$' \
        '^/usr/share/doc/python3-runlab/copyright$'; do
        check "python3-runlab.deb holds $f" has "$deb_py" "$f"
    done
    check "python3-runlab.deb holds no library, header or command" \
        not has "$deb_py" 'librunlab|/include/|/bin/'
    deps=$(dpkg-deb -f "$deb_py" Depends)
    out=$deps
    check "python3-runlab depends on its python3 minor version, numpy's ABI and pandas" \
        grep -qE '^python3 \(>= 3\.[0-9]+\), python3 \(<< 3\.[0-9]+\), python3-numpy.*python3-pandas' <<<"$deps"
fi
deps=$(dpkg-deb -f "$deb_runlab" Depends)
out=$deps
check "runlab's dependencies are computed (libzstd1, libddsc0debian, libfyaml0 with versions)" \
    grep -qE 'libzstd1 \(>= .*libddsc0debian|libddsc0debian.*libzstd1 \(>= ' <<<"$deps"
check "librunlab-dev depends on exactly this librunlab$abi" grep -qF "librunlab$abi (= " <<<"$(dpkg-deb -f "$deb_dev" Depends)"
dpkg-deb -e "$deb_lib" "$TMP/ctl"
check "librunlab$abi has its shlibs file" grep -qE "^librunlab $abi librunlab$abi " "$TMP/ctl/shlibs"
check "... and activates the ldconfig trigger" grep -qx "activate-noawait ldconfig" "$TMP/ctl/triggers"

if command -v lintian >/dev/null; then
    out=$(lintian --tag-display-limit 0 "$deb_runlab" "$deb_lib" "$deb_dev" $deb_py 2>&1)
    errors=$(grep '^E: ' <<<"$out")
    check "lintian reports no errors ($(grep -c '^W: ' <<<"$out") warnings)" test -z "$errors"
else
    echo "SKIP lintian: not installed (scripts/install-deps.sh installs it)"
fi

# Install, use, purge: as root only, and never over a runlab the system already has.
pkgs="runlab librunlab$abi librunlab-dev${deb_py:+ python3-runlab}"
installed=$(dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>/dev/null | grep ' installed$')
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP install/remove: not root"
elif [ -n "$installed" ]; then
    echo "SKIP install/remove: already installed here: $installed"
else
    out=$(dpkg -i "$deb_lib" "$deb_dev" "$deb_runlab" $deb_py 2>&1)
    rc=$?
    check "dpkg -i of the packages exits 0 ($pkgs)" rc_is 0
    files=$(dpkg -L $pkgs 2>/dev/null | sort -u)
    out=$(cd "$TMP" && /usr/bin/runlab --version 2>&1)
    rc=$?
    check "the packaged runlab runs" rc_is 0
    check "man finds runlab-evaluate(1)" test -n "$(man -w runlab-evaluate 2>/dev/null)"
    out=$(env -u PKG_CONFIG_PATH pkg-config --modversion runlab 2>&1)
    check "pkg-config finds the packaged runlab.pc ($out)" test "$out" = "$(dpkg-deb -f "$deb_dev" Version)"
    mkdir -p "$TMP/demo"
    cp "$RUNLAB_SOURCE/tests/cyclonedds-loopback.xml" "$TMP/dds.xml"
    test_domain
    out=$(cd "$TMP" && CYCLONEDDS_URI="file://$TMP/dds.xml" timeout 600 /usr/bin/runlab demo --out-dir "$TMP/demo" --domain "$DOMAIN" 2>&1)
    rc=$?
    out=$(tail -n 15 <<<"$out")
    check "the packaged runlab demo exits 0" rc_is 0
    if [ -n "$deb_py" ]; then
        # Debian's own python3, no PYTHONPATH: the package is found where dpkg put it.
        pyext=$(dpkg -L python3-runlab | grep '/_runlab.*\.so$')
        out=$(cd "$TMP" && env -u PYTHONPATH $(python_env "$pyext") /usr/bin/python3 -c \
            'import runlab, sys; r = runlab.load_runs(sys.argv[1]); print(runlab.__file__, runlab.__version__, type(r).__name__)' \
            "$TMP/demo" 2>&1)
        rc=$?
        check "Debian's python3 imports the packaged runlab" rc_is 0
        check "... from /usr/lib/python3*/dist-packages, version $(dpkg-deb -f "$deb_py" Version)" \
            grep -qE "^/usr/lib/python3(\.[0-9]+)?/dist-packages/runlab/__init__\.py $(dpkg-deb -f "$deb_py" Version) RunSet$" <<<"$out"
    fi
    out=$(dpkg --purge ${deb_py:+python3-runlab} librunlab-dev runlab "librunlab$abi" 2>&1)
    rc=$?
    check "dpkg --purge of the packages exits 0" rc_is 0
    left=""
    while IFS= read -r f; do
        [ -f "$f" ] || [ -L "$f" ] && left="$left $f"
        [ -d "$f" ] && [[ "$f" == *runlab* ]] && left="$left $f/"
    done <<<"$files"
    out=$left
    check "nothing of theirs is left behind ($left)" test -z "$left"
fi

echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
