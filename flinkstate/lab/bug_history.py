"""Flink's bugs replayed: each pair's scenarios run with one seed, what each ended in, and
whether the "before" shows what Flink's users saw while the "after" recovers or fails cleanly.

A reviewer asks "would this model have caught Flink's real bugs?"; :func:`replay` answers for
one bug with runs, never with the catalogue's words: the outcome and the invariants broken are
read from each run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flinkstate.catalogue import BUGS, FlinkBug, Outcome
from flinkstate.lab.scenario_run import run_scenario


@dataclass(frozen=True)
class ScenarioVerdict:
    """What one scenario's run ended in: its outcome, the invariants it broke, and the outcome
    the scenario expects."""

    scenario: str
    outcome: Outcome
    expected: Outcome
    invariants: tuple[str, ...]

    @property
    def as_expected(self) -> bool:
        return self.outcome is self.expected

    def describe(self) -> str:
        """The outcome in a few words, naming what caught it.

        Examples
        --------
        >>> ScenarioVerdict("x", Outcome.VIOLATION, Outcome.VIOLATION, ("exactly-once",)).describe()
        'violation of exactly-once'
        >>> ScenarioVerdict("x", Outcome.RECOVERED, Outcome.RECOVERED, ()).describe()
        'recovered'
        """
        if self.invariants:
            return f"{self.outcome.value} of {', '.join(self.invariants)}"
        return str(self.outcome)


@dataclass(frozen=True)
class BugReplay:
    """A bug's pair, each scenario run with one seed."""

    bug: FlinkBug
    seed: int
    before: tuple[ScenarioVerdict, ...]
    after: tuple[ScenarioVerdict, ...]

    @property
    def caught(self) -> bool:
        """Whether every run ended as its scenario expects: the "before" in what Flink's users
        saw (a broken invariant, a deadlock, a failed job, a refused restore), the "after"
        recovered or failed cleanly."""
        return all(v.as_expected for v in (*self.before, *self.after))


def verdict(scenario: str, seed: int = 0) -> ScenarioVerdict:
    """Run ``scenario`` with ``seed`` and read what it ended in.

    Examples
    --------
    >>> verdict("local-channel-forgets-in-flight").describe()
    'violation of checkpoint-consistency'
    """
    run = run_scenario(scenario, seed=seed)
    broken = run.result.violations if run.result is not None else []
    invariants = tuple(dict.fromkeys(v.invariant for v in broken))
    return ScenarioVerdict(scenario, run.outcome, run.scenario.expected, invariants)


def replay(bug: FlinkBug, seed: int = 0) -> BugReplay:
    """Run every scenario of ``bug``'s pair with ``seed``.

    Examples
    --------
    >>> from flinkstate.catalogue.bugs import bug
    >>> found = replay(bug("FLINK-27031"))
    >>> [v.describe() for v in found.before], [v.describe() for v in found.after], found.caught
    (['violation of exactly-once'], ['recovered'], True)
    """
    return BugReplay(
        bug,
        seed,
        tuple(verdict(name, seed) for name in bug.before),
        tuple(verdict(name, seed) for name in bug.after),
    )


def replay_all(bugs: Iterable[FlinkBug] = BUGS, seed: int = 0) -> list[BugReplay]:
    """:func:`replay` for each of ``bugs`` (every bug replayed, by default)."""
    return [replay(b, seed) for b in bugs]
