"""runlab.perflog (python/runlab/perflog.py over python/src/run_object.c): runs made by
`runlab explore` load with the same status, reasons and numbers as `runlab runs --json`;
columns are the CSV's values in numpy arrays over the C loader's buffers; bad inputs set a
status or raise runlab.Error subclasses, never crash; memory is stable over 1,000 loads.
Run by ctest as python.test_perflog (PYTHONPATH=build/python, RUNLAB_BIN=build/bin)."""

import gc
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

try:
    import numpy as np
except ImportError:  # pragma: no cover - the extension itself needs numpy
    np = None
try:
    import pandas as pd
except ImportError:
    pd = None

if np is None:
    raise unittest.SkipTest("numpy is not installed (apt install python3-numpy)")

import runlab
from runlab import perflog

RUNLAB = os.path.join(os.environ.get("RUNLAB_BIN", "build/bin"), "runlab")


def runlab_cmd(*args, check=True):
    p = subprocess.run([RUNLAB, *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"runlab {' '.join(map(str, args))}: rc {p.returncode}: {p.stderr}")
    return p


def same_number(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and float(a) == float(b)


class PerflogTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="runlab-py-"))
        cls.root = cls.tmp / "root"
        runlab_cmd("explore", "--root", cls.root, "--sweep", "--scenes", "1,2", "--seeds", "1,2",
                   "--budget", "40")
        cls.dirs = sorted(p.parent for p in cls.root.rglob("run_manifest.yaml"))
        assert len(cls.dirs) == 8, cls.dirs

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def broken_tree(self):
        """A copy of the tree with a cut row, a missing manifest, an empty CSV, a CSV of
        binary garbage with NUL bytes, and a symbolic link loop."""
        t = pathlib.Path(tempfile.mkdtemp(dir=self.tmp))
        shutil.copytree(self.root, t / "r", symlinks=True)
        d = sorted(p.parent for p in (t / "r").rglob("run_manifest.yaml"))
        with open(d[0] / "performance_log.csv", "r+b") as f:
            f.truncate(os.path.getsize(d[0] / "performance_log.csv") - 3)
        (d[1] / "run_manifest.yaml").unlink()
        (d[2] / "performance_log.csv").write_bytes(b"")
        (d[3] / "performance_log.csv").write_bytes(bytes(range(256)) * 64)
        (d[4] / "episode_summary.yaml").write_text("{{{: not yaml [\n")
        os.symlink("..", t / "r" / "sweep" / "loop")
        return t / "r", d

    # -- the issue's sample, unchanged apart from the import line ----------------------------
    def test_issue_sample_runs_unchanged(self):
        scene = self.root / "sweep" / "grid" / "s01"
        os.symlink("nbv", scene / "nbs")  # the design document's planner directory name
        try:
            from runlab import load_run, load_runs, aggregate_report
            import contextlib
            import io
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                run = load_run(max(p for p in (scene / "nbs").iterdir() if p.is_dir()))   # the newest nbs run
                print(run.status.value, run.num_rows, run.columns["planning.RealAccumulatedGain"][-1])
                print(aggregate_report(load_runs(scene)))
        finally:
            (scene / "nbs").unlink()
        lines = out.getvalue().splitlines()
        self.assertRegex(lines[0], r"^PARSED 11 \d+\.\d+$")
        report = runlab_cmd("runs", "report", scene).stdout
        self.assertEqual(lines[1:], report.splitlines())
        self.assertEqual(lines[1], "runs: 4 (parsed 4, degraded 0, skipped 0), 44 rows")

    # -- equality with the C tools -------------------------------------------------------------
    def check_like_cli(self, runs, root):
        cli = json.loads(runlab_cmd("runs", "--json", root).stdout)
        self.assertEqual(len(runs), len(cli))
        for r, c in zip(runs, cli):
            self.assertEqual(r.path, c["path"])
            self.assertEqual(r.status.value, c["status"].upper())
            self.assertIsInstance(r.status, runlab.RunStatus)
            self.assertEqual(r.reasons, c["reasons"])
            self.assertEqual(r.messages, c["messages"])
            self.assertEqual(r.num_rows, c["cycles"])
            self.assertEqual(len(r.columns), c["columns"])
            self.assertTrue(same_number(r.final_gain, c["final_gain"]), (r.final_gain, c))
            self.assertEqual(set(r.final_gain_by_layer), set(c["final_gain_by_layer"]))
            for k, v in c["final_gain_by_layer"].items():
                self.assertTrue(same_number(r.final_gain_by_layer[k], v))
            self.assertTrue(same_number(r.total_cost, c["total_cost"]))
            self.assertTrue(same_number(r.elapsed_time_s, c["elapsed_time_s"]))
            self.assertEqual(r.seed, c["seed"])
            end = r.summary.get("end_reason") if isinstance(r.summary, dict) else None
            self.assertEqual(end, c["end_reason"])

    def test_equal_to_runs_json(self):
        runs = runlab.load_runs(self.root)
        self.assertEqual(len(runs), 8)
        self.assertTrue(all(r.status is runlab.RunStatus.PARSED for r in runs))
        self.check_like_cli(runs, self.root)

    def test_broken_tree_equal_to_runs_json_and_report(self):
        root, d = self.broken_tree()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            runs = runlab.load_runs(root)
        self.assertEqual(len(caught), 1)
        self.assertTrue(str(caught[0].message).startswith(f"{root}/sweep/loop: symbolic link loop"))
        self.assertTrue(all(issubclass(w.category, runlab.WalkWarning) for w in caught))
        self.assertEqual(runs.walk_errors, [str(caught[0].message)])
        self.check_like_cli(runs, root)
        by_path = {r.path: r for r in runs}
        self.assertIn("truncated_row", by_path[str(d[0])].reasons)
        self.assertIn("no_manifest", by_path[str(d[1])].reasons)
        self.assertIsNone(by_path[str(d[1])].manifest)
        self.assertIs(by_path[str(d[2])].status, runlab.RunStatus.SKIPPED)
        self.assertEqual(by_path[str(d[2])].columns, {})
        self.assertEqual(by_path[str(d[2])].frame().shape if pd else (0, 0), (0, 0))
        self.assertIs(by_path[str(d[3])].status, runlab.RunStatus.SKIPPED)
        self.assertIn("bad_summary", by_path[str(d[4])].reasons)
        if pd is not None:  # the direct frame equals pandas' own constructor's, any run
            for r in runs:
                pd.testing.assert_frame_equal(r.frame(), r.frame(copy=True))
                self.assertEqual(r.frame().shape, (r.num_rows, len(r.columns)))
        report = runlab.aggregate_report(runs)
        cli = runlab_cmd("runs", "report", root, check=False).stdout
        self.assertEqual(str(report), cli.rstrip("\n"))
        self.assertEqual((report.total, report.parsed, report.degraded, report.skipped),
                         (8, 3, 3, 2))
        self.assertEqual(report.walk_errors, 1)

    def test_columns_are_the_csv_in_c_buffers(self):
        run = runlab.load_run(self.dirs[0])
        header = (self.dirs[0] / "performance_log.csv").read_text().splitlines()[0].split(",")
        self.assertEqual(list(run.columns), header)
        rows = [line.split(",") for line in
                (self.dirs[0] / "performance_log.csv").read_text().splitlines()[1:]]
        for j, name in enumerate(header):
            col = run.columns[name]
            self.assertEqual(col.dtype, np.float64)
            self.assertEqual(col.shape, (run.num_rows,))
            self.assertEqual(col.tolist(), [float(r[j]) for r in rows])
            # No copy: the array does not own its data; its base is the C run object.
            self.assertFalse(col.flags.owndata)
            self.assertIsInstance(col.base, runlab._runlab.Run)
        a = run.columns["TotalCost"]
        self.assertTrue(np.shares_memory(a, run.columns["TotalCost"]))
        # The array keeps the run's memory alive after the RunData is gone.
        want = a.tolist()
        del run
        gc.collect()
        self.assertEqual(a.tolist(), want)

    def test_final_gain_is_the_summary_sum(self):
        for d in self.dirs:
            run = runlab.load_run(d)
            want = sum(run.summary["real_accumulated_gain"].values())
            self.assertEqual(run.final_gain, want)
            self.assertEqual(run.manifest["random_seed"], run.seed)

    @unittest.skipIf(pd is None, "pandas is not installed (apt install python3-pandas)")
    def test_frame_and_runs_frame(self):
        run = runlab.load_run(self.dirs[0])
        df = run.frame()
        ref = pd.read_csv(self.dirs[0] / "performance_log.csv").astype("float64")
        pd.testing.assert_frame_equal(df, ref)
        # frame() is the loader's arrays, not a copy (copy=True gives one of its own).
        self.assertTrue(np.shares_memory(df["TotalCost"].to_numpy(), run.columns["TotalCost"]))
        self.assertFalse(np.shares_memory(run.frame(copy=True)["TotalCost"].to_numpy(),
                                          run.columns["TotalCost"]))
        runs = runlab.load_runs(self.root)
        long = runlab.runs_frame(runs)
        self.assertEqual(len(long), sum(r.num_rows for r in runs))
        self.assertEqual(list(long.columns[:9]), list(perflog.KEY_COLUMNS))
        self.assertEqual(sorted(long["planner"].unique()), ["nbv", "nbv_nobt"])
        self.assertEqual(set(long["scene"].unique()), {"s01", "s02"})
        self.assertEqual(set(long["seed"].unique()), {1, 2})
        per_run = long.groupby("path", observed=True)["TotalCost"].last()
        for r in runs:
            self.assertEqual(per_run[r.path], r.columns["TotalCost"][-1])
        # Columns only some runs have are NaN for the others.
        nobt = long[long["planner"] == "nbv_nobt"]
        self.assertTrue(nobt["backtracking.RealAccumulatedGain"].isna().all())
        self.assertEqual(runlab.runs_frame([]).shape, (0, len(perflog.KEY_COLUMNS)))

    # -- bad inputs raise the right exception and never crash -----------------------------------
    def test_bad_inputs_raise(self):
        missing = self.tmp / "does-not-exist"
        for call in (lambda: runlab.load_run(missing), lambda: runlab.load_runs(missing),
                     lambda: runlab.load_runs(self.root, missing)):
            with self.assertRaises(runlab.NotFoundError) as cm:
                call()
            self.assertIsInstance(cm.exception, runlab.Error)
            self.assertIsInstance(cm.exception, FileNotFoundError)
            self.assertIn(str(missing), str(cm.exception))
        csv = self.dirs[0] / "performance_log.csv"
        with self.assertRaisesRegex(runlab.NotFoundError, "not a directory"):
            runlab.load_run(csv)
        with self.assertRaises(TypeError):
            runlab.load_run(42)
        with self.assertRaises(TypeError):
            runlab.load_runs()
        with self.assertRaises(TypeError):
            runlab.aggregate_report([object()])
        with self.assertRaises((ValueError, runlab.NotFoundError)):
            runlab.load_run("a\0b")
        with self.assertRaises(TypeError):
            runlab._runlab.aggregate([1], 0)
        with self.assertRaises(TypeError):
            runlab._runlab.load_runs(5, None)

    def test_c_error_becomes_error_subclass(self):
        # librunlab's codes map to runlab.Error subclasses that are also the matching
        # built-in exceptions, carrying the C message.
        want = {-2: (runlab.InvalidArgumentError, ValueError),
                -3: (runlab.OutOfMemoryError, MemoryError),
                -4: (runlab.RunlabIOError, OSError),
                -5: (runlab.NotFoundError, FileNotFoundError),
                -7: (runlab.ParseError, ValueError),
                -15: (runlab.ParseError, ValueError),
                -13: (runlab.UnsupportedError, runlab.Error),
                -1: (runlab.Error, Exception)}
        for code, (cls, builtin) in want.items():
            with self.assertRaises(cls) as cm:
                runlab._runlab._raise(code, f"x.csv:3: byte 17: code {code}")
            self.assertIsInstance(cm.exception, runlab.Error)
            self.assertIsInstance(cm.exception, builtin)
            self.assertEqual(str(cm.exception), f"x.csv:3: byte 17: code {code}")

    def test_progress(self):
        seen = []
        runs = runlab.load_runs(self.root, progress=lambda d, t, p: seen.append((d, t, p)))
        self.assertEqual([d for d, _, _ in seen], list(range(1, 9)))
        self.assertTrue(all(t == 8 for _, t, _ in seen))
        self.assertEqual(sorted(p.decode() for _, _, p in seen), [r.path for r in runs])

        def boom(d, t, p):
            raise KeyError("stop")
        with self.assertRaises(KeyError):
            runlab.load_runs(self.root, progress=boom)
        with self.assertRaises(TypeError):
            runlab.load_runs(self.root, progress=3)

    def test_threads_load_the_same(self):
        one = [(r.path, r.status, r.num_rows, r.final_gain) for r in runlab.load_runs(self.root)]
        results = [None] * 4

        def load(i):
            results[i] = [(r.path, r.status, r.num_rows, r.final_gain)
                          for r in runlab.load_runs(self.root)]
        threads = [threading.Thread(target=load, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results, [one] * 4)

    def test_gil_released_while_c_loads(self):
        # With a switch interval of 100 s the interpreter never hands the GIL over by
        # itself, so another thread can only count while the main thread is inside a C
        # call that released it. The call is the bare extension function (no Python code,
        # no stat() around it). Repeated until seen, within a generous time limit: a
        # loaded machine may not schedule the counting thread during one short load.
        counter = [0]
        stop = threading.Event()

        def count():
            while not stop.is_set():
                counter[0] += 1
                time.sleep(0)  # gives the GIL back so the main thread can go on
        old = sys.getswitchinterval()
        t = threading.Thread(target=count)
        t.start()
        seen = False
        try:
            sys.setswitchinterval(100.0)
            deadline = time.monotonic() + 120
            root = str(self.root)
            while not seen and time.monotonic() < deadline:
                before = counter[0]
                runlab._runlab.load_runs([root], None)
                seen = counter[0] != before
                time.sleep(0.001)
        finally:
            sys.setswitchinterval(old)
            stop.set()
            t.join()
        self.assertTrue(seen, "no other thread ran while load_runs was in C")

    def test_help_is_documentation(self):
        for obj in (runlab, runlab.perflog, runlab.load_run, runlab.load_runs,
                    runlab.aggregate_report, runlab.runs_frame, runlab.RunData,
                    runlab.RunData.frame, runlab.RunStatus, runlab.Error, runlab.ParseError,
                    runlab.bench, runlab.bench.load, runlab.bench.Benchmark, runlab.mcap,
                    runlab.mcap.open, runlab.mcap.Recording, runlab.mcap.Recording.messages,
                    runlab.mcap.Recording.frame, runlab.lab, runlab.lab.list_runs,
                    runlab.lab.evaluation):
            self.assertTrue(obj.__doc__ and len(obj.__doc__) > 40, obj)

    def test_rss_stable_over_1000_loads_of_100_runs(self):
        root = self.tmp / "many"
        runlab_cmd("explore", "--root", root, "--sweep", "--scenes", "1,2,3,4,5,6,7,8,9,10",
                   "--seeds", "1,2,3,4,5", "--budget", "40")

        def rss_kib():
            with open("/proc/self/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

        def load_once():
            runs = runlab.load_runs(root)
            assert len(runs) == 100
            for r in runs:
                r.columns["TotalCost"].sum()
                r.manifest

        for _ in range(100):  # warm up allocator pools and caches
            load_once()
        gc.collect()
        before = rss_kib()
        for _ in range(900):
            load_once()
        gc.collect()
        grown = rss_kib() - before
        # One load of 100 runs holds ~2 MiB; a leak of one run per load would add ~20 MiB.
        self.assertLess(grown, 4096, f"RSS grew {grown} KiB over 900 loads")


if __name__ == "__main__":
    unittest.main()
