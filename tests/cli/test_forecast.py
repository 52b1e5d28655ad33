"""``flinkstate forecast`` on the checkpoints Flink wrote: tables, JSON, the page, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinkstate.cli import main
from flinkstate.flinkcheckpoint import real_checkpoint
from flinkstate.flinkcheckpoint.export import ExchangeSpec, key_function
from flinkstate.flinkcheckpoint.stream_element import value_decoder
from flinkstate.lab.forecast import prepare_forecast, run_forecast

KEYED = ["--exchange", "to-record->slow-counter=hash:f0%1000"]
TUPLE = ["--record-type", "Tuple2<Long,String>"]


def checkpoint(name: str = "keyed-hash-p2-p4") -> str:
    return str(real_checkpoint(name))


@pytest.mark.slow
def test_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forecast", checkpoint(), "--to", "3", *KEYED, *TUPLE, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("checkpoint 48 restored at parallelism 3 with classic")
    assert "operators: to-record 2 -> 3, slow-counter 4 -> 3" in out
    assert "job-config.txt: taskmanager.memory.segment-size=4kb" in out
    assert "pre-filter deadlock" in out
    assert "cannot occur" in out
    assert "invariants: all held" in out
    assert "every task RUNNING at step" in out
    for generation in ("classic", "v1", "v2"):
        assert f"\n{generation} " in out  # a row of the memory table each


def test_one_operator_at_its_own_parallelism(capsys: pytest.CaptureFixture[str]) -> None:
    """``--to OPERATOR=N`` as ``rescale --operator`` names what it rescales: the others keep
    their parallelism; a plain N with it sets the others."""
    args = ["forecast", checkpoint(), *KEYED, *TUPLE, "--quiet"]
    assert main([*args, "--to", "slow-counter=3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("checkpoint 48 restored at slow-counter=3 with classic")
    assert "operators: to-record 2 -> 2, slow-counter 4 -> 3" in out
    assert main([*args, "--to", "slow-counter=5", "--to", "3", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["to"] == "3, slow-counter=5"
    assert printed["operators"] == {"to-record": 3, "slow-counter": 5}


@pytest.mark.slow
def test_json_equals_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["forecast", checkpoint(), "--to", "5", "--generation", "v2", *KEYED, *TUPLE]
    assert main([*args, "--json", "--quiet", "--seed", "3"]) == 0
    printed = json.loads(capsys.readouterr().out)

    def make(generation: object) -> object:
        return prepare_forecast(
            checkpoint(),
            5,
            exchanges={"to-record->slow-counter": ExchangeSpec("hash", key_function("f0%1000"))},
            generation=str(generation),
            value=value_decoder("Tuple2<Long,String>"),
            seed=3,
        )

    expected = run_forecast(make("v2"), rerun=make).summary()  # type: ignore[arg-type]
    assert printed == json.loads(json.dumps(expected))
    assert printed["effective_generation"] == "v2"
    assert printed["memory"]["spill_files"] > 0
    assert sum(s["kept_records"] for s in printed["subtasks"]) == printed["recovered_records"]


def test_a_deadlock_is_reported_with_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "forecast",
        checkpoint("bigrecord-10k-keyed-p2-p3"),
        "--to",
        "2",
        "--generation",
        "v1",
        *KEYED,
        *TUPLE,
        "--set",
        "buffers_per_channel=1",
        "--set",
        "floating_buffers=1",
        "--set",
        "prefilter_source=network",
        "--quiet",
    ]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "with v1 (Flink 2.3), seed 0: deadlock" in out
    assert "can occur on 2 gate(s)" in out
    assert "1 + k = 4 > 1 exclusive + 1 floating" in out
    assert "waits-for cycle" in out


def test_the_page_is_the_restored_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "forecast.html"
    args = ["forecast", checkpoint("bigrecord-10k-keyed-p2-p3"), "--to", "2", *KEYED, *TUPLE]
    assert main([*args, "--html", str(page), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"page written to {page}" in out
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "flinkstate forecast: checkpoint 46" in text
    assert [p.name for p in tmp_path.iterdir()] == ["forecast.html"]  # nothing else left


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--exchange 'to-record->slow-counter=PARTITIONER"),
        ([*KEYED], "give their type (--record-type"),
        ([*KEYED, *TUPLE, "--to", "0"], "--to"),  # beside "--to 3": given twice
        ([*KEYED, *TUPLE, "--to", "slow-counter=0"], "--to slow-counter"),
        ([*KEYED, *TUPLE, "--to", "slow-counter=x"], "is not a parallelism"),
        ([*KEYED, *TUPLE, "--to", "nope=2"], "'nope', not an operator of the model's job"),
        ([*KEYED, *TUPLE, "--to", "sink=2"], "--to sink: not in the model"),
        ([*KEYED, *TUPLE, "--set", "records=3"], "emit nothing new"),
        ([*KEYED, *TUPLE, "--set", "floating_buffers=0"], "floating_buffers = 0 is below"),
        ([*KEYED, *TUPLE, "--steps", "0"], "--steps"),
        # the seed by run's rule (it took -1 and 2^31 before)
        ([*KEYED, *TUPLE, "--seed", "-1"], "seed must be between 0 and 2147483647, got -1"),
        ([*KEYED, *TUPLE, "--seed", str(2**31)], "seed must be between 0 and 2147483647"),
        (["--exchange", "to-record->slow-counter"], "UP->DOWN=PARTITIONER"),
        (
            [*KEYED, *TUPLE, "--html", "/no/such/folder/page.html"],
            "cannot write /no/such/folder/page.html",
        ),
    ],
)
def test_bad_input_is_one_line(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["forecast", checkpoint(), "--to", "3", "--quiet", *extra]
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err


def test_a_checkpoint_that_is_not_there_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["forecast", str(tmp_path / "chk-1"), "--to", "2", *KEYED, *TUPLE]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01\xfe\xff" * 64, "job.bin: at byte 2: expected a job configuration"),
        (None, "/dev/zero: at byte 0: expected a job configuration (key=value lines), a regular"),
    ],
)
def test_a_job_config_that_cannot_be_one_is_one_line(
    tmp_path: Path, content: bytes | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path("/dev/zero")
    if content is not None:
        path = tmp_path / "job.bin"
        path.write_bytes(content)
    arguments = ["forecast", checkpoint(), "--to", "3", "--quiet", *KEYED, *TUPLE]
    assert main([*arguments, "--job-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize("value", ["maybe", ""])
def test_a_boolean_flink_refuses_is_one_line(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "execution.checkpointing.unaligned.recover-output-on-downstream.enabled"
    path = tmp_path / "job-config.txt"
    path.write_text(f"{key}={value}\n", encoding="utf-8")
    arguments = ["forecast", checkpoint(), "--to", "3", "--quiet", *KEYED, *TUPLE]
    assert main([*arguments, "--job-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{key}={value!r} is neither true nor false" in err
    assert f"Could not parse value '{value}' for key '{key}'." in err
