#!/usr/bin/env python3
# `make mutate`: plants each bug listed in tests/mutants.txt into the source, one at a time,
# rebuilds, runs the tests that cover that module and counts the mutant killed when any of
# them fails. The source is restored after every mutant (and at start, from a backup left
# by an interrupted run). Prints the score and the survivors; exit 1 below --target.
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKUP_SUFFIX = ".mutate-orig"


def parse_mutants(path):
    """Blocks: '== id', then 'file:', 'tests:' (ctest regex), 'why:', 'find:' and 'replace:'
    lines; find/replace may continue on lines starting with '| '."""
    mutants, cur, key = [], None, None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            if line.startswith("== "):
                cur = {"id": line[3:].strip(), "line": lineno}
                mutants.append(cur)
                key = None
                continue
            if cur is None:
                sys.exit(f"{path}:{lineno}: a mutant starts with '== id'")
            if (line.startswith("| ") or line == "|") and key in ("find", "replace"):
                cur[key] += "\n" + line[2:]
                continue
            m = re.match(r"(file|tests|why|find|replace):\s?(.*)$", line)
            if not m:
                sys.exit(f"{path}:{lineno}: expected file:, tests:, why:, find: or replace:")
            key = m.group(1)
            cur[key] = m.group(2)
    for m in mutants:
        for k in ("file", "tests", "find", "replace"):
            if k not in m:
                sys.exit(f"{path}:{m['line']}: mutant {m['id']} has no '{k}:'")
    return mutants


def restore_leftovers():
    for dirpath, _, files in os.walk(ROOT):
        if "/build" in dirpath or "/.git" in dirpath:
            continue
        for name in files:
            if name.endswith(BACKUP_SUFFIX):
                orig = os.path.join(dirpath, name)
                shutil.move(orig, orig[: -len(BACKUP_SUFFIX)])
                os.utime(orig[: -len(BACKUP_SUFFIX)])  # newer than the mutant's objects
                print(f"mutate: restored {orig[:-len(BACKUP_SUFFIX)]} from an interrupted run")


def run(cmd, cwd, timeout, log):
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode
    except subprocess.TimeoutExpired:
        log.write(f"(timed out after {timeout} s)\n")
        return 124


FAILED_LINE = re.compile(r"\*\*\*(Failed|Timeout|Exception)|\bFailed\s+[0-9.]+ sec")


def run_until_failure(cmd, cwd, timeout, log):
    """Runs ctest and stops it at the first test that fails: one failure kills the mutant,
    and a mutant that makes another test hang would otherwise cost that test's whole
    timeout. Returns ctest's exit code, 1 when stopped at a failure, 124 on a timeout."""
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    deadline = time.monotonic() + timeout
    failed = timed_out = False
    try:
        for line in p.stdout:
            log.write(line)
            if FAILED_LINE.search(line):
                failed = True
                break
            if time.monotonic() > deadline:
                log.write(f"(timed out after {timeout} s)\n")
                timed_out = True
                break
    finally:
        if p.poll() is None:
            try:
                os.killpg(p.pid, 9)  # ctest and the tests it started
            except ProcessLookupError:
                pass
        p.stdout.close()
        rc = p.wait()
    log.flush()
    if failed:
        log.write("(stopped at the first failure)\n")
        return 1
    return 124 if timed_out else rc


