"""Explore every interleaving of a scenario's restart (or its job, or a topology's run) from a
notebook, and step through what it finds.

A seeded run follows one interleaving of the actors' actions; the explorer
(:mod:`flinkstate.sim.explore`) follows all of them within bounds. The widget takes the
subject, its parameters (the controls the recovery stepper uses), faults to put back, the
strategy and the bounds; *run* explores in the background, so the notebook stays responsive,
a progress line counts the states as they come, and *stop* ends the exploration. The verdict
comes in one sentence, then a row per violation and deadlock found; *open in stepper* writes
that counterexample as a run's trace (the mechanism ``flinkstate explore --trace-dir`` uses,
:mod:`flinkstate.lab.counterexample`) and loads it into a
:class:`~flinkstate.widgets.recovery_stepper.RecoveryStepper` under the results, at the step
where it goes wrong, whose back and step buttons then follow the counterexample's actions.

A value out of range is one line in the widget, never a traceback, and nothing runs.
"""

from __future__ import annotations

import html
import shutil
import tempfile
import threading
import weakref
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from flinkstate.catalogue.scenarios import SCENARIOS, get_scenario
from flinkstate.catalogue.topologies import CATALOGUE, topology
from flinkstate.errors import FlinkstateError, InvalidParameterError
from flinkstate.lab.counterexample import (
    DEFAULT_MAX_STATES,
    ExplorationSubject,
    SubjectKind,
    exploration_subject,
    failing_step,
    seconds_bound,
    trace_file_names,
    whole_bound,
)
from flinkstate.lab.scenario_run import PHASES
from flinkstate.run_rules import SEED
from flinkstate.runtime.options import FAULTS, Fault
from flinkstate.sim.explore import (
    Bounds,
    ExplorationResult,
    PartialOrder,
    Progress,
    Strategy,
    default_memory_budget,
    explore,
    memory_bound,
)
from flinkstate.widgets.controls import (
    ParameterControls,
    icon_button,
    refusal,
    refused_no_choice,
)
from flinkstate.widgets.recovery_stepper import RecoveryStepper

#: a subject as the picker holds it: what its name names, and the name
Pick = tuple[SubjectKind, str]
#: the columns of the findings' table, the button's last
COLUMNS = ("kind", "name", "depth", "distinct states when found", "")
_GRID = "90px minmax(200px, 1fr) 60px 110px auto"


class _Stopped(Exception):
    """The stop button was pressed while the start was still being prepared."""


@dataclass(frozen=True)
class _Request:
    """Everything one exploration runs with, checked before it starts."""

    pick: Pick
    phase: str | None
    seed: int
    overrides: Mapping[str, object]
    faults: frozenset[Fault]
    strategy: Strategy
    partial_order: PartialOrder
    bounds: Bounds


#: what an option does, in one sentence shown beside it
OPTION_SAID = {
    "faults": "Faults put a known bug back into the model on purpose; none picked explores the "
    "code as it is.",
    "reduction": "Sleep sets skip a second order of two independent steps already explored: "
    "fewer states, the same findings.",
}


