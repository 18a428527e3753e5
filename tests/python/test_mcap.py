"""runlab.mcap (python/runlab/mcap.py over python/src/mcap_object.c): a recording written
by runlab's own encoder (tools/mcap-msg-sample) reads back with the same messages as
`runlab mcap cat --json` (topics and time filters too); frame() flattens leaf fields;
missing, foreign and truncated files raise runlab.Error subclasses, never crash.
Run by ctest as python.test_mcap."""

import json
import math
import os
import pathlib
import shutil
import subprocess
import tempfile
import threading
import unittest

try:
    import numpy as np
    import pandas as pd
except ImportError:
    raise unittest.SkipTest("numpy or pandas is not installed (apt install python3-pandas)")

import runlab

BIN = os.environ.get("RUNLAB_BIN", "build/bin")
RUNLAB = os.path.join(BIN, "runlab")


def cat_json(path, *args):
    p = subprocess.run([RUNLAB, "mcap", "cat", str(path), "--json", *args],
                       capture_output=True, text=True, check=True)
    return [json.loads(line) for line in p.stdout.splitlines()]


class McapTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sample = os.path.join(BIN, "mcap-msg-sample")
        if not os.path.exists(sample):
            raise unittest.SkipTest(f"{sample} is not built (cmake --build build)")
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="runlab-py-mcap-"))
        cls.file = cls.tmp / "m.mcap"
        subprocess.run([sample, str(cls.file)], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_messages_equal_mcap_cat_json(self):
        rec = runlab.mcap.open(self.file)
        want = cat_json(self.file)
        got = list(rec.messages())
        self.assertEqual(len(got), len(want))
        self.assertEqual(len(got), 25)
        for (topic, log_time, msg), w in zip(got, want):
            self.assertEqual((topic, log_time), (w["topic"], w["log_time"]))
            self.assertEqual(msg, w["message"])
        # 64-bit integers exact, as in the JSON.
        ev = next(m for t, _, m in rec.messages("/add_two_ints/_service_event"))
        self.assertEqual(ev["request"][0]["b"], -9007199254740993)

    def test_filters_equal_mcap_cat(self):
        rec = runlab.mcap.open(self.file)
        want = cat_json(self.file, "--topics", "/pose,/idl", "--start", "1003", "--end", "1017")
        got = list(rec.messages(topics=["/pose", "/idl"], start=1003, end=1017))
        self.assertGreater(len(want), 0)
        self.assertEqual([(t, lt, m) for t, lt, m in got],
                         [(w["topic"], w["log_time"], w["message"]) for w in want])

    def test_summary(self):
        rec = runlab.mcap.open(self.file)
        self.assertEqual(rec.statistics["message_count"], 25)
        self.assertEqual((rec.statistics["message_start_time"],
                          rec.statistics["message_end_time"]), (1000, 1024))
        topics = rec.topics
        self.assertEqual(list(topics["topic"]), [c["topic"] for c in rec.channels])
        self.assertIn("/pose", set(topics["topic"]))
        self.assertEqual(topics["messages"].sum(), 25)
        pose = next(s for s in rec.schemas if s["name"] == "geometry_msgs/msg/PoseStamped")
        self.assertEqual(pose["encoding"], "ros2msg")
        self.assertIn(b"Pose pose", pose["data"])

    def test_frame(self):
        rec = runlab.mcap.open(self.file)
        df = rec.frame("/pose")
        self.assertEqual(df.index.name, "log_time")
        self.assertEqual(len(df), 5)
        self.assertEqual(df.loc[1005, "pose.position.x"], 1.5)
        self.assertEqual(df.loc[1005, "header.stamp.sec"], 101)
        self.assertEqual(df["pose.position.x"].dtype, np.float64)
        cov = rec.frame("/odom_cov")
        self.assertTrue(math.isnan(cov["pose.pose.position.y"].iloc[0]))
        self.assertEqual(cov["pose.pose.position.z"].iloc[0], float("-inf"))
        arr = cov["pose.covariance"].iloc[0]
        self.assertIsInstance(arr, np.ndarray)
        self.assertEqual(arr.shape, (36,))
        self.assertEqual(rec.frame("/no/such/topic").shape, (0, 0))

    def test_bad_files_raise(self):
        with self.assertRaises(runlab.NotFoundError):
            runlab.mcap.open(self.tmp / "missing.mcap")
        junk = self.tmp / "junk.mcap"
        junk.write_bytes(b"not an mcap file at all\n" * 10)
        with self.assertRaises(runlab.Error) as cm:
            runlab.mcap.open(junk)
        self.assertIn(str(junk), str(cm.exception))
        data = self.file.read_bytes()
        # Cut anywhere: opening either raises runlab.Error or reads what survives.
        for cut in (8, 100, len(data) // 2, len(data) - 10):
            part = self.tmp / f"cut{cut}.mcap"
            part.write_bytes(data[:cut])
            try:
                rec = runlab.mcap.open(part)
                for _ in rec.messages():
                    pass
            except runlab.Error:
                pass

    def test_payload_that_does_not_decode_raises_parse_error(self):
        cut = self.tmp / "cutpose.mcap"
        subprocess.run([os.path.join(BIN, "mcap-msg-sample"), str(cut), "--set", "ros2",
                        "--cut-pose", "30", "--messages", "2"], check=True)
        p = subprocess.run([RUNLAB, "mcap", "cat", str(cut), "--json", "--topics", "/pose"],
                           capture_output=True, text=True)
        bad = [json.loads(line) for line in p.stdout.splitlines() if "decode_error" in line]
        self.assertTrue(bad, p.stdout)
        rec = runlab.mcap.open(cut)
        with self.assertRaises(runlab.ParseError) as cm:
            list(rec.messages("/pose"))
        self.assertIn(f"topic '/pose', log_time {bad[0]['log_time']}: ", str(cm.exception))
        self.assertIn(bad[0]["decode_error"], str(cm.exception))

    def test_threads_read_the_same(self):
        rec = runlab.mcap.open(self.file)
        one = list(rec.messages())
        out = [None] * 4

        def read(i):
            out[i] = list(rec.messages())  # one Recording shared by four threads
        ts = [threading.Thread(target=read, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(out, [one] * 4)


if __name__ == "__main__":
    unittest.main()
