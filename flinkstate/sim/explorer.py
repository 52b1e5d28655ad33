"""Every interleaving: a model checker over the engine's :class:`~flinkstate.sim.core.Model`.

A seeded run samples one interleaving of the actors' actions. The explorer follows all of them
from a model's state: it applies every enabled action to its own copy of the state, keeps each
distinct state once (by the model's fingerprint, which is equal exactly for equal states), and
checks every state it reaches as a run would (``Simulation.run``'s rules: an invariant broken,
or no action enabled, which is the end of a run, finished or deadlocked: ``end_of_run``).

Strategies: breadth first (``bfs``: each violation and deadlock with its shortest trace),
depth first (``dfs``: the frontier is one path, so it needs little memory), and seeded random
walks (``random-walk``: sampling, like many runs with different seeds, deduplicated only for
counting). Bounds: the distinct states stored, the depth (steps from the start), a time
budget, and for random walks the number of walks. The result says whether the space was
exhausted within them.

Memory: every distinct state is kept as its fingerprint's parts numbered (each distinct part is
stored once for all states, a state as four bytes per part), the state it was first reached
from and the action; the shortest trace to it follows these parent pointers back. Only the
frontier keeps models (BFS: the current and the next level; DFS: one per step of the current
path). A model that can copy only what an action may change (:class:`PartialCopy`) is copied so
for each transition, the copy sharing every other part with the state it came from; the
explorer never changes a state it has copied from.

Reduction: a :class:`Reduction` says which enabled actions to follow from a state, which two
actions are independent where both are enabled (they commute, and neither enables or disables
the other), and the value states are deduplicated by. :class:`SleepSets` is partial-order
reduction by sleep sets (Godefroid): once an action was followed from a state, its later
siblings need not follow it again where it is independent of what they did, because both
orders reach one state. Every state is still reached (only transitions are left out), so every
violation and deadlock is found, with a trace as short, at a fraction of the cost. A state met
again with a smaller sleep set follows what it slept on before. :data:`NO_REDUCTION` follows
every transition.
"""

from __future__ import annotations

import random
import time
from array import array
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import compress, count
from operator import is_not
from typing import NamedTuple, Protocol, cast

from flinkstate.choice import Choice
from flinkstate.collector import collector_paused
from flinkstate.errors import InvalidParameterError
from flinkstate.sim.action import Action
from flinkstate.sim.core import Model, RunStatus, Violation, end_of_run
from flinkstate.sim.deadlock import DeadlockReport

#: how often (in states reached) the clock is read for the time budget and the progress report
CLOCK_EVERY = 64
#: how often (in seconds) progress is reported at most
PROGRESS_EVERY = 0.2


class Strategy(Choice):
    """The order the explorer visits states in."""

    BFS = "bfs"
    DFS = "dfs"
    RANDOM_WALK = "random-walk"


class PartialOrder(Choice):
    """The partial-order reduction an exploration uses: sleep sets from the model's
    footprints, or none (every transition followed)."""

    SLEEP_SETS = "sleep-sets"
    NONE = "none"

    def reduction(self) -> Reduction:
        return SleepSets() if self is PartialOrder.SLEEP_SETS else NO_REDUCTION


class StopReason(StrEnum):
    """Why an exploration ended."""

    #: every state reachable within the bounds was explored (and none deeper exists)
    EXHAUSTED = "exhausted"
    #: every state up to the depth bound was explored; some go deeper
    MAX_DEPTH = "max-depth"
    MAX_STATES = "max-states"
    TIME = "time"
    #: the random walks asked for were taken (sampling never exhausts a space)
    WALKS = "walks"
    #: the caller asked it to stop (``explore``'s ``stop``)
    STOPPED = "stopped"


class FindingKind(StrEnum):
    VIOLATION = "violation"
    DEADLOCK = "deadlock"


@dataclass(frozen=True)
class Bounds:
    """Where an exploration stops: ``max_states`` distinct states stored, ``max_depth``
    steps from the start (states at that depth are checked, not expanded), ``time`` seconds,
    ``walks`` random walks (random-walk only; default 1000). None: no bound."""

    max_states: int | None = None
    max_depth: int | None = None
    time: float | None = None
    walks: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_states", "max_depth", "walks"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise InvalidParameterError(
                    f"{name} must be a whole number of at least 1, got {value!r}"
                )
        if self.time is not None and not self.time > 0:
            raise InvalidParameterError(
                f"time must be a positive number of seconds, got {self.time!r}"
            )


