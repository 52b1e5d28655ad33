"""``SubtaskStateMapper``: which old subtasks' in-flight data a new subtask must read.

Each exchange has one mapper for its downstream (input) side and one for its upstream (output)
side, chosen by the partitioner (:mod:`flinkstate.rescale.partitioner`). A mapper is
*ambiguous* when several new subtasks may read the same old subtask; their records must then be
filtered by the receiving subtask.
"""

from __future__ import annotations

from enum import Enum

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
    """Flink's mappers, by their Java names."""

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
        if self in (SubtaskStateMapper.ARBITRARY, SubtaskStateMapper.ROUND_ROBIN):
            # ARBITRARY is round robin today; Flink reserves the right to change it.
            return tuple(range(new, old_p, new_p))
        if self is SubtaskStateMapper.FIRST:
            return tuple(range(old_p)) if new == 0 else ()
        if self is SubtaskStateMapper.FULL:
            return tuple(range(old_p))
        if self is SubtaskStateMapper.RANGE:
            # Ranges over the largest max parallelism; the actual one cancels out.
            groups = UPPER_BOUND_MAX_PARALLELISM
            new_range = compute_key_group_range_for_operator_index(groups, new_p, new)
            first = compute_operator_index_for_key_group(groups, old_p, new_range.start)
            last = compute_operator_index_for_key_group(groups, old_p, new_range.end)
            return tuple(range(first, last + 1))
        if self is SubtaskStateMapper.POINTWISE_UPSTREAM:
            raise UnsupportedRescaleError(
                "POINTWISE_UPSTREAM depends on the edge's topology, not only on the "
                "parallelisms; Flink computes it from the pointwise edge pattern"
            )
        raise UnsupportedRescaleError(UNSUPPORTED_MESSAGE)

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


_DESCRIPTIONS = {
    SubtaskStateMapper.ARBITRARY: "redistributed without a specific guarantee (round robin today)",
    SubtaskStateMapper.FIRST: "everything goes to new subtask 0",
    SubtaskStateMapper.FULL: "every new subtask reads every old subtask and filters",
    SubtaskStateMapper.RANGE: "old key-group ranges onto new ones; overlaps are filtered",
    SubtaskStateMapper.ROUND_ROBIN: "old subtask i goes to new subtask i mod new parallelism",
    SubtaskStateMapper.POINTWISE_UPSTREAM: "pointwise upstream: derived from the edge pattern",
    SubtaskStateMapper.UNSUPPORTED: "pointwise exchange: in-flight data cannot be rescaled",
}
