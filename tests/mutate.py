#!/usr/bin/env python3
# `make mutate`: plants each bug listed in tests/mutants.txt into the source, one at a time,
# rebuilds incrementally (one build dir), runs first the tests that cover the mutated lines
# (the block's regex plus, when built, a cached gcov map of which test runs which line) and
# the rest of the suite only for the survivors of that stage. The source is restored after
# every mutant (and at start, from a backup left by an interrupted run). Prints the score
# and the survivors; exit 1 below --target.
import argparse
import hashlib
import json
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
TEST_LINE = re.compile(r"Test\s+#\d+: (\S+)")


def run_until_failure(cmd, cwd, timeout, log, failed_test=None):
    """Runs ctest and stops it at the first test that fails: one failure kills the mutant,
    and a mutant that makes another test hang would otherwise cost that test's whole
    timeout. Returns ctest's exit code, 1 when stopped at a failure, 124 on a timeout.
    The failing test's name is appended to failed_test (a list) when given."""
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
                name = TEST_LINE.search(line)
                if failed_test is not None and name:
                    failed_test.append(name.group(1))
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


def list_tests(build, regex=None):
    """The names ctest knows (without the valgrind runs), in its order."""
    cmd = ["ctest", "-N", "-LE", "valgrind"] + (["-R", regex] if regex else [])
    out = subprocess.run(cmd, cwd=build, capture_output=True, text=True).stdout
    return re.findall(r"^\s*Test\s+#\d+: (\S+)", out, re.M)


def names_regex(names):
    return "^(" + "|".join(re.escape(n) for n in sorted(names)) + ")$"


def build_targets(build, test_names, log):
    """The targets a mutant's tests need: the command, tools and example programs, and only
    the unit-test programs among test_names (relinking every test program and benchmark
    for each mutant would take most of the run)."""
    out = subprocess.run(["ninja", "-C", build, "-t", "targets", "depth", "1"],
                         capture_output=True, text=True).stdout
    names = [l.split(":")[0] for l in out.splitlines() if l.endswith(": phony")]
    wanted_units = {n[len("unit."):] for n in test_names if n.startswith("unit.")}
    keep = []
    for n in names:
        if "/" in n or n.startswith(("cmake_", "lib", "bench_", "run_benchmarks", "threaded_",
                                     "runlab_shared", "all", "clean", "help", "edit_cache",
                                     "rebuild_cache", "install", "list_install", "fuzz",
                                     # CPack's: packaging the source tree (build dirs
                                     # included) took minutes per mutant
                                     "package", "uninstall")):
            continue
        if n == "test" or (n.startswith("test_") and n not in wanted_units):
            continue
        keep.append(n)
    return keep


def file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def mutant_lines(text, find):
    """The 1-based lines the mutant's text spans in the unmutated file."""
    first = text.count("\n", 0, text.index(find)) + 1
    return range(first, first + find.count("\n") + 1)


def build_map(args):
    """Builds the coverage map: an instrumented build (build-coverage/, --coverage at -O0),
    each test run alone, and after each the lines of src/, cli/ and examples/ that ran,
    read with `gcov --json-format`. Written to --map with each source's digest, so a source
    edited since has its lines ignored (the mutant falls back to its block's regex)."""
    cov = args.coverage_build
    os.makedirs(cov, exist_ok=True)
    log = open(os.path.join(cov, "mutate-map.log"), "w", encoding="utf-8")
    if not os.path.exists(os.path.join(cov, "build.ninja")):
        if run(["cmake", "-S", ROOT, "-B", cov, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                "-DCMAKE_C_FLAGS_RELEASE=-O0 -DNDEBUG", "-DCMAKE_C_FLAGS=--coverage",
                "-DCMAKE_EXE_LINKER_FLAGS=--coverage", "-DCMAKE_SHARED_LINKER_FLAGS=--coverage"],
               ROOT, 600, log) != 0:
            print("mutate: configuring the coverage build failed")
            return 2
    if run(["cmake", "--build", cov, "-j", args.jobs], ROOT, 7200, log) != 0:
        print("mutate: the coverage build failed")
        return 2
    old = {}
    if os.path.exists(args.map):
        old = json.load(open(args.map, encoding="utf-8"))
    lines = {}   # source -> line -> set of tests
    for src, per_line in old.get("lines", {}).items():
        lines[src] = {int(k): set(v) for k, v in per_line.items()}
    tests = list_tests(cov, args.map_tests)
    mapped = set(old.get("tests", [])) | set(tests)

    def gcdas():
        for dirpath, _, files in os.walk(cov):
            for name in files:
                if name.endswith(".gcda"):
                    yield os.path.join(dirpath, name)

    for i, t in enumerate(tests, 1):
        for g in list(gcdas()):
            os.unlink(g)
        for per_line in lines.values():  # a test mapped again loses its old lines
            for users in per_line.values():
                users.discard(t)
        t0 = time.monotonic()
        run(["ctest", "-R", names_regex([t]), "--timeout", "900"], cov, 1800, log)
        for g in gcdas():
            out = subprocess.run(["gcov", "--json-format", "--stdout", g],
                                 cwd=os.path.dirname(g), capture_output=True, text=True).stdout
            for doc in out.splitlines():
                try:
                    data = json.loads(doc)
                except ValueError:
                    continue
                for f in data.get("files", []):
                    src = os.path.relpath(os.path.join(data.get("current_working_directory", ""),
                                                       f["file"]), ROOT)
                    if src.startswith(".."):
                        continue
                    per_line = lines.setdefault(src, {})
                    for ln in f.get("lines", []):
                        if ln.get("count", 0) > 0:
                            per_line.setdefault(ln["line_number"], set()).add(t)
        print(f"mutate: map [{i}/{len(tests)}] {t} ({time.monotonic() - t0:.0f} s)", flush=True)
    digests = {src: file_digest(os.path.join(ROOT, src)) for src in lines
               if os.path.exists(os.path.join(ROOT, src))}
    json.dump({"tests": sorted(mapped), "digests": digests,
               "lines": {src: {str(k): sorted(v) for k, v in sorted(per_line.items()) if v}
                         for src, per_line in lines.items()}},
              open(args.map, "w", encoding="utf-8"))
    print(f"mutate: coverage map of {len(mapped)} tests over {len(digests)} sources "
          f"written to {args.map}")
    return 0


