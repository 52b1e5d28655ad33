"""What a step did, as data: the base of every happening a mechanism tells the step journal.

A behaviour says what happened (a record processed, a barrier received, a trigger reset) as a
small frozen value of its room's ``happenings`` module, never as words: the words are written
once, at the edge of the runtime (``flinkstate.runtime.world.narration``), which turns a step's
happenings into its note. Captions and other readers take the values themselves. Happenings
are immutable, so a step's tuple of them is shared, never copied.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Happening:
    """One thing a step did, by its kind (the subclass) and the values that say which.

    Examples
    --------
    Every kind of happening is a frozen dataclass deriving from this one:

    >>> from dataclasses import FrozenInstanceError, dataclass
    >>> @dataclass(frozen=True, slots=True)
    ... class Rang(Happening):
    ...     times: int
    >>> rang = Rang(2)
    >>> rang == Rang(2), isinstance(rang, Happening)
    (True, True)
    >>> try:
    ...     rang.times = 3  # type: ignore[misc]
    ... except FrozenInstanceError:
    ...     print("immutable")
    immutable
    """
