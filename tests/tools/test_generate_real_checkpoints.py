"""``make real-checkpoints``'s driver refuses bad input in one line, before starting anything."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.tools import load_script

generate = load_script("real-checkpoints/generate.py", "generate_real_checkpoints")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--variants", "keyed-hash-p9"], "unknown variant keyed-hash-p9; known: keyed-hash-p2-p4"),
        (["--variants", ","], "unknown variant (none given)"),
        (
            ["--downstream", "0"],
            "--downstream must be from 1 to 4 (the local cluster's slots), got 0",
        ),
        (["--upstream", "5"], "--upstream must be from 1 to 4 (the local cluster's slots), got 5"),
        (["--seconds", "1"], "--seconds must be at least 3"),
    ],
)
def test_bad_input_is_one_line(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generate.main(["--flink-python", "python3", *arguments]) == 2
    error = capsys.readouterr().err
    assert message in error
    assert error.count("\n") == 1


def test_a_python_without_flink_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main(["--flink-python", sys.executable, "--out", "/nonexistent/x"]) == 2
    assert "cannot import pyflink" in capsys.readouterr().err


def test_an_output_folder_it_did_not_make_is_left_alone(tmp_path: Path) -> None:
    """A variant's folder is replaced only when an earlier run of the generator made it."""
    (tmp_path / "keyed-hash-p2-p4").mkdir()
    (tmp_path / "keyed-hash-p2-p4" / "precious.txt").write_text("mine")
    with pytest.raises(generate.GenerateError, match="was not made here"):
        generate.run_variant("keyed-hash-p2-p4", {}, tmp_path, tmp_path, tmp_path)
    assert (tmp_path / "keyed-hash-p2-p4" / "precious.txt").read_text() == "mine"


def test_every_variant_is_one_of_the_committed_kinds_or_made_by_ci() -> None:
    root = Path(__file__).parents[2]
    committed = root / "data" / "real-checkpoints"
    assert set(generate.VARIANTS) - set(generate.NOT_COMMITTED) == {
        p.name for p in committed.iterdir() if p.is_dir()
    }
    made = next(
        line.split("VARIANTS=")[1].split()[0]
        for line in (root / ".ci" / "run").read_text().splitlines()
        if line.startswith("make real-checkpoints")
    )
    assert set(generate.NOT_COMMITTED) <= set(made.split(","))