@dataclass(frozen=True)
class Finding:
    """A broken invariant (``name`` is the invariant's) or a deadlock (``name`` is its
    waits-for cycle, or the waiting actors where there is none), with the trace that reaches
    it: the shortest there is under breadth first search."""

    kind: FindingKind
    name: str
    trace: tuple[Action, ...]
    violation: Violation | None = None
    deadlock: DeadlockReport | None = None
    #: distinct states stored when it was first found
    found_after: int = 0

    @property
    def depth(self) -> int:
        return len(self.trace)

    def describe(self) -> str:
        """What it is, how deep and how soon it was found, in one line."""
        where = f"at depth {self.depth} (found after {self.found_after} states)"
        if self.violation is not None:
            return f"violation of {self.name} {where}: {self.violation.message}"
        return f"deadlock {where}: {self.name}"


@dataclass(frozen=True)
class Progress:
    """How far an exploration got: states reached (with repeats), distinct states stored,
    the deepest depth reached, seconds spent."""

    states: int
    distinct: int
    depth: int
    elapsed: float

    @property
    def per_second(self) -> float:
        """Distinct states per second."""
        return self.distinct / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True)
class ExplorationResult:
    strategy: Strategy
    bounds: Bounds
    #: states reached, counting each arrival (a transition, plus the start)
    states: int
    distinct: int
    #: the deepest depth reached
    depth: int
    elapsed: float
    stopped_by: StopReason
    findings: tuple[Finding, ...]
    #: distinct states where the run ended finished, every invariant holding
    finished: int
    #: distinct states where an invariant was broken (each ends its path). Sleep sets reach
    #: every other state, and every finding as early, but not each further state that breaks
    #: an invariant again after another action
    broken: int = 0

    @property
    def exhausted(self) -> bool:
        """Whether every state reachable from the start was explored."""
        return self.stopped_by is StopReason.EXHAUSTED

    @property
    def violations(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind is FindingKind.VIOLATION)

    @property
    def deadlocks(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind is FindingKind.DEADLOCK)

    def summary(self) -> str:
        """The verdict in one sentence: what was explored, what was found, and, unless the
        space was exhausted, which bound stopped the exploration."""
        explored = f"explored {self.distinct} distinct states to depth {self.depth}"
        if self.findings:
            found = ", ".join(
                f"{count} {what}{'' if count == 1 else 's'}"
                for count, what in (
                    (len(self.violations), "invariant violation"),
                    (len(self.deadlocks), "deadlock"),
                )
                if count
            )
        else:
            found = "no deadlock, every invariant holds"
        if self.exhausted:
            return f"{explored}: {found}"
        return f"{explored}: {found} so far; stopped by {_STOPPED[self.stopped_by]}"


_STOPPED = {
    StopReason.MAX_DEPTH: "the depth bound (every state up to it explored)",
    StopReason.MAX_STATES: "the bound on distinct states",
    StopReason.TIME: "the time budget",
    StopReason.WALKS: "the number of random walks (sampling never exhausts a space)",
    StopReason.STOPPED: "request",
}


class Reduction(Protocol):
    """Where reductions plug in: which of a state's enabled actions to follow, which two
    enabled actions are independent (for sleep sets), and the value to deduplicate states by."""

    def actions(self, model: Model, enabled: Sequence[Action]) -> Sequence[Action]:
        """The enabled actions to explore from ``model`` (a persistent set would be fewer;
        every one of them otherwise)."""
        ...

    def independent(self, model: Model, first: Action, second: Action) -> bool:
        """Whether two actions enabled in ``model`` commute there and neither enables or
        disables the other; False whenever that is not known."""
        ...

    def key(self, model: Model) -> Hashable:
        """What equal states share (a canonical representative's fingerprint under symmetry
        reduction; the fingerprint otherwise)."""
        ...


class NoReduction:
    """Every enabled action and every transition, states told apart by their fingerprints."""

    def actions(self, model: Model, enabled: Sequence[Action]) -> Sequence[Action]:
        return enabled

    def independent(self, model: Model, first: Action, second: Action) -> bool:
        return False

    def key(self, model: Model) -> Hashable:
        return model.fingerprint()


NO_REDUCTION = NoReduction()


class Footprinted(Protocol):
    """A model that says what each enabled action touches."""

    def footprint(self, action: Action) -> frozenset[Hashable] | None:
        """Everything ``action`` may read or write in this state, as resources: two actions
        whose footprints are disjoint are independent here. None: it may touch anything."""
        ...


