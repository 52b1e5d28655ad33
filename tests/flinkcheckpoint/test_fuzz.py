"""The reader under the seeded fuzzer (``tests/flinkcheckpoint/fuzz/``): every broken
checkpoint, read by ``inspect --json``, ``inspect --export`` and ``forecast``, ends in one line
naming the problem or in an answer that is right or warned; ``make fuzz`` runs the same
harness longer."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flinkstate.flinkcheckpoint.metadata import read_metadata
from tests.flinkcheckpoint.fuzz import (
    FAMILIES,
    MIXED,
    OUTCOMES,
    READS,
    SPECIAL_KINDS,
    committed_checkpoints,
    copy_variant,
    mutations,
    run_mutations,
    sample,
)
from tests.flinkcheckpoint.fuzz.damage import read_places
from tests.flinkcheckpoint.fuzz.reads import classify
from tests.flinkcheckpoint.fuzz.stream import special_places

#: mutations of each family the suite reads (the three reads each): a few of every family
EACH = 3


def test_the_mixed_stream_meets_every_family_and_checkpoint() -> None:
    seen = list(itertools.islice(mutations(committed_checkpoints(), seed=1), 300))
    assert {m.family for m in seen} == set(MIXED) == set(FAMILIES) - {"repoint"}
    assert {m.checkpoint for m in seen} == set(committed_checkpoints())


def test_the_same_seed_breaks_the_same_way() -> None:
    for families in (MIXED, {"repoint": 1.0}, {"job-config": 1.0}):
        first = mutations(committed_checkpoints(), 7, families)
        second = mutations(committed_checkpoints(), 7, families)
        assert [str(next(first)) for _ in range(40)] == [str(next(second)) for _ in range(40)]


def test_special_files_go_in_every_place_a_file_is_read() -> None:
    checkpoints = committed_checkpoints()
    count = special_places(checkpoints)
    stream = mutations(checkpoints, 3, {"special": 1.0})
    met = {str(next(stream)) for _ in range(count)}
    assert len(met) == count  # each place and kind once
    for chk in checkpoints:
        places = [str(p) for p in read_places(chk)]
        assert places[0].endswith("_metadata")
        assert places[-1] == "job-config.txt"
        for place, kind in itertools.product(places, SPECIAL_KINDS):
            assert f"{chk.parents[1].name}: special: {place} replaced by {kind}" in met


@pytest.mark.parametrize("family", ["job-config", "repoint", "field", "chunk"])
def test_every_mutation_applies_to_a_copy(family: str, tmp_path: Path) -> None:
    stream = mutations(committed_checkpoints(), 5, {family: 1.0})
    for number, mutation in enumerate(itertools.islice(stream, 30)):
        root = tmp_path / str(number)
        chk = copy_variant(mutation.checkpoint, root)
        mutation.apply(root)
        if family == "repoint":  # only the offsets changed: _metadata still parses
            read_metadata(chk)


def _answer(status: Any, stdout: str = "", stderr: str = "", **more: Any) -> dict[str, Any]:
    return {"status": status, "stdout": stdout, "stderr": stderr, **more}


def test_an_export_that_fails_must_leave_nothing() -> None:
    expected: dict[str, Any] = {"figures": {}}
    line = "flinkstate: error: /x: at byte 4: expected ..."
    root = Path("/nowhere")
    assert classify("export", _answer(2, stderr=line, left=[]), expected, root)[0] == "error"
    left = _answer(2, stderr=line, left=[".dataset.abc"])
    assert classify("export", left, expected, root)[0] == "partial"
    whole = _answer(0, stdout="{}", left=[], dataset=None)
    assert classify("export", whole, expected, root)[0] == "partial"
    assert classify("json", _answer(2, stderr=line + "\nmore"), expected, root)[0] == "traceback"


def test_a_forecast_that_differs_is_silent_unless_inspect_reads_otherwise() -> None:
    expected = {"figures": {"steps": 10, "settings": {}, "left_out": 0}}
    root = Path("/nowhere")
    forecast = (
        '{{"checkpoint": "{}", "steps": {}, "notes": {}, "settings": [], "left_out_operators": []}}'
    )
    same = _answer(0, stdout=forecast.format("d", 10, "[]"))
    assert classify("forecast", same, expected, root)[0] == "answer"
    other = _answer(1, stdout=forecast.format("c", 9, '["a"]'))
    assert classify("forecast", other, expected, root)[0] == "silent"  # a note is no warning
    moved = classify("forecast", other, expected, root, otherwise="channels")
    assert moved == ("answer", "a checkpoint inspect reads otherwise (channels)")


@pytest.mark.slow
def test_every_family_ends_in_a_clean_error_or_a_right_answer() -> None:
    """A few mutations of every family, each read three ways: no traceback, hang, memory
    blow-up, partial export or silent change of figures."""
    chosen = sample(committed_checkpoints(), seed=1, each=EACH)
    assert [m.family for m in chosen] == [f for f in FAMILIES for _ in range(EACH)]
    results = run_mutations(chosen, seconds=20.0)
    assert all([r[0] for r in result.reads] == list(READS) for result in results)
    bad = [
        f"{read}: {outcome}: {result.mutation}: {detail}"
        for result in results
        for read, outcome, detail in result.failures
    ]
    assert not bad, "\n".join(bad[:10])
    outcomes = Counter(outcome for result in results for _, outcome, _ in result.reads)
    assert set(outcomes) <= set(OUTCOMES)
    assert outcomes["error"] >= len(results)  # the mutations do break things
