"""What restoring a real checkpoint at another parallelism will do, computed by the simulator.

A checkpoint Flink wrote is read (:mod:`flinkstate.flinkcheckpoint`) and turned into the
model's terms (:mod:`flinkstate.lab.real_checkpoint`): a
:class:`~flinkstate.runtime.jobgraph.JobGraph` of the exchanges that carried in-flight data
(partitioners from the user, since ``_metadata`` does not record them) and every persisted chunk
as a buffer of record fragments cut where Flink's framing cut them; the network settings come
from the ``job-config.txt`` beside the checkpoint where it gives them, Flink's defaults
otherwise, each with where it came from. That checkpoint is split for the job at the new
parallelism (:func:`~flinkstate.runtime.checkpoint.state_assignment.assign_state`), and the
restored world runs to its end with the chosen recovery generation, deterministically (seeded).

The restored sources emit nothing new: the forecast is about the recovered data, so the run
ends once every task is RUNNING and every recovered record is processed or filtered out. What
the model cannot stand for is refused in one line, before anything runs: a checkpoint without
in-flight data, elements other than records in flight (watermarks, latency markers), two
exchanges between the same two operators, a parallelism out of Flink's bounds.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flinkstate.catalogue.parameters import COMMON, Parameter, by_name
from flinkstate.catalogue.topology import Topology
from flinkstate.errors import InvalidParameterError, UnsupportedRescaleError
from flinkstate.flinkcheckpoint.export import ExchangeSpec, to_dataset
from flinkstate.flinkcheckpoint.inflight import Edge, exchange_name, resolve_edges
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, read_metadata
from flinkstate.flinkcheckpoint.stream_element import ValueDecoder
from flinkstate.flinkcheckpoint.summary import checkpoint_dir
from flinkstate.lab.new_parallelism import NewParallelism
from flinkstate.lab.real_checkpoint import (
    JOB_CONFIG,
    RealJob,
    Setting,
    config_boolean,
    find_job_config,
    network_settings,
    read_job_config,
    real_job,
)
from flinkstate.lab.scenario_run import resumed_step, spill_figures
from flinkstate.runtime.buffer.owners import Owner, OwnerPlace
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.checkpoint.channel.channel_state_reader import split_chunk
from flinkstate.runtime.checkpoint.state_assignment import StateAssignment, assign_state
from flinkstate.runtime.jobgraph import JobGraph
from flinkstate.runtime.options import (
    CHECKPOINTING_DURING_RECOVERY_KEY,
    RECOVER_OUTPUT_ON_DOWNSTREAM_KEY,
    RecoveryGeneration,
)
from flinkstate.runtime.partition.record_writer import IN_FLIGHT
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim.core import RunResult, RunStatus, Simulation
from flinkstate.sim.scheduler import make_scheduler

#: parameters of the catalogue's jobs that say what the sources emit: a forecast's sources
#: emit nothing new, so they are refused rather than silently ignored
_JOB_ONLY = frozenset(
    {"records", "record_size", "keys", "watermark_interval", "out_of_orderness", "source_idleness"}
)
#: what ``--generation`` decides, so ``--set`` may not say it too
_BY_GENERATION = frozenset({"generation", "checkpointing_during_recovery"})
FORECAST_PARAMETERS: tuple[Parameter, ...] = tuple(p for p in COMMON if p.name not in _JOB_ONLY)

#: the number of network buffers of a TaskManager: Flink sizes it from the TaskManager's
#: memory, which no job configuration here gives
_NETWORK_BUFFERS_NOTE = (
    "network buffers per TaskManager: the model's {value} (Flink sizes them from the "
    "TaskManager's memory, which the job's configuration does not give; --set network_buffers=N)"
)


@dataclass(frozen=True)
class SubtaskForecast:
    """What one new downstream subtask of an exchange reads, filters out and keeps."""

    exchange: str
    operator: str
    subtask: int
    #: the buffers' bytes routed to it (its input state, and output state sent or handed to it)
    bytes: int
    records: int
    filtered_records: int
    filtered_bytes: int
    kept_records: int
    kept_bytes: int
    #: simulated: records it processed / dropped, which must equal the two counts above
    processed: int
    dropped: int


@dataclass(frozen=True)
class GateForecast:
    """One new input gate's buffers: configured, held at peak during the run, and what
    Flink 2.3's filtering reader would need without its heap fallback."""

    gate: str
    channels: int
    exclusive_per_channel: int
    floating: int
    #: segments its channels and its reader held at once at most during the run
    peak_held: int
    #: V1's reader with network buffers only: 1 pre-filter + the post-filter buffers of the
    #: source buffer that needs the most (0: the reader reads nothing for this gate)
    prefilter_need: int

    @property
    def configured(self) -> int:
        """What one recovered channel may draw on: its exclusive buffers and the gate's
        floating ones (the budget of the pre-filter deadlock's rule)."""
        return self.exclusive_per_channel + self.floating

    @property
    def prefilter_deadlock(self) -> bool:
        """FLINK-39519's hazard: 1 + k > exclusive + floating."""
        return self.prefilter_need > self.configured


