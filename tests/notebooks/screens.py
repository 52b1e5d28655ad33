"""What each notebook's exercises ask, and the cell that clicks them (tests/notebooks).

For each exercise: words of its question as the page shows them, and kernel code that sets the
widgets as the question asks and leaves ``shown``, the figures the screen then shows. ``CLICK``
runs them all in the kernel that ran the notebook, clicks each exercise's button and prints a
report after ``REPORT``.
"""

from __future__ import annotations

from dataclasses import dataclass

REPORT = "EXERCISE-REPORT "


@dataclass(frozen=True)
class Screen:
    """One exercise: words of its question as the page shows them (markup dropped), and
    kernel code that leaves ``shown``, the figures the screen shows once the widgets are set as
    the question asks."""

    question: str
    code: str


#: the notebook's tour widgets, found by the tour they show
TOURS = """
import gc as _gc
from flinkstate.widgets.tour import TourWidget as _TourWidget

def tour_at(name, title):
    tour = next(o for o in _gc.get_objects()
                if isinstance(o, _TourWidget) and o.tour.name == name)
    tour.show(next(n for n, s in enumerate(tour.tour.stops) if s.title == title))
    return tour

def plain(markup):
    return _html.unescape(_re.sub("<[^>]+>", "", markup))

def table_rows(markup):
    # the cells of an HTML table's body rows, as text (its styling left aside)
    body = markup.split("<tbody>", 1)[-1]
    return [[plain(cell) for cell in _re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in _re.findall(r"<tr>(.*?)</tr>", body)]

import html as _html
import re as _re
"""

