"""Flink's memory segment, as the format readers and the model both need it: the bounds and the
check of its size (``ConfigurationParserUtils.getPageSize``, with Flink's messages) and the
length prefix every serialised record carries into it.

It sits below everything that reads or simulates checkpoints, so that the checkpoint reader,
the dataset generator and Spark need nothing of the runtime model.
"""

from __future__ import annotations

from flinkstate.errors import InvalidParameterError

#: ``MemoryManager.MIN_PAGE_SIZE``
MIN_PAGE_SIZE = 4096
#: ``ConfigurationParserUtils.getPageSize`` casts the configured size to an int
MAX_PAGE_SIZE = 2**31 - 1
#: ``taskmanager.memory.segment-size`` default (32 KiB)
DEFAULT_SEGMENT_SIZE = 32 * 1024
SEGMENT_SIZE_KEY = "taskmanager.memory.segment-size"
#: length prefix of every serialized record (``DataOutputSerializer`` writes an int)
LENGTH_PREFIX_BYTES = 4


def check_segment_size(size: int) -> int:
    """Flink's page-size check: a Java int, at least 4096 bytes and a power of two.

    Examples
    --------
    >>> check_segment_size(DEFAULT_SEGMENT_SIZE)
    32768
    >>> check_segment_size(3000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: ... : 3000 - Minimum memory segment size is 4096
    >>> check_segment_size(6000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: ... : 6000 - Memory segment size must be a power of 2.
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise InvalidParameterError(f"segment size must be a whole number of bytes, got {size!r}")
    if size > MAX_PAGE_SIZE:
        # getPageSize's MathUtils.checkedDownCast, before any other check
        raise InvalidParameterError(
            f"{SEGMENT_SIZE_KEY} {size} does not fit a Java int (at most {MAX_PAGE_SIZE} "
            f"bytes; the largest valid size is 1 GiB) (Flink: 'Cannot downcast long value "
            f"{size} to integer.')"
        )
    if size < MIN_PAGE_SIZE:
        raise InvalidParameterError(
            f"Invalid configuration value for {SEGMENT_SIZE_KEY} : {size} - "
            f"Minimum memory segment size is {MIN_PAGE_SIZE}"
        )
    if size & (size - 1):
        raise InvalidParameterError(
            f"Invalid configuration value for {SEGMENT_SIZE_KEY} : {size} - "
            "Memory segment size must be a power of 2."
        )
    return size