@dataclass
class Forecast:
    """A real checkpoint restored at ``to`` by the simulator, and what it showed."""

    checkpoint: Path
    checkpoint_id: int
    to: NewParallelism
    generation: RecoveryGeneration
    seed: int
    job: RealJob
    assignment: StateAssignment
    settings: tuple[Setting, ...]
    notes: tuple[str, ...]
    overrides: Mapping[str, object]
    simulation: Simulation
    result: RunResult
    subtasks: tuple[SubtaskForecast, ...] = ()
    gates: tuple[GateForecast, ...] = ()
    running_step: int | None = None
    consumed_step: int | None = None
    #: the generations run beside the chosen one for their memory figures, by name
    compared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def world(self) -> NetworkWorld:
        model = self.simulation.model
        assert isinstance(model, NetworkWorld)
        return model

    @property
    def outcome(self) -> str:
        if self.result.status is RunStatus.FINISHED:
            return "recovered"
        return self.result.status.value

    def memory(self) -> dict[str, Any]:
        """The chosen run's heap peak and spill figures."""
        return {"heap_peak_bytes": self.world.heap_peak, **spill_figures(self.world)}

    def summary(self) -> dict[str, Any]:
        """Everything the command prints, as JSON-ready values."""
        return {
            "checkpoint": str(self.checkpoint),
            "checkpoint_id": self.checkpoint_id,
            # a number when every operator is given one, as the command has always said
            "to": str(self.to) if self.to.operators else self.to.every,
            "generation": self.generation.value,
            "flink": self.generation.flink,
            "effective_generation": self.world.effective_generation.value,
            "seed": self.seed,
            "operators": {op.name: op.parallelism for op in self.assignment.graph.operators},
            "left_out_operators": list(self.job.left_out),
            "settings": [
                {"name": s.name, "value": s.value, "source": s.source} for s in self.settings
            ],
            "notes": list(self.notes),
            "outcome": self.outcome,
            "steps": self.result.steps,
            "running_step": self.running_step,
            "consumed_step": self.consumed_step,
            "recovered_bytes": self.assignment.recovered_bytes,
            "recovered_records": len(self.world.recovered_records),
            "subtasks": [vars(s) for s in self.subtasks],
            "gates": [
                {
                    **vars(g),
                    "configured": g.configured,
                    "prefilter_deadlock": g.prefilter_deadlock,
                }
                for g in self.gates
            ],
            "prefilter_deadlock": any(g.prefilter_deadlock for g in self.gates),
            "memory": self.memory(),
            "compared": {k: dict(v) for k, v in self.compared.items()},
            "violations": [str(v) for v in self.result.violations],
            "deadlock": None if self.result.deadlock is None else self.result.deadlock.describe(),
        }


