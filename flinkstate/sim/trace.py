"""Traces: runs written as JSON lines, read back line by line, and replayed to the same state.

A trace is UTF-8 text, one JSON object per line (version 2)::

    {"format": "flinkstate-trace", "version": 2, "flinkstate": "0.1.0", "kind": "scenario",
     "name": "keyed-upscale", "seed": 1, "scheduler": "random", "max_steps": 2000000,
     "faults": [], "overrides": {"records": 20}, "parameters": {...every parameter...}}
    {"phase": "job", "steps": 446}
    {"step": 0, "actor": "task source[0]", "kind": "emit", "target": "", "moves": [...], ...}
    ... 445 more events of the job ...
    {"phase": "restart", "steps": 1171}
    ... 1171 events of the restart ...
    {"end": true, "phases": 2, "steps": 1617}

The header says what to rebuild: the kind of run (``topology`` or ``scenario``, defined by the
layers that run them), its name, seed and scheduler, the parameters the user set
(``overrides``, checked and typed) and the value of every parameter (``parameters``, compared
when loading), the step limit and any faults switched on. Each phase of the run follows: a
marker with its name and step count, then one :meth:`~flinkstate.sim.core.Event.to_json` per
step. The end line repeats the counts, so a file cut short anywhere is detected. A topology
run is one phase, ``run``; a scenario's phases are named by :mod:`flinkstate.lab.scenario_run`.

Version 1 traces (a header with ``scenario`` naming a topology, its resolved ``parameters``,
``scheduler`` and ``seed``, then the events, no markers, no end line) still read, as one phase
``run``.

Replaying applies the recorded actions to a fresh model and checks that every step produces
the recorded event again, so a trace doubles as a regression test of determinism: a difference
names the line and the first field that differs. :class:`TraceReader` never holds more than
one line, and a line longer than :data:`MAX_LINE_CHARS` is refused, so a file of any size is
read in bounded memory.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from flinkstate import __version__
from flinkstate.collector import collector_paused
from flinkstate.errors import FlinkstateError, InvalidParameterError
from flinkstate.output import written_whole
from flinkstate.sim.action import Action
from flinkstate.sim.core import Event, Simulation

TRACE_FORMAT = "flinkstate-trace"
TRACE_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: no event line comes near this (the largest are a few KiB); anything longer is not a trace
MAX_LINE_CHARS = 1 << 20
#: the one phase of a run that is not split into phases (a topology's, every version 1 trace)
SINGLE_PHASE = "run"
#: version 1 traces were all of catalogued topologies
_V1_KIND = "topology"
DIFFERENT_RUN = "this trace was written by a different version or parameters"


class TraceError(FlinkstateError):
    """A trace file that cannot be read, is not whole, or does not replay to the same events.
    The message names the file and, where there is one, the line."""


@dataclass(frozen=True)
class TraceHeader:
    """What a run needs to be rebuilt: the first line of its trace."""

    kind: str
    name: str
    seed: int
    scheduler: str
    #: the parameters the user set, checked and typed
    overrides: Mapping[str, Any]
    #: every parameter's value in the run
    parameters: Mapping[str, Any]
    #: the step limit of the run (of each phase of a scenario); None: none given
    max_steps: int | None = None
    #: bugs switched on by the caller, beyond those the run's definition switches on
    faults: tuple[str, ...] = ()
    #: the flinkstate that wrote it
    written_by: str = __version__

    def to_json(self) -> dict[str, Any]:
        return {
            "format": TRACE_FORMAT,
            "version": TRACE_VERSION,
            "flinkstate": self.written_by,
            "kind": self.kind,
            "name": self.name,
            "seed": self.seed,
            "scheduler": self.scheduler,
            "max_steps": self.max_steps,
            "faults": list(self.faults),
            "overrides": dict(self.overrides),
            "parameters": dict(self.parameters),
        }


@dataclass(frozen=True)
class PhaseMarker:
    """A phase of a trace: its name, its step count, and the line of its marker."""

    name: str
    steps: int
    line: int


@dataclass(frozen=True)
class RecordedEvent:
    """One event line: where it is, which step of its phase, and the event as written."""

    line: int
    index: int
    data: Mapping[str, Any] = field(repr=False)

    @property
    def action(self) -> Action:
        return Action(self.data["actor"], self.data["kind"], self.data["target"])


@dataclass(frozen=True)
class TraceSummary:
    """A trace's header and phases, its structure checked, nothing replayed."""

    path: Path
    version: int
    header: TraceHeader
    phases: tuple[PhaseMarker, ...]

    def phase(self, name: str) -> PhaseMarker:
        for marker in self.phases:
            if marker.name == name:
                return marker
        raise TraceError(f"{self.path} has no phase {name!r}; it has {_names(self.phases)}")


