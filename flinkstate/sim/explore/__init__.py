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
frontier keeps models (BFS: the current and the next level; DFS: one per ``SNAPSHOT_EVERY``
steps of the current path and those above the highest of them, the others taken again from
the one below when the search comes back to them). A memory budget (``Bounds.max_memory``:
the process's resident memory, read as often as the clock) stops any strategy as a bound does;
running out of memory before it is one :class:`ExplorationMemoryError`. A model that can
copy only what an action may change (:class:`PartialCopy`) is copied so
for each transition, the copy sharing every other part with the state it came from; the
explorer never changes a state it has copied from.

Reduction: a :class:`Reduction` says which enabled actions to follow from a state, which two
actions are independent where both are enabled (they commute, and neither enables or disables
the other), and the value states are deduplicated by. :class:`SleepSets` is partial-order
reduction by sleep sets (Godefroid): once an action was followed from a state, its later
siblings need not follow it again where it is independent of what they did, because both
orders reach one state. Every state is still reached (only transitions are left out), so every
violation and deadlock is found, with a trace as short, at a fraction of the cost. A state met
again with a smaller sleep set follows what it slept on before. :class:`PersistentSets` adds
persistent sets (Godefroid): where no other actor may interfere with one actor's next step
(:class:`Isolating`), only that actor's actions are followed, so fewer states are stored;
every deadlock and finding is still reached (a state whose persistent set closes a cycle is
expanded fully, the proviso), though not always by the shortest trace. :data:`NO_REDUCTION`
follows every transition.
"""

from __future__ import annotations

from flinkstate.sim.explore.budget import (
    ExplorationMemoryError,
    default_memory_budget,
    memory_bound,
    resident_bytes,
)
from flinkstate.sim.explore.reduction import (
    NO_REDUCTION,
    Footprinted,
    IndependenceError,
    Isolating,
    NoReduction,
    PartialCopy,
    PersistentSets,
    Reduction,
    SleepSets,
    copies_partially,
    verify_along_runs,
    verify_commute,
    verify_partial_copy,
)
from flinkstate.sim.explore.result import (
    Bounds,
    ExplorationResult,
    Finding,
    FindingKind,
    PartialOrder,
    Progress,
    StopReason,
    Strategy,
)
from flinkstate.sim.explore.search import explore
from flinkstate.sim.explore.store import Numbered, StateStore

__all__ = [
    "NO_REDUCTION",
    "Bounds",
    "ExplorationMemoryError",
    "ExplorationResult",
    "Finding",
    "FindingKind",
    "Footprinted",
    "IndependenceError",
    "Isolating",
    "NoReduction",
    "Numbered",
    "PartialCopy",
    "PartialOrder",
    "PersistentSets",
    "Progress",
    "Reduction",
    "SleepSets",
    "StateStore",
    "StopReason",
    "Strategy",
    "copies_partially",
    "default_memory_budget",
    "explore",
    "memory_bound",
    "resident_bytes",
    "verify_along_runs",
    "verify_commute",
    "verify_partial_copy",
]