def prepare_forecast(
    path: str | Path,
    to: int | Mapping[str, int] | NewParallelism,
    *,
    exchanges: Mapping[str, ExchangeSpec],
    generation: RecoveryGeneration | str = RecoveryGeneration.CLASSIC,
    overrides: Mapping[str, object] | None = None,
    value: ValueDecoder | None = None,
    edges: Iterable[Edge] | None = None,
    reroot: Mapping[str, str] | None = None,
    job_config: Path | None = None,
    seed: int = 0,
    keep_snapshots: bool = False,
) -> Forecast:
    """The forecast's restored run at step 0, ready to step (what the stepper opens); the
    figures are filled by :func:`run_forecast`. ``to``: every operator's new parallelism, or
    some operators' by name (the others keep theirs). ``job_config`` is found beside the
    checkpoint when not given. Refuses, in one line, what it cannot model."""
    chosen = RecoveryGeneration.parse(generation)
    target = NewParallelism.parse(to)
    directory = checkpoint_dir(path)
    metadata = read_metadata(directory)
    if not any(h.offsets and h.state_size for _, h in metadata.channel_handles()):
        raise InvalidParameterError(
            f"checkpoint {metadata.checkpoint_id} holds no in-flight data (an aligned "
            "checkpoint, or nothing was in flight): nothing to recover, nothing to forecast"
        )
    config_file = job_config if job_config is not None else find_job_config(directory)
    config = {} if config_file is None else read_job_config(config_file)
    values, settings, notes = _settings(config, config_file, chosen, overrides)
    recover_output = _recovers_output(config, config_file, chosen)
    if chosen is not RecoveryGeneration.CLASSIC:
        notes.append(
            f"{chosen.value} ({chosen.flink}) recovers with {RECOVER_OUTPUT_ON_DOWNSTREAM_KEY} "
            f"and {CHECKPOINTING_DURING_RECOVERY_KEY} on"
        )
    chosen_edges = tuple(edges) if edges is not None else None
    _check_exchanges_named(metadata, chosen_edges, exchanges)
    segment_size = int(str(values["segment_size"]))
    dataset = to_dataset(
        directory,
        exchanges,
        value=value,
        edges=chosen_edges,
        reroot=reroot,
        segment_size=segment_size,
    )
    job = real_job(dataset, metadata.checkpoint_id)
    if job.left_out:
        notes.append(
            "not in the model (no exchange of theirs carried in-flight data: chained, or "
            f"their exchanges aligned): {', '.join(job.left_out)}"
        )
    notes.append(
        "the restored sources emit nothing new: the run ends once the recovered data is consumed"
    )
    assignment, world = _restored(job, target, values, seed, recover_output)
    scheduler = make_scheduler("random", seed)
    every = 256 if keep_snapshots else None
    simulation = Simulation(world.clone, scheduler, every)
    return Forecast(
        directory,
        metadata.checkpoint_id,
        target,
        chosen,
        seed,
        job,
        assignment,
        settings,
        tuple(notes),
        dict(values),
        simulation,
        RunResult(RunStatus.STOPPED, 0),
    )


def _settings(
    config: Mapping[str, str],
    config_file: Path | None,
    chosen: RecoveryGeneration,
    overrides: Mapping[str, object] | None,
) -> tuple[dict[str, object], tuple[Setting, ...], list[str]]:
    """The restored run's parameter values (the job's configuration, Flink's defaults, the
    chosen generation and the user's ``--set``), each network setting with where it came from,
    and the notes saying so; a ``--set`` of what a forecast does not take is refused."""
    defaults, found = network_settings(config, config_file.name if config_file else JOB_CONFIG)
    notes = [
        f"job configuration: {config_file}"
        if config_file is not None
        else f"no {JOB_CONFIG} beside the checkpoint: Flink's defaults"
    ]
    user = by_name(dict(overrides or {}), FORECAST_PARAMETERS)
    for name in user:
        if name in _BY_GENERATION:
            raise InvalidParameterError(f"--set {name}: the recovery generation is --generation")
        if name in _JOB_ONLY:
            raise InvalidParameterError(
                f"--set {name}: a forecast's sources emit nothing new (it forecasts the "
                "recovered data)"
            )
    values: dict[str, object] = {**defaults, "checkpoint_interval": 0}
    if chosen is not RecoveryGeneration.CLASSIC:
        values.update(generation=chosen.value, checkpointing_during_recovery=True)
    values.update(user)
    settings = tuple(
        Setting(s.name, values[s.name], "--set" if s.name in user else s.source) for s in found
    )
    if "network_buffers" not in user:
        notes.append(_NETWORK_BUFFERS_NOTE.format(value=_default("network_buffers")))
    if "checkpoint_interval" not in user:
        notes.append(
            "no checkpoint is triggered during the forecast (--set checkpoint_interval=STEPS)"
        )
    return values, settings, notes


def _recovers_output(
    config: Mapping[str, str], config_file: Path | None, chosen: RecoveryGeneration
) -> bool:
    """Whether the restore recovers output on the downstream side: always with a new
    generation, else as the job's configuration says, a value Flink refuses refused."""
    source = config_file.name if config_file else JOB_CONFIG
    configured = config_boolean(config, RECOVER_OUTPUT_ON_DOWNSTREAM_KEY, False, source)
    return configured or chosen is not RecoveryGeneration.CLASSIC


def _restored(
    job: RealJob,
    to: NewParallelism,
    values: Mapping[str, object],
    seed: int,
    recover_output: bool,
) -> tuple[StateAssignment, NetworkWorld]:
    """The real checkpoint split for the job at ``to``, and the world restored from it; an
    operator the model left out, or a rescale Flink refuses, is refused in one line."""
    for name, _ in to.operators:
        if name in job.left_out:
            raise InvalidParameterError(
                f"--to {name}: not in the model (chained, or no exchange of its carried "
                "in-flight data); give the operator it is chained to, one of "
                + ", ".join(op.name for op in job.graph.operators)
            )
    parallelism = to.of({op.name: op.parallelism for op in job.graph.operators})
    try:
        assignment = assign_state(
            job.checkpoint, parallelism, recover_output_on_downstream=recover_output
        )
        topology = Topology("forecast", "a real checkpoint restored", FORECAST_PARAMETERS, _no_job)
        return assignment, topology.build(values, seed=seed, restore=assignment)
    except UnsupportedRescaleError as refused:
        raise InvalidParameterError(str(refused)) from None


