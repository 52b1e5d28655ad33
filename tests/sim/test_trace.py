"""Traces on the toy model of test_core: the format, reading line by line, and every way a
file can be refused, each naming the file and the line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.sim import Event, FixedPriority, RoundRobin, Simulation
from flinkstate.sim.trace import (
    DIFFERENT_RUN,
    MAX_LINE_CHARS,
    PhaseMarker,
    TraceError,
    TraceHeader,
    TraceReader,
    check_step,
    compare_phase,
    replay_phase,
    scan_trace,
    write_trace,
)
from tests.sim.test_core import Locks

HEADER = TraceHeader("toy", "locks", 0, "round-robin", {"rounds": 3}, {"rounds": 3, "crossed": 0})


def _runs() -> tuple[Simulation, Simulation]:
    first = Simulation(lambda: Locks(crossed=False, rounds=3), RoundRobin())
    first.run()
    second = Simulation(lambda: Locks(crossed=False, rounds=2), FixedPriority())
    second.run()
    return first, second


def _written(tmp_path: Path) -> tuple[Path, Simulation, Simulation]:
    first, second = _runs()
    path = tmp_path / "t.jsonl"
    assert write_trace(path, HEADER, [("one", first.events), ("two", second.events)]) == (
        first.step_count + second.step_count
    )
    return path, first, second


def test_the_format_line_by_line(tmp_path: Path) -> None:
    path, first, second = _written(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {
        "format": "flinkstate-trace",
        "version": 2,
        "flinkstate": HEADER.written_by,
        "kind": "toy",
        "name": "locks",
        "seed": 0,
        "scheduler": "round-robin",
        "max_steps": None,
        "faults": [],
        "overrides": {"rounds": 3},
        "parameters": {"rounds": 3, "crossed": 0},
    }
    assert lines[1] == {"phase": "one", "steps": first.step_count}
    assert lines[2 : 2 + first.step_count] == [e.to_json() for e in first.events]
    assert lines[2 + first.step_count] == {"phase": "two", "steps": second.step_count}
    total = first.step_count + second.step_count
    assert lines[-1] == {"end": True, "phases": 2, "steps": total}
    assert len(lines) == total + 4


def test_a_trace_scans_to_its_phases_and_replays(tmp_path: Path) -> None:
    path, first, second = _written(tmp_path)
    summary = scan_trace(path)
    assert summary.version == 2
    assert summary.header == HEADER
    assert summary.phases == (
        PhaseMarker("one", first.step_count, 2),
        PhaseMarker("two", second.step_count, 3 + first.step_count),
    )
    assert summary.phase("two").steps == second.step_count
    with pytest.raises(TraceError, match=r"has no phase 'three'; it has one, two"):
        summary.phase("three")
    again = Simulation(lambda: Locks(crossed=False, rounds=3), RoundRobin())
    with TraceReader(path) as reader:
        for marker, events in reader.phases():
            if marker.name == "one":
                replay_phase(again, events, reader)
            else:
                compare_phase(marker, events, second.events, reader)
    assert again.model.fingerprint() == first.model.fingerprint()


def _replay_all(path: Path, simulation: Simulation) -> str:
    """The refusal met replaying every phase of ``path`` on ``simulation``."""

    def replay() -> None:
        with TraceReader(path) as reader:
            for _marker, events in reader.phases():
                replay_phase(simulation, events, reader)

    return _refusal_of(replay)


def _compare_two(path: Path, ran: list[Event]) -> str:
    """The refusal met comparing phase two of ``path`` with ``ran``."""

    def compare() -> None:
        with TraceReader(path) as reader:
            for marker, events in reader.phases():
                if marker.name == "two":
                    compare_phase(marker, events, ran, reader)

    return _refusal_of(compare)


def _refusal_of(call: Callable[[], None]) -> str:
    with pytest.raises(TraceError) as error:
        call()
    return str(error.value)


def test_a_different_run_is_named_at_the_line_that_differs(tmp_path: Path) -> None:
    path, first, second = _written(tmp_path)
    other = Simulation(lambda: Locks(crossed=False, rounds=3), FixedPriority())
    other.step()
    assert _replay_all(path, other) == (
        f"{path}:3: w0: take A is not enabled at step 1; {DIFFERENT_RUN}"
    )
    _edit(path, 4, {"note": "edited"})
    again = Simulation(lambda: Locks(crossed=False, rounds=3), RoundRobin())
    assert _replay_all(path, again) == (
        f'{path}:5: step 2 replayed differently: note recorded "edited", replayed ""; '
        f"{DIFFERENT_RUN}"
    )
    last = 3 + first.step_count + second.step_count
    assert _compare_two(path, second.events[:-1]).startswith(
        f"{path}:{last}: phase two ends after {second.step_count - 1} steps here"
    )
    assert _compare_two(path, [*second.events, second.events[0]]).startswith(
        f"{path}:{3 + first.step_count}: phase two records {second.step_count} steps, here it "
        f"runs {second.step_count + 1}"
    )


def test_a_step_is_checked_against_the_phase() -> None:
    marker = PhaseMarker("one", 10, 2)
    assert check_step(marker, None) == 10
    assert check_step(marker, 0) == 0
    for step in (-1, 11):
        with pytest.raises(InvalidParameterError, match=r"outside phase one's recorded steps"):
            check_step(marker, step)


def test_phase_names_must_be_distinct(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="distinct"):
        write_trace(tmp_path / "t.jsonl", HEADER, [("one", []), ("one", [])])
    assert list(tmp_path.iterdir()) == []


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def _edit(path: Path, index: int, change: dict[str, Any]) -> None:
    lines = _lines(path)
    lines[index] = json.dumps({**json.loads(lines[index]), **change}) + "\n"
    path.write_text("".join(lines))


def _refusal(path: Path) -> str:
    with pytest.raises(TraceError) as error:
        scan_trace(path)
    message = str(error.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_bad_headers_are_refused(tmp_path: Path) -> None:
    path, _, _ = _written(tmp_path)
    original = path.read_text()
    for change, expected in [
        ({"format": "other"}, ":1: not a flinkstate-trace file"),
        ({"version": 3}, ":1: trace version 3; this flinkstate reads versions 1 and 2"),
        ({"version": True}, ":1: trace version true"),
        ({"seed": "0"}, ':1: seed must be a whole number, got "0"'),
        ({"overrides": []}, ":1: overrides must be an object"),
        ({"faults": [1]}, ":1: faults must be a list of strings"),
        ({"max_steps": 1.5}, ":1: max_steps must be a whole number"),
    ]:
        path.write_text(original)
        _edit(path, 0, change)
        assert expected in _refusal(path)
    path.write_text(original.replace('"kind":"toy",', "", 1))
    assert ":1: missing field 'kind'" in _refusal(path)


def test_files_that_are_no_traces_are_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert "is empty" in _refusal(empty)
    assert "cannot read trace" in _refusal(tmp_path / "missing.jsonl")
    assert "not a regular file" in _refusal(tmp_path)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage\n")
    assert "binary.jsonl:1: not UTF-8 text" in _refusal(binary)
    text = tmp_path / "text.jsonl"
    text.write_text("Linux version 6.1\n")
    assert "text.jsonl:1: not JSON" in _refusal(text)
    array = tmp_path / "array.jsonl"
    array.write_text("[1, 2]\n")
    assert "array.jsonl:1: expected a JSON object" in _refusal(array)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert "deep.jsonl:1: not JSON" in _refusal(deep)


def test_bad_lines_are_named(tmp_path: Path) -> None:
    path, first, _ = _written(tmp_path)
    original = _lines(path)
    cases: list[tuple[list[str], str]] = [
        ([*original[:4], "not json\n", *original[5:]], ":5: not JSON"),
        ([*original[:4], "{}\n", *original[5:]], ":5: missing field 'actor'"),
        (
            [*original[:4], original[4].replace('"actor":"w', '"actor":1,"x":"w'), *original[5:]],
            ":5: actor must be a string",
        ),
        ([original[0], *original[2:]], ":2: an event before any phase line"),
        ([*original[:3], '{"phase": "one", "steps": 1}\n', *original[3:]], ":4: phase one"),
        ([*original[:1], '{"phase": "", "steps": 1}\n', *original[2:]], ":2: a phase needs"),
        ([*original[:1], '{"hello": 1}\n', *original[2:]], ":2: expected a phase line"),
        ([*original, "{}\n"], f":{len(original) + 1}: a line after the end line"),
        (
            [*original[:-1], '{"end": true, "phases": 2, "steps": 0}\n'],
            f":{len(original)}: the end line says",
        ),
    ]
    for lines, expected in cases:
        path.write_text("".join(lines))
        assert expected in _refusal(path), expected
    path.write_text("".join(original).replace('"phase":"two"', '"phase":"one"'))
    assert f":{3 + first.step_count}: phase one appears twice" in _refusal(path)


def test_a_file_cut_short_anywhere_is_refused(tmp_path: Path) -> None:
    path, first, _ = _written(tmp_path)
    original = path.read_text()
    lines = _lines(path)
    # mid-line, at the end of a phase, and just before the end line
    cut = original[: len(original) // 2]
    path.write_text(cut)
    assert f":{cut.count(chr(10)) + 1}: truncated: the last line is cut short" in _refusal(path)
    path.write_text("".join(lines[: 2 + first.step_count]))
    assert "truncated: ends at line" in _refusal(path)
    path.write_text("".join(lines[: 2 + first.step_count - 1]))
    assert f"truncated: phase one (line 2) declares {first.step_count} steps" in _refusal(path)
    path.write_text("".join(lines[:-1]))
    assert "without its end line" in _refusal(path)


def test_a_phase_with_more_events_than_it_declares_is_refused(tmp_path: Path) -> None:
    path, first, _ = _written(tmp_path)
    lines = _lines(path)
    extra = 2 + first.step_count
    path.write_text("".join([*lines[:extra], lines[extra - 1], *lines[extra:]]))
    message = _refusal(path)
    assert f":{extra + 1}: an event beyond the {first.step_count} steps phase one declares" in (
        message
    )


def test_a_line_too_long_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path, _, _ = _written(tmp_path)
    lines = _lines(path)
    with path.open("w") as out:
        out.write(lines[0] + lines[1])
        out.write('{"step": 0, "note": "' + "x" * (4 * MAX_LINE_CHARS) + '"}\n')
    assert f":3: a line longer than {MAX_LINE_CHARS} characters" in _refusal(path)


def test_version_1_traces_still_read(tmp_path: Path) -> None:
    first, _ = _runs()
    path = tmp_path / "v1.jsonl"
    header = {
        "format": "flinkstate-trace",
        "version": 1,
        "scenario": "keyed",
        "parameters": {"records": 10},
        "scheduler": "round-robin",
        "seed": 0,
    }
    path.write_text(
        "\n".join(json.dumps(line) for line in [header, *(e.to_json() for e in first.events)])
        + "\n\n"
    )
    summary = scan_trace(path)
    assert summary.version == 1
    assert summary.header == TraceHeader(
        "topology", "keyed", 0, "round-robin", {"records": 10}, {"records": 10}, written_by=""
    )
    assert summary.phases == (PhaseMarker("run", first.step_count, 1),)
    again = Simulation(lambda: Locks(crossed=False, rounds=3), RoundRobin())
    with TraceReader(path) as reader:
        for _marker, events in reader.phases():
            replay_phase(again, events, reader)
    assert again.model.fingerprint() == first.model.fingerprint()
    path.write_text(path.read_text().replace('"version": 1', '"version": 1, "x": 0', 1) + "}\n")
    assert f"v1.jsonl:{first.step_count + 3}: not JSON" in _refusal(path)
