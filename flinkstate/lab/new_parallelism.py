"""The parallelism a forecast restores a real checkpoint at: one for every operator, or each
named operator's own, the others keeping theirs (how Flink restores a job where only some
operators were given a new parallelism)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from flinkstate.errors import InvalidParameterError
from flinkstate.keygroups import check_parallelism


@dataclass(frozen=True)
class NewParallelism:
    """Every operator at ``every`` (None: as it was), except those in ``operators``, each at
    its own.

    Examples
    --------
    ``--to slow-counter=3`` rescales that operator alone; ``--to 3`` every one; both together
    every one at 3 but slow-counter at 5:

    >>> only = NewParallelism.parse(["slow-counter=3"])
    >>> str(only), only.of({"to-record": 2, "slow-counter": 4})
    ('slow-counter=3', {'to-record': 2, 'slow-counter': 3})
    >>> both = NewParallelism.parse(["3", "slow-counter=5"])
    >>> str(both), both.of({"to-record": 2, "slow-counter": 4})
    ('3, slow-counter=5', {'to-record': 3, 'slow-counter': 5})
    >>> NewParallelism.parse(4) == NewParallelism(4)
    True
    """

    every: int | None = None
    operators: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if self.every is None and not self.operators:
            raise InvalidParameterError("--to names no parallelism")
        if self.every is not None:
            check_parallelism(self.every, "--to")
        for name, parallelism in self.operators:
            check_parallelism(parallelism, f"--to {name}")

    @classmethod
    def parse(
        cls, given: int | Mapping[str, int] | Iterable[str] | NewParallelism
    ) -> NewParallelism:
        """From a number, a mapping of operator names, or the command line's ``--to`` values
        (``N`` or ``OPERATOR=N``, each operator and the plain number at most once)."""
        if isinstance(given, NewParallelism):
            return given
        if isinstance(given, int):
            return cls(given)
        if isinstance(given, Mapping):
            return cls(None, tuple((str(k), int(v)) for k, v in given.items()))
        every: int | None = None
        named: dict[str, int] = {}
        for text in given:
            name, _, number = text.rpartition("=")
            value = _whole(number.strip(), text)
            if not name:
                if every is not None:
                    raise InvalidParameterError("--to gives every operator's parallelism twice")
                every = value
            elif name.strip() in named:
                raise InvalidParameterError(f"--to names operator {name.strip()!r} twice")
            else:
                named[name.strip()] = value
        return cls(every, tuple(named.items()))

    def of(self, current: Mapping[str, int]) -> dict[str, int]:
        """Each operator's new parallelism, from ``current`` (name -> parallelism now); an
        operator named but not among them is refused, naming those that are."""
        unknown = [name for name, _ in self.operators if name not in current]
        if unknown:
            raise InvalidParameterError(
                f"--to names {', '.join(map(repr, unknown))}, not an operator of the model's "
                f"job; it has {', '.join(current)}"
            )
        named = dict(self.operators)
        return {
            name: named.get(name, self.every if self.every is not None else parallelism)
            for name, parallelism in current.items()
        }

    def describe(self) -> str:
        """In words after "restored": "at parallelism 3", "at slow-counter=3".

        Examples
        --------
        >>> NewParallelism(3).describe(), NewParallelism.parse(["slow-counter=3"]).describe()
        ('at parallelism 3', 'at slow-counter=3')
        """
        return f"at parallelism {self}" if self.every is not None else f"at {self}"

    @property
    def label(self) -> str:
        """For a file name: "3", "slow-counter=3", "3-slow-counter=5"."""
        return str(self).replace(", ", "-")

    def __str__(self) -> str:
        parts = [] if self.every is None else [str(self.every)]
        return ", ".join(parts + [f"{name}={p}" for name, p in self.operators])


def _whole(text: str, given: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidParameterError(
            f"--to {given!r} is not a parallelism (N, or OPERATOR=N for one operator)"
        ) from None