def _check_exchanges_named(
    metadata: CheckpointMetadata,
    edges: Iterable[Edge] | None,
    exchanges: Mapping[str, ExchangeSpec],
) -> None:
    """Every exchange that carried in-flight data has its partitioner given (the checkpoint
    does not record it); a keyBy one needs the records' type to find their keys."""
    for edge in resolve_edges(metadata, edges)[0]:
        if str(edge) not in exchanges and exchange_name(edge) not in exchanges:
            raise InvalidParameterError(
                f"say how exchange {exchange_name(edge)} partitions (the checkpoint does not "
                f"record it): --exchange '{exchange_name(edge)}=PARTITIONER[:KEY]', e.g. "
                "hash:f0%1000 or rebalance"
            )


def _no_job(values: Mapping[str, Any]) -> JobGraph:
    """A forecast's world is always built from its restore's graph."""
    raise AssertionError("a forecast builds only restored worlds")


def _default(name: str) -> object:
    return next(p.default for p in FORECAST_PARAMETERS if p.name == name)


def run_forecast(
    forecast: Forecast,
    *,
    max_steps: int = 5_000_000,
    progress: Callable[[str, int], None] | None = None,
    compare: Sequence[RecoveryGeneration] = (RecoveryGeneration.V1, RecoveryGeneration.V2),
    rerun: Callable[[RecoveryGeneration], Forecast] | None = None,
) -> Forecast:
    """Run the forecast's restored world to its end and fill in its figures. ``rerun``
    makes the same forecast with another generation, run for its memory figures for each of
    ``compare`` other than the chosen one (Flink 2.3's heap against master's spill files)."""
    simulation = forecast.simulation
    chunk = 5000
    while True:
        result = simulation.run(min(simulation.step_count + chunk, max_steps))
        if progress is not None:
            progress(forecast.generation.value, simulation.step_count)
        if result.status is not RunStatus.STOPPED or simulation.step_count >= max_steps:
            break
    forecast.result = result
    world = forecast.world
    forecast.running_step = resumed_step(world, simulation.events)
    forecast.consumed_step = _consumed_step(world)
    forecast.subtasks = _subtask_figures(forecast)
    forecast.gates = _gate_figures(forecast)
    compared: dict[str, Mapping[str, Any]] = {}
    for other in compare:
        if other is forecast.generation:
            compared[other.value] = {"outcome": forecast.outcome, **forecast.memory()}
        elif rerun is not None:
            again = run_forecast(rerun(other), max_steps=max_steps, progress=progress, compare=())
            compared[other.value] = {"outcome": again.outcome, **again.memory()}
    forecast.compared = compared
    return forecast


def _consumed_step(world: NetworkWorld) -> int | None:
    """The step (as the stepper counts) at which the last recovered record was processed or
    filtered out; None while one is still in flight."""
    recovered = world.recovered_records
    steps = []
    for (record, _), state in world.deliveries.items():
        if record in recovered:
            if state == IN_FLIGHT:
                return None
            steps.append(int(state))
    steps += [step for (record, _), step in world.filtered.items() if record in recovered]
    return max(steps, default=-1) + 1


