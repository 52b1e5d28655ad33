"""The rules a run's own settings are held to (its seed, its step limit), written once: the
widgets' boxes, their constructors and ``flinkstate run`` check a value against the same rule,
so a bad value is refused with the same message wherever it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError

#: seeds are Java-style non-negative ints (what a trace records and Flink's jobs take)
MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class RunRule:
    """A whole number from ``minimum`` to ``maximum`` (None: no upper bound).

    Examples
    --------
    >>> SEED.check(7)
    7
    >>> SEED.check(-1)
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: seed must be between 0 and 2147483647, got -1
    >>> MAX_STEPS.check(0)
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: max_steps must be at least 1, got 0
    >>> MAX_STEPS.check(0, "--steps")
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: --steps must be at least 1, got 0
    >>> SEED.check(None)
    Traceback (most recent call last):
    ...
    flinkstate.errors.InvalidParameterError: seed must be a whole number, got None
    """

    name: str
    minimum: int
    maximum: int | None = None

    def check(self, value: object, name: str | None = None) -> int:
        """``value`` when the rule holds; otherwise refused, naming the setting (``name``: as
        the caller spells it, a command-line option say) and the rule."""
        called = self.name if name is None else name
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParameterError(f"{called} must be a whole number, got {value!r}")
        if self.maximum is None:
            if value < self.minimum:
                raise InvalidParameterError(
                    f"{called} must be at least {self.minimum}, got {value}"
                )
        elif not self.minimum <= value <= self.maximum:
            raise InvalidParameterError(
                f"{called} must be between {self.minimum} and {self.maximum}, got {value}"
            )
        return value


#: the seed of a run's keys and schedule
SEED = RunRule("seed", 0, MAX_SEED)
#: the most steps a run takes before it stops: a run of no step says nothing
MAX_STEPS = RunRule("max_steps", 1)