def load_map(path):
    if not path or not os.path.exists(path):
        return None
    return json.load(open(path, encoding="utf-8"))


def covering_tests(cov_map, m, text):
    """Tests the map saw running the mutant's lines, or None when the map cannot say (no
    map, or the source changed since it was built)."""
    if cov_map is None:
        return None
    path = os.path.join(ROOT, m["file"])
    if cov_map["digests"].get(m["file"]) != file_digest(path):
        return None
    per_line = cov_map["lines"].get(m["file"], {})
    found = set()
    for ln in mutant_lines(text, m["find"]):
        found.update(per_line.get(str(ln), ()))
    return found


def killers_in_log(path):
    """Mutant id -> the test that failed for it, from a previous run's mutate.log."""
    killers, current = {}, None
    if not os.path.exists(path):
        return killers
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("==== mutant "):
                current = line.split()[2]
            elif current and current not in killers and FAILED_LINE.search(line):
                name = TEST_LINE.search(line)
                if name:
                    killers[current] = name.group(1)
    return killers


def kill_in_stage1(m, args, log, killers):
    """Runs the mutant's covering tests, stopping at the first failure. The test that killed
    this mutant last time (build-mutate/mutate-killers.json) runs alone first: a mutant
    is usually killed again by the same test, and the others then need not run. Records
    the killer. True when killed."""
    tests = set(m["stage1"])
    first = killers.get(m["id"])
    if first in tests:
        failed = []
        if run_until_failure(["ctest", "-R", names_regex([first]), "--timeout", "900"],
                             args.build, 3600, log, failed) != 0:
            return True
        tests.discard(first)
        killers.pop(m["id"], None)
    return run_units_first(tests, args, log, m, killers)


