"""A topology: a named job, the parameters a user may change in it, and how it becomes a
fresh :class:`~flinkstate.runtime.world.world.NetworkWorld` (or one restarted from a checkpoint),
so that every caller builds worlds through the same validation. The named ones are
:mod:`flinkstate.catalogue.topologies`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from flinkstate.catalogue.parameters import Parameter, by_name, failover_options
from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment
from flinkstate.runtime.jobgraph import JobGraph
from flinkstate.runtime.options import Fault, RunOptions
from flinkstate.runtime.shuffle.config import NetworkConfig
from flinkstate.runtime.world.world import NetworkWorld


@dataclass(frozen=True)
class Topology:
    name: str
    description: str
    parameters: tuple[Parameter, ...]
    _build: Callable[[Mapping[str, Any]], JobGraph]

    def resolve(self, overrides: Mapping[str, object] | None = None) -> dict[str, Any]:
        """Defaults with the user's overrides applied and checked."""
        known = {p.name: p for p in self.parameters}
        values: dict[str, Any] = {p.name: p.default for p in self.parameters}
        for name, raw in by_name(overrides or {}, self.parameters).items():
            if name not in known:
                raise InvalidParameterError(
                    f"unknown parameter {name!r} for topology {self.name}; known: "
                    + ", ".join(sorted(known))
                )
            values[name] = known[name].parse(raw)
        return values

    def graph(self, overrides: Mapping[str, object] | None = None) -> JobGraph:
        """The job's graph with ``overrides``: its operators and edges, no network built."""
        return self._build(self.resolve(overrides))

    def build(
        self,
        overrides: Mapping[str, object] | None = None,
        *,
        seed: int = 0,
        faults: frozenset[Fault] = frozenset(),
        full_check_every: int = 64,
        scale_audits: bool = True,
        check_actions: bool = False,
        restore: StateAssignment | None = None,
    ) -> NetworkWorld:
        """A fresh run of the job, or (``restore``) the job restarted from a checkpoint, its
        operators at the assignment's parallelism and its network configured by ``overrides``
        (so "what if the restored job had fewer buffers" is one call)."""
        values = self.resolve(overrides)
        # each setting is one name: the parameter's, the field's of NetworkConfig or RunOptions
        config = NetworkConfig(**{f.name: values[f.name] for f in fields(NetworkConfig)})
        options = RunOptions(  # parses and checks the choices itself
            seed=seed,
            faults=faults,
            full_check_every=full_check_every,
            scale_audits=scale_audits,
            check_actions=check_actions,
            **{
                **{f.name: values[f.name] for f in fields(RunOptions) if f.name in values},
                **failover_options(values),
            },
        )
        graph = self._build(values) if restore is None else restore.graph
        return NetworkWorld(graph, config, options, restore=restore)