class InterleavingExplorer:
    """Subject, parameters, faults, strategy and bounds; run and stop; progress; the verdict
    and a row per finding, each opening in a recovery stepper under the results."""

    def __init__(
        self,
        subject: str = "selective-reading-all-gates",
        *,
        overrides: Mapping[str, object] | None = None,
        phase: str = "restart",
        seed: int = 0,
        faults: Collection[str] = (),
        strategy: str = Strategy.BFS.value,
        reduction: str = PartialOrder.SLEEP_SETS.value,
        max_states: int | None = DEFAULT_MAX_STATES,
        max_depth: int | None = None,
        time: float | None = None,
        walks: int | None = None,
        max_memory: str | None = None,
        background: bool = True,
    ) -> None:
        """The explorer's controls set to these values (refused where one is not valid), its
        result area empty. ``max_memory``: the memory budget as Flink writes memory sizes
        (``2gb``); None: the default (:func:`~flinkstate.sim.explore.default_memory_budget`)."""
        pick = _pick(subject)
        if phase not in PHASES:
            raise InvalidParameterError(f"phase must be one of {', '.join(PHASES)}, got {phase!r}")
        chosen = Fault.parse_all(faults)
        #: explore in a thread (the notebook stays responsive, stop works); False: in the call
        self.background = background
        self._subject_controls(pick, overrides, phase, seed, chosen)
        self._search_controls(strategy, reduction, max_states, max_depth, time, walks)
        self.max_memory = _bound_box(None, "max memory", f"{_default_budget()} if empty")
        if max_memory is not None:
            memory_bound(max_memory, "max_memory")
            self.max_memory.value = max_memory
        self.max_memory.tooltip = (
            "stop when the notebook's resident memory reaches this (512mb, 2gb): breadth first "
            "holds its whole frontier"
        )
        self._request()  # the seed and bounds held to run's rules: refused here, not later
        self._run_controls()
        self.result: ExplorationResult | None = None
        self.explored: ExplorationSubject | None = None
        self.stepper: RecoveryStepper | None = None
        self.open_buttons: list[widgets.Button] = []
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._folder: Path | None = None
        self.subject.observe(self._on_subject, names="value")
        self.phase.observe(
            lambda change: refused_no_choice(self.phase, change, self.message, "the phase"),
            names="value",
        )
        self.run_button.on_click(lambda _: self.run())
        self.stop_button.on_click(lambda _: self.stop())
        self._show_phase(pick)
        self._widget = widgets.VBox(
            [
                widgets.HBox([self.subject, self.seed]),
                self.phase,
                self.parameter_box,
                widgets.HBox(
                    [
                        widgets.VBox([self.faults, self.faults_said]),
                        widgets.VBox(
                            [self.strategy, self.reduction, self.reduction_said, self.walks]
                        ),
                    ]
                ),
                widgets.HBox([self.max_states, self.max_depth, self.time, self.max_memory]),
                widgets.HBox([self.run_button, self.stop_button, self.progress]),
                self.progress_line,
                self.message,
                self.verdict,
                self.findings_table,
                self.stepper_note,
                self.stepper_box,
            ]
        )

    def _subject_controls(
        self,
        pick: Pick,
        overrides: Mapping[str, object] | None,
        phase: str,
        seed: int,
        chosen: frozenset[Fault],
    ) -> None:
        """What is explored: the subject, the phase, the seed, its parameters and faults."""
        self.subject = widgets.Dropdown(
            options=_subject_options(),
            value=pick,
            description="explore",
            layout=widgets.Layout(width="auto", flex="1 1 auto", min_width="320px"),
        )
        self.phase = widgets.ToggleButtons(
            options=[("the restart", "restart"), ("the job before it", "job")],
            value=phase,
            description="from",
        )
        self.phase.tooltip = (
            "a scenario's restart (its job run to the first checkpoint, then restored), or "
            "its job from the start"
        )
        self.seed = widgets.IntText(value=seed, description="seed")
        self.seed.tooltip = "the keys, a scenario's run to its checkpoint, and the random walks"
        self.parameters = self._controls(pick, overrides)
        self.parameter_box = widgets.VBox([self.parameters.box])
        self.faults = widgets.SelectMultiple(
            options=sorted(FAULTS),
            value=tuple(sorted(chosen)),
            rows=4,
            description="faults",
        )
        self.faults.tooltip = (
            "bugs put back on purpose, each caught by an invariant (of a scenario: in the phase "
            "explored); ctrl-click picks several"
        )
        self.faults_said = _said(OPTION_SAID["faults"])

    def _search_controls(
        self,
        strategy: str,
        reduction: str,
        max_states: int | None,
        max_depth: int | None,
        time: float | None,
        walks: int | None,
    ) -> None:
        """How it is explored: the strategy, the reduction and the bounds."""
        self.strategy = widgets.Dropdown(
            options=[
                ("breadth first (shortest traces)", Strategy.BFS.value),
                ("depth first (little memory)", Strategy.DFS.value),
                ("random walks (sampling)", Strategy.RANDOM_WALK.value),
            ],
            value=Strategy.parse(strategy).value,
            description="strategy",
        )
        self.reduction = widgets.Dropdown(
            options=[
                ("sleep sets (partial-order reduction)", PartialOrder.SLEEP_SETS.value),
                ("none: every transition", PartialOrder.NONE.value),
            ],
            value=PartialOrder.parse(reduction).value,
            description="reduction",
        )
        self.reduction.tooltip = (
            "sleep sets leave out transitions into a state reached another way by independent "
            "actions: every state and finding is still reached"
        )
        self.reduction_said = _said(OPTION_SAID["reduction"])
        self.max_states = _bound_box(max_states, "max states", f"{DEFAULT_MAX_STATES:,} if empty")
        self.max_states.tooltip = "stop after this many distinct states (memory stays in hand)"
        self.max_depth = _bound_box(max_depth, "max depth", "no bound")
        self.max_depth.tooltip = "check states this many steps deep, go no deeper"
        self.time = _bound_box(time, "time (s)", "no bound")
        self.time.tooltip = "stop after this many seconds"
        self.walks = _bound_box(walks, "walks", "1000 if empty")
        self.walks.tooltip = "random walks only: how many"

    def _run_controls(self) -> None:
        """Run and stop, the progress, and the (empty) places of the verdict, the findings and
        the stepper a finding opens in."""
        self.run_button = icon_button("run", "play", "explore every interleaving")
        self.run_button.button_style = "primary"
        self.run_button.add_class("flinkstate-explore")
        self.stop_button = icon_button(
            "stop", "stop", "stop exploring (what was found so far is not kept)"
        )
        self.stop_button.disabled = True
        self.progress = widgets.IntProgress(
            value=0, min=0, max=1, description="states", layout=widgets.Layout(display="none")
        )
        self.progress_line = widgets.HTML()
        self.message = widgets.HTML()
        self.verdict = widgets.HTML()
        self.findings_table = widgets.GridBox(
            layout=widgets.Layout(grid_template_columns=_GRID, grid_gap="2px 12px")
        )
        self.stepper_note = widgets.HTML()
        self.stepper_box = widgets.VBox([])

    @property
    def widget(self) -> widgets.Widget:
        return self._widget

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- the subject ---------------------------------------------------------------------------

    @staticmethod
    def _controls(pick: Pick, overrides: Mapping[str, object] | None) -> ParameterControls:
        kind, name = pick
        item = get_scenario(name) if kind is SubjectKind.SCENARIO else topology(name)
        return ParameterControls(item, overrides)

    def _on_subject(self, change: dict[str, Any]) -> None:
        if refused_no_choice(self.subject, change, self.message):
            return
        self.parameters = self._controls(change["new"], None)
        self.parameter_box.children = [self.parameters.box]
        self._show_phase(change["new"])

    def _show_phase(self, pick: Pick) -> None:
        """A topology runs once: no phase to pick."""
        self.phase.layout.display = "" if pick[0] is SubjectKind.SCENARIO else "none"

    # -- exploring -----------------------------------------------------------------------------

    def run(self) -> bool:
        """Explore as the controls say: in the background (then True once it started; see
        :meth:`wait`), or here (True once it explored). A refused value runs nothing."""
        if self.running:
            self.message.value = refusal("Already exploring: stop it first.")
            return False
        try:
            request = self._request()
        except FlinkstateError as error:
            self.message.value = refusal(f"Not run: {error}")
            return False
        self.message.value = ""
        self._stop.clear()
        self._start(request)
        if not self.background:
            return self._explore(request)
        self._thread = threading.Thread(
            target=self._explore, args=(request,), name="flinkstate-explore", daemon=True
        )
        self._thread.start()
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for an exploration in the background to end; whether it has."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.running

    def stop(self) -> None:
        """End the exploration under way within a few hundredths of a second, keeping what it
        found so far (before it began: with nothing)."""
        self._stop.set()

    def _request(self) -> _Request:
        seed = SEED.check(self.seed.value)
        strategy = Strategy.parse(self.strategy.value)
        walks = whole_bound(_typed(self.walks), "walks")
        if walks is not None and strategy is not Strategy.RANDOM_WALK:
            raise InvalidParameterError("walks counts random walks: pick random walks to use it")
        bounds = Bounds(
            max_states=whole_bound(_typed(self.max_states), "max states", DEFAULT_MAX_STATES),
            max_depth=whole_bound(_typed(self.max_depth), "max depth"),
            time=seconds_bound(_typed(self.time), "time"),
            walks=walks,
            max_memory=memory_bound(_typed(self.max_memory), "max memory"),
        )
        pick: Pick = self.subject.value
        return _Request(
            pick,
            self.phase.value if pick[0] is SubjectKind.SCENARIO else None,
            seed,
            self.parameters.values(),
            Fault.parse_all(self.faults.value),
            strategy,
            PartialOrder.parse(self.reduction.value),
            bounds,
        )

    def _start(self, request: _Request) -> None:
        self.run_button.disabled = True
        self.stop_button.disabled = False
        self.result, self.explored = None, None
        self.verdict.value = ""
        self.findings_table.children = ()
        self.open_buttons = []
        self.progress.max = request.bounds.max_states or 1
        self.progress.value = 0
        self.progress.layout.display = ""
        self.progress_line.value = "<i>preparing the start…</i>"

    def _explore(self, request: _Request) -> bool:
        """The exploration itself (in the background thread, or here)."""
        try:
            subject = exploration_subject(
                request.pick[1],
                overrides=request.overrides,
                seed=request.seed,
                phase=request.phase,
                faults=request.faults,
            )
            if self._stop.is_set():
                raise _Stopped
            result = explore(
                subject.initial,
                strategy=request.strategy,
                bounds=request.bounds,
                seed=request.seed,
                reduction=request.partial_order.reduction(),
                progress=self._report,
                stop=self._stop.is_set,  # ends it as a bound does: what was found is kept
            )
        except (_Stopped, KeyboardInterrupt):
            self.progress_line.value += " &mdash; <b>stopped</b>"
            self.message.value = refusal("Stopped before the exploration began.")
            return False
        except FlinkstateError as error:
            self.progress_line.value = ""
            self.message.value = refusal(f"Not run: {error}")
            return False
        finally:
            self.run_button.disabled = False
            self.stop_button.disabled = True
            self.progress.layout.display = "none"
        self.explored, self.result = subject, result
        self._report(Progress(result.states, result.distinct, result.depth, result.elapsed))
        self._show_result(subject, request, result)
        return True

    def _report(self, done: Progress) -> None:
        """The explorer's progress: the bar and the line."""
        self.progress.value = min(done.distinct, self.progress.max)
        self.progress_line.value = (
            f"{done.states:,} states reached &middot; {done.distinct:,} distinct &middot; "
            f"depth {done.depth} &middot; {done.per_second:,.0f} distinct states/s &middot; "
            f"{done.elapsed:.1f} s"
        )

    # -- the result ----------------------------------------------------------------------------

    def _show_result(
        self, subject: ExplorationSubject, request: _Request, result: ExplorationResult
    ) -> None:
        colour = "#d62728" if result.findings else "#2ca02c"
        how = result.strategy.value
        if (
            request.partial_order is PartialOrder.SLEEP_SETS
            and result.strategy is not Strategy.RANDOM_WALK
        ):
            how += ", sleep sets"  # as flinkstate explore says it
        self.verdict.value = (
            f"<div style='color:{colour}'><b>{html.escape(subject.describe())}</b>, "
            f"{html.escape(how)}, seed {request.seed}: "
            f"{html.escape(result.summary())}</div>"
            f"<div style='color:#4b5563'>{result.states:,} states reached (with repeats); "
            f"{result.finished:,} distinct states where the run finished</div>"
        )
        header = [widgets.HTML(f"<b>{html.escape(name)}</b>") for name in COLUMNS]
        cells: list[widgets.Widget] = []
        self.open_buttons = []
        for index, finding in enumerate(result.findings):
            button = icon_button(
                "open in stepper",
                "search",
                f"step through this counterexample from step {failing_step(finding)}, "
                "where it goes wrong",
            )
            button.add_class("flinkstate-open-counterexample")
            if subject.kind is SubjectKind.TOPOLOGY:
                button.disabled = True
                button.tooltip = (
                    "the stepper steps scenarios' runs: explore a scenario's job to step "
                    "through one, or write this trace with flinkstate explore --trace-dir"
                )
            button.on_click(lambda _, index=index: self.open(index))
            self.open_buttons.append(button)
            cells += [
                widgets.HTML(html.escape(finding.kind.value)),
                widgets.HTML(
                    f"<span title='{html.escape(finding.describe())}'>"
                    f"{html.escape(finding.name)}</span>"
                ),
                widgets.HTML(f"{finding.depth:,}"),
                widgets.HTML(f"{finding.found_after:,}"),
                button,
            ]
        self.findings_table.children = tuple(header + cells) if result.findings else ()

    def open(self, index: int) -> bool:
        """Show finding ``index`` in a recovery stepper under the results, at the step where it
        goes wrong: its trace is written and loaded as any run's trace is."""
        subject, result = self.explored, self.result
        if subject is None or result is None or not 0 <= index < len(result.findings):
            self.message.value = refusal("Nothing to open: run the explorer first.")
            return False
        if subject.kind is SubjectKind.TOPOLOGY:
            self.message.value = refusal(
                f"{subject.name} is a topology: the stepper steps scenarios' runs. Explore a "
                "scenario's job to step through a counterexample, or write its trace with "
                f"flinkstate explore {subject.name} --trace-dir DIR."
            )
            return False
        finding = result.findings[index]
        path = self._trace_folder() / trace_file_names(result.findings)[index]
        try:
            subject.write_trace(path, finding.trace)
        except FlinkstateError as error:
            self.message.value = refusal(f"Not opened: {error}")
            return False
        step = failing_step(finding)
        phase = subject.phase or "restart"
        if self.stepper is None:
            self.stepper = RecoveryStepper(
                subject.name, seed=subject.seed, overrides=subject.overrides, phase=phase
            )
        if not self.stepper.load_trace(path, step=step, phase=phase):
            self.message.value = self.stepper.message.value
            return False
        self.message.value = ""
        self.stepper_note.value = (
            f"<p><b>Counterexample {index + 1}</b>: {html.escape(finding.describe())}. "
            f"The stepper shows it at step <b>{step}</b>, where it goes wrong; back and step "
            f"follow its actions. Trace: <code>{html.escape(str(path))}</code></p>"
        )
        self.stepper_box.children = [self.stepper.widget]
        return True

    def _trace_folder(self) -> Path:
        """A folder of this widget's own for the traces it opens, removed with the widget."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="flinkstate-counterexamples-"))
            weakref.finalize(self, shutil.rmtree, self._folder, ignore_errors=True)
        return self._folder


def _pick(name: str) -> Pick:
    if name in SCENARIOS:
        return (SubjectKind.SCENARIO, name)
    if name in CATALOGUE:
        return (SubjectKind.TOPOLOGY, name)
    raise InvalidParameterError(
        f"unknown topology or scenario {name!r}; topologies: {', '.join(sorted(CATALOGUE))}; "
        f"scenarios: {', '.join(sorted(SCENARIOS))}"
    )


def _subject_options() -> list[tuple[str, Pick]]:
    """Every scenario by name and title, then every topology by name and shape."""
    scenarios = [
        (f"{s.name}: {s.title}", (SubjectKind.SCENARIO, s.name)) for s in SCENARIOS.values()
    ]
    topologies = [
        (f"topology {name}: {topology(name).description}", (SubjectKind.TOPOLOGY, name))
        for name in CATALOGUE
    ]
    return scenarios + topologies


def _bound_box(value: float | None, description: str, placeholder: str) -> widgets.Text:
    """A bound as text, so that empty can mean none (a number box cannot be empty)."""
    return widgets.Text(
        value="" if value is None else str(value),
        placeholder=placeholder,
        description=description,
        layout=widgets.Layout(width="220px"),
    )


def _said(words: str) -> widgets.HTML:
    """One short sentence shown under an option: what it does, without hovering."""
    return widgets.HTML(
        f"<span style='font-size:12px;color:#4b5563'>{html.escape(words)}</span>",
        layout=widgets.Layout(max_width="330px", margin="0 0 4px 90px"),
    )


def _default_budget() -> str:
    """The default memory budget as the box's placeholder says it (``4gb``)."""
    size = default_memory_budget()
    for unit, name in ((1024**3, "gb"), (1024**2, "mb")):
        if size % unit == 0:
            return f"{size // unit}{name}"
    return f"{size // 1024**2}mb"


def _typed(box: widgets.Text) -> str | None:
    text = str(box.value).strip()
    return text or None