class PartialCopy(Footprinted, Protocol):
    """A model that can copy just what one action may change (by the action's footprint),
    sharing the rest with the original: the explorer applies that action to the copy and
    changes neither otherwise. :func:`verify_partial_copy` checks that a copy made so leaves
    the original as it was and ends where a whole copy does."""

    def clone_within(self, touched: frozenset[Hashable] | None) -> PartialCopy: ...

    def ready_within(self, touched: frozenset[Hashable] | None) -> PartialCopy:
        """The model itself, ready for one action whose footprint is ``touched``, copies made
        from it before left as they are: what ``clone_within`` gives for the last action taken
        from a state, without the copy."""
        ...

    def clone(self) -> PartialCopy: ...

    def apply(self, action: Action) -> object: ...

    def fingerprint(self) -> Hashable: ...


def copies_partially(model: Model) -> bool:
    """Whether ``model`` can make copies for one action (:class:`PartialCopy`)."""
    return callable(getattr(model, "clone_within", None)) and callable(
        getattr(model, "footprint", None)
    )


class SleepSets(NoReduction):
    """Partial-order reduction by sleep sets, with the model's footprints as independence:
    two actions are independent where both have a footprint and they share no resource.

    ``verify`` checks every independence the reduction relies on, by taking both actions in
    both orders from a copy (both stay enabled, both orders reach one fingerprint and the same
    violations); a footprint that misses something fails there with both actions named. It
    costs four copies per check: for tests, not for exploring."""

    def __init__(self, *, verify: bool = False) -> None:
        self.verify = verify
        #: independence checks that held, and that were verified
        self.claims = 0
        # the footprints of one state's actions, each computed once: a state's children ask
        # about the same actions in the same state. A step moves the model on (its step
        # count), and a copy is another object, so either starts the memo afresh.
        self._state: tuple[Model, int] | None = None
        self._footprints: dict[Action, frozenset[Hashable] | None] = {}

    def footprint(self, model: Model, action: Action) -> frozenset[Hashable] | None:
        """``action``'s footprint in ``model`` (enabled there), computed once per state."""
        state = self._state
        if state is None or state[0] is not model or state[1] != model.step:
            self._state = (model, model.step)
            self._footprints = {}
        footprints = self._footprints
        if action in footprints:
            return footprints[action]
        touched = footprints[action] = cast(Footprinted, model).footprint(action)
        return touched

    def independent_of(
        self, model: Model, action: Action, others: Iterable[Action]
    ) -> frozenset[Action]:
        """Those of ``others`` independent of ``action`` in ``model`` (``independent`` of
        each, with ``action``'s footprint looked up once)."""
        touched = self.footprint(model, action)
        if touched is None:
            return _AWAKE
        if self.verify:
            return frozenset([a for a in others if self.independent(model, a, action)])
        actor = action.actor
        known = self._footprints  # this state's, as ``footprint`` just made sure
        footprint = cast(Footprinted, model).footprint
        found = []
        for other in others:
            if other.actor != actor:
                theirs = known.get(other, _UNKNOWN)
                if theirs is _UNKNOWN:
                    theirs = known[other] = footprint(other)
                if theirs is not None and touched.isdisjoint(theirs):
                    found.append(other)
        self.claims += len(found)
        return frozenset(found)

    def independent(self, model: Model, first: Action, second: Action) -> bool:
        if first.actor == second.actor:
            return False
        one = self.footprint(model, first)
        if one is None:
            return False
        other = self.footprint(model, second)
        if other is None or not one.isdisjoint(other):
            return False
        self.claims += 1
        if self.verify:
            verify_commute(model, first, second)
        return True


#: a footprint not computed yet
_UNKNOWN: frozenset[Hashable] = frozenset(["not computed"])


class IndependenceError(AssertionError):
    """Two actions said to be independent do not commute: a footprint misses something."""


def verify_commute(model: Model, first: Action, second: Action) -> None:
    """Raise :class:`IndependenceError` unless ``first`` and ``second`` commute in ``model``:
    each stays enabled after the other, and both orders end in one fingerprint with the same
    violations."""
    ends = []
    for a, b in ((first, second), (second, first)):
        twin = model.clone()
        twin.apply(a)
        if b not in twin.enabled_actions():
            raise IndependenceError(
                f"at step {model.step}: {a} disables {b}, which were said to be independent"
            )
        twin.apply(b)
        ends.append(twin)
    one, other = ends
    broken = [[(v.invariant, v.message) for v in end.violations] for end in ends]
    # a broken invariant ends the exploration there, whichever step broke it: the same ones
    # must be broken; otherwise the same state must be reached
    if broken[0] != broken[1] or (not broken[0] and one.fingerprint() != other.fingerprint()):
        raise IndependenceError(
            f"at step {model.step}: {first} and {second} were said to be independent but the "
            "two orders end in different states"
        )