def build_targets(build, tests_regex, log):
    """The targets a mutant's tests need: the command, tools and example programs, and only
    the unit-test programs the regex selects (relinking every test program and benchmark
    for each mutant would take most of the run)."""
    out = subprocess.run(["ninja", "-C", build, "-t", "targets", "depth", "1"],
                         capture_output=True, text=True).stdout
    names = [l.split(":")[0] for l in out.splitlines() if l.endswith(": phony")]
    listed = subprocess.run(["ctest", "-N", "-R", tests_regex], cwd=build,
                            capture_output=True, text=True).stdout
    wanted_units = set(re.findall(r"unit\.(test_\w+)", listed))
    keep = []
    for n in names:
        if "/" in n or n.startswith(("cmake_", "lib", "bench_", "run_benchmarks", "threaded_",
                                     "runlab_shared", "all", "clean", "help", "edit_cache",
                                     "rebuild_cache", "install", "list_install", "fuzz")):
            continue
        if n == "test" or (n.startswith("test_") and n not in wanted_units):
            continue
        keep.append(n)
    return keep


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mutate"))
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants.txt"))
    ap.add_argument("--only", help="regex of mutant ids to run")
    ap.add_argument("--target", type=float, default=90.0, help="score (%%) below which exit 1")
    ap.add_argument("--jobs", default=str(os.cpu_count() or 2))
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant applies (its text occurs exactly once)")
    args = ap.parse_args()

    restore_leftovers()
    mutants = parse_mutants(args.list)
    if args.only:
        mutants = [m for m in mutants if re.search(args.only, m["id"])]
    bad = 0
    for m in mutants:
        path = os.path.join(ROOT, m["file"])
        text = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        n = text.count(m["find"]) if text is not None else -1
        if n != 1:
            print(f"mutate: {m['id']}: '{m['find']}' occurs {n if n >= 0 else 'no file'} "
                  f"times in {m['file']} (must be once)")
            bad += 1
    if bad:
        return 2
    print(f"mutate: {len(mutants)} mutants over "
          f"{len(set(m['file'] for m in mutants))} files apply")
    if args.check:
        return 0

    os.makedirs(args.build, exist_ok=True)
    log_path = os.path.join(args.build, "mutate.log")
    log = open(log_path, "w", encoding="utf-8")
    if not os.path.exists(os.path.join(args.build, "build.ninja")):
        if run(["cmake", "-S", ROOT, "-B", args.build, "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release"], ROOT, 600, log) != 0:
            print(f"mutate: configuring failed, see {log_path}")
            return 2
    print("mutate: building the unmutated tree and checking its tests pass")
    if run(["cmake", "--build", args.build, "-j", args.jobs], ROOT, 3600, log) != 0:
        print(f"mutate: the unmutated tree does not build, see {log_path}")
        return 2
    regex = "|".join(sorted(set(m["tests"] for m in mutants)))
    if run(["ctest", "-j", args.jobs, "-R", regex, "-LE", "valgrind", "--timeout", "900"],
           args.build, 7200, log) != 0:
        print(f"mutate: tests fail without any mutant, see {log_path}")
        return 2

    killed, survivors, stillborn = [], [], []
    for i, m in enumerate(mutants, 1):
        path = os.path.join(ROOT, m["file"])
        backup = path + BACKUP_SUFFIX
        shutil.copy2(path, backup)
        t0 = time.monotonic()
        try:
            text = open(path, encoding="utf-8").read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace(m["find"], m["replace"], 1))
            log.write(f"\n==== mutant {m['id']}\n")
            targets = build_targets(args.build, m["tests"], log)
            if run(["cmake", "--build", args.build, "-j", args.jobs, "--target"] + targets,
                   ROOT, 1800, log) != 0:
                stillborn.append(m)
                verdict = "does not build (not counted)"
            elif run_until_failure(["ctest", "-j", args.jobs, "-R", m["tests"], "-LE", "valgrind",
                                    "--timeout", "900"], args.build, 3600, log) != 0:
                killed.append(m)
                verdict = "killed"
            else:
                survivors.append(m)
                verdict = "SURVIVED"
        finally:
            shutil.move(backup, path)
            # The backup kept the original's time, older than the objects just built from
            # the mutant: without a new time the next build would keep this mutant in.
            os.utime(path)
        print(f"mutate: [{i}/{len(mutants)}] {m['id']}: {verdict} "
              f"({time.monotonic() - t0:.0f} s)", flush=True)
    # Leave the build tree matching the source again.
    run(["cmake", "--build", args.build, "-j", args.jobs], ROOT, 3600, log)
    counted = len(killed) + len(survivors)
    score = 100.0 * len(killed) / counted if counted else 0.0
    print(f"\nmutate: score {score:.1f} % ({len(killed)} of {counted} killed; "
          f"{len(stillborn)} did not build); log: {log_path}")
    for m in survivors:
        print(f"  survivor {m['id']} ({m['file']}): {m.get('why', '')}")
    return 0 if score >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
