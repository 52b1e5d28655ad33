"""Spark's errors in one line: what went wrong, not two hundred lines of Java and Py4J.

A failed Spark job reaches Python as a Py4J or PySpark exception whose text holds the JVM's
stack trace and, for a task that failed in an executor's Python, that Python's traceback.
:func:`spark_errors` turns any of them into one of flinkstate's errors with one line: the
cause a user can act on where it is recognisable (an executor's Python without pandas or
pyarrow, the most common one on a cluster), else the first line of Spark's own message.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from flinkstate.errors import FlinkstateError

#: what every flinkstate job needs in the executors' Python
NEEDED = ("numpy", "pandas", "pyarrow")
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
#: PySpark's own check: "[PACKAGE_NOT_INSTALLED] PyArrow >= 15.0.0 must be installed; ..."
_NOT_INSTALLED = re.compile(r"\b(numpy|pandas|pyarrow)\b[^\n]*? must be installed", re.IGNORECASE)
_PYTHON_TRACEBACK = "Traceback (most recent call last)"
_TO_PANDAS_FAILED = r"toPandas attempted Arrow optimization .* can not continue"
_CANCELLED = "cancelled as part of cancellation of all jobs"
#: first lines that only say another exception follows
_WRAPPER = re.compile(r"(Exception thrown in awaitResult|An error occurred while calling)")
_LONGEST = 300


@contextmanager
def spark_errors(kind: type[FlinkstateError], what: str) -> Iterator[None]:
    """Raise ``kind("<what>: <the cause in one line>")`` for a Py4J or PySpark error in the
    block; flinkstate's own errors and Ctrl-C pass unchanged."""
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]
    from pyspark.errors import PySparkException

    try:
        with warnings.catch_warnings():
            # toPandas warns with the whole error before it raises it
            warnings.filterwarnings("ignore", _TO_PANDAS_FAILED, UserWarning)
            yield
    except (Py4JError, PySparkException) as error:
        text = error_text(error)
        if _interrupted(error, text):
            raise KeyboardInterrupt from error
        raise kind(f"{what}: {describe(text)}") from error


def _interrupted(error: BaseException, text: str) -> bool:
    """Whether ``error`` is Ctrl-C: PySpark cancels every job on SIGINT, and the call waiting
    for one then fails with the cancellation rather than the interrupt."""
    seen: BaseException | None = error
    for _ in range(10):
        if seen is None:
            break
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or seen.__context__
    return _CANCELLED in text


def error_text(error: BaseException) -> str:
    """All an error says, the JVM's stack trace included, without asking the JVM (it may be
    gone)."""
    parts = [str(getattr(error, "_desc", "") or ""), str(getattr(error, "_stackTrace", "") or "")]
    java = getattr(error, "java_exception", None)
    with contextlib.suppress(Exception):  # the JVM is gone: what Python holds must do
        for _ in range(10):  # the exception and its causes: the first is often a wrapper
            if java is None:
                break
            parts.append(str(java.toString()))
            java = java.getCause()
    if not any(parts):
        parts.append(str(error))
    return "\n".join(part for part in parts if part)


def describe(text: str) -> str:
    """One line for an error's text: the package an executor's Python lacks, the last line
    of a Python traceback from an executor, or the first line of Spark's message."""
    missing = _MISSING_MODULE.search(text) or _NOT_INSTALLED.search(text)
    if missing:
        module = missing.group(1).lower()
        if module.split(".")[0] in NEEDED:
            return (
                f"the executors' Python lacks {module.split('.')[0]} (needed by flinkstate's "
                f"Arrow functions on the executors: {', '.join(NEEDED)}); install them there or "
                "set PYSPARK_PYTHON to a Python that has them"
            )
        if module.split(".")[0] == "flinkstate":
            return (
                "the executors cannot import flinkstate: the zip added to the job did not "
                "reach them"
            )
        return f"the executors' Python lacks the module {module}"
    if _PYTHON_TRACEBACK in text:
        traceback = text[text.index(_PYTHON_TRACEBACK) :].splitlines()
        last = next((line for line in traceback[1:] if line and not line[0].isspace()), "")
        if last:
            return f"a task failed in the executors' Python: {summary(last)}"
    lines = [line for line in text.splitlines() if line.strip() and not _WRAPPER.search(line)]
    return summary("\n".join(lines))


def summary(text: str) -> str:
    """The first non-empty line of ``text``, at most a few hundred characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "unknown error")
    return line if len(line) <= _LONGEST else line[: _LONGEST - 3] + "..."