def run_units_first(tests, args, log, m, killers):
    """Runs `tests` unit tests first, then the command's (they take seconds where a CLI test
    of the lab or the bench takes minutes, and ctest -j starts the longest first), stopping
    at the first failure; records the killer. True when one failed."""
    units = {t for t in tests if t.startswith("unit.")}
    for batch in (units, tests - units):
        if not batch:
            continue
        failed = []
        if run_until_failure(["ctest", "-j", args.jobs, "-R", names_regex(batch), "--timeout",
                              "900"], args.build, 7200, log, failed) != 0:
            if failed:
                killers[m["id"]] = failed[0]
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mutate"))
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants.txt"))
    ap.add_argument("--only", help="regex of mutant ids to run")
    ap.add_argument("--target", type=float, default=90.0, help="score (%%) below which exit 1")
    ap.add_argument("--jobs", default=str(os.cpu_count() or 2))
    ap.add_argument("--check", action="store_true",
                    help="only check that every mutant applies (its text occurs exactly once)")
    ap.add_argument("--map", default=os.path.join(ROOT, "build-coverage", "mutate-map.json"),
                    help="the cached coverage map (source line -> tests); used when present")
    ap.add_argument("--coverage-build", default=os.path.join(ROOT, "build-coverage"))
    ap.add_argument("--build-map", action="store_true",
                    help="(re)build the coverage map instead of running mutants")
    ap.add_argument("--map-tests", help="with --build-map: map only the tests of this regex "
                    "(merged into the existing map)")
    ap.add_argument("--no-whole-suite", action="store_true",
                    help="count a mutant surviving its covering tests as a survivor without "
                    "running the rest of the suite")
    ap.add_argument("--no-killers", action="store_true",
                    help="forget which test killed each mutant last time (as a first run)")
    ap.add_argument("--skip-baseline", action="store_true",
                    help="do not first check that the covering tests pass unmutated")
    args = ap.parse_args()

    restore_leftovers()
    if args.build_map:
        return build_map(args)
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

    started = time.monotonic()
    os.makedirs(args.build, exist_ok=True)
    log_path = os.path.join(args.build, "mutate.log")
    killers_from_log = killers_in_log(log_path)  # the last run's, before its log is replaced
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
    all_tests = list_tests(args.build)
    cov_map = load_map(args.map)
    if cov_map is not None:
        print(f"mutate: coverage map {args.map} ({len(cov_map['tests'])} tests mapped)")
    # Stage 1 of each mutant: its block's tests, plus the tests the map saw run its lines.
    for m in mutants:
        text = open(os.path.join(ROOT, m["file"]), encoding="utf-8").read()
        stage1 = set(list_tests(args.build, m["tests"]))
        by_map = covering_tests(cov_map, m, text)
        if by_map is not None:
            stage1 |= by_map & set(all_tests)
        m["stage1"] = stage1
    if not args.skip_baseline:
        baseline = set().union(*(m["stage1"] for m in mutants)) if mutants else set()
        if baseline and run(["ctest", "-j", args.jobs, "-R", names_regex(baseline),
                             "--timeout", "900"], args.build, 7200, log) != 0:
            print(f"mutate: tests fail without any mutant, see {log_path}")
            return 2

    killers_path = os.path.join(args.build, "mutate-killers.json")
    killers = killers_from_log
    if os.path.exists(killers_path):
        killers.update(json.load(open(killers_path, encoding="utf-8")))
    kept_killers = dict(killers)  # written back with what this run learns
    if args.no_killers:
        killers = {}
    killed, survivors, stillborn = [], [], []
    by_stage = {1: 0, 2: 0}
    for i, m in enumerate(mutants, 1):
        path = os.path.join(ROOT, m["file"])
        backup = path + BACKUP_SUFFIX
        shutil.copy2(path, backup)
        t0 = time.monotonic()
        try:
            text = open(path, encoding="utf-8").read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace(m["find"], m["replace"], 1))
            log.write(f"\n==== mutant {m['id']} (stage 1: {len(m['stage1'])} tests)\n")
            targets = build_targets(args.build, m["stage1"], log)
            if run(["cmake", "--build", args.build, "-j", args.jobs, "--target"] + targets,
                   ROOT, 1800, log) != 0:
                stillborn.append(m)
                verdict = "does not build (not counted)"
            elif m["stage1"] and kill_in_stage1(m, args, log, killers):
                killed.append(m)
                by_stage[1] += 1
                verdict = f"killed by {killers.get(m['id'], '?')}"
            else:
                rest = [t for t in all_tests if t not in m["stage1"]]
                verdict = "SURVIVED"
                if args.no_whole_suite or not rest:
                    survivors.append(m)
                else:
                    log.write(f"(stage 2: the other {len(rest)} tests)\n")
                    if run(["cmake", "--build", args.build, "-j", args.jobs], ROOT, 1800,
                           log) != 0:
                        stillborn.append(m)
                        verdict = "does not build (not counted)"
                    elif run_units_first(set(rest), args, log, m, killers):
                        killed.append(m)
                        by_stage[2] += 1
                        verdict = "killed by the rest of the suite (its block's tests miss it)"
                    else:
                        survivors.append(m)
                        verdict = "SURVIVED the whole suite"
        finally:
            shutil.move(backup, path)
            # The backup kept the original's time, older than the objects just built from
            # the mutant: without a new time the next build would keep this mutant in.
            os.utime(path)
        print(f"mutate: [{i}/{len(mutants)}] {m['id']}: {verdict} "
              f"({time.monotonic() - t0:.0f} s)", flush=True)
        with open(killers_path, "w", encoding="utf-8") as f:
            json.dump({**kept_killers, **killers}, f, indent=0, sort_keys=True)
    # Leave the build tree matching the source again.
    run(["cmake", "--build", args.build, "-j", args.jobs], ROOT, 3600, log)
    counted = len(killed) + len(survivors)
    score = 100.0 * len(killed) / counted if counted else 0.0
    print(f"\nmutate: score {score:.1f} % ({len(killed)} of {counted} killed: {by_stage[1]} by "
          f"their covering tests, {by_stage[2]} only by the rest of the suite; "
          f"{len(stillborn)} did not build) in {(time.monotonic() - started) / 60:.1f} min; "
          f"log: {log_path}")
    if survivors:
        print(f"mutate: {len(survivors)} survivors (file, mutant):")
    for m in survivors:
        print(f"  {m['file']}  {m['id']}: {m.get('why', '')}")
    for m in stillborn:
        print(f"  did not build: {m['file']}  {m['id']}")
    return 0 if score >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