def write_trace(
    path: Path, header: TraceHeader, phases: Sequence[tuple[str, Sequence[Event]]]
) -> int:
    """Write a trace (version 2) whole or not at all; returns the number of events written.

    The target is refused up front as :func:`flinkstate.output.check_target` refuses it; on
    any error, ``KeyboardInterrupt`` included, no file appears under ``path``."""
    names = [name for name, _ in phases]
    if len(set(names)) != len(names) or not all(names):
        raise InvalidParameterError(f"phase names must be distinct and non-empty, got {names}")
    total = 0
    with written_whole(path) as out:
        _write_line(out, header.to_json())
        for name, events in phases:
            _write_line(out, {"phase": name, "steps": len(events)})
            for event in events:
                _write_line(out, event.to_json())
            total += len(events)
        _write_line(out, {"end": True, "phases": len(phases), "steps": total})
    return total


def _write_line(out: TextIO, value: Mapping[str, Any]) -> None:
    out.write(json.dumps(value, separators=(",", ":")) + "\n")


def scan_trace(path: Path) -> TraceSummary:
    """Read a trace to its end without replaying it: its header and phases, every line
    checked for shape (a :class:`TraceError` names the first bad one)."""
    with TraceReader(path) as reader:
        markers = []
        for marker, _events in reader.phases():
            markers.append(marker)
        return TraceSummary(reader.path, reader.version, reader.header, tuple(markers))


