"""The package's own exception types.

Every error a user can cause (a parameter outside Flink's bounds, a key Java cannot hash by
value, a rescale Flink refuses) is raised as one of these, with a message that names the value
and the limit. The command line prints the message and exits non-zero instead of a traceback.
"""

from __future__ import annotations


class FlinkstateError(Exception):
    """Base class: anything raised on purpose by flinkstate."""


class InvalidParameterError(FlinkstateError, ValueError):
    """A parameter is outside the bounds Flink accepts (parallelism, max parallelism, index)."""


class InsufficientNetworkBuffersError(InvalidParameterError):
    """A TaskManager has too few network buffers for what its tasks reserve: Flink's
    ``IOException`` "Insufficient number of network buffers", with Flink's message."""


class BufferRequestTimeoutError(FlinkstateError):
    """A request for segments would wait for ones nobody returns: Flink's ``IOException``
    "Timeout triggered when requesting exclusive buffers", with Flink's message."""


class BufferPoolDestroyedError(FlinkstateError):
    """A request to a destroyed buffer pool: Flink's ``IllegalStateException`` (the network
    buffer pool) or ``CancelTaskException`` (a local pool), with Flink's message."""


class KeyTypeError(FlinkstateError, TypeError):
    """A key whose Java ``hashCode()`` is not defined by its value, or a value of the wrong type."""


class UnsupportedRescaleError(FlinkstateError):
    """Flink refuses to rescale this in-flight data (for example a pointwise exchange)."""


def printable(text: str) -> str:
    r"""``text`` with what a terminal would act on (newlines, escapes, other control and
    separator characters) written as Python escapes: names read from a corrupt or hostile
    file stay on one line and cannot move the cursor.

    Examples
    --------
    >>> print(printable("uid\x1b]0;owned\x07\nnext"))
    uid\x1b]0;owned\x07\nnext
    """
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def printable_lines(text: str) -> str:
    r"""``text`` as :func:`printable` makes it, line by line: its own line breaks kept, every
    other control character escaped. What the command line prints goes through it, so that no
    string read from a file (an operator's uid, a path) can retitle or clear the terminal.

    Examples
    --------
    >>> print(printable_lines("operator  uid\n--------  ---\nmap       \x1b[2Jgone"))
    operator  uid
    --------  ---
    map       \x1b[2Jgone
    """
    return "\n".join(printable(line) for line in text.split("\n"))


class CheckpointFormatError(FlinkstateError, ValueError):
    """A file of a Flink checkpoint is not what Flink writes: the message names the file, the
    byte offset and what was expected there (names from the file made printable)."""

    def __init__(self, file: str, offset: int, expected: str) -> None:
        super().__init__(f"{printable(file)}: at byte {offset}: expected {printable(expected)}")
        self.file = file
        self.offset = offset
        self.expected = expected


class StoredPathError(CheckpointFormatError):
    """A state file path in a checkpoint's ``_metadata`` that leads outside the folders the
    checkpoint may be read from: a relative path that is not a name inside the checkpoint's
    folder, or an absolute path neither under its job's folder nor under a folder the user
    mapped with ``--reroot``. Flink writes neither; a hostile file would (``/etc/...``)."""

    def __init__(self, metadata: str, stored: str, reason: str) -> None:
        FlinkstateError.__init__(
            self, f"{printable(metadata)}: the state file path {printable(repr(stored))} {reason}"
        )
        self.file = metadata
        self.offset = 0
        self.expected = reason


class SparkStartError(FlinkstateError):
    """Spark's driver JVM or session did not start (no Java, a wrong JAVA_HOME, a master that
    cannot be reached or refuses the application); the message carries what the JVM said."""


class SparkJobError(FlinkstateError):
    """A Spark job failed (in the JVM or in an executor's Python); the message says why in
    one line, naming what to install or set where that is recognisable."""
