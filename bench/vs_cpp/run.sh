#!/bin/sh
# Paired timings of runlab's MCAP writer and file-order reader against the official C++ MCAP
# library (issue 36): each case run REPS times per side, sides alternating, medians of CPU
# and wall time, the ratio C++ / runlab (above 1: runlab faster) and the load average.
# Usage: bench/vs_cpp/run.sh MCAP_CPP_INCLUDE [CASE...]
#   MCAP_CPP_INCLUDE: the C++ library's include folder (mcap/cpp/mcap/include of a checkout
#   of github.com/foxglove/mcap; header-only, needs libzstd-dev and liblz4-dev); nothing of it
#   is copied into this repository. CASE: OP:PAYLOAD:SIZE:COUNT:COMP[:LEVEL], e.g.
#   read:sensor:100:4000000:zstd. Without cases, the set docs/mcap.md reports.
#   Environment: BUILD (runlab build folder, default build), REPS (default 7),
#   IMPLS (sides, default "rl cpp"; "rlnc" reads without CRCs), CMP_FILE (default in TMPDIR).
set -eu
[ $# -ge 1 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
inc=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
[ -f "$inc/mcap/writer.hpp" ] || { echo "run.sh: $inc/mcap/writer.hpp not found" >&2; exit 2; }
[ -f "$build/lib/librunlab.a" ] || { echo "run.sh: $build/lib/librunlab.a not found (make first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
g++ -O2 -std=c++17 -I "$inc" -I "$root/include" "$here/mcap_vs_cpp.cpp" -o "$out/mcap_vs_cpp" \
    "$build/lib/librunlab.a" -lzstd -llz4 -ldeflate -lz -lcrypto -ljson-c -lfyaml -lpthread
export CMP_FILE=${CMP_FILE:-${TMPDIR:-/tmp}/mcap_vs_cpp_$$.mcap}
if [ $# -eq 0 ]; then
    set -- read:sensor:100:4000000:none read:random:100:4000000:zstd read:sensor:100:4000000:zstd \
        read:random:100:4000000:lz4 read:sensor:100:4000000:lz4 read:sensor:10000:40000:none \
        read:sensor:10000:40000:zstd read:sensor:10000:40000:lz4 \
        write:random:100:2000000:zstd write:sensor:100:2000000:zstd write:random:100:2000000:lz4:fast \
        write:sensor:100:2000000:lz4:fast write:random:100:2000000:lz4:fastest \
        write:sensor:100:2000000:lz4:fastest write:random:10000:20000:zstd \
        write:sensor:10000:20000:zstd write:random:10000:20000:lz4:fast write:sensor:10000:20000:lz4:fast
fi
python3 - "$out/mcap_vs_cpp" "$@" <<'PY'
import os, statistics, subprocess, sys
tool, cases = sys.argv[1], [c.split(":") for c in sys.argv[2:]]
reps = int(os.environ.get("REPS", "7"))
impls = os.environ.get("IMPLS", "rl cpp").split()
def run(*args):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"mcap_vs_cpp {' '.join(args)}: {p.stderr.strip()}")
    cpu, wall, rss = p.stdout.split()
    return float(cpu), float(wall), int(rss)
print("C++ / runlab, medians of %d alternating pairs; CPU = user+system of all threads" % reps)
for case in cases:
    op, payload, size, count, comp = case[:5]
    level = case[5] if len(case) > 5 else "default"
    got = {k: [] for k in impls}
    for r in range(reps):
        for impl in (impls if r % 2 == 0 else impls[::-1]):
            if op == "read":  # a fresh file, written by runlab, before each read
                run("write", "rl", payload, size, count, comp, level)
            got[impl].append(run(op, impl, payload, size, count, comp, level))
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v),
               max(x[2] for x in v)) for k, v in got.items()}
    line = f"{op:5} {payload:7} {size:>6} B x {count:>8} {comp:4} {level:8}"
    for k in impls:
        c, w, rss = med[k]
        if k == "cpp" or "cpp" not in med:
            line += f" | {k} cpu {c:.3f} s wall {w:.3f} s rss {rss / 1024:.0f} MB"
        else:
            line += f" | {k}: cpu x{med['cpp'][0] / c:.2f} wall x{med['cpp'][1] / w:.2f} rss {rss / 1024:.0f} MB"
    print(line + " | load " + open("/proc/loadavg").read().split()[0], flush=True)
PY
rm -f "$CMP_FILE"