class TraceReader:
    """A trace read line by line, its structure checked as it goes.

    Use as a context manager; :meth:`phases` yields each phase's marker with an iterator over
    its events, and reads whatever events the caller leaves unread, so the whole file is
    checked, to its end line, once the loop is done."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._line = 0
        try:
            mode = path.stat().st_mode
        except OSError as error:
            raise TraceError(f"cannot read trace {path}: {error.strerror}") from None
        if not stat.S_ISREG(mode):
            raise TraceError(f"cannot read trace {path}: not a regular file")
        try:
            self._file = path.open(encoding="utf-8")
        except OSError as error:
            raise TraceError(f"cannot read trace {path}: {error.strerror}") from None
        try:
            self.version, self.header = self._read_header()
        except BaseException:
            self._file.close()
            raise

    def __enter__(self) -> TraceReader:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def where(self, line: int) -> str:
        return f"{self.path}:{line}"

    def expect_kind(self, kind: str, others: Mapping[str, str]) -> None:
        """Refuse a trace of another kind of run, naming the loader its kind needs
        (``others``: kind -> that loader's name)."""
        header = self.header
        if header.kind != kind:
            loader = others.get(header.kind)
            raise TraceError(
                f"{self.where(self.header_line)}: a trace of {header.kind} {header.name}, "
                f"not of a {kind}" + (f"; load it with {loader}" if loader else "")
            )

    # -- the header ---------------------------------------------------------------------------

    def _read_header(self) -> tuple[int, TraceHeader]:
        first = self._read()
        if first is None:
            raise TraceError(f"{self.path} is empty, expected a {TRACE_FORMAT} header")
        line, head = first
        self.header_line = line
        where = self.where(line)
        if head.get("format") != TRACE_FORMAT:
            raise TraceError(f"{where}: not a {TRACE_FORMAT} file")
        version = head.get("version")
        if version not in READABLE_VERSIONS or isinstance(version, bool):
            raise TraceError(
                f"{where}: trace version {_short(version)}; this flinkstate reads versions "
                + " and ".join(str(v) for v in READABLE_VERSIONS)
            )
        fields = _Fields(head, where)
        if version == 1:
            parameters = fields.mapping("parameters")
            return 1, TraceHeader(
                _V1_KIND,
                fields.text("scenario"),
                fields.integer("seed"),
                fields.text("scheduler"),
                parameters,
                parameters,
                written_by="",
            )
        max_steps = head.get("max_steps")
        return 2, TraceHeader(
            fields.text("kind"),
            fields.text("name"),
            fields.integer("seed"),
            fields.text("scheduler"),
            fields.mapping("overrides"),
            fields.mapping("parameters"),
            None if max_steps is None else fields.integer("max_steps"),
            tuple(fields.texts("faults")),
            fields.text("flinkstate"),
        )

    # -- phases and events --------------------------------------------------------------------

    def phases(self) -> Iterator[tuple[PhaseMarker, Iterator[RecordedEvent]]]:
        """Each phase's marker and its events, in file order, to the end line."""
        if self.version == 1:
            yield from self._single_phase()
            return
        seen: list[PhaseMarker] = []
        total = 0
        while True:
            item = self._read()
            if item is None:
                raise TraceError(
                    f"{self.path}: truncated: ends at line {self._line} without its end line"
                )
            line, value = item
            if "end" in value:
                self._check_end(line, value, seen, total)
                return
            marker = self._marker(line, value, seen)
            events = self._events(marker)
            yield marker, events
            for _ in events:
                pass
            seen.append(marker)
            total += marker.steps

    def _single_phase(self) -> Iterator[tuple[PhaseMarker, Iterator[RecordedEvent]]]:
        # a version 1 trace has no counts: count its lines first (another pass, one line held)
        steps = 0
        with self.path.open(encoding="utf-8") as again:
            try:
                for _ in range(self._line):  # the header, after any blank lines
                    again.readline(MAX_LINE_CHARS + 1)
                for text in iter(lambda: again.readline(MAX_LINE_CHARS + 1), ""):
                    steps += bool(text.strip())
            except UnicodeDecodeError:
                pass  # the reading pass names the line
        marker = PhaseMarker(SINGLE_PHASE, steps, self._line)
        events = self._events(marker)
        yield marker, events
        for _ in events:
            pass
        extra = self._read()
        if extra is not None:
            raise TraceError(f"{self.where(extra[0])}: more lines than when it was counted")

    def _marker(self, line: int, value: dict[str, Any], seen: list[PhaseMarker]) -> PhaseMarker:
        where = self.where(line)
        if "phase" not in value:
            if "actor" in value and seen:
                raise TraceError(
                    f"{where}: an event beyond the {seen[-1].steps} steps phase {seen[-1].name} "
                    "declares"
                )
            if "actor" in value:
                raise TraceError(f"{where}: an event before any phase line")
            raise TraceError(f"{where}: expected a phase line or the end line")
        fields = _Fields(value, where)
        name = fields.text("phase")
        steps = fields.integer("steps")
        if steps < 0 or not name:
            raise TraceError(f"{where}: a phase needs a name and a step count of 0 or more")
        if any(m.name == name for m in seen):
            raise TraceError(f"{where}: phase {name} appears twice")
        return PhaseMarker(name, steps, line)

    def _events(self, marker: PhaseMarker) -> Iterator[RecordedEvent]:
        for index in range(marker.steps):
            item = self._read()
            if item is None:
                raise TraceError(
                    f"{self.path}: truncated: phase {marker.name} (line {marker.line}) declares "
                    f"{marker.steps} steps, the file ends after {index}"
                )
            line, value = item
            if "phase" in value or "end" in value:
                raise TraceError(
                    f"{self.where(line)}: phase {marker.name} (line {marker.line}) declares "
                    f"{marker.steps} steps but holds {index}"
                )
            fields = _Fields(value, self.where(line))
            for key in ("actor", "kind", "target"):
                fields.text(key)
            fields.integer("step")
            yield RecordedEvent(line, index, value)

    def _check_end(
        self, line: int, value: dict[str, Any], seen: list[PhaseMarker], total: int
    ) -> None:
        expected = {"end": True, "phases": len(seen), "steps": total}
        if value != expected:
            raise TraceError(
                f"{self.where(line)}: the end line says {_short(value)}, the file holds "
                f"{len(seen)} phases and {total} steps"
            )
        extra = self._read()
        if extra is not None:
            raise TraceError(f"{self.where(extra[0])}: a line after the end line")

    def _read(self) -> tuple[int, dict[str, Any]] | None:
        """The next non-blank line as a JSON object, or None at the end of the file."""
        while True:
            try:
                text = self._file.readline(MAX_LINE_CHARS + 1)
            except UnicodeDecodeError:
                raise TraceError(f"{self.where(self._line + 1)}: not UTF-8 text") from None
            except OSError as error:
                raise TraceError(f"cannot read trace {self.path}: {error.strerror}") from None
            if not text:
                return None
            self._line += 1
            if len(text) > MAX_LINE_CHARS:
                raise TraceError(
                    f"{self.where(self._line)}: a line longer than {MAX_LINE_CHARS} characters"
                )
            if text.strip():
                break
        where = self.where(self._line)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            if not text.endswith("\n"):
                raise TraceError(f"{where}: truncated: the last line is cut short") from None
            raise TraceError(f"{where}: not JSON ({error.msg})") from None
        except (ValueError, RecursionError):
            raise TraceError(f"{where}: not JSON a trace can hold") from None
        if not isinstance(value, dict):
            raise TraceError(f"{where}: expected a JSON object")
        return self._line, value


class _Fields:
    """Typed access to a line's fields; a missing or mistyped one names the line."""

    def __init__(self, value: Mapping[str, Any], where: str) -> None:
        self.value = value
        self.where = where

    def _get(self, key: str) -> Any:
        try:
            return self.value[key]
        except KeyError:
            raise TraceError(f"{self.where}: missing field {key!r}") from None

    def _wrong(self, key: str, what: str) -> TraceError:
        return TraceError(f"{self.where}: {key} must be {what}, got {_short(self.value[key])}")

    def text(self, key: str) -> str:
        found = self._get(key)
        if not isinstance(found, str):
            raise self._wrong(key, "a string")
        return found

    def integer(self, key: str) -> int:
        found = self._get(key)
        if not isinstance(found, int) or isinstance(found, bool):
            raise self._wrong(key, "a whole number")
        return found

    def mapping(self, key: str) -> dict[str, Any]:
        found = self._get(key)
        if not isinstance(found, dict):
            raise self._wrong(key, "an object")
        return found

    def texts(self, key: str) -> list[str]:
        found = self._get(key)
        if not isinstance(found, list) or not all(isinstance(s, str) for s in found):
            raise self._wrong(key, "a list of strings")
        return found


# -- replaying -------------------------------------------------------------------------------


def check_parameters(reader: TraceReader, resolved: Mapping[str, Any]) -> None:
    """Every parameter the trace records resolves to the same value here from its overrides;
    otherwise the run rebuilt would not be the one recorded."""
    where = reader.where(reader.header_line)
    for name, value in reader.header.parameters.items():
        if name not in resolved:
            raise TraceError(f"{where}: parameter {name} is unknown here; {different_run(reader)}")
        if resolved[name] != value:
            raise TraceError(
                f"{where}: parameter {name} is {_short(value)} in the trace, "
                f"{_short(resolved[name])} here; {different_run(reader)}"
            )


def replay_event(simulation: Simulation, recorded: RecordedEvent, reader: TraceReader) -> Event:
    """Apply the recorded action and check that the step makes the recorded event."""
    try:
        event = simulation.step(recorded.action)  # refuses an action that is not enabled
    except InvalidParameterError:
        event = None
    if event is None:
        raise TraceError(
            f"{reader.where(recorded.line)}: {recorded.action} is not enabled at step "
            f"{simulation.step_count}; {different_run(reader)}"
        )
    check_event(recorded, event, reader)
    return event


def check_event(recorded: RecordedEvent, event: Event, reader: TraceReader) -> None:
    """The event equals the recorded one; otherwise the error names the first field that
    differs."""
    replayed = event.to_json()
    if replayed == recorded.data:
        return
    for key in [*recorded.data, *(k for k in replayed if k not in recorded.data)]:
        if recorded.data.get(key) != replayed.get(key):
            raise TraceError(
                f"{reader.where(recorded.line)}: step {recorded.index} replayed differently: "
                f"{key} recorded {_short(recorded.data.get(key))}, replayed "
                f"{_short(replayed.get(key))}; {different_run(reader)}"
            )


def replay_phase(
    simulation: Simulation, events: Iterator[RecordedEvent], reader: TraceReader
) -> None:
    """Replay a phase's recorded events on ``simulation`` (at the phase's step 0), the
    garbage collector paused as in a run (it would re-walk every snapshot)."""
    with collector_paused():
        for recorded in events:
            replay_event(simulation, recorded, reader)


def compare_phase(
    marker: PhaseMarker, events: Iterator[RecordedEvent], ran: Sequence[Event], reader: TraceReader
) -> None:
    """A phase run here already (one before the phase being loaded) against its record."""
    for recorded in events:
        if recorded.index >= len(ran):
            raise TraceError(
                f"{reader.where(recorded.line)}: phase {marker.name} ends after {len(ran)} "
                f"steps here, the trace records {marker.steps}; {different_run(reader)}"
            )
        check_event(recorded, ran[recorded.index], reader)
    if len(ran) != marker.steps:
        raise TraceError(
            f"{reader.where(marker.line)}: phase {marker.name} records {marker.steps} steps, "
            f"here it runs {len(ran)}; {different_run(reader)}"
        )


def check_step(marker: PhaseMarker, step: int | None) -> int:
    """The step of a phase to stop at: ``step``, within the recorded ones, or the last."""
    if step is None:
        return marker.steps
    if isinstance(step, bool) or not 0 <= step <= marker.steps:
        raise InvalidParameterError(
            f"step {step} is outside phase {marker.name}'s recorded steps 0 to {marker.steps}"
        )
    return step


def different_run(reader: TraceReader) -> str:
    """What a trace that does not replay here means, with the versions when they differ."""
    written = reader.header.written_by
    if written and written != __version__:
        return f"{DIFFERENT_RUN} (written by flinkstate {written}, this is {__version__})"
    return DIFFERENT_RUN


def _names(phases: Sequence[PhaseMarker]) -> str:
    return ", ".join(m.name for m in phases) or "none"


def _short(value: object, limit: int = 120) -> str:
    text = json.dumps(value, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."
