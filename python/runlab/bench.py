"""Benchmarks: the ``results.db`` that ``runlab bench`` writes (OMPL's schema, the one
Planner Arena reads), as pandas DataFrames.

    b = runlab.bench.load("bench-results/mixed_planners_20261206_081229")
    b.runs.boxplot(column="time", by="planner")

librunlab has no reader of results.db (it writes it), so the tables are read with Python's
sqlite3 module, read-only, exactly as stored: one DataFrame per table, the ``status``
enum's numbers also named from the ``enums`` table, planner and experiment names joined in.
"""

import os
import sqlite3

from .errors import NotFoundError, ParseError

__all__ = ["Benchmark", "load"]

# The experiments table's own columns; every other column is a benchmark parameter.
_EXPERIMENT_COLUMNS = ("id", "name", "totaltime", "timelimit", "memorylimit", "runcount",
                       "version", "hostname", "cpuinfo", "date", "seed", "setup")


class Benchmark:
    """One benchmark directory's results.db.

    Attributes (pandas.DataFrame each):
        experiments: the experiments table (id, name, totaltime, timelimit, ...).
        planners: the plannerConfigs table (id, name, settings).
        parameters: one row per experiment: experimentid, experiment, and the benchmark's
            parameters (the experiments table's extra columns, e.g. passagewidth).
        runs: the runs table with ``planner`` and ``experiment`` names joined in and
            ``status_name`` (the status enum's description: "Exact solution", "Crash", ...).
        progress: the progress table (runid, time, per-planner properties) with
            ``planner`` joined in.
        enums: the enums table (name, value, description).
    path (str): the results.db read.
    """

    def __init__(self, path, tables):
        self.path = path
        for k, v in tables.items():
            setattr(self, k, v)

    def __repr__(self):
        return (f"Benchmark({self.path!r}: {len(self.experiments)} experiments, "
                f"{len(self.planners)} planners, {len(self.runs)} runs, "
                f"{len(self.progress)} progress samples)")


def load(directory):
    """Loads a benchmark directory (or a results.db file) and returns a :class:`Benchmark`.

    Raises :class:`runlab.NotFoundError` when there is no results.db and
    :class:`runlab.ParseError` when the file is not a benchmark database.
    """
    import pandas as pd
    path = os.fspath(directory)
    db = path if os.path.isfile(path) else os.path.join(path, "results.db")
    if not os.path.isfile(db):
        raise NotFoundError(f"{db}: No such file or directory")
    try:
        con = sqlite3.connect(f"file:{_uri_path(db)}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as e:
        raise NotFoundError(f"{db}: {e}") from None
    try:
        def table(sql):
            return pd.read_sql_query(sql, con)
        tables = {
            "experiments": table("SELECT * FROM experiments ORDER BY id"),
            "planners": table("SELECT * FROM plannerConfigs ORDER BY id"),
            "enums": table("SELECT * FROM enums ORDER BY name, value"),
            "runs": table("SELECT * FROM runs ORDER BY id"),
            "progress": table("SELECT * FROM progress ORDER BY runid, time"),
        }
    except (sqlite3.Error, pd.errors.DatabaseError) as e:
        raise ParseError(f"{db}: not a benchmark database (OMPL schema): {e}") from None
    finally:
        con.close()
    exps, planners, runs = tables["experiments"], tables["planners"], tables["runs"]
    params = [c for c in exps.columns if c not in _EXPERIMENT_COLUMNS]
    tables["parameters"] = exps[["id", "name"] + params].rename(
        columns={"id": "experimentid", "name": "experiment"})
    planner_name = dict(zip(planners["id"], planners["name"]))
    exp_name = dict(zip(exps["id"], exps["name"]))
    runs.insert(1, "planner", runs["plannerid"].map(planner_name))
    runs.insert(2, "experiment", runs["experimentid"].map(exp_name))
    enums = tables["enums"]
    status = enums[enums["name"] == "status"]
    if "status" in runs.columns:
        runs["status_name"] = runs["status"].map(dict(zip(status["value"], status["description"])))
    prog = tables["progress"]
    prog.insert(1, "planner", prog["runid"].map(dict(zip(runs["id"], runs["planner"]))))
    return Benchmark(db, tables)


def _uri_path(path):
    from urllib.parse import quote
    return quote(os.path.abspath(path))
