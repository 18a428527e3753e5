"""Per-cycle runs: the directories runlab's perflog writes (``performance_log.csv``,
``run_manifest.yaml``, ``episode_summary.yaml``), loaded by librunlab's C loader.

The loader never raises for a bad run: each run comes back with a :class:`RunStatus`
(PARSED, DEGRADED or SKIPPED) and the reasons why (docs/perflog.md). Columns are numpy
float64 arrays that the C loader filled; they are not copied after loading, and
unreadable cells are NaN::

    from runlab import load_run, load_runs, aggregate_report
    run = load_run(max(p for p in (scene / "nbs").iterdir() if p.is_dir()))
    print(run.status.value, run.num_rows, run.columns["planning.RealAccumulatedGain"][-1])
    print(aggregate_report(load_runs(scene)))

A path that does not exist, or is not a directory, raises :class:`runlab.NotFoundError`
(as ``runlab runs`` exits 1 for it); everything below an existing root is loaded.
"""

import enum
import json
import os
import sys
import warnings

from . import _runlab
from .errors import NotFoundError

__all__ = ["RunStatus", "RunData", "RunSet", "Report", "WalkWarning", "load_run",
           "load_runs", "aggregate_report", "runs_frame"]


class RunStatus(enum.Enum):
    """How usable a run is: ``.value`` is "PARSED", "DEGRADED" or "SKIPPED"."""
    PARSED = "PARSED"      #: every file present and consistent
    DEGRADED = "DEGRADED"  #: usable numbers, with reasons
    SKIPPED = "SKIPPED"    #: no usable numbers


class WalkWarning(UserWarning):
    """A directory below a root could not be walked (loop, dangling link, permission)."""


class RunData:
    """One run directory as librunlab loaded it.

    Attributes:
        path (str): the run directory.
        status (RunStatus): PARSED, DEGRADED or SKIPPED.
        reasons (list[str]): why the run is not PARSED ("truncated_row", "no_manifest", ...).
        messages (list[str]): one human-readable line per problem found.
        num_rows (int): complete data rows kept.
        columns (dict[str, numpy.ndarray]): CSV column name -> float64 array of num_rows
            values, in CSV order, over the C loader's buffer (no copy; NaN = unreadable).
        manifest (dict | None): run_manifest.yaml, or None when missing or unreadable.
        summary (dict | None): episode_summary.yaml, or None.
        final_gain (float): the run's final gain, runlab's one definition: the sum over
            layers of the summary's real_accumulated_gain, else of the last finite
            "<layer>.RealAccumulatedGain" value; NaN when the run has no gain.
        final_gain_by_layer (dict[str, float]): the same per layer.
        total_cost, elapsed_time_s (float): NaN when unknown.
        seed (int | None): the manifest's random_seed.
    """

    __slots__ = ("_c", "_manifest", "_summary", "_columns")

    def __init__(self, c_run):
        self._c = c_run
        self._manifest = self._summary = self._columns = _UNSET

    def __repr__(self):
        return (f"RunData({self.path!r}, status={self.status.value}, "
                f"rows={self.num_rows}, columns={len(self._c.column_names)})")

    path = property(lambda self: self._c.path)
    status = property(lambda self: RunStatus(self._c.status))
    reasons = property(lambda self: self._c.reasons)
    messages = property(lambda self: self._c.messages)
    num_rows = property(lambda self: self._c.num_rows)

    @property
    def columns(self):
        if self._columns is _UNSET:
            self._columns = self._c.columns
        return self._columns
    column_names = property(lambda self: self._c.column_names)
    seed = property(lambda self: self._c.seed)
    final_gain_by_layer = property(
        lambda self: {k: _nan(v) for k, v in self._c.final_gain_by_layer.items()})

    @property
    def final_gain(self):
        return _nan(self._c.final_gain)

    @property
    def total_cost(self):
        return _nan(self._c.total_cost)

    @property
    def elapsed_time_s(self):
        return _nan(self._c.elapsed_time_s)

    @property
    def manifest(self):
        if self._manifest is _UNSET:
            text = self._c.manifest_json
            self._manifest = None if text is None else json.loads(text)
        return self._manifest

    @property
    def summary(self):
        if self._summary is _UNSET:
            text = self._c.summary_json
            self._summary = None if text is None else json.loads(text)
        return self._summary

    def key(self):
        """The run's key columns as a dict: task, dataset, scene, planner, stamp, seed."""
        m = self.manifest if isinstance(self.manifest, dict) else {}
        return {"task": m.get("task"), "dataset": m.get("dataset"), "scene": m.get("scene"),
                "planner": m.get("planner"), "stamp": os.path.basename(self.path.rstrip("/")),
                "seed": self.seed}

    def frame(self, copy=False):
        """The run's CSV as a pandas.DataFrame (one row per cycle, columns in CSV order).

        Without ``copy`` its columns are the arrays of :attr:`columns` (no copy: memory
        stays what the C loader filled, and writing into one shows in the other); pass
        ``copy=True`` for a frame of its own."""
        import pandas as pd
        if not copy:
            frame = _frame_over(self.columns, self.num_rows)
            if frame is not None:
                return frame
        return pd.DataFrame(self.columns, columns=self.column_names, copy=copy)


