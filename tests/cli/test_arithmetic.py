"""``flinkstate mapping --partitioner ... --subtask N``: one input channel's virtual channels
(``--channel``) and the subtask's record filter (``--key``)."""

from __future__ import annotations

import json

import pytest

from flinkstate.cli import main

KEYED_3_TO_2 = ("mapping", "--partitioner", "keyBy", "--old", "3", "--new", "2")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_channel_of_the_downscaling_gate(capsys: pytest.CaptureFixture[str]) -> None:
    # StateAssignmentOperationTest.testChannelStateAssignmentDownscaling's new subtask 0:
    # old subtasks 0 and 1 (1 shared), channel 0 carries old channels 0 and 2
    code, out, _ = run(capsys, *KEYED_3_TO_2, "--subtask", "0", "--channel", "0", "--json")
    assert code == 0
    assert json.loads(out) == {
        "partitioner": "HASH",
        "upstream": [3, 2],
        "downstream": [3, 2],
        "subtask": 0,
        "channel": 0,
        "old_subtasks": [0, 1],
        "ambiguous_old_subtasks": [1],
        "old_channels": [0, 2],
        "virtual_channels": [[0, 0, False], [0, 2, False], [1, 0, True], [1, 2, True]],
    }
    code, out, _ = run(capsys, *KEYED_3_TO_2, "--subtask", "0", "--channel", "0")
    assert code == 0
    assert "  virtual channels           (0,0) (0,2) (1,0)* (1,2)*" in out
    assert "* = its records are kept only if this subtask owns them" in out


def test_the_record_filter_of_flinks_ambiguous_channels_test(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # testAmbiguousChannels: subtask 1 of 2 under a modulo-2 partitioner keeps odd keys
    keys = [str(k) for k in range(6)]
    code, out, _ = run(
        capsys,
        *("mapping", "--partitioner", "partitionCustom", "--old", "3", "--new", "2"),
        *("--subtask", "1", "--json"),
        *(arg for key in keys for arg in ("--key", key)),
    )
    assert code == 0
    result = json.loads(out)
    assert [k["kept"] for k in result["keys"]] == [False, True] * 3
    assert [k["owner"] for k in result["keys"]] == [0, 1] * 3
    assert "key_group" not in result["keys"][0]


def test_a_keyed_filter_with_flinks_key_groups(capsys: pytest.CaptureFixture[str]) -> None:
    # Flink 2.3.0: Long 42 is in key group 5 of 10, owned by subtask 1 of 2 and of 3; Long 1
    # in key group 8, owned by subtask 1 of 2 and subtask 2 of 3
    argv = ("mapping", "--partitioner", "keyBy", "--old", "2", "--new", "3", "-m", "10")
    code, out, _ = run(capsys, *argv, "--subtask", "1", "--key", "42", "--key", "1", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["max_parallelism"] == 10
    assert result["keys"] == [
        {"key": 42, "key_group": 5, "owner": 1, "kept": True},
        {"key": 1, "key_group": 8, "owner": 2, "kept": False},
    ]
    code, out, _ = run(capsys, *argv, "--subtask", "1", "--key", "42", "--key", "1")
    assert code == 0
    assert "record filter of new subtask 1 of 3, max parallelism 10:" in out
    rows = [line.split() for line in out.splitlines() if line[:3].strip() in ("42", "1")]
    assert rows == [["42", "5", "1", "keeps"], ["1", "8", "2", "drops"]]


def test_the_default_max_parallelism_is_the_old_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *KEYED_3_TO_2, "--subtask", "1", "--key", "0")
    assert code == 0
    assert "max parallelism 128 (Flink's default for --old 3; a restore keeps it)" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ("--partitioner", "keyBy", "--old", "3", "--new", "3"),
            "no virtual channels\n  its gate was not rescaled, so the channel is read as it is",
        ),
        (
            ("--partitioner", "forward", "--old", "3", "--new", "3"),
            "no virtual channels\n  forward() is a pointwise exchange",
        ),
    ],
)
def test_a_channel_without_virtual_channels_says_why(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    code, out, _ = run(capsys, "mapping", *argv, "--subtask", "1", "--channel", "0")
    assert code == 0
    assert says in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--channel", "0"), "--channel needs --subtask"),
        (("--key", "1"), "--key needs --subtask"),
        (("--subtask", "1"), "--subtask asks about one input channel (--channel) or the record"),
        (("--subtask", "2", "--key", "1"), "--subtask 2 is out of range 0 to 1"),
        (("--subtask", "-1", "--channel", "0"), "--subtask -1 is out of range 0 to 1"),
        (("--subtask", "0", "--channel", "2"), "--channel 2 is out of range 0 to 1"),
        (("--subtask", "0", "--channel", "-1"), "--channel -1 is out of range 0 to 1"),
        (("--subtask", "0", "--key", "x"), "--key 'x' is not a record key"),
        (("--subtask", "0", "--key", str(2**63)), "does not fit in a Java Long"),
        (
            (
                "-m",
                "64",
            ),
            "--max-parallelism only applies to a record filter: add --key",
        ),
        (
            ("--subtask", "0", "--channel", "0", "-m", "64"),
            "--max-parallelism only applies to a record filter",
        ),
        (("--subtask", "0", "--key", "1", "-m", "1"), "parallelism 2 is above max parallelism 1"),
    ],
)
def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, *KEYED_3_TO_2, *argv)
    assert code == 2
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("--partitioner", "rebalance", "--old", "3", "--new", "2", "--subtask", "0"),
            "rebalance() gives a record no owner, so its records are never filtered",
        ),
        (
            ("--partitioner", "nope", "--old", "3", "--new", "2", "--subtask", "0"),
            "unknown partitioner 'nope'",
        ),
        (
            (
                "--partitioner",
                "keyBy",
                "--old",
                "3",
                "--new",
                "0",
                "--upstream-new",
                "2",
                "--subtask",
                "0",
            ),
            "downstream parallelism 0 is out of range",
        ),
        (
            ("--mapper", "RANGE", "--old", "3", "--new", "2", "--subtask", "0"),
            "--subtask and --key only apply to a whole exchange",
        ),
        (
            ("--mapper", "RANGE", "--old", "3", "--new", "2", "-m", "9"),
            "--key and --max-parallelism only apply to a whole exchange",
        ),
    ],
)
def test_bad_exchanges_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    code, out, err = run(capsys, "mapping", *argv, "--key", "1")
    assert code == 2
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


def test_a_plan_too_large_to_build_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        *("mapping", "--partitioner", "keyBy", "--old", "1000", "--new", "999"),
        *("--subtask", "1", "--channel", "3"),
    )
    assert code == 2
    assert out == ""
    assert "--channel reads the exchange's whole plan, 3,950,975 values" in err
