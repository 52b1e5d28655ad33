"""Actions, events and the stepping engine.

The engine is deliberately small. A :class:`Model` owns every piece of mutable state and knows
which atomic actions its actors can take; the :class:`Simulation` asks it for the enabled
actions, lets a scheduler pick one (or takes the caller's pick, which is how a model checker
explores interleavings), applies it and records the resulting :class:`Event`. Going back
restores the nearest snapshot and replays the recorded choices, which is exact because the
model is deterministic.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, Self, cast

from flinkstate.collector import collector_paused
from flinkstate.errors import InvalidParameterError
from flinkstate.sim.action import Action
from flinkstate.sim.deadlock import DeadlockReport, Wait, find_deadlock

if TYPE_CHECKING:
    from flinkstate.sim.scheduler import Scheduler


class Move(NamedTuple):
    """A memory segment changing owner.

    The owners are the model's own values; the engine turns them into text (``str``) only for
    traces and descriptions. Moves and events are made at every step, so both are named
    tuples: immutable values like the frozen dataclasses elsewhere, built in C at a third of
    the cost.

    Examples
    --------
    A segment moving from a channel's exclusive buffers to its received ones:

    >>> move = Move(3, source="exclusive keyed[0]<source[1]", target="received keyed[0]<source[1]")
    >>> move.segment, move.target
    (3, 'received keyed[0]<source[1]')
    """

    segment: int
    source: Hashable
    target: Hashable


@dataclass(frozen=True, slots=True)
class Violation:
    """A broken invariant, with the step that broke it: ``step`` is the event's index (0 for
    the first action); its text counts as the stepper, the captions and checkpoint failures
    do (the n-th action is step n), so every figure a user reads names the same step.

    Examples
    --------
    Broken by the 42nd action (event index 41):

    >>> print(Violation("exactly-once", step=41, message="record 7 processed twice"))
    step 42: exactly-once: record 7 processed twice
    """

    invariant: str
    step: int
    message: str

    def __str__(self) -> str:
        return f"step {self.step + 1}: {self.invariant}: {self.message}"


class Event(NamedTuple):
    """What one step did: the action, the segments it moved and the records it touched (a
    processed watermark or status counts among ``delivered``), and what happened: as the
    model's values (``happenings``, for readers such as captions) and in words (``note``,
    which traces keep).

    Examples
    --------
    Netty sends a buffer into an exclusive segment, which the channel then holds as received:

    >>> move = Move(3, "exclusive map[0]<src[1]", "received map[0]<src[1]")
    >>> event = Event(0, Action("netty map[0]<src[1]", "send"), (move,))
    >>> print(event.describe())
    netty map[0]<src[1]: send | segment 3: exclusive map[0]<src[1] -> received map[0]<src[1]
    >>> event.to_json()["kind"]
    'send'
    """

    step: int
    action: Action
    moves: tuple[Move, ...] = ()
    emitted: tuple[int, ...] = ()
    delivered: tuple[int, ...] = ()
    persisted: tuple[int, ...] = ()
    note: str = ""
    happenings: tuple[Hashable, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "actor": self.action.actor,
            "kind": self.action.kind,
            "target": self.action.target,
            "moves": [[m.segment, str(m.source), str(m.target)] for m in self.moves],
            "emitted": list(self.emitted),
            "delivered": list(self.delivered),
            "persisted": list(self.persisted),
            "note": self.note,
        }

    def describe(self) -> str:
        """The event in words, for the recent-events list of a widget or the CLI."""
        parts = [str(self.action)]
        if self.note:
            parts.append(self.note)
        if self.moves:
            parts.append(
                "; ".join(f"segment {m.segment}: {m.source} -> {m.target}" for m in self.moves)
            )
        return " | ".join(parts)


class Model(Protocol):
    """What the engine needs from a world."""

    @property
    def step(self) -> int:
        """The number of steps taken."""
        ...

    @property
    def violations(self) -> list[Violation]:
        """Every invariant broken so far, in the order found."""
        ...

    def enabled_actions(self) -> Sequence[Action]:
        """The actions that can run now, in a deterministic order."""
        ...

    def apply(self, action: Action) -> Event:
        """Run ``action`` (which must be enabled), check invariants, return what happened."""
        ...

    def is_finished(self) -> bool:
        """True when all work is done: no action enabled is then quiescence, not a deadlock."""
        ...

    def waits(self) -> Sequence[Wait[Hashable]]:
        """Every actor that cannot proceed, what it waits for and who holds that."""
        ...

    def check_end(self) -> None:
        """Final invariant checks once the run is finished (nothing lost or leaked)."""
        ...

    def clone(self) -> Self: ...

    def fingerprint(self) -> Hashable:
        """A value equal for equal states (for model checking)."""
        ...


class Snapshots(Protocol):
    """A model that takes cheap snapshots: ``snapshot()`` returns the state as it is, sharing
    with the model what neither has changed since (each copies a part before changing it), so
    a snapshot costs what the steps after it change rather than the whole state. A snapshot's
    own ``snapshot()`` is a model to run on from it, the snapshot left as it was."""

    def snapshot(self) -> Model: ...


def take_snapshot(model: Model) -> Model:
    """``model``'s state kept for going back: its ``snapshot()`` where it has one (a
    :class:`Snapshots`), a whole copy otherwise."""
    if callable(getattr(model, "snapshot", None)):
        return cast(Snapshots, model).snapshot()
    return model.clone()


class RunStatus(StrEnum):
    """How a run ended: finished, deadlocked, an invariant broken, or stopped by its caller.

    Examples
    --------
    >>> [str(status) for status in RunStatus]
    ['finished', 'deadlock', 'violation', 'stopped']
    """

    FINISHED = "finished"
    DEADLOCK = "deadlock"
    VIOLATION = "violation"
    STOPPED = "stopped"


@dataclass(frozen=True)
class RunResult:
    """How a run ended, after how many steps, with what it broke or the deadlock it met.

    Examples
    --------
    A run stopped by its caller is fine; one that broke an invariant is not:

    >>> RunResult(RunStatus.STOPPED, 100).ok
    True
    >>> broken = Violation("exactly-once", 41, "record 7 processed twice")
    >>> RunResult(RunStatus.VIOLATION, 42, (broken,)).ok
    False
    """

    status: RunStatus
    steps: int
    violations: tuple[Violation, ...] = ()
    deadlock: DeadlockReport | None = None

    @property
    def ok(self) -> bool:
        return self.status in (RunStatus.FINISHED, RunStatus.STOPPED) and not self.violations


def end_of_run(model: Model, steps: int) -> RunResult:
    """How a run ends at a state where no action is enabled, after ``steps`` steps: finished,
    once the model's end checks ran (nothing lost or leaked; they may break an invariant), or
    deadlocked, with its waits-for report. The one place this is decided: a run and the
    explorer of every interleaving both ask here."""
    if model.is_finished():
        model.check_end()
        status = RunStatus.VIOLATION if model.violations else RunStatus.FINISHED
        return RunResult(status, steps, tuple(model.violations))
    return RunResult(
        RunStatus.DEADLOCK,
        steps,
        tuple(model.violations),
        find_deadlock(model.waits(), steps),
    )


Until = int | Callable[[Any], bool] | None


#: while the collector is paused, young objects are still collected this often (in steps), so
#: reference cycles made by a caller's ``until`` predicate cannot pile up in a long run
YOUNG_COLLECTION_EVERY = 65_536


#: snapshots kept at every ``snapshot_every`` steps behind the newest one; older ones thin out
RECENT_SNAPSHOTS = 16
#: every how many steps a simulation keeps a snapshot unless told otherwise
SNAPSHOT_EVERY = 256


def kept_snapshot(number: int, newest: int) -> bool:
    """Whether the ``number``-th snapshot (``snapshot_every`` steps apart, the first at step 0)
    is kept once the ``newest`` is taken: the ``RECENT_SNAPSHOTS`` latest all, then every
    second, fourth, eighth... as they grow older, so a run of n snapshots keeps about
    ``RECENT_SNAPSHOTS`` * (1 + log2(n / RECENT_SNAPSHOTS) / 2) of them, going back one step
    replays at most ``snapshot_every`` steps, and a jump far back at most the gap there. A
    snapshot dropped is never needed again: the gaps only widen with age.

    Examples
    --------
    Once the 40th snapshot (number 39) is taken, the 16 before it are all kept, older ones
    every second, then every fourth:

    >>> [number for number in range(40) if kept_snapshot(number, newest=39)][:12]
    [0, 4, 8, 10, 12, 14, 16, 18, 20, 22, 23, 24]
    """
    age = newest - number
    if age <= RECENT_SNAPSHOTS:
        return True
    return number % (1 << (age // RECENT_SNAPSHOTS).bit_length()) == 0


@dataclass
class Simulation:
    """Steps a model under a scheduler and remembers enough to go back exactly.

    ``snapshot_every`` trades memory for the cost of :meth:`back`: going back restores the
    nearest earlier snapshot and replays at most that many recorded choices (further back,
    where older snapshots thin out, the gap there: ``kept_snapshot``). A model that takes
    its own snapshots (:class:`Snapshots`) keeps for each only what changed since.
    """

    factory: Callable[[], Model]
    scheduler: Scheduler
    #: None: only the start is kept, for a run nobody steps back through (going back then
    #: replays from step 0): a snapshot of a big world costs its steps more than they cost.
    #: The start is then the factory's (a fresh model when asked for), not a snapshot of the
    #: model run: a world that shares its components with a snapshot works out at every step
    #: which it may change, to copy them first, and this one shares nothing
    snapshot_every: int | None = SNAPSHOT_EVERY
    model: Model = field(init=False)
    history: list[Action] = field(init=False)
    events: list[Event] = field(init=False)
    #: by step, the state kept; None for step 0 kept as the factory's
    _snapshots: dict[int, Model | None] = field(init=False)

    def __post_init__(self) -> None:
        if self.snapshot_every is not None and self.snapshot_every < 1:
            raise InvalidParameterError(
                f"snapshot_every must be at least 1, got {self.snapshot_every}"
            )
        self.reset()

    # -- state -------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to step 0 with a fresh model from the factory."""
        self.model = self.factory()
        self.history = []
        self.events = []
        every = self.snapshot_every
        self._snapshots = {0: None if every is None else take_snapshot(self.model)}

    @property
    def step_count(self) -> int:
        return len(self.history)

    @property
    def snapshot_steps(self) -> tuple[int, ...]:
        """The steps a snapshot is kept for (going back replays from the nearest before)."""
        return tuple(sorted(self._snapshots))

    def snapshot_at(self, step: int) -> Model:
        """The state kept for ``step`` (one of ``snapshot_steps``), as a model of its own to
        read or run on: the one kept stays as it was."""
        if step not in self._snapshots:
            raise InvalidParameterError(
                f"no snapshot is kept for step {step}; kept: "
                + ", ".join(str(s) for s in self.snapshot_steps)
            )
        return self._restored(step)

    def _restored(self, step: int) -> Model:
        """A model to run on from the state kept for ``step``, the one kept left as it was."""
        kept = self._snapshots[step]
        return self.factory() if kept is None else take_snapshot(kept)

    def forget_snapshots(self) -> None:
        """Drop every snapshot but step 0's (what a run nobody steps back through keeps):
        for a caller done going back, or measuring what the snapshots held."""
        self._snapshots = {0: self._snapshots[0]}

    def enabled_actions(self) -> Sequence[Action]:
        return self.model.enabled_actions()

    # -- moving forward ----------------------------------------------------------------

    def step(self, action: Action | None = None) -> Event | None:
        """Run one action: the given one (it must be enabled) or the scheduler's choice.

        Returns ``None`` when nothing is enabled.
        """
        enabled = self.model.enabled_actions()
        if not enabled:
            return None
        if action is None:
            action = self._chosen(enabled)
        elif action not in enabled:
            raise InvalidParameterError(f"action {action} is not enabled at step {self.step_count}")
        event = self.model.apply(action)
        self.history.append(action)
        self.events.append(event)
        every = self.snapshot_every
        if every is not None and len(self.history) % every == 0:
            self._snapshot(every)
        return event

    def next_action(self) -> Action | None:
        """The action :meth:`step` takes next (the scheduler's choice), or ``None`` when
        nothing is enabled: a look ahead for a caller that prepares something before the step
        that needs it (a view drawn before a step it has not seen yet) rather than stepping
        back to it. Schedulers choose from the step and what is enabled alone, so looking
        changes nothing."""
        enabled = self.model.enabled_actions()
        return self._chosen(enabled) if enabled else None

    def _chosen(self, enabled: Sequence[Action]) -> Action:
        previous = self.history[-1] if self.history else None
        return enabled[self.scheduler.choose(len(self.history), enabled, previous)]

    def _snapshot(self, every: int) -> None:
        """Keep the state now, and let older snapshots thin out (``kept_snapshot``)."""
        newest = len(self.history) // every
        self._snapshots[newest * every] = take_snapshot(self.model)
        for step in [s for s in self._snapshots if not kept_snapshot(s // every, newest)]:
            del self._snapshots[step]

    def run(
        self,
        until: Until = None,
        *,
        max_steps: int = 1_000_000,
        stop_on_violation: bool = True,
    ) -> RunResult:
        """Run until quiescence, a deadlock, a violation, ``until`` steps in total, or
        ``until(model)`` is true."""
        with collector_paused():
            return self._run(until, max_steps, stop_on_violation)

    def _run(self, until: Until, max_steps: int, stop_on_violation: bool) -> RunResult:
        limit = until if isinstance(until, int) else None
        predicate = until if callable(until) else None
        start = len(self.history)
        while True:
            if (len(self.history) - start) % YOUNG_COLLECTION_EVERY == YOUNG_COLLECTION_EVERY - 1:
                gc.collect(0)
            if limit is not None and len(self.history) >= limit:
                return self._result(RunStatus.STOPPED)
            if predicate is not None and predicate(self.model):
                return self._result(RunStatus.STOPPED)
            if len(self.history) - start >= max_steps:
                return self._result(RunStatus.STOPPED)
            if stop_on_violation and self.model.violations:
                return self._result(RunStatus.VIOLATION)
            if self.step() is None:
                return end_of_run(self.model, len(self.history))

    def _result(self, status: RunStatus) -> RunResult:
        return RunResult(status, len(self.history), tuple(self.model.violations))

    def replay(self) -> tuple[Model, Iterator[Event]]:
        """A fresh model from the factory and the recorded actions applied to it one at a
        time, lazily, with the collector paused as for a run: for a view that reads the model
        after every step of a run that kept only its last state. The simulation is untouched."""
        model = self.factory()
        history = list(self.history)

        def events() -> Iterator[Event]:
            with collector_paused():
                for action in history:
                    yield model.apply(action)

        return model, events()

    # -- going back --------------------------------------------------------------------

    def back(self, steps: int = 1) -> None:
        """Return to the state ``steps`` steps earlier (not before step 0)."""
        if steps < 0:
            raise InvalidParameterError(f"cannot go back a negative number of steps ({steps})")
        self.goto(max(0, len(self.history) - steps))

    def goto(self, target: int) -> None:
        """Jump to step ``target`` of the recorded run (backwards only)."""
        if not 0 <= target <= len(self.history):
            raise InvalidParameterError(
                f"step {target} is outside the recorded run 0 to {len(self.history)}"
            )
        with collector_paused():
            self._goto(target)

    def _goto(self, target: int) -> None:
        base = max(s for s in self._snapshots if s <= target)
        replay = self.history[base:target]
        self.model = self._restored(base)
        del self.history[base:]
        del self.events[base:]
        for stale in [s for s in self._snapshots if s > target]:
            del self._snapshots[stale]
        for action in replay:
            self.events.append(self.model.apply(action))
            self.history.append(action)
