"""``RescaleMappings``: which old indexes each new index reads, and back.

A mapping row per source (normally a new subtask or channel) lists its targets (old subtasks or
channels). Like Flink's class it normalises: a mapping that is exactly ``i -> [i]`` for every
target (extra sources mapping to nothing) is the identity, and trailing empty rows are dropped,
so two mappings that mean the same compare equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError


@dataclass(frozen=True)
class RescaleMappings:
    """Source index -> sorted target indexes.

    ``rows`` holds the stored rows (trailing empty rows trimmed, nothing for the identity);
    use :meth:`mapped_indexes` to look a source up.

    Examples
    --------
    Two new channels reading three old ones; old channel 1 is read by both, so its records are
    filtered:

    >>> mapping = RescaleMappings.of([[0, 1], [1, 2]], 3)
    >>> mapping.mapped_indexes(1), sorted(mapping.ambiguous_targets())
    ((1, 2), [1])
    >>> print(mapping.invert())
    [[0], [0, 1], [1]]

    As in Flink, ``i -> [i]`` is normalised to the identity, extra sources reading nothing:

    >>> identity = RescaleMappings.of([[0], [1], [2], []], 3)
    >>> identity.is_identity, identity.rows, str(identity)
    (True, (), 'identity(4->3)')
    """

    number_of_sources: int
    number_of_targets: int
    rows: tuple[tuple[int, ...], ...]
    is_identity: bool = False

    def __post_init__(self) -> None:
        for source, targets in enumerate(self.rows):
            for target in targets:
                if not 0 <= target < self.number_of_targets:
                    raise InvalidParameterError(
                        f"source {source} maps to target {target}, outside 0 to "
                        f"{self.number_of_targets - 1}"
                    )

    @classmethod
    def of(cls, rows: Iterable[Sequence[int]], number_of_targets: int) -> RescaleMappings:
        """Normalise a list of rows, as Flink's ``RescaleMappings.of`` does."""
        materialised = tuple(tuple(row) for row in rows)
        if _is_identity(materialised, number_of_targets):
            return cls.identity(len(materialised), number_of_targets)
        last = len(materialised)
        while last > 0 and not materialised[last - 1]:
            last -= 1
        return cls(len(materialised), number_of_targets, materialised[:last])

    @classmethod
    def identity(cls, number_of_sources: int, number_of_targets: int) -> RescaleMappings:
        return cls(number_of_sources, number_of_targets, (), is_identity=True)

    def mapped_indexes(self, source: int) -> tuple[int, ...]:
        """Targets of ``source``; empty past the stored rows."""
        if self.is_identity:
            return (source,) if 0 <= source < self.number_of_targets else ()
        if 0 <= source < len(self.rows):
            return self.rows[source]
        return ()

    def all_rows(self) -> tuple[tuple[int, ...], ...]:
        """One row per source, including the trailing empty ones (for display)."""
        return tuple(self.mapped_indexes(source) for source in range(self.number_of_sources))

    def invert(self) -> RescaleMappings:
        """Target -> sorted sources."""
        if self.is_identity:
            return RescaleMappings.identity(self.number_of_targets, self.number_of_sources)
        inverted: list[list[int]] = [[] for _ in range(self.number_of_targets)]
        for source, targets in enumerate(self.rows):
            for target in targets:
                inverted[target].append(source)
        return RescaleMappings.of((sorted(row) for row in inverted), self.number_of_sources)

    def ambiguous_targets(self) -> frozenset[int]:
        """Targets that more than one source maps to: their data must be filtered."""
        if self.is_identity:
            return frozenset()
        seen: set[int] = set()
        ambiguous: set[int] = set()
        for targets in self.rows:
            for target in targets:
                (ambiguous if target in seen else seen).add(target)
        return frozenset(ambiguous)

    def __str__(self) -> str:
        if self.is_identity:
            return f"identity({self.number_of_sources}->{self.number_of_targets})"
        return str([list(row) for row in self.all_rows()])


def _is_identity(rows: tuple[tuple[int, ...], ...], number_of_targets: int) -> bool:
    if len(rows) < number_of_targets:
        return False
    if any(rows[source] for source in range(number_of_targets, len(rows))):
        return False
    return all(rows[source] == (source,) for source in range(number_of_targets))


#: Flink's ``RescaleMappings.SYMMETRIC_IDENTITY``: the channel mapping when nothing rescales.
SYMMETRIC_IDENTITY = RescaleMappings.identity(2**31 - 1, 2**31 - 1)
