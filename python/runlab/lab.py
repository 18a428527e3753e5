"""The lab: runs recorded under a runlab home (``<home>/experiments/``) and their
evaluations, as ``runlab list`` and ``runlab evaluate`` see them.

    runs = runlab.lab.list_runs("~/runlab")          # runlab list --json, as dicts
    checks, summary = runlab.lab.evaluation(runs[0]["path"])
    checks[checks["status"] != "PASS"]
"""

import json
import os

from . import _runlab
from .errors import NotFoundError

__all__ = ["list_runs", "runs_frame", "evaluation"]


def list_runs(home=None):
    """Every run under ``home`` (None: runlab's default home: $RUNLAB_HOME, else
    ~/runlab), newest first, each a dict with exactly the keys and values of
    ``runlab list --json`` (directory, path, run_id, state, result, vehicles, start,
    duration, planner, map_sha256, scenario, seed, faults, planned_duration, interruption,
    evaluations, verdict, verdict_evaluation, newer_partial_evaluation). A home without
    experiments/ gives an empty list."""
    return _runlab.list_runs(None if home is None else os.path.expanduser(os.fspath(home)))


def runs_frame(home=None):
    """:func:`list_runs` as a pandas.DataFrame, one row per run (lists kept as lists)."""
    import pandas as pd
    return pd.DataFrame(list_runs(home))


def evaluation(run, home=None):
    """The latest full evaluation of ``run`` (a run directory, a run id or a directory name
    under ``home``'s experiments/, as ``runlab evaluate`` takes it, or a dict of
    :func:`list_runs`): returns ``(checks, summary)``, its checks.csv as a
    pandas.DataFrame and its summary.json as a dict. A newer partial evaluation
    (``evaluate --metrics``) does not replace it, as in ``runlab list``. Raises
    :class:`runlab.NotFoundError` when the run does not exist or has no full evaluation."""
    import pandas as pd
    if isinstance(run, dict):
        run = run["path"]
    path = _runlab.resolve_run(os.fspath(run), None if home is None else os.fspath(home))
    path = path.rstrip("/")
    run_home = os.path.dirname(os.path.dirname(path))
    name = os.path.basename(path)
    listed = next((r for r in _runlab.list_runs(run_home) if r["directory"] == name), None)
    ev = listed and listed["verdict_evaluation"]
    if not ev:
        raise NotFoundError(f"{path}: no full evaluation (run `runlab evaluate {path}`)")
    ev_dir = os.path.join(path, "evaluations", ev)
    with open(os.path.join(ev_dir, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    checks = pd.read_csv(os.path.join(ev_dir, "checks.csv"))
    return checks, summary
