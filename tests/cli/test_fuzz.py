"""The command-line harness of ``make fuzz`` (:mod:`tests.cli.fuzz`): its catalogue names every
command and option, its classifier tells a clean refusal from a failure, and a small seeded
sample of every family runs without one."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from flinkstate.cli import build_parser
from tests.cli.fuzz import (
    FAILURES,
    REPOSITORY,
    Run,
    choose,
    classify,
    default_setup,
    run_all,
    table,
)
from tests.cli.fuzz_lines import BAD_INPUT, Line, catalogue, families

FAMILIES = ["numbers", "names", "paths", "repeats", "valid", "full-disk", "sigint", "sigterm"]


def test_the_catalogue_tries_every_command_and_option() -> None:
    """A command or option added to the parser without a line here fails this test."""
    lines = catalogue(0)
    assert families(lines) == FAMILIES
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in commands.choices.items():
        words = {w.split("=")[0] for line in lines if line.argv[:1] == (name,) for w in line.argv}
        untried = [
            action.option_strings
            for action in command._actions
            if action.option_strings
            and action.dest != "help"
            and not words.intersection(action.option_strings)
        ]
        assert words, f"no line runs {name}"
        assert untried == [], f"{name}: no line gives {untried}"
        for family in ("full-disk", "sigint", "sigterm"):
            assert any(line.family == family and line.command == name for line in lines)


def test_a_valid_line_never_expects_a_refusal() -> None:
    lines = catalogue(0)
    assert [line for line in lines if not line.bad and BAD_INPUT in line.statuses] == []
    assert all(line.statuses == (BAD_INPUT,) for line in lines if line.bad)


def test_a_seed_draws_other_values_and_samples() -> None:
    assert catalogue(0) == catalogue(0)
    assert catalogue(0) != catalogue(1)
    sample = choose(catalogue(3), 3, 2)
    assert [line.family for line in sample] == [f for f in FAMILIES for _ in range(2)]


def _run(
    status: int | None, err: str = "", out: str = "", new: frozenset[str] = frozenset()
) -> Run:
    return Run(status, out, err, 10 << 20, status is None, new, (), False, 1.0)


BAD = Line("numbers", "keygroup", ("keygroup", "42", "-p", "0"))
INTERRUPTED = Line("sigint", "generate", ("generate", "out"), False, (0,), ("out",), "SIGINT", 1)


@pytest.mark.parametrize(
    ("line", "run", "outcome"),
    [
        (BAD, _run(2, "flinkstate: error: parallelism 0 is out of range\n"), "error"),
        (BAD, _run(2, "usage: flinkstate keygroup [-h]\n        [KEY ...]\n"
                      "flinkstate keygroup: error: argument -p: invalid int value: 'x'\n"),
         "error"),
        (BAD, _run(0, out="42 Integer"), "exit0-on-bad"),
        (BAD, _run(1, "Traceback (most recent call last):\n  File...\nTypeError: x\n"),
         "traceback"),
        (BAD, _run(2, "ERROR:root:KeyboardInterrupt while sending command.\n"), "traceback"),
        (BAD, _run(None), "hang"),
        (BAD, _run(1, "MemoryError\n"), "memory"),
        (BAD, _run(2, "flinkstate: error: a\nflinkstate: error: b\n"), "messy"),
        (BAD, _run(2, "flinkstate: error: a\n", out="half a table"), "messy"),
        (BAD, _run(1, "flinkstate: error: a\n"), "wrong-status"),
        (BAD, _run(2, "flinkstate: error: a\n", new=frozenset({"x"})), "litter"),
        (INTERRUPTED, _run(130, "  3%|#\rflinkstate: interrupted; nothing written\n"),
         "interrupted"),
        (INTERRUPTED, _run(130, "flinkstate: interrupted; nothing written\n",
                           new=frozenset({".out.tmp1234"})), "litter"),
        (INTERRUPTED, _run(0, new=frozenset({"out"})), "ok"),
        (INTERRUPTED, _run(-2), "wrong-status"),
    ],
)  # fmt: skip
def test_outcomes_are_told_apart(line: Line, run: Run, outcome: str) -> None:
    assert classify(line, run)[0] == outcome


@pytest.mark.slow
def test_a_sample_of_every_family_fails_nothing(tmp_path: Path) -> None:
    """Three lines of each family, in children, as ``make fuzz`` runs them all (a rescale to
    the end, a minute of Spark, is left to it)."""
    lines = [line for line in choose(catalogue(0), 0, 3) if not (line.spark and line.full)]
    results = run_all(lines, default_setup(REPOSITORY, tmp_path))
    failed = [f"{r.outcome}: {r.line}: {r.detail}" for r in results if r.outcome in FAILURES]
    assert failed == [], table(results)
    assert {r.line.family for r in results} == set(FAMILIES)
