"""Recordings: MCAP files (what ``runlab record`` and the lab's recorder write) read by
librunlab's indexed reader, payloads decoded by runlab's own decoder (ROS 2 .msg and
OMG IDL schemas with CDR payloads, JSON payloads), the one ``runlab mcap cat --json`` uses.

    rec = runlab.mcap.open("run.mcap")
    rec.topics                       # DataFrame: topic, schema, encoding, messages
    for topic, log_time, msg in rec.messages(topics=["/pose"], start=t0, end=t1):
        ...
    rec.frame("/pose")               # one row per message, flattened leaf fields

Decoded messages are dicts as ``mcap cat --json`` writes them: 64-bit integers exact,
unions as ``{"_d": d, "<case>": v}``, absent optionals None; non-finite floats come as
the strings "NaN", "Infinity", "-Infinity" in :meth:`Recording.messages` (as in the JSON)
and as float NaN/inf in :meth:`Recording.frame`. Reading and decoding release the GIL.
"""

import json
import os

from . import _runlab
from .errors import ParseError

__all__ = ["Recording", "open"]

_NONFINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_U64_MAX = (1 << 64) - 1


class Recording:
    """An open MCAP file (use :func:`open`).

    Attributes:
        path (str): the file.
        schemas (list[dict]): id, name, encoding, data (bytes) of each schema.
        channels (list[dict]): id, topic, schema_id, message_encoding of each channel.
        statistics (dict | None): the Statistics record (message_count, message_start_time,
            message_end_time, channel_message_counts, ...), None when the file has none.
        warnings (list[str]): what the reader noticed and worked around (damaged summary...).
    """

    def __init__(self, path):
        self.path = os.fspath(path)
        self._c = _runlab.open_mcap(self.path)
        schemas, channels, stats, warns = self._c.summary()
        self.schemas = [dict(zip(("id", "name", "encoding", "data"), s)) for s in schemas]
        self.channels = [dict(zip(("id", "topic", "schema_id", "message_encoding"), c))
                         for c in channels]
        self.statistics = stats
        self.warnings = warns

    def __repr__(self):
        n = self.statistics["message_count"] if self.statistics else "?"
        return f"Recording({self.path!r}: {len(self.channels)} topics, {n} messages)"

    @property
    def topics(self):
        """A DataFrame with one row per channel: topic, schema (name), encoding
        (message encoding), schema_encoding and messages (count from the statistics)."""
        import pandas as pd
        names = {s["id"]: s for s in self.schemas}
        counts = (self.statistics or {}).get("channel_message_counts", {})
        rows = [{"topic": c["topic"], "schema": names.get(c["schema_id"], {}).get("name"),
                 "encoding": c["message_encoding"],
                 "schema_encoding": names.get(c["schema_id"], {}).get("encoding"),
                 "messages": counts.get(c["id"])} for c in self.channels]
        return pd.DataFrame(rows, columns=["topic", "schema", "encoding", "schema_encoding",
                                           "messages"])

    def messages(self, topics=None, start=None, end=None):
        """Yields (topic, log_time, message) in log-time order.

        ``topics``: a topic name or a list of them (None: all); ``start``/``end``: log
        times in nanoseconds, inclusive (None: unbounded). ``message`` is the decoded
        dict; a payload runlab cannot decode (an encoding it does not know) comes as
        ``{"data": bytes}``. A payload that does not match its schema raises
        :class:`runlab.ParseError` naming the topic and log time.
        """
        for topic, log_time, kind, payload in self._query(topics, start, end):
            yield topic, log_time, _decode(topic, log_time, kind, payload)

    def _query(self, topics, start, end):
        if isinstance(topics, str):
            topics = [topics]
        return self._c.messages(None if topics is None else list(topics),
                                0 if start is None else int(start),
                                _U64_MAX if end is None else int(end))

    def frame(self, topic, start=None, end=None):
        """One topic's messages as a DataFrame: index log_time, one column per leaf field
        ("pose.position.x"), arrays of numbers as numpy arrays in one cell each."""
        import numpy as np
        import pandas as pd
        rows, times = [], []
        for _, log_time, msg in self.messages([topic], start, end):
            flat = {}
            _flatten(msg, "", flat, np)
            rows.append(flat)
            times.append(log_time)
        df = pd.DataFrame(rows, index=pd.Index(np.array(times, dtype=np.uint64),
                                               name="log_time"))
        for c in df.columns:
            col = df[c]
            if col.dtype == object and col.map(lambda v: isinstance(v, str)
                                               and v in _NONFINITE).any():
                converted = col.map(lambda v: _NONFINITE.get(v, v) if isinstance(v, str) else v)
                if converted.map(lambda v: isinstance(v, (int, float))).all():
                    df[c] = converted.astype(np.float64)
        return df


def _decode(topic, log_time, kind, payload):
    if kind == "json":
        return json.loads(payload)
    if kind == "jsontext":
        try:
            return json.loads(payload)
        except ValueError as e:
            raise ParseError(f"topic '{topic}', log_time {log_time}: payload is not JSON: {e}") from None
    if kind == "error":
        raise ParseError(f"topic '{topic}', log_time {log_time}: {payload[0]}")
    return {"data": payload}


def _flatten(value, prefix, out, np):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else k, out, np)
    elif isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                         for v in value):
        out[prefix] = np.array(value, dtype=np.float64 if any(isinstance(v, float) for v in value)
                               else np.int64)
    elif isinstance(value, list) and all(isinstance(v, (int, float, str)) for v in value) and \
            any(v in _NONFINITE for v in value if isinstance(v, str)) and \
            all(v in _NONFINITE for v in value if isinstance(v, str)):
        out[prefix] = np.array([_NONFINITE.get(v, v) if isinstance(v, str) else v
                                for v in value], dtype=np.float64)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out, np)
    else:
        out[prefix] = value


def open(path):  # noqa: A001  (runlab.mcap.open, as the issue names it)
    """Opens an MCAP file and returns a :class:`Recording`. Raises
    :class:`runlab.NotFoundError` for a missing file, :class:`runlab.ParseError` for a file
    that is not MCAP or is damaged beyond what the reader recovers (the message says where)."""
    return Recording(path)


