"""``SubtaskStateMapper``: which old subtasks' in-flight data a new subtask must read.

Each exchange has one mapper for its downstream (input) side and one for its upstream (output)
side, chosen by the partitioner (:mod:`flinkstate.rescale.partitioner`). A mapper is
*ambiguous* when several new subtasks may read the same old subtask; their records must then be
filtered by the receiving subtask.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import NoReturn

from flinkstate.errors import InvalidParameterError, UnsupportedRescaleError
from flinkstate.keygroups import (
    UPPER_BOUND_MAX_PARALLELISM,
    check_parallelism,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
)
from flinkstate.rescale.mappings import RescaleMappings

#: Flink's own words when asked to rescale a pointwise exchange.
UNSUPPORTED_MESSAGE = (
    "Cannot rescale the given pointwise partitioner.\n"
    "Did you change the partitioner to forward or rescale?\n"
    "It may also help to add an explicit shuffle()."
)


class SubtaskStateMapper(Enum):
    """Flink's mappers, by their Java names.

    Examples
    --------
    Flink's ``SubtaskStateMapperTest``: RANGE from 3 to 4 subtasks (a keyBy's input side) makes
    the middle new subtasks read two old ones, which they share and must filter:

    >>> mapper = SubtaskStateMapper.parse("range")
    >>> mapper.new_to_old(3, 4).all_rows()
    ((0,), (0, 1), (1, 2), (2,))
    >>> mapper.old_subtasks(1, 3, 4), mapper.is_ambiguous
    ((0, 1), True)

    ROUND_ROBIN (a rebalance's input side) gives each old subtask to one new subtask:

    >>> SubtaskStateMapper.ROUND_ROBIN.new_to_old(10, 4).all_rows()
    ((0, 4, 8), (1, 5, 9), (2, 6), (3, 7))
    >>> SubtaskStateMapper.ROUND_ROBIN.old_to_new(10, 4).all_rows()[:5]
    ((0,), (1,), (2,), (3,), (0,))

    A pointwise exchange's in-flight data cannot be rescaled, in Flink's words:

    >>> SubtaskStateMapper.UNSUPPORTED.old_subtasks(0, 2, 3)
    Traceback (most recent call last):
        ...
    flinkstate.errors.UnsupportedRescaleError: Cannot rescale the given pointwise partitioner.
    Did you change the partitioner to forward or rescale?
    It may also help to add an explicit shuffle().
    """

    ARBITRARY = "ARBITRARY"
    FIRST = "FIRST"
    FULL = "FULL"
    RANGE = "RANGE"
    ROUND_ROBIN = "ROUND_ROBIN"
    POINTWISE_UPSTREAM = "POINTWISE_UPSTREAM"
    UNSUPPORTED = "UNSUPPORTED"

    @classmethod
    def parse(cls, name: str | SubtaskStateMapper) -> SubtaskStateMapper:
        if isinstance(name, SubtaskStateMapper):
            return name
        key = name.strip().upper().replace("-", "_")
        try:
            return cls[key]
        except KeyError:
            known = ", ".join(m.name for m in cls)
            raise InvalidParameterError(
                f"unknown subtask state mapper {name!r}; known mappers: {known}"
            ) from None

    @property
    def is_ambiguous(self) -> bool:
        """True when new subtasks may share an old subtask, so records must be filtered."""
        return self in (
            SubtaskStateMapper.FULL,
            SubtaskStateMapper.RANGE,
            SubtaskStateMapper.POINTWISE_UPSTREAM,
        )

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    def old_subtasks(
        self, new_subtask: int, old_parallelism: int, new_parallelism: int
    ) -> tuple[int, ...]:
        """Old subtasks whose in-flight data ``new_subtask`` reads after rescaling."""
        check_parallelism(old_parallelism, "old parallelism")
        check_parallelism(new_parallelism, "new parallelism")
        if not 0 <= new_subtask < new_parallelism:
            raise InvalidParameterError(
                f"new subtask {new_subtask} is out of range 0 to {new_parallelism - 1}"
            )
        return self._old_subtasks(new_subtask, old_parallelism, new_parallelism)

    def _old_subtasks(self, new: int, old_p: int, new_p: int) -> tuple[int, ...]:
        return tuple(self._old_range(new, old_p, new_p))

    def _old_range(self, new: int, old_p: int, new_p: int) -> range:
        """Every mapper maps a new subtask to an arithmetic progression of old ones."""
        if self in (SubtaskStateMapper.ARBITRARY, SubtaskStateMapper.ROUND_ROBIN):
            # ARBITRARY is round robin today; Flink reserves the right to change it.
            return range(new, old_p, new_p)
        if self is SubtaskStateMapper.FIRST:
            return range(old_p) if new == 0 else range(0)
        if self is SubtaskStateMapper.FULL:
            return range(old_p)
        if self is SubtaskStateMapper.RANGE:
            # Ranges over the largest max parallelism; the actual one cancels out.
            groups = UPPER_BOUND_MAX_PARALLELISM
            new_range = compute_key_group_range_for_operator_index(groups, new_p, new)
            first = compute_operator_index_for_key_group(groups, old_p, new_range.start)
            last = compute_operator_index_for_key_group(groups, old_p, new_range.end)
            return range(first, last + 1)
        self._refuse()

    def _new_range(self, old: int, old_p: int, new_p: int) -> range:
        """The inverse of :meth:`_old_range`: the new subtasks reading old subtask ``old``."""
        if self in (SubtaskStateMapper.ARBITRARY, SubtaskStateMapper.ROUND_ROBIN):
            return range(old % new_p, old % new_p + 1)
        if self is SubtaskStateMapper.FIRST:
            return range(1)
        if self is SubtaskStateMapper.FULL:
            return range(new_p)
        if self is SubtaskStateMapper.RANGE:
            # The new subtasks whose key-group ranges overlap the old subtask's.
            groups = UPPER_BOUND_MAX_PARALLELISM
            old_range = compute_key_group_range_for_operator_index(groups, old_p, old)
            first = compute_operator_index_for_key_group(groups, new_p, old_range.start)
            last = compute_operator_index_for_key_group(groups, new_p, old_range.end)
            return range(first, last + 1)
        self._refuse()

    def _refuse(self) -> NoReturn:
        if self is SubtaskStateMapper.POINTWISE_UPSTREAM:
            raise UnsupportedRescaleError(
                "POINTWISE_UPSTREAM depends on the edge's topology, not only on the "
                "parallelisms; Flink computes it from the pointwise edge pattern"
            )
        raise UnsupportedRescaleError(UNSUPPORTED_MESSAGE)

    def ranges(self, old_parallelism: int, new_parallelism: int) -> MapperRanges:
        """The whole mapping in both directions as ranges, in time and memory proportional to
        the parallelisms however many (new, old) pairs it holds."""
        check_parallelism(old_parallelism, "old parallelism")
        check_parallelism(new_parallelism, "new parallelism")
        new_to_old = tuple(
            self._old_range(new, old_parallelism, new_parallelism) for new in range(new_parallelism)
        )
        old_to_new = tuple(
            self._new_range(old, old_parallelism, new_parallelism) for old in range(old_parallelism)
        )
        return MapperRanges(self, old_parallelism, new_parallelism, new_to_old, old_to_new)

    def new_to_old(self, old_parallelism: int, new_parallelism: int) -> RescaleMappings:
        """New subtask -> old subtasks (``getNewToOldSubtasksMapping``)."""
        check_parallelism(old_parallelism, "old parallelism")
        check_parallelism(new_parallelism, "new parallelism")
        return RescaleMappings.of(
            (
                self._old_subtasks(new, old_parallelism, new_parallelism)
                for new in range(new_parallelism)
            ),
            old_parallelism,
        )

    def old_to_new(self, old_parallelism: int, new_parallelism: int) -> RescaleMappings:
        """Old subtask -> new subtasks that read it."""
        return self.new_to_old(old_parallelism, new_parallelism).invert()


@dataclass(frozen=True)
class MapperRanges:
    """A mapper's mapping with every row a ``range``, from :meth:`SubtaskStateMapper.ranges`.

    Flink's mappers send every subtask to an arithmetic progression of subtasks, so the whole
    mapping fits in one range per subtask even where :class:`RescaleMappings` lists every pair
    (FULL from 20000 to 20000 is 400 million of them): what shows or sizes a large mapping reads
    this instead. ``ambiguous`` are the old subtasks read by more than one new subtask of an
    ambiguous mapper, whose records must be filtered (empty for any other mapper).

    Examples
    --------
    RANGE from 3 to 4 subtasks, in ranges:

    >>> ranges = SubtaskStateMapper.RANGE.ranges(3, 4)
    >>> ranges.new_to_old
    (range(0, 1), range(0, 2), range(1, 3), range(2, 3))
    >>> sorted(ranges.ambiguous), ranges.pairs
    ([0, 1, 2], 6)
    >>> ranges.runs(1)
    ((range(0, 2), True),)

    A FULL mapping from 20000 to 20000 subtasks holds 400 million (new, old) pairs, in 20000 ranges
    each way:

    >>> full = SubtaskStateMapper.FULL.ranges(20000, 20000)
    >>> full.pairs, len(full.new_to_old), full.new_to_old[7]
    (400000000, 20000, range(0, 20000))
    """

    mapper: SubtaskStateMapper
    old_parallelism: int
    new_parallelism: int
    new_to_old: tuple[range, ...]
    old_to_new: tuple[range, ...]
    ambiguous: frozenset[int] = field(init=False)
    #: ambiguous old subtasks below each index: how many a run of old subtasks holds, at once
    _ambiguous_below: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ambiguous = (
            frozenset(old for old, news in enumerate(self.old_to_new) if len(news) > 1)
            if self.mapper.is_ambiguous
            else frozenset()
        )
        below = [0]
        for old in range(self.old_parallelism):
            below.append(below[-1] + (old in ambiguous))
        object.__setattr__(self, "ambiguous", ambiguous)
        object.__setattr__(self, "_ambiguous_below", tuple(below))

    @property
    def pairs(self) -> int:
        """(new, old) pairs in the mapping: the length of a listing of every row."""
        return sum(len(row) for row in self.new_to_old)

    @property
    def is_identity(self) -> bool:
        """As :class:`RescaleMappings` normalises: new ``i`` reads old ``i`` and nothing else,
        extra new subtasks read nothing."""
        return self.new_parallelism >= self.old_parallelism and all(
            row == (range(new, new + 1) if new < self.old_parallelism else range(0))
            for new, row in enumerate(self.new_to_old)
        )

    def runs(self, new_subtask: int) -> tuple[tuple[range, bool], ...]:
        """The old subtasks ``new_subtask`` reads as runs of consecutive subtasks, each with
        whether they are ambiguous. A run that is all one or the other costs nothing to find,
        so the cost is the length of the rows that mix both (at most the old parallelism over
        all rows of Flink's mappers)."""
        row = self.new_to_old[new_subtask]
        if not row:
            return ()
        if row.step == 1:
            shared = self._ambiguous_below[row.stop] - self._ambiguous_below[row.start]
            if shared in (0, len(row)):
                return ((row, shared > 0),)
        runs: list[tuple[range, bool]] = []
        for old in row:
            flag = old in self.ambiguous
            if runs and runs[-1][1] == flag and runs[-1][0].stop == old:
                runs[-1] = (range(runs[-1][0].start, old + 1), flag)
            else:
                runs.append((range(old, old + 1), flag))
        return tuple(runs)

    def shared(self, new_subtask: int) -> Sequence[int]:
        """The ambiguous old subtasks ``new_subtask`` reads (a range when they are one run)."""
        chosen = [run for run, flag in self.runs(new_subtask) if flag]
        if len(chosen) == 1:
            return chosen[0]
        return [old for run in chosen for old in run]


_DESCRIPTIONS = {
    SubtaskStateMapper.ARBITRARY: "redistributed without a specific guarantee (round robin today)",
    SubtaskStateMapper.FIRST: "everything goes to new subtask 0",
    SubtaskStateMapper.FULL: "every new subtask reads every old subtask and filters",
    SubtaskStateMapper.RANGE: "old key-group ranges onto new ones; overlaps are filtered",
    SubtaskStateMapper.ROUND_ROBIN: "old subtask i goes to new subtask i mod new parallelism",
    SubtaskStateMapper.POINTWISE_UPSTREAM: "pointwise upstream: derived from the edge pattern",
    SubtaskStateMapper.UNSUPPORTED: "pointwise exchange: in-flight data cannot be rescaled",
}