_UNSET = object()


def _frame_over(columns, num_rows):
    """A DataFrame whose blocks are the given 1-D arrays, one block each, built directly:
    pandas' dict constructor costs ~0.5 ms for 40 columns, more than a third of loading
    the run in C, this ~0.1 ms. pandas' internals differ between versions: None (and the
    caller uses the public constructor) when they are not the ones known here."""
    if not columns:
        return None  # no column: pandas' own empty frame
    try:
        import pandas as pd
        from pandas.core.internals import BlockManager
        from pandas.core.internals.blocks import new_block
        blocks = [new_block(a.reshape(1, -1), placement=slice(j, j + 1), ndim=2)
                  for j, a in enumerate(columns.values())]
        mgr = BlockManager(blocks, [pd.Index(list(columns), dtype=object),
                                    pd.RangeIndex(num_rows)], verify_integrity=False)
        return pd.DataFrame(mgr)
    except Exception:  # noqa: BLE001  (any mismatch of pandas internals)
        return None


def _nan(v):
    return float("nan") if v is None else v


class RunSet(list):
    """A list of :class:`RunData`, sorted by path, with ``walk_errors``: the directories
    below the roots that could not be walked (each also issued as a :class:`WalkWarning`)."""

    def __init__(self, runs=(), walk_errors=()):
        super().__init__(runs)
        self.walk_errors = list(walk_errors)


def _check_root(path):
    p = os.fspath(path)
    if not os.path.exists(p):
        raise NotFoundError(f"{p}: No such file or directory")
    if not os.path.isdir(p):
        raise NotFoundError(f"{p}: not a directory")
    return p


def load_run(path):
    """Loads one run directory (str or os.PathLike) and returns a :class:`RunData`.

    Bad or missing files inside the run never raise: they set ``status`` and
    ``reasons``. Raises :class:`runlab.NotFoundError` when ``path`` is not a directory.
    The GIL is released while C reads the files.
    """
    return RunData(_runlab.load_run(_check_root(path)))


