"""runlab.lab (python/runlab/lab.py over python/src/lab_list.c): runs made by `runlab sim
--offline` list exactly as `runlab list --json` gives them; evaluation() returns the latest
full evaluation's checks.csv and summary.json, not a newer partial one; a missing run or
one never evaluated raises runlab.NotFoundError. Run by ctest as python.test_lab."""

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


def runlab_cmd(*args):
    p = subprocess.run([RUNLAB, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, f"runlab {args}: {p.stderr}"
    return p.stdout


class LabTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="runlab-py-lab-"))
        cls.home = cls.tmp / "home"
        (cls.tmp / "spec.yaml").write_text("speed: 1.2\n")
        cls.runs = []
        for seed in (3, 4):
            out = runlab_cmd("sim", cls.tmp / "spec.yaml", "--offline", cls.home, "--vehicles", 2,
                             "--duration", 10, "--seed", seed)
            cls.runs.append(out.strip().splitlines()[-1])
        runlab_cmd("evaluate", cls.runs[0])
        # A newer partial evaluation must not replace the full one.
        runlab_cmd("evaluate", cls.runs[0], "--metrics", "topic_sanity")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_list_equals_list_json(self):
        want = json.loads(runlab_cmd("list", "--json", self.home))
        got = runlab.lab.list_runs(self.home)
        self.assertEqual(got, want)
        self.assertEqual(len(got), 2)
        df = runlab.lab.runs_frame(self.home)
        self.assertEqual(list(df["run_id"]), [r["run_id"] for r in want])
        self.assertEqual(runlab.lab.list_runs(self.tmp / "empty-home"), [])

    def test_evaluation_is_latest_full(self):
        listed = {r["path"]: r for r in runlab.lab.list_runs(self.home)}
        entry = listed[self.runs[0]]
        self.assertIsNotNone(entry["newer_partial_evaluation"])
        checks, summary = runlab.lab.evaluation(self.runs[0])
        ev_dir = os.path.join(self.runs[0], "evaluations", entry["verdict_evaluation"])
        with open(os.path.join(ev_dir, "summary.json")) as f:
            self.assertEqual(summary, json.load(f))
        self.assertFalse(summary.get("partial", False))
        pd.testing.assert_frame_equal(checks, pd.read_csv(os.path.join(ev_dir, "checks.csv")))
        self.assertGreater(checks["metric"].nunique(), 1)  # the full one: every metric
        # By run id under the home, and from list_runs' dict, the same evaluation.
        checks2, summary2 = runlab.lab.evaluation(entry["run_id"], home=self.home)
        self.assertEqual(summary2, summary)
        self.assertEqual(runlab.lab.evaluation(entry)[1], summary)

    def test_errors(self):
        with self.assertRaises(runlab.NotFoundError):
            runlab.lab.evaluation(self.tmp / "no-such-run")
        with self.assertRaisesRegex(runlab.NotFoundError, "no full evaluation"):
            runlab.lab.evaluation(self.runs[1])


if __name__ == "__main__":
    unittest.main()
