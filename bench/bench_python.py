"""Benchmark of the runlab Python package (python/, docs/python.md): runlab.load_runs +
RunData.frame() against pandas.read_csv of the same files, each in a fresh process of
this script (same interpreter, same files, warm page cache), and against Polars'
read_csv when Polars is importable. Prints CPU seconds (user + system, every thread),
wall seconds and the peak memory added, per tool, and the ratios.

Tree: RUNLAB_BENCH_PY_RUNS runs (default 1,000: 870 MiB of CSV, ~20 s) x 2000 cycles x 40
columns, written once as performance_log.csv files under a temporary directory
(a run_manifest.yaml-less tree: the loader marks them DEGRADED/no_manifest, which costs
nothing measurable). `make bench` runs it with the build tree's package."""

import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

CYCLES, COLUMNS = 2000, 40


def write_tree(root, runs):
    rnd = random.Random(7)
    header = ["CycleIndex", "ElapsedWallTimeSec"] + [f"layer{c % 4}.Col{c}" for c in range(COLUMNS - 2)]
    lines = [",".join(header)]
    total = [0.0] * COLUMNS
    for i in range(CYCLES):
        row = [str(i), repr(i * 0.0123 + rnd.random() * 1e-3)]
        for c in range(2, COLUMNS):
            kind = c % 4
            if kind == 0:    # timer, seconds with ns digits
                row.append(f"{rnd.random() * 0.01:.9f}")
            elif kind == 1:  # counter
                row.append(str(rnd.randrange(1000)))
            elif kind == 2:  # cumulative total
                total[c] += rnd.random()
                row.append(f"{total[c]:.6f}")
            else:            # full-precision gauge
                row.append(repr(rnd.random() * 100))
        lines.append(",".join(row))
    text = "\n".join(lines) + "\n"
    for r in range(runs):
        d = os.path.join(root, f"scene{r % 10:02d}", "p", f"run{r:05d}")
        os.makedirs(d)
        with open(os.path.join(d, "performance_log.csv"), "w") as f:
            f.write(text)
    return len(text) * runs


def measure(tool, root):
    """Runs in a child: loads the tree with `tool`, prints cpu wall peak_kib rows."""
    import numpy  # noqa: F401  (imported before the baseline, like pandas below)
    import pandas as pd
    files = sorted(os.path.join(dp, "performance_log.csv") for dp, _, fs in os.walk(root)
                   if "performance_log.csv" in fs)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    if tool == "runlab":
        import runlab
        runs = runlab.load_runs(root)
        frames = [r.frame() for r in runs]
    elif tool == "runlab-columns":
        import runlab
        runs = runlab.load_runs(root)
        frames = [r.columns for r in runs]
    elif tool == "pandas":
        frames = [pd.read_csv(f) for f in files]
    elif tool == "polars":
        import polars as pl
        frames = [pl.read_csv(f) for f in files]
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    rows = sum(len(f) if not isinstance(f, dict) else len(next(iter(f.values()))) for f in frames)
    print(cpu, wall, r1.ru_maxrss - base_rss, rows)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        measure(sys.argv[2], sys.argv[3])
        return 0
    try:
        import pandas  # noqa: F401
        import runlab  # noqa: F401
    except ImportError as e:
        print(f"bench_python: skipped: {e} (needs the built package and python3-pandas)")
        return 0
    runs = int(os.environ.get("RUNLAB_BENCH_PY_RUNS", "1000"))
    tmp = tempfile.mkdtemp(prefix="runlab-bench-py-")
    try:
        size = write_tree(tmp, runs)
        numbers_mib = runs * CYCLES * COLUMNS * 8 / 2**20
        print(f"bench_python: {runs} runs x {CYCLES} cycles x {COLUMNS} columns, "
              f"{size / 2**20:.0f} MiB of CSV, {numbers_mib:.0f} MiB of numbers")
        # runlab-columns: load_runs and .columns only, i.e. the C loader seen from Python;
        # runlab: load_runs + frame(), what a pandas user does.
        tools = ["runlab-columns", "runlab", "pandas"]
        try:
            import polars  # noqa: F401
            tools.append("polars")
        except ImportError:
            print("  polars: not installed (pip install polars), not compared")
        results = {}
        for tool in tools:
            out = subprocess.run([sys.executable, __file__, "--child", tool, tmp],
                                 capture_output=True, text=True, check=True).stdout.split()
            cpu, wall, peak, rows = float(out[0]), float(out[1]), int(out[2]), int(out[3])
            assert rows == runs * CYCLES, (tool, rows)
            results[tool] = (cpu, wall, peak)
            print(f"  {tool:15s} cpu {cpu:7.2f} s  wall {wall:7.2f} s  peak +{peak / 1024:7.0f} MiB"
                  f" ({peak / 1024 / numbers_mib:4.2f}x the numbers)")
        for tool in ("runlab-columns", "runlab"):
            p = results["pandas"]
            c = results[tool]
            print(f"  {tool} vs pandas.read_csv: {p[0] / c[0]:.1f}x less CPU, "
                  f"{p[1] / c[1]:.1f}x faster (wall)")
            if "polars" in results:
                q = results["polars"]
                print(f"  {tool} vs polars.read_csv: {q[0] / c[0]:.1f}x less CPU")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