SCREENS: dict[str, list[Screen]] = {
    "04-rescaling-in-flight-data.ipynb": [
        Screen(
            "Rescale keyBy from 4 to 8",
            """
explorer.partitioner.value = "HASH"
shown = []
for old, new in [(4, 8), (8, 4)]:
    explorer.old_parallelism.value, explorer.new_parallelism.value = old, new
    filtering = sum(1 for row in table_rows(explorer.summary.value) if row[-1] == "yes")
    shown.append(f"{old} -> {new}: {filtering} of {new}")
""",
        ),
        Screen(
            "Switch the exchange to rebalance()",
            """
explorer.partitioner.value = "REBALANCE"
shown = []
for old, new in [(4, 8), (8, 4)]:
    explorer.old_parallelism.value, explorer.new_parallelism.value = old, new
    filtering = sum(1 for row in table_rows(explorer.summary.value) if row[-1] == "yes")
    shown.append(f"{old} -> {new}: {filtering} of {new}")
    if old < new:
        idle = [int(row[0]) for row in table_rows(explorer.summary.value) if row[1] == "-"]
        shown.append(f"new subtasks {idle} read no input state")
""",
        ),
        Screen(
            "max par. to 4 and new par. to 7",
            """
explorer.partitioner.value = "HASH"
explorer.old_parallelism.value = 3
explorer.max_parallelism.value = 4
explorer.new_parallelism.value = 7
shown = [plain(explorer.message.value).removeprefix("Not applied: ")]
""",
        ),
        Screen(
            "choose forward()",
            """
explorer.max_parallelism.value = 128
explorer.partitioner.value = "FORWARD"
shown = [plain(explorer.summary.value)]
""",
        ),
        Screen(
            "which new counter drops the most",
            """
last = tour_at("rescaling-filtering", "Normal processing")
step, so_far = _re.search(r"running again at step (\\d+), and (\\d+) recovered",
                          plain(last.text.value)).groups()
shown = [f"drops the most, {filtered.max()} records",
         f"{upscale.filtered_records} are dropped in all", f"step {step}",
         f"has counted {so_far}"]
""",
        ),
        Screen(
            "In the Spark widget (checkpoint keyed)",
            """
rescaler.checkpoint.value = "keyed"
shown = []
for to in (4, 5):
    rescaler.to.value = to
    said = _re.sub(r"(?<=\\d),(?=\\d{3})", "", plain(rescaler.summary.value))
    read, times, moved, filtered_out, records = _re.search(
        r"(\\d+) bytes read back \\(([\\d.]+) x the checkpoint\\), (\\d+) by another subtask; "
        r"(\\d+) of (\\d+) records filtered out", said).groups()
    shown.append(f"at {to}, {read} bytes are read back ({times} x the checkpoint), {moved} "
                 f"by another subtask, and {filtered_out} of {records} records are filtered")
""",
        ),
    ],
    "05-restarting-from-a-checkpoint.ipynb": [
        Screen(
            "recovers more bytes than the checkpoint",
            """
s = run.summary()
shown = [f"{s['recovered_bytes']} bytes recovered against {s['checkpoint_bytes']} in flight: "
         f"{s['recovered_bytes'] - s['checkpoint_bytes']} more", f"{s['filtered_records']} in all"]
""",
        ),
        Screen(
            "why does 7 -> 7 filter nothing",
            """
table = {row["counters"]: row for row in rows}
shown = [f"7 -> 7**: each new counter reads one old counter".replace("**", ""),
         f"{table['7 -> 7']['records filtered out']} records filtered out"]
shown += [f"old counter {o} " for o in table["7 -> 2"]["old counters read by more than one"]]
shown.append(f"{table['7 -> 2']['records filtered out']} filtered out")
""",
        ),
        Screen(
            "which settings let the restart's first checkpoint complete",
            """
shown = []
for r in held.itertuples():
    if r.first_checkpoint_step == r.first_checkpoint_step:  # not NaN: it completed
        shown.append(f"{r.blocked_priority} and {r.slots_per_tm} slot(s) per TaskManager "
                     f"(step {int(r.first_checkpoint_step)})")
    else:
        shown.append(f"{r.blocked_priority} and {r.slots_per_tm} slot(s) ({r.outcome})")
""",
        ),
        Screen(
            "which record sizes deadlock",
            """
shown = [f"re:^E \\\\+ L = {r.buffers_per_channel} \\\\+ {r.floating_buffers} = "
         f"{r.buffers_per_channel + r.floating_buffers}; {r.record_size}-byte records .*, "
         f"{r.outcome}$" for r in budget.itertuples()]
shown.append("Every run ends as the formula predicts.")
""",
        ),
    ],
    "06-checkpointing-during-recovery.ipynb": [
        Screen(
            "with classic recovery and with v2",
            """
seed0 = generations[generations["seed"] == 0].drop_duplicates("effective_generation")
shown = []
for r in seed0[seed0["effective_generation"].isin(["classic", "v2"])].itertuples():
    first = ("no checkpoint completes" if r.first_checkpoint_step != r.first_checkpoint_step
             else f"the first checkpoint completes at step {int(r.first_checkpoint_step)}")
    shown.append(f"{r.effective_generation}: every task runs from step {r.resumed_step}, "
                 f"and {first}")
""",
        ),
        Screen(
            "which counter's fetch spilled the most",
            """
top = drainers.sort_values("bytes", ascending=False).iloc[0]
shown = [f"{top['subtask']} spilled the most: {top['bytes']} bytes in "
         f"{top['spill files']} file(s) and {top['segments']} segments"]
shown += list(drainers.loc[drainers["bytes"] == 0, "subtask"])
""",
        ),
        Screen(
            "hover the drainer of the counter",
            """
stop = tour_at("checkpointing-during-recovery", "A checkpoint meets the drain")
world = stop.stepper.world
ref = world.actor(stop.stepper.simulation.events[-1].action.actor)
drainer = world.drainers[world.tasks[ref.task].name]
place = next(p for p in stop.stepper.canvas.scene["places"] if p["id"] == drainer.name)
segment, of, done, size = _re.search(r"committed: segment (\\d+) of (\\d+), ([\\d,]+) of "
                                     r"([\\d,]+) bytes", plain(place["hover"])).groups()
shown = [f"step {stop.stepper.current_step} {ref.task} takes",
         f"segment {segment} of {of}, with {done} of that segment's {size} bytes"]
""",
        ),
        Screen(
            "which tasks decline which checkpoints",
            """
shown = [f"checkpoint {f.checkpoint} by {f.task} at step {f.step}"
         for f in early.world.checkpoints.failures]
shown += [f.reason.name for f in early.world.checkpoints.failures]
first = early.world.checkpoints.completed[0]
shown.append(f"Checkpoint {first.id} completes at step {first.completed_at}")
""",
        ),
        Screen(
            "when is the first checkpoint of each restart triggered",
            """
before = aligned["aligned-checkpoint-during-recovery"]
after = aligned["aligned-restart-recovers-classic"]
(failure,) = before.world.checkpoints.failures
shown = [f"RUNNING from step {before.resumed_step}",
         f"triggered at step {first_trigger(before)}",
         f"expires at step {failure.step} (CHECKPOINT_EXPIRED, counted)",
         f"recovers the {after.world.effective_generation.value} way",
         f"no task is RUNNING before step {after.resumed_step}"]
assert first_trigger(after) is None
""",
        ),
        Screen(
            "recovery trigger become NO_OP in each run",
            """
shown = []
for label in trigger_summary.columns:
    row = trigger_summary[label]
    idle = row["trigger NO_OP from step"]
    assert trigger_steps.loc[idle, (label, "trigger")] == "NO_OP"  # the step table agrees
    checkpoint, step = _re.fullmatch(r"checkpoint (\\d+) at step (\\d+)",
                                     row["first checkpoint after the drain"]).groups()
    shown += [f"{label}", f"the drain ends at step {row['drain finished at step']}",
              f"NO_OP from step {idle}, with {row['its channels in recovery then']} channels "
              "still in recovery",
              f"Checkpoint {checkpoint} reaches {row['task followed']} at step {step}",
              f"finds the trigger {row['trigger it finds']} with "
              f"{row['channels in recovery it finds']} channels in recovery",
              f"The run ends {row['outcome']}"]
    if row["declined as"] == "-":
        shown.append(f"completes at step {row['completes at step']}")
    else:
        shown.append(f"declined as {row['declined as']}: {row['what happens']}")
""",
        ),
        Screen(
            "which record does counter[0] drop as late",
            """
before, after = watermark_table["before the fix"], watermark_table["after the fix"]
channel = "that channel's watermark reaches the record's timestamp at step"
counter = "the task's watermark reaches it at step"
(late,) = merged_timelines["merged-watermarks-passed-through"].late  # the red cross's hover
shown = [f"drops record {late.record} (timestamp {late.timestamp}) as late at step {late.step}",
         f"behind its watermark {watermark_text(late.watermark)}",
         f"as {before['it comes through']}",
         f"merges {before['old channels merged in that channel']}",
         f"had reached {late.timestamp} at step {before[channel]}",
         f"followed at step {before[counter]}",
         f"read at step {after['the task reads the record at step']}",
         f"has not reached {late.timestamp} yet"]
assert after[channel] == "not before the read"
""",
        ),
        Screen(
            "copies of one recovered record",
            """
shown = [f"holds {len(copies)} recovered records, each at most {max(copies.values())} time",
         f"up to {max(bad.values())} times ({sum(bad.values())} copies of {len(bad)} records)",
         ", ".join(sorted({v.invariant for v in result.violations}))]
""",
        ),
        Screen(
            "set spill_segment_size to 2000",
            """
from flinkstate.widgets.comparison import metrics_table
panel.sides[1].controls["spill_segment_size"].value = 2000
assert panel.compare()
metrics = metrics_table(panel.runs, panel.labels)
spilled = metrics.loc["bytes spilled to disk", panel.labels[1]]
files = metrics.loc["spill files written", panel.labels[1]]
before = generations[(generations["effective_generation"] == "v2")
                     & (generations["seed"] == 0)].iloc[0]["spilled_bytes"]
shown = [f"{spilled} bytes spilled against {before}: {spilled - before} more, in {files} spill"]
""",
        ),
    ],
    "08-exploring-every-interleaving.ipynb": [
        Screen(
            "How many distinct states had the explorer stored",
            """
header, row = explorer.findings_table.children[:5], explorer.findings_table.children[5:10]
columns = [plain(cell.value) for cell in header]
cells = dict(zip(columns, [plain(getattr(cell, "value", "")) for cell in row]))
shown = [f"stored {cells['distinct states when found']} distinct states",
         f"{cells['name']}",
         f"takes {cells['depth']} steps",
         f"Of the {len(random_runs)} random runs, {int(random_runs['broke an invariant'].sum())} "
         "broke an invariant"]
""",
        ),
        Screen(
            "which subtasks did the plan of checkpoint 1 wait for",
            """
stepper = explorer.stepper
events = plain(stepper.recent.value)
waits, counted = _re.search(r"manual checkpoint 1 planned: triggered at [^;]*; waits for "
                            r"([^;]*); counted as finished: (.*?)(?:\\d+ task|$)",
                            events).groups()
badge = plain(stepper.badge.value)
failed = _re.search(r"without the state of (\\S+) \\((\\w+)\\)", badge).groups()
shown = [f"waits for {waits.strip()}", f"counts {counted.strip()} as finished",
         f"{failed[0]} is {failed[1]}", f"completes at step {stepper.current_step}"]
""",
        ),
    ],
    "07-inspect-a-real-checkpoint.ipynb": [
        Screen(
            "For the four keyed-hash-p2-p4 checkpoints",
            """
shown = []
for name, r in six.iterrows():
    if name.startswith("keyed-hash-p2-p4"):
        shown.append(f"{name} (inline threshold {r['inline threshold']}, file merging "
                     f"{r['file merging']}): {r['handles inline']} handles inline")
        shown.append(f"{r['handles in files']} in {r['files']} file(s)")
""",
        ),
        Screen(
            "largest chunk of input state in a file",
            """
big = six.loc["bigrecord-10k-keyed-p2-p3"]
shown = [f"largest input chunk in a file is {big['largest input chunk in a file']} bytes",
         f"no output chunk is longer than {big['largest output chunk in a file']} bytes"]
""",
        ),
        Screen(
            "has a rebalance exchange and a forward one",
            """
r = six.loc["rebalance-forward-p2-p3"]
shown = [f"Only {', '.join(r['exchanges with in-flight data'])} carries in-flight data: "
         f"{r['input bytes']} bytes of input state and {r['output bytes']} of output state"]
""",
        ),
        Screen(
            "at which new parallelisms is no record filtered out",
            """
trace = next(t for t in rescaler.sweep.data if t.name.endswith(": filtered records"))
shown = ["no record is filtered out at "
         + ", ".join(str(int(x)) for x, y in zip(trace.x, trace.y) if y == 0) + "."]
""",
        ),
        Screen(
            "which new subtask of slow-counter keeps the most recovered records",
            """
# the forecast's table: one row per new subtask, its kept and filtered records
table = pd.DataFrame([{"new subtask": s.subtask, "records read": s.records, "kept": s.processed,
                       "filtered": s.dropped} for s in forecast.subtasks])
top = table.sort_values("kept", ascending=False).iloc[0]
shown = [f"New subtask {top['new subtask']} keeps the most: {top['kept']} of the "
         f"{top['records read']} records it reads, dropping {top['filtered']}"]
""",
        ),
    ],
}

CLICK = """
import json as _json
from flinkstate.widgets.exercise import Exercise as _Exercise

_exercises = [o for o in _gc.get_objects() if isinstance(o, _Exercise)]
_report = {"exercises": len(_exercises), "checked": []}
for _question, _code in SCREENS:
    _found = [e for e in _exercises if _question in plain(e.question.value)]
    assert len(_found) == 1, f"{len(_found)} exercises ask {_question!r}"
    _space = dict(globals())  # one namespace: what the notebook defined, and what the code sets
    exec(_code, _space)
    _found[0].button.click()
    _report["checked"].append({
        "question": _question,
        "shown": [str(figure) for figure in _space["shown"]],
        "answer": plain(_found[0].shown.value),
        "button": _found[0].button.description,
    })
print(REPORT + _json.dumps(_report))
"""