def verify_partial_copy(model: Model, action: Action) -> None:
    """Raise :class:`IndependenceError` unless ``action``, enabled in ``model``, applied to a
    copy made for it (``clone_within`` its footprint) leaves ``model`` as it was and ends in
    the state and with the violations that applying it to a whole copy gives: its footprint
    names everything it changes. The same for the state itself made ready for it
    (``ready_within``), which must leave a copy made from it before as that copy was."""
    partial_model = cast(PartialCopy, model)
    touched = partial_model.footprint(action)
    # a whole copy's fingerprint is computed afresh (the model's may be known from before)
    before = model.clone().fingerprint()
    partial = partial_model.clone_within(touched)
    partial.apply(action)
    if model.clone().fingerprint() != before:
        raise IndependenceError(
            f"at step {model.step}: {action} changed a part of the state its footprint does not "
            "name (a copy made for it shares that part with the state it was copied from)"
        )
    whole = model.clone()
    whole.apply(action)
    # the last action from a state is taken by the state itself, made ready for it, while a
    # copy made from it before (a sibling) shares its components
    parent = cast(PartialCopy, model.clone())
    sibling = parent.clone_within(touched)
    ready = parent.ready_within(touched)
    ready.apply(action)
    if cast(Model, sibling).clone().fingerprint() != before:
        raise IndependenceError(
            f"at step {model.step}: {action}, taken by the state made ready for it, changed a "
            "part of the state that a copy made from it before shares"
        )
    ends = [cast(Model, partial), cast(Model, ready), whole]
    broken = [[(v.invariant, v.message) for v in end.violations] for end in ends]
    prints = [end.fingerprint() for end in ends]
    if broken[0] != broken[2] or broken[1] != broken[2] or len(set(prints)) != 1:
        raise IndependenceError(
            f"at step {model.step}: {action} ends elsewhere in a copy made for its footprint "
            "(or in the state made ready for it) than in a whole copy"
        )


def verify_along_runs(model: Model, *, seeds: int = 2, limit: int = 2000, every: int = 2) -> int:
    """Every pair of enabled actions :class:`SleepSets` calls independent, at every
    ``every``-th state of ``seeds`` seeded random runs from ``model`` (at most ``limit`` steps
    each), taken in both orders (:func:`verify_commute`): how many pairs were checked. At the
    same states each enabled action is also applied to a copy made for its footprint
    (:func:`verify_partial_copy`, for a model that makes them). Runs sample the states an
    exploration meets far more cheaply than exploring them all, so wide sweeps over jobs and
    faults can check the footprints a reduction and the explorer's copies trust."""
    reduction = SleepSets()
    partial = copies_partially(model)
    checked = 0
    for seed in range(seeds):
        rng = random.Random(seed)
        world = model.clone()
        for step in range(limit):
            enabled = list(world.enabled_actions())
            if not enabled or world.violations:
                break
            if step % every == 0:
                for i, first in enumerate(enabled):
                    for second in enabled[i + 1 :]:
                        if reduction.independent(world, first, second):
                            verify_commute(world, first, second)
                            checked += 1
                if partial:
                    for action in enabled:
                        verify_partial_copy(world, action)
            world.apply(rng.choice(enabled))
    return checked


def explore(
    initial: Model,
    *,
    strategy: Strategy | str = Strategy.BFS,
    bounds: Bounds | None = None,
    seed: int = 0,
    reduction: Reduction = NO_REDUCTION,
    progress: Callable[[Progress], None] | None = None,
    stop: Callable[[], bool] | None = None,
    partial: bool = True,
) -> ExplorationResult:
    """Explore every interleaving from ``initial`` (left unchanged: it is copied first).

    ``seed`` chooses the random walks; ``progress`` is told how far the exploration got a few
    times a second and once at the end; ``stop`` is asked as often whether to stop, and when it
    says so the exploration ends as a bound ends it, with what it found so far (a widget's stop
    button). ``partial``: copy for each transition only what its action may change, where the
    model can (:class:`PartialCopy`); False copies whole states, which finds the same (for
    comparison). Ctrl-C (``KeyboardInterrupt``) ends it with nothing returned."""
    chosen = Strategy.parse(strategy)
    run = _Exploration(
        initial, chosen, bounds or Bounds(), seed, reduction, progress, stop, partial=partial
    )
    with collector_paused():  # models free their garbage by reference counting
        if chosen is Strategy.BFS:
            run.breadth_first()
        elif chosen is Strategy.DFS:
            run.depth_first()
        else:
            run.random_walks()
    return run.result()


