"""Partial-order reduction: which enabled actions to follow from a state, which two actions are
independent (they commute, and neither enables or disables the other), and the checks that a
model's footprints and partial copies tell the truth.

:class:`SleepSets` is reduction by sleep sets (Godefroid): once an action was followed from a
state, its later siblings need not follow it again where it is independent of what they did.
Every state is still reached; only transitions are left out. :class:`PersistentSets` adds
persistent sets: one actor's actions where no other may interfere with them, so that fewer
states are reached, every deadlock and broken invariant among them."""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Sequence
from typing import Protocol, cast

from flinkstate.collector import collector_paused
from flinkstate.sim.action import Action
from flinkstate.sim.core import Model

#: the empty sleep set: every action awake
AWAKE: frozenset[Action] = frozenset()


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
            return AWAKE
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


class Isolating(Footprinted, Protocol):
    """A model that knows, for one actor's enabled actions, whether any other actor may touch
    what they touch before that actor steps."""

    def isolates(self) -> bool:
        """Whether :meth:`interferes` may answer False in this state at all (asked once per
        state, before any actor's actions are)."""
        ...

    def interferes(self, actions: Sequence[Action], touched: frozenset[Hashable]) -> bool:
        """Whether another actor may, from this state on and before the actor of ``actions``
        (all it has enabled now) steps, touch ``touched`` (what they touch) or change which
        actions it has; True whenever that is not known."""
        ...


class PersistentSets(SleepSets):
    """Partial-order reduction by persistent sets (Godefroid), with sleep sets on top: from a
    state, follow only one actor's enabled actions where no other actor may interfere with
    them before that actor steps (``Isolating.interferes``): every interleaving of the others
    reaches, with those actions moved first, a state the reduced search reaches too. Fewer
    states are stored, not only fewer transitions.

    Every deadlock (a state where nothing is enabled) is still reached. So is every broken
    invariant, given the proviso the search keeps (a state whose reduced successors include
    one seen before is expanded fully, so no action is put off forever around a cycle). A
    model that is not :class:`Isolating` is explored as by sleep sets alone.

    The explorer counts the states it followed a persistent set from
    (``ExplorationResult.persistent``)."""

    def actions(self, model: Model, enabled: Sequence[Action]) -> Sequence[Action]:
        """The first actor's enabled actions (in ``enabled``'s order) that no other actor
        may interfere with, all of ``enabled`` where there is none.

        Examples:
            >>> from flinkstate.catalogue.topologies import topology
            >>> quiet = {"parallelism": 2, "source_parallelism": 1, "checkpoint_interval": 0}
            >>> world = topology("keyed").build({**quiet, "records": 2})
            >>> reduction = PersistentSets()
            >>> while reduction.actions(world, world.enabled_actions()) == world.enabled_actions():
            ...     _ = world.apply(world.enabled_actions()[0])
            >>> [str(a) for a in world.enabled_actions()]
            ['task counter[0]: write counter[0]>sink[0]', 'netty counter[1]<source[0]: send']
            >>> [str(a) for a in reduction.actions(world, world.enabled_actions())]
            ['task counter[0]: write counter[0]>sink[0]']
        """
        if len(enabled) < 2 or not callable(getattr(model, "isolates", None)):
            return enabled
        isolating = cast(Isolating, model)
        if not isolating.isolates():
            return enabled
        by_actor: dict[str, list[Action]] = {}
        for action in enabled:
            by_actor.setdefault(action.actor, []).append(action)
        if len(by_actor) < 2:
            return enabled
        for actions in by_actor.values():
            touched: set[Hashable] = set()
            for action in actions:
                footprint = self.footprint(model, action)
                if footprint is None:
                    break
                touched |= footprint
            else:
                if not isolating.interferes(actions, frozenset(touched)):
                    return actions
        return enabled


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


def verify_partial_copy(model: Model, action: Action, before: Hashable | None = None) -> None:
    """Raise :class:`IndependenceError` unless ``action``, enabled in ``model``, applied to a
    copy made for it (``clone_within`` its footprint) leaves ``model`` as it was and ends in
    the state and with the violations that applying it to a whole copy gives: its footprint
    names everything it changes. The same for the state itself made ready for it
    (``ready_within``), which must leave a copy made from it before as that copy was.
    ``before`` is a whole copy's fingerprint of ``model``, for a caller that checks every
    action of one state (the same for each)."""
    partial_model = cast(PartialCopy, model)
    touched = partial_model.footprint(action)
    if before is None:
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
    with collector_paused():  # models free their garbage by reference counting
        return _verify_along_runs(model, seeds, limit, every)


def _verify_along_runs(model: Model, seeds: int, limit: int, every: int) -> int:
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
                # a copy whose key is made once: the copies each pair makes of it keep what
                # their actions leave as it was, rather than making every part again (the
                # run itself keeps nothing, so the partial copies below start afresh)
                keyed = world.clone()
                keyed.fingerprint()
                for i, first in enumerate(enabled):
                    for second in enabled[i + 1 :]:
                        if reduction.independent(keyed, first, second):
                            verify_commute(keyed, first, second)
                            checked += 1
                if partial:
                    before = world.clone().fingerprint()
                    for action in enabled:
                        verify_partial_copy(world, action, before)
            world.apply(rng.choice(enabled))
    return checked
