"""The package as users install it: `pip install --no-build-isolation ./python` with
RUNLAB_BUILD_DIR pointing at this build tree (python/setup.py links its librunlab.a)
builds an importable package that loads runs, and setup.py says what is missing when it
cannot find librunlab. Works on a copy of python/ and include/ so the source tree stays
clean. Run by ctest as python.test_package."""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(os.environ.get("RUNLAB_SOURCE", pathlib.Path(__file__).parents[2]))
BUILD = pathlib.Path(os.environ.get("RUNLAB_BIN", "build/bin")).resolve().parent


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if subprocess.run([sys.executable, "-m", "pip", "--version"],
                          capture_output=True).returncode != 0:
            raise unittest.SkipTest("pip is not installed for this python3 (apt install python3-pip)")
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="runlab-py-pkg-"))
        shutil.copytree(SOURCE / "python", cls.tmp / "src" / "python",
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        shutil.copytree(SOURCE / "include", cls.tmp / "src" / "include")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def pip(self, env, target):
        return subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                               "--no-deps", "--no-index", "--target", str(target),
                               str(self.tmp / "src" / "python")],
                              capture_output=True, text=True, env=env)

    def test_pip_install_from_build_tree(self):
        env = dict(os.environ, RUNLAB_BUILD_DIR=str(BUILD), PIP_NO_CACHE_DIR="1")
        env.pop("PYTHONPATH", None)
        target = self.tmp / "site"
        p = self.pip(env, target)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        run = self.tmp / "run"
        subprocess.run([str(BUILD / "bin" / "runlab"), "explore", "--root", str(run), "--budget",
                        "40"], check=True, capture_output=True)
        code = ("import runlab, sys; rs = runlab.load_runs(sys.argv[1]); "
                "print(runlab.__version__); "
                "print(runlab.__file__, len(rs), rs[0].status.value, rs[0].num_rows)")
        out = subprocess.run([sys.executable, "-c", code, str(run)], capture_output=True,
                             text=True, env=dict(env, PYTHONPATH=str(target)))
        self.assertEqual(out.returncode, 0, out.stderr)
        version, loaded = out.stdout.split("\n", 1)
        self.assertTrue(loaded.startswith(str(target)), out.stdout)
        self.assertTrue(loaded.rstrip().endswith(" 1 PARSED 11"), out.stdout)
        # One version everywhere: the command's, the module's and pip's record of the package.
        cli = subprocess.run([str(BUILD / "bin" / "runlab"), "--version"], capture_output=True,
                             text=True, check=True).stdout.split()
        self.assertEqual(cli[:2], ["runlab", version], (cli, version))
        self.assertTrue((target / f"runlab-{version}.dist-info").is_dir(),
                        sorted(p.name for p in target.iterdir()))

    def test_setup_says_what_is_missing(self):
        env = dict(os.environ, PKG_CONFIG_PATH=str(self.tmp / "nothing"),
                   PKG_CONFIG_LIBDIR=str(self.tmp / "nothing"))
        for k in ("RUNLAB_BUILD_DIR", "RUNLAB_PREFIX", "PYTHONPATH"):
            env.pop(k, None)
        p = self.pip(env, self.tmp / "site2")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("librunlab not found", p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