#: the empty sleep set: every action awake
_AWAKE: frozenset[Action] = frozenset()


class Numbered(NamedTuple):
    """A state's key and its parts' numbers in a :class:`StateStore`: what the keys of the
    states reached from it are numbered against (:meth:`StateStore.number`)."""

    key: Hashable
    numbers: array[int]


class _Expansion(NamedTuple):
    """What to follow from a state: ``todo``, the actions its reduction chose, less its sleep
    set when it is expanded; or, with ``done``, only the actions of ``todo`` (woken from a
    sleep set), ``done`` counting as followed already. ``numbered``: the state's key, numbered,
    for its children's."""

    todo: Sequence[Action]
    done: frozenset[Action] | None
    numbered: Numbered | None = None


class _Stop(Exception):
    """A bound was reached (its reason)."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason.value)
        self.reason = reason


class StateStore:
    """The distinct states seen: each one's key, the state it was first reached from (its
    parent) with the action, and its depth.

    Keys are interned part by part: each distinct part of a key (an element of a tuple key,
    or the whole of any other key) gets a number the first time it is met, and a state is
    stored as the bytes of its parts' numbers. Two keys are equal exactly when their parts are
    (the numbers come from equality, not from hashes), a component that did not change is
    stored once for all states, each key is hashed once per visit (its parts; the bytes cache
    their own hash), and a stored state costs a few bytes per part.

    A state reached by one action from another shares most of its key's parts with that
    state's, as the very same objects (a component's key is kept while it is unchanged):
    numbered against the other's key (:meth:`number`'s ``like``), only the parts that are
    other objects are looked up, found by identity in one pass at C speed."""

    def __init__(self) -> None:
        self._index: dict[bytes, int] = {}
        self._parts: dict[Hashable, int] = {}
        # per position of a tuple key, the part last packed there and its number: a part that
        # did not change since is the very same object in the next key (a component's key is
        # kept while it is unchanged), so its number is found by identity, without hashing or
        # comparing it (a held object keeps its identity)
        self._last: list[tuple[object, int]] = []
        self._parent = array("q")
        self._action: list[Action | None] = []
        self._depth = array("q")

    def __len__(self) -> int:
        return len(self._parent)

    def __contains__(self, key: Hashable) -> bool:
        return self.pack(key) in self._index

    def pack(self, key: Hashable) -> bytes:
        """The key as the numbers of its parts: equal for equal keys only. A tuple key and
        any other key never pack alike (the first number says which it is)."""
        return self.number(key).numbers.tobytes()

    def number(self, key: Hashable, like: Numbered | None = None) -> Numbered:
        """The key with its parts' numbers (:meth:`pack` is their bytes). ``like``: a key
        numbered before, of a state the key's is close to; a part of ``key`` that is the very
        object at the same position of ``like``'s key has its number."""
        parts = self._parts
        if type(key) is not tuple:
            number = parts.get(key)
            if number is None:
                number = parts[key] = len(parts)
            return Numbered(key, array("I", (0, number)))
        if like is not None:
            before = like.key
            if type(before) is tuple and len(before) == len(key):
                numbers = array("I", like.numbers)
                # the positions (counted from 1: the first number says "a tuple") of the
                # parts that are other objects than the state's numbered before
                for position in compress(count(1), map(is_not, key, before)):
                    part = key[position - 1]
                    number = parts.get(part)
                    if number is None:
                        number = parts[part] = len(parts)
                    numbers[position] = number
                return Numbered(key, numbers)
        numbers = array("I", (1,))
        append = numbers.append
        last = self._last
        if len(last) < len(key):
            last.extend([(None, 0)] * (len(key) - len(last)))
        for position, part in enumerate(key):
            seen, number = last[position]
            if seen is not part:
                number = parts.get(part)
                if number is None:
                    number = parts[part] = len(parts)
                last[position] = (part, number)
            append(number)
        return Numbered(key, numbers)

    def visit(
        self, key: Hashable, parent: int, action: Action | None, depth: int
    ) -> tuple[int, bool]:
        """The state's index, and whether it is new or now reached in fewer steps than before
        (its parent and depth are then this shorter way's)."""
        return self.visit_packed(self.pack(key), parent, action, depth)

    def visit_packed(
        self, packed: bytes, parent: int, action: Action | None, depth: int
    ) -> tuple[int, bool]:
        """:meth:`visit` with the key packed already (:meth:`pack`)."""
        index = self._index.get(packed)
        if index is None:
            index = len(self._parent)
            self._index[packed] = index
            self._parent.append(parent)
            self._action.append(action)
            self._depth.append(depth)
            return index, True
        if depth < self._depth[index]:
            self._parent[index] = parent
            self._action[index] = action
            self._depth[index] = depth
            return index, True
        return index, False

    def known(self, packed: bytes) -> bool:
        """Whether a packed key (:meth:`pack`) was stored."""
        return packed in self._index

    def depth(self, index: int) -> int:
        return self._depth[index]

    def trace(self, index: int) -> tuple[Action, ...]:
        """The actions from the start to the state, by parent pointers."""
        actions: list[Action] = []
        while index > 0:
            action = self._action[index]
            assert action is not None
            actions.append(action)
            index = self._parent[index]
        return tuple(reversed(actions))


