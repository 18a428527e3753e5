"""Exceptions raised by the runlab package.

Every error librunlab reports becomes a subclass of :class:`runlab.Error` carrying the
C library's own message (which names the file and, for malformed input, the line or byte
offset). The subclasses also derive from the matching built-in exception, so
``except FileNotFoundError`` or ``except ValueError`` work as a pandas user expects.
"""

from . import _runlab


class Error(Exception):
    """Base class of every error runlab raises; ``str(e)`` is librunlab's message."""


class ParseError(Error, ValueError):
    """Malformed input (RL_EPARSE, RL_ETRUNCATED, RL_ECRC): the message says where."""


class NotFoundError(Error, FileNotFoundError):
    """A file, directory, key or item that does not exist (RL_ENOENT)."""


class InvalidArgumentError(Error, ValueError):
    """An argument runlab cannot use (RL_EINVAL, RL_ERANGE)."""


class UnsupportedError(Error):
    """Valid input using a feature runlab does not support (RL_EUNSUPPORTED)."""


class RunlabIOError(Error, OSError):
    """An operating-system I/O error (RL_EIO, RL_ENOSPC); the message holds errno's text."""


class OutOfMemoryError(Error, MemoryError):
    """An allocation failed inside librunlab (RL_ENOMEM)."""


class BusyError(Error):
    """A resource held by someone else, e.g. a lock file (RL_EBUSY)."""


_CODES = {
    -2: InvalidArgumentError, -8: InvalidArgumentError,
    -3: OutOfMemoryError,
    -4: RunlabIOError, -9: RunlabIOError,
    -5: NotFoundError,
    -7: ParseError, -15: ParseError, -12: ParseError,
    -13: UnsupportedError,
    -14: BusyError,
    "default": Error,
}
_runlab._register_errors(_CODES)

__all__ = ["Error", "ParseError", "NotFoundError", "InvalidArgumentError",
           "UnsupportedError", "RunlabIOError", "OutOfMemoryError", "BusyError"]
