"""runlab.bench.load (python/runlab/bench.py): a benchmark made by `runlab bench` loads
into DataFrames equal to what its results.db holds, read back by the sqlite3 command;
a directory without results.db or a file that is no database raise runlab.Error's
subclasses. Run by ctest as python.test_bench."""

import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

try:
    import pandas as pd
except ImportError:
    raise unittest.SkipTest("pandas is not installed (apt install python3-pandas)")

import runlab

RUNLAB = os.path.join(os.environ.get("RUNLAB_BIN", "build/bin"), "runlab")

SPEC = """experiment: python bench
problem: narrow2d
seed: 3
max_time: 5.0
runs: 3
time_between_updates: 0.001
parameters: {passage width: 0.03}
planners:
  - {name: RRTConnect, planner: rrtconnect, settings: {max_iterations: 1000000}}
  - {name: PRM, planner: prm, settings: {max_iterations: 1000000}}
"""


def sqlite_json(db, sql):
    out = subprocess.run(["sqlite3", "-json", db, sql], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out) if out.strip() else []


class BenchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("sqlite3") is None:
            raise unittest.SkipTest("the sqlite3 command is missing (scripts/install-deps.sh)")
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="runlab-py-bench-"))
        (cls.tmp / "spec.yaml").write_text(SPEC)
        p = subprocess.run([RUNLAB, "bench", str(cls.tmp / "spec.yaml"), "--out-dir",
                            str(cls.tmp / "res")], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        cls.dir = p.stdout.strip().splitlines()[-1]
        cls.db = os.path.join(cls.dir, "results.db")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_table_equal(self, frame, rows, columns=None):
        columns = columns or (list(rows[0]) if rows else list(frame.columns))
        self.assertEqual(len(frame), len(rows))
        for i, row in enumerate(rows):
            for c in columns:
                got, want = frame.iloc[i][c], row[c]
                if want is None:
                    self.assertTrue(pd.isna(got), (c, got))
                elif isinstance(want, float):
                    self.assertEqual(float(got), want, c)
                else:
                    self.assertEqual(got, want, c)

    def test_tables_equal_results_db(self):
        b = runlab.bench.load(self.dir)
        self.assertEqual(b.path, self.db)
        self.assert_table_equal(b.experiments, sqlite_json(self.db, "SELECT * FROM experiments"))
        self.assert_table_equal(b.planners, sqlite_json(self.db, "SELECT * FROM plannerConfigs"))
        runs = sqlite_json(self.db, "SELECT * FROM runs ORDER BY id")
        self.assertEqual(len(runs), 6)
        self.assert_table_equal(b.runs, runs)
        prog = sqlite_json(self.db, "SELECT * FROM progress ORDER BY runid, time")
        self.assertGreater(len(prog), 0)
        self.assert_table_equal(b.progress, prog)
        self.assertEqual(sorted(b.runs["planner"].unique()), ["PRM", "RRTConnect"])
        self.assertEqual(b.runs.groupby("planner").size().tolist(), [3, 3])
        self.assertEqual(b.parameters["passagewidth"].tolist(), [0.03])
        self.assertTrue(b.runs["status_name"].notna().all())
        # A results.db path works as well as its directory.
        self.assertEqual(len(runlab.bench.load(self.db).runs), 6)

    def test_bad_inputs_raise(self):
        with self.assertRaises(runlab.NotFoundError):
            runlab.bench.load(self.tmp / "nothing-here")
        with self.assertRaises(runlab.NotFoundError):
            runlab.bench.load(self.tmp)  # a directory without results.db
        junk = self.tmp / "junk.db"
        junk.write_bytes(b"this is not sqlite\0" * 100)
        with self.assertRaises(runlab.ParseError) as cm:
            runlab.bench.load(junk)
        self.assertIn(str(junk), str(cm.exception))
        empty = self.tmp / "empty.db"
        subprocess.run(["sqlite3", str(empty), "CREATE TABLE t(x);"], check=True)
        with self.assertRaisesRegex(runlab.ParseError, "not a benchmark database"):
            runlab.bench.load(empty)


if __name__ == "__main__":
    unittest.main()