class _Findings:
    """Each distinct violation (by invariant) and deadlock (by its cycle), the shallowest
    seen."""

    def __init__(self) -> None:
        self.by_name: dict[tuple[FindingKind, str], Finding] = {}

    def note(self, finding: Finding) -> None:
        key = (finding.kind, finding.name)
        known = self.by_name.get(key)
        if known is None or finding.depth < known.depth:
            self.by_name[key] = finding


class _Exploration:
    def __init__(
        self,
        initial: Model,
        strategy: Strategy,
        bounds: Bounds,
        seed: int,
        reduction: Reduction,
        progress: Callable[[Progress], None] | None,
        stop: Callable[[], bool] | None = None,
        *,
        partial: bool = True,
    ) -> None:
        self.initial = initial
        self.stop = stop
        self.strategy = strategy
        self.bounds = bounds
        self.seed = seed
        self.reduction = reduction
        self.report = progress
        self.store = StateStore()
        self.findings = _Findings()
        self.states = 0
        self.deepest = 0
        self.finished: set[int] = set()
        self.broken = 0
        #: per state reached, whether it was expanded (followed from) yet
        self.expanded = bytearray()
        #: each state's sleep set, where not empty: the intersection of those it was reached with
        self.slept: dict[int, frozenset[Action]] = {}
        #: depth first under a depth bound: a state reached in fewer steps is explored again
        self.again = strategy is Strategy.DFS and bounds.max_depth is not None
        #: whether the reduction may put anything to sleep (without, no sleep set is kept)
        self.sleeping = type(reduction) is not NoReduction
        #: whether each transition copies only what its action may change
        self.partial = partial and copies_partially(initial)
        self.stopped_by = StopReason.EXHAUSTED
        self.deadline = None if bounds.time is None else time.monotonic() + bounds.time
        self.started = time.monotonic()
        self.last_report = self.started

    # -- what every strategy does with a state it reaches

    def reach(
        self,
        model: Model,
        parent: int,
        action: Action | None,
        depth: int,
        asleep: frozenset[Action] = _AWAKE,
        like: Numbered | None = None,
    ) -> tuple[int, _Expansion | None, bool]:
        """Count and store a state reached with the sleep set ``asleep`` (from the state whose
        numbered key is ``like``); check it as a run would. Returns its index; what to follow
        from it (None: nothing, or nothing more than a state seen before already follows); and
        whether it was never seen before."""
        self.states += 1
        if self.states % CLOCK_EVERY == 0:
            self.tick()
        store = self.store
        numbered = store.number(self.reduction.key(model), like)
        packed = numbered.numbers.tobytes()
        bound = self.bounds.max_states
        if bound is not None and len(store) >= bound and not store.known(packed):
            raise _Stop(StopReason.MAX_STATES)
        known = len(store)
        index, shorter = store.visit_packed(packed, parent, action, depth)
        if not shorter:
            return index, self.wake(model, index, asleep, numbered), False
        self.deepest = max(self.deepest, depth)
        if index == known:
            self.expanded.append(0)
        self.expanded[index] = 0
        if asleep:
            self.slept[index] = asleep
        else:
            self.slept.pop(index, None)
        todo = self.check(model, index)
        return index, (_Expansion(todo, None, numbered) if todo else None), index == known

    def wake(
        self, model: Model, index: int, asleep: frozenset[Action], numbered: Numbered
    ) -> _Expansion | None:
        """A state seen before, reached again with the sleep set ``asleep``: what it slept on
        before but not now must be followed too (Godefroid's rule for sleep sets with states
        stored). Before its expansion that is its sleep set shrinking; after it, an expansion
        of those actions only, the others counting as followed."""
        before = self.slept.get(index)
        if not before:
            return None
        now = before & asleep
        if now == before:
            return None
        if now:
            self.slept[index] = now
        else:
            del self.slept[index]
        if not self.expanded[index] or model.violations:
            return None
        enabled = model.enabled_actions()
        woken = before - now
        todo = [a for a in enabled if a in woken]
        return _Expansion(todo, frozenset(a for a in enabled if a not in woken), numbered)

    def expansion(self, index: int, found: _Expansion) -> tuple[list[Action], set[Action]]:
        """The actions to follow from a state now and the sleep set its children start from
        (those of its sleep set and, one by one, those followed)."""
        self.expanded[index] = 1
        if found.done is not None:
            return list(found.todo), set(found.done)
        asleep = self.slept.get(index)
        if not asleep:
            return list(found.todo), set()
        return [a for a in found.todo if a not in asleep], set(asleep)

    def take(
        self,
        model: Model,
        index: int,
        depth: int,
        action: Action,
        done: set[Action],
        numbered: Numbered | None,
        *,
        last: bool,
    ) -> tuple[Model, int, _Expansion | None]:
        """Apply ``action`` to a copy of ``model`` (the state ``index``, its key ``numbered``;
        to ``model`` itself when it is the ``last`` action taken from it) and reach the child,
        its key numbered against its parent's: its sleep set is
        what its parent slept on or followed before it that is independent of ``action``;
        ``action`` then counts as followed for the siblings after it."""
        reduction = self.reduction
        if not done:
            asleep = _AWAKE
        elif isinstance(reduction, SleepSets):
            asleep = reduction.independent_of(model, action, done)
        else:
            asleep = frozenset([a for a in done if reduction.independent(model, a, action)])
        if self.sleeping:
            done.add(action)
        child = self.copy_for(model, action, last=last)
        child.apply(action)
        child_index, more, new = self.reach(child, index, action, depth + 1, asleep, numbered)
        if more is not None and not new and more.done is None and not self.again:
            more = None  # reached again in fewer steps: only a depth bound explores it again
        return child, child_index, more

    def copy_for(self, model: Model, action: Action, *, last: bool) -> Model:
        """A model to apply ``action`` to: a copy of just what it may change, sharing the rest
        with ``model`` (a :class:`PartialCopy`); otherwise a whole copy. For the ``last``
        action taken from it, ``model`` itself (nothing reads the parent once its children are
        made; a :class:`PartialCopy` first copies what it shares with its siblings and the
        action may change)."""
        if self.partial:
            reduction = self.reduction
            touched = (
                reduction.footprint(model, action)
                if isinstance(reduction, SleepSets)
                else cast(PartialCopy, model).footprint(action)
            )
            partial = cast(PartialCopy, model)
            ready = partial.ready_within if last else partial.clone_within
            return cast(Model, ready(touched))
        return model if last else model.clone()

    def check(self, model: Model, index: int) -> Sequence[Action]:
        """``Simulation.run``'s verdict on a state: an invariant broken, or the end of a run
        where nothing is enabled (finished, or deadlocked); the actions to follow otherwise."""
        if model.violations:
            self.broken += 1
            self.violated(model.violations, index)
            return ()
        enabled = model.enabled_actions()
        if enabled:
            return self.reduction.actions(model, enabled)
        ending = end_of_run(model, self.store.depth(index))
        if ending.status is RunStatus.VIOLATION:
            self.broken += 1
            self.violated(ending.violations, index)
        elif ending.status is RunStatus.DEADLOCK:
            report = ending.deadlock
            assert report is not None
            name = report.cycle_path or "no waits-for cycle: " + ", ".join(
                sorted({str(w.actor) for w in report.waits})
            )
            self.findings.note(
                Finding(
                    FindingKind.DEADLOCK,
                    name,
                    self.store.trace(index),
                    deadlock=report,
                    found_after=len(self.store),
                )
            )
        else:
            self.finished.add(index)
        return ()

    def violated(self, violations: Sequence[Violation], index: int) -> None:
        trace = self.store.trace(index)
        for violation in violations:
            self.findings.note(
                Finding(
                    FindingKind.VIOLATION,
                    violation.invariant,
                    trace,
                    violation=violation,
                    found_after=len(self.store),
                )
            )

    def tick(self, *, final: bool = False) -> None:
        """Read the clock: the time budget, and progress a few times a second."""
        now = time.monotonic()
        if self.report is not None and (final or now - self.last_report >= PROGRESS_EVERY):
            self.last_report = now
            self.report(Progress(self.states, len(self.store), self.deepest, now - self.started))
        if not final and self.deadline is not None and now >= self.deadline:
            raise _Stop(StopReason.TIME)
        if not final and self.stop is not None and self.stop():
            raise _Stop(StopReason.STOPPED)

    def expandable(self, depth: int) -> bool:
        """Whether a state at ``depth`` is expanded (the depth bound's states are checked
        only); noting that the bound cut something off."""
        limit = self.bounds.max_depth
        if limit is not None and depth >= limit:
            if self.stopped_by is StopReason.EXHAUSTED:
                self.stopped_by = StopReason.MAX_DEPTH
            return False
        return True

    # -- the strategies

    def breadth_first(self) -> None:
        """Level by level: the first time a state is reached is by a shortest trace."""
        try:
            root = self.initial.clone()
            index, found, _ = self.reach(root, -1, None, 0)
            level: list[tuple[Model, int, _Expansion]] = []
            if found is not None:
                level.append((root, index, found))
            depth = 0
            take = self.take
            while level and self.expandable(depth):
                following: list[tuple[Model, int, _Expansion]] = []
                keep = following.append
                for model, parent, found in level:
                    todo, done = self.expansion(parent, found)
                    numbered = found.numbered
                    last = len(todo)
                    for number, action in enumerate(todo, 1):
                        child, index, more = take(
                            model, parent, depth, action, done, numbered, last=number == last
                        )
                        if more is not None:
                            keep((child, index, more))
                level = following
                depth += 1
        except _Stop as stop:
            self.stopped_by = stop.reason

    def depth_first(self) -> None:
        """Along one path at a time. Under a depth bound, a state reached again in fewer steps
        is explored again from there, so that the bound cuts off nothing within it."""
        try:
            root = self.initial.clone()
            index, found, _ = self.reach(root, -1, None, 0)
            # per state on the path: the state, its index, the actions still to follow from it,
            # the sleep set of its next child and its numbered key
            stack: list[tuple[Model, int, list[Action], set[Action], Numbered | None]] = []
            if found is not None and self.expandable(0):
                stack.append((root, index, *self.expansion(index, found), found.numbered))
            while stack:
                model, parent, todo, done, numbered = stack[-1]
                if not todo:
                    stack.pop()
                    continue
                depth = len(stack) - 1
                action = todo.pop(0)
                child, index, more = self.take(
                    model, parent, depth, action, done, numbered, last=not todo
                )
                if more is not None and self.expandable(depth + 1):
                    stack.append((child, index, *self.expansion(index, more), more.numbered))
        except _Stop as stop:
            self.stopped_by = stop.reason

    def random_walks(self) -> None:
        """Seeded walks from the start, each to the end of a run or the depth bound."""
        rng = random.Random(self.seed)
        walks = self.bounds.walks or DEFAULT_WALKS
        try:
            for _ in range(walks):
                model = self.initial.clone()
                parent, found, _ = self.reach(model, -1, None, 0)
                depth = 0
                while True:
                    # a state seen before continues as it did then (its findings are noted)
                    actions = found.todo if found is not None else self.check_again(model)
                    if not actions or not self.expandable(depth):
                        break
                    action = actions[rng.randrange(len(actions))]
                    numbered = None if found is None else found.numbered
                    model.apply(action)
                    depth += 1
                    parent, found, _ = self.reach(model, parent, action, depth, like=numbered)
            self.stopped_by = StopReason.WALKS
        except _Stop as stop:
            self.stopped_by = stop.reason

    def check_again(self, model: Model) -> Sequence[Action]:
        """The actions to follow from a state seen before (its findings are noted already)."""
        if model.violations:
            return ()
        return self.reduction.actions(model, model.enabled_actions())

    def result(self) -> ExplorationResult:
        self.tick(final=True)
        findings = sorted(
            self.findings.by_name.values(), key=lambda f: (f.depth, f.kind.value, f.name)
        )
        return ExplorationResult(
            self.strategy,
            self.bounds,
            self.states,
            len(self.store),
            self.deepest,
            time.monotonic() - self.started,
            self.stopped_by,
            tuple(findings),
            len(self.finished),
            self.broken,
        )


#: random walks taken when no bound on them is given
DEFAULT_WALKS = 1000
