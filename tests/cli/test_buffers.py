"""``flinkstate buffers``: Flink's buffer arithmetic as tables, and one line per mistake."""

from __future__ import annotations

import json

import pytest

from flinkstate.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["buffers", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_wide_batch_gate_a_sorting_partition_and_a_task_manager(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys,
        "--channels", "500", "--type", "blocking", "--subpartitions", "10",
        "--network-memory", "128m", "--segment-size", "1m",
    )  # fmt: skip
    assert code == 0
    assert "(at most 1000 required buffers)" in out
    lines = out.splitlines()
    gate = lines[lines.index(next(x for x in lines if x.startswith("exclusive"))) + 2]
    assert gate.split() == ["1", "500", "508", "1008"]  # GateBuffersSpecTest, 500 channels
    assert "128 network buffers" in out  # NettyShuffleEnvironmentConfigurationTest


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--channels", "4", "--subpartitions", "4", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["gate"] == {
        "channels": 4,
        "max_required_buffers": None,
        "exclusive_per_channel": 2,
        "required_floating": 1,
        "total_floating": 8,
        "target_total": 16,
    }
    assert report["result_partition"] == {"subpartitions": 4, "min": 5, "max": 16}
    _, out, _ = run(capsys, "--subpartitions", "3", "--type", "pipelined", "--json")
    assert json.loads(out)["result_partition"]["max"] is None  # unbounded


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "name what to size"),
        (("--channels", "4", "--buffers-per-channel", "1", "--floating-buffers", "0"),
         "Wrong number of floating buffers"),
        (("--channels", "0"), "at least one channel"),
        (("--channels", "2", "--type", "nope"), "unknown result partition type 'nope'"),
        (("--network-memory", "12parsecs"), "unit 'parsecs'"),
        (("--network-memory", "1g", "--segment-size", "5000"), "power of 2"),
        (("--channels", "4", "--gates", "2"), "--gates needs --network-memory and --channels"),
        (("--network-memory", "1g", "--partitions", "2"), "--partitions needs"),
        (("--channels", "4", "--network-memory", "1g", "--gates", "0"), "between 1 and 1000"),
        (("--channels", "20000", "--network-memory", "1g", "--gates", "300"), "too many"),
        # exit 0 before: an answer stopped at 2147483647, a segment size that sized nothing
        (("--channels", "1000000000000",), "more than Flink counts in an int (2147483647)"),
        (("--subpartitions", "2147483648",), "--subpartitions 2147483648 is more than"),
        (("--channels", "4", "--segment-size", "0"), "give --network-memory with it"),
        (("--channels", "4", "--segment-size", "4gb"), "give --network-memory with it"),
        (("--network-memory", "1g", "--segment-size", "0"), "Minimum memory segment size"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ("--subpartitions", "4", "--buffers-per-channel", "-1"),
        ("--subpartitions", "4", "--type", "blocking", "--sort-shuffle-min-buffers", "0"),
        ("--channels", "4", "--max-required", "0"),
    ],
)
def test_counts_out_of_range_are_refused(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1


def test_a_task_manager_setting_up_partitions_only(capsys: pytest.CaptureFixture[str]) -> None:
    """Partitions without gates was a TypeError traceback (the gates' channels were None)."""
    code, out, err = run(
        capsys, "--subpartitions", "4", "--network-memory", "64m", "--partitions", "1"
    )
    assert code == 0
    assert err == ""
    assert "setting up 1 result partition(s)" in out


def test_a_task_manager_setting_up_its_partitions_and_gates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys, "--channels", "4", "--subpartitions", "4", "--network-memory", "64m", "--gates", "1"
    )
    assert code == 0
    assert "setting up 1 result partition(s), then 1 input gate(s) (every channel remote)" in out
    lines = out.splitlines()
    assert lines[lines.index(next(x for x in lines if x.startswith("pool  "))) + 2].split() == [
        "result", "partition", "1", "5", "16", "16", "1"
    ]  # fmt: skip
    assert "reserved 14 of 2048 segments (8 as exclusive buffers of remote channels)" in out


def test_a_task_manager_without_enough_buffers_says_where_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(
        capsys,
        "--channels", "1000", "--subpartitions", "1000", "--network-memory", "1g",
        "--gates", "16", "--partitions", "16", "--json",
    )  # fmt: skip
    assert code == 1
    setup = json.loads(out)["setup"]
    assert not setup["fits"]
    assert setup["refused_at"] == "the exclusive buffers of remote channel 369 of input gate 9"
    assert setup["refusal"].startswith(
        "Insufficient number of network buffers: required 2, but only 0 available."
    )
    assert len(setup["pools"]) == 32
