from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flinkstate.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_keygroup_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "keygroup", "42", "--max-parallelism", "128", "--parallelism", "4")
    assert code == 0
    assert "max parallelism 128, parallelism 4" in out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["42"])
    assert row.split()[:6] == ["42", "Integer", "42", "1134849565", "29", "0"]


def test_keygroup_json_and_long_type(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "keygroup", "-1", "--type", "long", "-p", "4", "-m", "128", "--json")
    assert code == 0
    result = json.loads(out)["keys"][0]
    assert result["type"] == "Long"
    assert result["hash_code"] == 0  # Long.hashCode(-1) folds the two halves to 0


def test_keygroup_default_max_parallelism_and_ranges(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "keygroup", "--parallelism", "3")
    assert code == 0
    assert "max parallelism 128 (Flink's default for parallelism 3)" in out
    assert [line.split() for line in out.splitlines()[-3:]] == [
        ["0", "0", "42", "43"],
        ["1", "43", "85", "43"],
        ["2", "86", "127", "42"],
    ]


def test_mapping_range_3_to_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "mapping", "--mapper", "RANGE", "--old", "3", "--new", "2", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["new_to_old"] == [[0, 1], [1, 2]]
    assert result["old_to_new"] == [[0], [0, 1], [1]]
    assert result["ambiguous_old_subtasks"] == [1]


def test_mapping_table_mentions_both_directions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "mapping", "--mapper", "round_robin", "--old", "10", "--new", "4")
    assert code == 0
    assert "reads old subtasks" in out
    assert "read by new subtasks" in out
    assert "0, 4, 8" in out


def test_mapping_exchange_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "mapping", "--partitioner", "keyBy", "--old", "3", "--new", "2", "--json"
    )
    assert code == 0
    result = json.loads(out)
    assert [d["input_state_from"] for d in result["downstream_subtasks"]] == [[0, 1], [1, 2]]
    assert result["downstream_subtasks"][0]["ambiguous_old_subtasks"] == [1]
    code, out, _ = run(capsys, "mapping", "--partitioner", "keyBy", "--old", "3", "--new", "2")
    assert "(1,0)*" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["keygroup", "1", "-p", "0", "-m", "128"], "parallelism 0 is out of range"),
        (["keygroup", "1", "-p", "4", "-m", "40000"], "above Flink's upper bound 32768"),
        (["keygroup", "1", "-p", "200", "-m", "128"], "above max parallelism 128"),
        (["keygroup", "abc", "-p", "2", "--type", "long"], "must be a whole number"),
        (["keygroup", "abc", "-p", "2", "--type", "byte[]"], "identity"),
        (["mapping", "--mapper", "NOPE", "--old", "3", "--new", "2"], "unknown subtask state"),
        (["mapping", "--mapper", "UNSUPPORTED", "--old", "3", "--new", "2"], "pointwise"),
        (["mapping", "--mapper", "RANGE", "--old", "0", "--new", "2"], "old parallelism 0"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code != 0
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_module_entry_point_runs_without_traceback() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "flinkstate", "--help"], capture_output=True, text=True, check=False
    )
    assert ok.returncode == 0
    assert "keygroup" in ok.stdout
    assert "mapping" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "flinkstate", "keygroup", "1", "-p", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "parallelism 0" in bad.stderr


def test_a_closed_pipe_ends_quietly() -> None:
    """``keygroup ... | head -2`` used to end in a ``BrokenPipeError`` traceback."""
    command = [sys.executable, "-m", "flinkstate", "keygroup", "-p", "32768", "-m", "32768"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # the reader goes away, as head does
        errors = process.stderr.read().decode()
        status = process.wait(timeout=60)
    assert first.startswith(b"max parallelism 32768")
    assert errors == ""
    assert status == 141


@pytest.mark.parametrize(
    "command",
    [
        ["whatif", "keyed-upscale", "--vary", "records=2000,4000,6000,8000", "--seeds", "0,1,2"],
    ],
    ids=["whatif"],
)
def test_ctrl_c_ends_any_command_in_one_line(command: list[str], tmp_path: Path) -> None:
    """Ctrl-C used to end every command but ``run`` in a KeyboardInterrupt traceback."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    with subprocess.Popen(
        [sys.executable, "-m", "flinkstate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        time.sleep(6)  # imports done, work under way
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        out, errors = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in errors
    assert errors.replace("\r", "\n").strip().splitlines()[-1] == (
        "flinkstate: interrupted; nothing written"
    )
    assert out == ""
    assert not (tmp_path / "out").exists()
