# The exported API is exactly the public headers (issue 32): librunlab.so's dynamic symbols
# are the declarations of include/runlab/*.h, each marked RL_API, none missing and none
# extra (a failure names the symbol and its header); every public header compiles on its
# own as C17 and as C++17; the version macros, rl_version() and the SONAME agree.
. "$(dirname "$0")/lib.sh"
SRC="${RUNLAB_SOURCE:?}"
LIB="${RUNLAB_BIN:?}/../lib/librunlab.so"
rc=0 out="" err=""

out=$(python3 "$SRC/scripts/rl_api.py" check "$LIB" 2>&1)
rc=$?
check "librunlab.so exports exactly the RL_API declarations of include/runlab/*.h" rc_is 0
[ "$rc" -ne 0 ] && grep -E '^(UNMARKED|MISSING|EXTRA):' <<<"$out" | sed 's/^/  /'
out=$(python3 "$SRC/scripts/rl_api.py" list | wc -l)
check "the list of declarations is not empty (the parser found $out)" test "$out" -gt 400
not_exported() { ! nm -D --defined-only "$LIB" | awk '{print $3}' | grep -qxE "$(IFS='|'; echo "$*")"; }
check "internal functions stay inside (cdr_open, rl_grow_array not exported)" \
    not_exported cdr_open rl_grow_array

# Each header alone, C17 strict and C++17 (extern "C" guards; json.h needs json-c's path).
json_cflags=$(pkg-config --cflags json-c)
for h in "$SRC"/include/runlab/*.h; do
    name=$(basename "$h")
    printf '#include <runlab/%s>\nint main(void) { return 0; }\n' "$name" >"$TMP/h.c"
    # shellcheck disable=SC2086
    err=$(cc -std=c17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$SRC/include" $json_cflags "$TMP/h.c" 2>&1)
    rc=$?
    check "runlab/$name compiles alone as C17 (-Wall -Wextra -Wpedantic -Werror)" rc_is 0
    printf '#include <runlab/%s>\nint main() { return 0; }\n' "$name" >"$TMP/h.cpp"
    # shellcheck disable=SC2086
    err=$(c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$SRC/include" $json_cflags "$TMP/h.cpp" 2>&1)
    rc=$?
    check "runlab/$name compiles alone as C++17" rc_is 0
done
err=""

# Every declaration is inside the header's extern "C" block: a C++ program that calls one
# links against the C library (a missing guard would mangle the name).
cat >"$TMP/v.cpp" <<'CPP'
#include <runlab/version.h>
#include <runlab/time.h>
#include <cstdio>
static_assert(RUNLAB_VERSION_NUMBER == RUNLAB_VERSION_MAJOR * 10000 + RUNLAB_VERSION_MINOR * 100 + RUNLAB_VERSION_PATCH, "");
int main() {
    int major = -1, minor = -1, patch = -1;
    int n = rl_version(&major, &minor, &patch);
    std::printf("%d.%d.%d %d %d\n", major, minor, patch, n, RUNLAB_VERSION_NUMBER);
    return rl_mono_ns() > 0 ? 0 : 1;
}
CPP
sanitize=""
nm -D --undefined-only "$LIB" | grep -q __asan_init && sanitize="-fsanitize=address,undefined"
nm -D --undefined-only "$LIB" | grep -q __tsan_init && sanitize="-fsanitize=thread"
# shellcheck disable=SC2086
err=$(c++ -std=c++17 $sanitize -I"$SRC/include" "$TMP/v.cpp" -o "$TMP/v" -L"$(dirname "$LIB")" -lrunlab -Wl,-rpath,"$(dirname "$LIB")" 2>&1)
rc=$?
check "a C++17 program calling rl_version and rl_mono_ns links against librunlab.so" rc_is 0
out=$("$TMP/v" 2>&1)
rc=$?
hdr=$(sed -n 's/^#define RUNLAB_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$SRC/include/runlab/version.h" | paste -sd.)
check "rl_version() reports the header's version $hdr, and its number" \
    test "$out" = "$hdr $((${hdr%%.*} * 10000 + $(cut -d. -f2 <<<"$hdr") * 100 + ${hdr##*.})) $((${hdr%%.*} * 10000 + $(cut -d. -f2 <<<"$hdr") * 100 + ${hdr##*.}))"
real=$(readlink -f "$LIB")
check "librunlab.so's file carries the version ($(basename "$real"))" test "$(basename "$real")" = "librunlab.so.$hdr"
soname=$(readelf -d "$real" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
abi=$(sed -n 's/^set(RUNLAB_ABI_VERSION \([0-9]*\))$/\1/p' "$SRC/CMakeLists.txt")
check "the SONAME ($soname) is the ABI version's (librunlab.so.$abi), not the project version's" \
    test "$soname" = "librunlab.so.$abi"
run --version
check "runlab --version names version $hdr" out_has "$hdr"

echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