def _subtask_figures(forecast: Forecast) -> tuple[SubtaskForecast, ...]:
    """Per exchange and new downstream subtask: what the assignment routes to it (bytes,
    records, those the partitioner selects another subtask for) and what the run did
    (processed, dropped)."""
    assignment = forecast.assignment
    graph = assignment.graph
    world = forecast.world
    records = assignment.records
    exchange_of = forecast.job.record_exchange
    processed: Counter[tuple[str, str]] = Counter()
    for (record, gate), state in world.deliveries.items():
        if record in world.recovered_records and state != IN_FLIGHT:
            processed[(exchange_of[record], gate)] += 1
    dropped: Counter[tuple[str, str]] = Counter()
    key_of = {task.name: key for key, task in world.tasks.items()}
    for record, task in world.filtered:
        if record in world.recovered_records:
            dropped[(exchange_of[record], key_of[task])] += 1
    routed: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])

    def add(name: str, consumer: int, fragments: Iterable[Fragment], size: int) -> None:
        row = routed[(name, consumer)]
        row[0] += size
        for fragment in fragments:
            if not fragment.is_first:
                continue
            row[1] += 1
            record = records[fragment.record]
            if assignment.expected_subtask[(fragment.record, name)] == consumer:
                row[4] += 1
                row[5] += record.serialized_length
            else:
                row[2] += 1
                row[3] += record.serialized_length

    for exchange in graph.exchanges:
        down, up = graph.operator(exchange.downstream), graph.operator(exchange.upstream)
        gate_index = graph.gate_index(exchange.data_set)
        partition = graph.partition_index(exchange.data_set)
        for index in range(down.parallelism):
            for chunk in assignment.subtasks[down.subtask_name(index)].input_state:
                if chunk.index == gate_index:
                    add(exchange.name, index, chunk.fragments, chunk.size)
        for index in range(up.parallelism):
            for chunk in assignment.subtasks[up.subtask_name(index)].output_state:
                if chunk.index == partition:
                    for target in chunk.targets:
                        add(exchange.name, target, chunk.fragments, chunk.size)
    rows = []
    for exchange in graph.exchanges:
        down = graph.operator(exchange.downstream)
        for index in range(down.parallelism):
            size, count, filtered, filtered_bytes, kept, kept_bytes = routed[(exchange.name, index)]
            consumer = down.subtask_name(index)
            rows.append(
                SubtaskForecast(
                    exchange.name,
                    down.name,
                    index,
                    size,
                    count,
                    filtered,
                    filtered_bytes,
                    kept,
                    kept_bytes,
                    processed[(exchange.name, exchange.gate_name(consumer))],
                    dropped[(exchange.name, consumer)],
                )
            )
    return tuple(rows)


def _gate_figures(forecast: Forecast) -> tuple[GateForecast, ...]:
    """Every new gate's buffers: configured, held at peak in the run (replayed from the
    events' moves), and the V1 reader's need without its heap fallback."""
    world = forecast.world
    gate_of_channel = {c.name: c.gate for c in world.channels.values()}
    held: Counter[str] = Counter()
    peak: Counter[str] = Counter()
    for event in forecast.simulation.events:
        for move in event.moves:
            for owner, change in ((move.source, -1), (move.target, 1)):
                holding = _gate_holding(owner, gate_of_channel)
                if holding is not None:
                    held[holding] += change
                    peak[holding] = max(peak[holding], held[holding])
    need = _prefilter_need(forecast)
    rows = []
    for name, gate in world.gates.items():
        rows.append(
            GateForecast(
                name,
                len(gate.channels),
                gate.exclusive_per_channel,
                gate.pool.size,
                peak[name],
                need.get(name, 0),
            )
        )
    return tuple(rows)


def _gate_holding(owner: object, gate_of_channel: Mapping[str, str]) -> str | None:
    """The gate whose channel (or whose reader, for that channel) an owner is, if any."""
    if not isinstance(owner, Owner):
        return None
    if owner.place not in (OwnerPlace.CHANNEL, OwnerPlace.READER):
        return None
    return gate_of_channel.get(owner.holder)


def _prefilter_need(forecast: Forecast) -> dict[str, int]:
    """Per gate, the most buffers Flink 2.3's filtering reader holds at once for one source
    buffer (one pre-filter buffer and the post-filter buffers its kept records fill), were
    every one a network buffer: FLINK-39519's ``1 + k``. That reader runs with
    recover-output-on-downstream, so it reads the upstreams' output state too: the rule is
    taken on that restore whatever the chosen generation, every chunk cut into segment-sized
    source buffers as the reader cuts them."""
    assignment = forecast.assignment
    if not assignment.recover_output_on_downstream:
        parallelism = {op.name: op.parallelism for op in assignment.graph.operators}
        assignment = assign_state(
            forecast.job.checkpoint, parallelism, recover_output_on_downstream=True
        )
    graph = assignment.graph
    segment = forecast.world.config.segment_size
    records = assignment.records
    need: dict[str, int] = {}
    for restore in assignment.subtasks.values():
        inputs = graph.inputs_of(restore.operator)
        for piece in (p for chunk in restore.input_state for p in split_chunk(chunk, segment)):
            exchange = inputs[piece.index]
            plan = restore.gates[piece.index]
            filters = plan.filters_virtual_channel(
                piece.targets[0], piece.old_subtask, piece.old_channel
            )
            kept = sum(
                records[f.record].serialized_length
                for f in piece.fragments
                if f.is_last
                and (
                    not filters
                    or assignment.expected_subtask[(f.record, exchange.name)] == restore.index
                )
            )
            gate = exchange.gate_name(restore.subtask)
            need[gate] = max(need.get(gate, 0), 1 + -(-kept // segment))
    return need
