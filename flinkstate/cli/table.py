"""Plain-text tables for the command line: aligned columns, no dependencies at start-up."""

from __future__ import annotations

from collections.abc import Sequence

from flinkstate.errors import printable


def render_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    r"""Columns padded to their widest cell; numbers right-aligned, text left-aligned. A cell's
    control characters (a line break or terminal escape in a name read from a file) are written
    as escapes, so that every row stays one line and its columns stay aligned.

    Examples
    --------
    >>> print(render_table(["operator", "subtasks"], [["map\nx", 4], ["sink", 12]]))
    operator  subtasks
    --------  --------
    map\nx           4
    sink            12
    """
    cells = [[printable(str(cell)) for cell in row] for row in rows]
    widths = [len(header) for header in headers]
    for row in cells:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))
    numeric = [
        all(_is_number(row[index]) for row in rows) and bool(rows) for index in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        padded = (
            value.rjust(widths[i]) if numeric[i] else value.ljust(widths[i])
            for i, value in enumerate(values)
        )
        return "  ".join(padded).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in cells)])


def format_indexes(indexes: Sequence[int]) -> str:
    """``0, 1, 2`` or ``-`` for none; long runs as ``0..9`` (from a ``range`` at once, however
    long: a mapping's rows at parallelism 20000 are).

    Examples
    --------
    >>> format_indexes([0, 2]), format_indexes(range(20000)), format_indexes([])
    ('0, 2', '0..19999', '-')
    """
    if not indexes:
        return "-"
    if isinstance(indexes, range) and indexes.step == 1 and len(indexes) > 3:
        return f"{indexes.start}..{indexes.stop - 1}"
    values = list(indexes)
    if len(values) > 3 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}"
    return ", ".join(str(value) for value in values)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
