"""runlab for Python: what runlab writes, loaded into numpy and pandas by librunlab's C code.

Modules:
    runlab.perflog  per-cycle runs (load_run, load_runs, aggregate_report, runs_frame);
                    also exported here at the top level
    runlab.bench    benchmarks: runlab.bench.load(DIR) -> results.db's tables as DataFrames
    runlab.mcap     recordings: runlab.mcap.open(FILE) -> topics, messages, frame(topic)
    runlab.lab      the lab: list_runs(home) as `runlab list --json`, evaluation(run)
    runlab.errors   runlab.Error and its subclasses, raised with librunlab's message

Loading releases the GIL, so threads can load in parallel. Columns are numpy arrays filled
by C: no Python object is made per cell. docs/python.md is a notebook-style walk-through.

Example::

    from runlab import load_run, load_runs, aggregate_report, runs_frame
    runs = load_runs("results/")
    print(aggregate_report(runs))
    df = runs_frame(runs)
    df.groupby(["planner", "scene"])["planning.RealAccumulatedGain"].max()
"""

from . import _runlab  # noqa: F401  (the C extension: fails here if librunlab is missing)
from .errors import (Error, ParseError, NotFoundError, InvalidArgumentError,  # noqa: F401
                     UnsupportedError, RunlabIOError, OutOfMemoryError, BusyError)
from . import perflog  # noqa: F401
from . import bench  # noqa: F401
from . import mcap  # noqa: F401
from . import lab  # noqa: F401
from .perflog import (RunStatus, RunData, RunSet, Report, WalkWarning,  # noqa: F401
                      load_run, load_runs, aggregate_report, runs_frame)

# The library's own version (rl_version): one number for the command, the C library and this
# package.
__version__ = _runlab.version()

__all__ = ["perflog", "bench", "mcap", "lab", "errors", "Error", "ParseError", "NotFoundError",
           "InvalidArgumentError", "UnsupportedError", "RunlabIOError", "OutOfMemoryError",
           "BusyError", "RunStatus", "RunData", "RunSet", "Report", "WalkWarning",
           "load_run", "load_runs", "aggregate_report", "runs_frame"]