class _ProgressLine:
    """progress=True: one updating line on stderr, like `runlab runs` on a terminal."""

    def __call__(self, done, total, path):
        sys.stderr.write(f"\r{done}/{total} runs")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def load_runs(*roots, progress=False):
    """Loads every run directory below ``roots`` (each a run directory or a tree).

    Returns a :class:`RunSet` (a list of :class:`RunData` sorted by path). Run
    directories are those holding run_manifest.yaml, performance_log.csv or
    episode_summary.yaml; symbolic links already reached another way are not loaded twice.
    Directories that cannot be walked are warned about (:class:`WalkWarning`) and kept in
    ``walk_errors``. ``progress``: False, True (a line on stderr) or a callable
    ``f(done, total, path)`` called after each run. Runs are loaded by librunlab's pool of
    threads with the GIL released. Raises :class:`runlab.NotFoundError` for a root that
    is not a directory.
    """
    if len(roots) == 1 and isinstance(roots[0], (list, tuple)):
        roots = tuple(roots[0])  # load_runs([a, b]) as the design document writes it
    if not roots:
        raise TypeError("load_runs() needs at least one root")
    paths = [_check_root(r) for r in roots]
    callback = _ProgressLine() if progress is True else (progress or None)
    if callback is not None and not callable(callback):
        raise TypeError("progress must be a bool or a callable(done, total, path)")
    runs, errors = _runlab.load_runs(paths, callback)
    for e in errors:
        warnings.warn(e, WalkWarning, stacklevel=2)
    return RunSet((RunData(r) for r in runs), errors)


class Report:
    """Counts by status and reason (what ``runlab runs report`` prints); ``str()`` is
    that text. Attributes: total, parsed, degraded, skipped, by_reason (dict), rows,
    walk_errors."""

    def __init__(self, text, total, by_status, by_reason, rows, walk_errors):
        self.text = text
        self.total = total
        self.parsed, self.degraded, self.skipped = by_status
        self.by_reason = by_reason
        self.rows = rows
        self.walk_errors = walk_errors

    def __str__(self):
        return self.text.rstrip("\n")

    def __repr__(self):
        return (f"Report(total={self.total}, parsed={self.parsed}, degraded={self.degraded}, "
                f"skipped={self.skipped}, rows={self.rows})")


def aggregate_report(runs):
    """Counts the runs (an iterable of :class:`RunData`, e.g. a :class:`RunSet`) by status
    and by reason; returns a :class:`Report` whose ``str()`` is ``runlab runs report``'s
    text."""
    walk = len(getattr(runs, "walk_errors", ()))
    runs = list(runs)
    for i, r in enumerate(runs):
        if not isinstance(r, RunData):
            raise TypeError(f"runs[{i}] is a {type(r).__name__}, not a RunData")
    return Report(*_runlab.aggregate([r._c for r in runs], walk), walk)


KEY_COLUMNS = ("path", "task", "dataset", "scene", "planner", "stamp", "seed", "status",
               "cycle")


def runs_frame(runs):
    """One long pandas.DataFrame of every run's cycles, for ``groupby``: the key columns
    path, task, dataset, scene, planner, stamp, seed, status and cycle (the row's index in
    its run), then the union of the runs' CSV columns (NaN where a run lacks one)."""
    import numpy as np
    import pandas as pd
    runs = list(runs)
    names = []
    seen = set()
    for r in runs:
        for n in r.column_names:
            if n not in seen:
                seen.add(n)
                names.append(n)
    sizes = [r.num_rows for r in runs]
    total = sum(sizes)
    data = {}
    keys = [r.key() for r in runs]
    for k in ("task", "dataset", "scene", "planner", "stamp"):
        data[k] = pd.Categorical(np.repeat(np.array([kk[k] for kk in keys], dtype=object),
                                           sizes))
    data["path"] = pd.Categorical(np.repeat(np.array([r.path for r in runs], dtype=object),
                                            sizes))
    data["seed"] = pd.array(np.repeat(np.array([kk["seed"] for kk in keys], dtype=object),
                                      sizes), dtype="UInt64")
    data["status"] = pd.Categorical(
        np.repeat(np.array([r.status.value for r in runs], dtype=object), sizes),
        categories=[s.value for s in RunStatus])
    data["cycle"] = (np.concatenate([np.arange(n) for n in sizes]) if runs
                     else np.zeros(0, dtype=np.int64))
    for n in names:
        out = np.empty(total, dtype=np.float64)
        at = 0
        for r, size in zip(runs, sizes):
            col = r.columns.get(n)
            out[at:at + size] = col if col is not None else np.nan
            at += size
        data[n] = out
    return pd.DataFrame(data, columns=list(KEY_COLUMNS) + names)
