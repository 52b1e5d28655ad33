from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from flinkstate.cli import main
from flinkstate.flinkcheckpoint import real_checkpoint


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
    rows = _first_table(out)
    # new subtask 1 reads old channels 0 to 2 of old subtasks 1 (shared, filtered) and 2
    assert rows["1"][-3:] == ["(1,0..2)*", "(2,0..2)", "yes"]
    assert "(1,0..2) is (1,0) (1,1) (1,2)" in out


def test_a_max_parallelism_below_the_old_parallelism_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A restored job keeps its max parallelism, which its old parallelism fitted: 2 below
    parallelism 3 was taken, and the record filter answered for it."""
    plan = ["mapping", "--partitioner", "keyBy", "--old", "3", "--new", "2", "--subtask", "1"]
    code, out, err = run(capsys, *plan, "--key", "7", "--max-parallelism", "2")
    assert code == 2
    assert out == ""
    assert err == (
        "flinkstate: error: parallelism 3 is above max parallelism 2: every subtask needs at "
        "least one key group (Flink: 'Maximum parallelism must not be smaller than "
        "parallelism.')\n"
    )


def _first_table(out: str) -> dict[str, list[str]]:
    """The words of each row of the first table of the output, by its first cell."""
    table = out.split("\n\n")[1].splitlines()[2:]
    return {line.split()[0]: line.split() for line in table}


def _peak_of(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str, int]:
    """A command's status, output and the peak memory it allocated (bytes)."""
    tracemalloc.start()
    try:
        code, out, err = run(capsys, *argv)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return code, out, err, peak


@pytest.mark.slow
def test_a_full_mapping_of_400_million_pairs_is_a_table_of_ranges(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _, peak = _peak_of(
        capsys, "mapping", "--mapper", "FULL", "--old", "20000", "--new", "20000"
    )
    assert code == 0
    lines = out.splitlines()
    assert lines.count("") == 2  # two tables, one row per subtask
    assert len(lines) == 2 + 2 + 20_000 + 1 + 2 + 20_000  # title, blank, header, rule, rows
    assert lines[5].split() == ["1", "0..19999", "0..19999"]
    assert lines[-1].split() == ["19999", "0..19999"]
    assert peak < 100_000_000  # it took 48 s and died of a MemoryError at 7.5 GB


@pytest.mark.slow
def test_a_keyed_plan_of_46_million_virtual_channels_is_a_table_of_blocks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _, peak = _peak_of(
        capsys, "mapping", "--partitioner", "keyBy", "--old", "5000", "--new", "4999"
    )
    assert code == 0
    rows = _first_table(out)
    assert rows["0"][1:] == ["0", "-", "(0,0..4999)", "no"]
    assert rows["64"][1:] == ["64,", "65", "-", "(64,0..4999)", "(65,0..4999)*", "yes"]
    assert rows["65"][1:] == ["65", "-", "(65,0..4999)*", "yes"]
    assert peak < 100_000_000  # it took 106 s and died at 8.7 GB


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (["--mapper", "FULL", "--old", "20000", "--new", "20000"], "800,000,000 values"),
        (["--partitioner", "keyBy", "--old", "5000", "--new", "4999"], "92,304,230 values"),
        (
            ["--partitioner", "partitionCustom", "--old", "1000", "--new", "999"],
            "1,002,997,001 values",
        ),
    ],
)
def test_json_too_large_to_list_is_refused_with_the_limit(
    capsys: pytest.CaptureFixture[str], argv: list[str], listed: str
) -> None:
    code, out, err, peak = _peak_of(capsys, "mapping", *argv, "--json")
    assert code == 2
    assert out == ""
    assert f"--json would list {listed}" in err
    assert "more than the 1,000,000 it lists; drop --json for the tables" in err
    assert err.count("\n") == 1
    assert peak < 100_000_000


def test_json_within_the_limit_lists_every_pair(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "mapping", "--mapper", "FULL", "--old", "700", "--new", "700", "--json"
    )
    assert code == 0
    result = json.loads(out)
    assert result["new_to_old"][699] == list(range(700))
    assert result["ambiguous_old_subtasks"] == list(range(700))


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
        (
            ["mapping", "--mapper", "RANGE", "--old", "3", "--new", "2", "--upstream-old", "5"],
            "--upstream-old only applies to a whole exchange: use --partitioner instead",
        ),
        (
            [
                *("mapping", "--mapper", "FULL", "--old", "3", "--new", "2"),
                *("--upstream-new", "4", "--recover-output-on-downstream"),
            ],
            "--upstream-new and --recover-output-on-downstream only apply to a whole exchange",
        ),
        (["keygroup", "-p", "3", "--type", "long"], "--type long says how to read KEYs"),
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def assert_interrupted(code: int, out: str, errors: str, status: int, folder: Path) -> None:
    """A command ended by a signal: status 128 + its number, one line last (after any
    progress bar), nothing on stdout, nothing left in ``folder`` (not the output, not its
    hidden folder)."""
    assert code == status
    assert "Traceback" not in errors
    assert errors.replace("\r", "\n").strip().splitlines()[-1] == (
        "flinkstate: interrupted; nothing written"
    )
    assert out == ""
    assert list(folder.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["whatif", "keyed-upscale", "--vary", "records=2000,4000,6000,8000", "--seeds", "0,1,2"],
        ["generate", "OUT", "--records", "50000000"],
    ],
    ids=["whatif", "generate"],
)
@pytest.mark.parametrize(
    ("sent", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
def test_ctrl_c_ends_any_command_in_one_line(
    command: list[str], sent: signal.Signals, status: int, tmp_path: Path
) -> None:
    """Ctrl-C used to end every command but ``run`` in a KeyboardInterrupt traceback; SIGTERM
    (``timeout``, ``kill``) left ``generate``'s hidden folder of up to 1.8 GB beside OUT. Both
    now unwind alike: one line, nothing left behind, 128 + the signal's number."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    with subprocess.Popen(
        [sys.executable, "-m", "flinkstate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        time.sleep(6)  # imports done, work under way
        assert process.poll() is None, process.communicate()
        process.send_signal(sent)
        out, errors = process.communicate(timeout=60)
    assert_interrupted(process.returncode, out, errors, status, tmp_path)


@pytest.mark.parametrize(
    "argv",
    [
        ["mapping", "--partitioner", "keyBy", "--old", "3", "--new", "2", "--subtask=--"],
        ["buffers", "--channels=--"],
        ["explore", "keyed", "--max-states=--"],
        ["run", "keyed", "--set=--"],
    ],
    ids=["mapping", "buffers", "explore", "run"],
)
def test_dashes_as_an_options_value_are_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse strips ``--`` from ``--subtask=--`` and gave the command an empty list as the
    value: a TypeError traceback in every command that read it."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    option = argv[-1].split("=")[0]
    assert (
        err.splitlines()[-1]
        == f"flinkstate {argv[0]}: error: argument {option}: expected one argument"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["samples", "--write", ""],
        ["run", "keyed", "--trace", ""],
        ["generate", "", "--records", "1"],
        ["inspect", "CHECKPOINT", "--export", ""],  # --export '' was no export, and exit 0
    ],
    ids=["samples", "run", "generate", "inspect"],
)
def test_an_empty_path_is_a_usage_error(
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``samples --write ''`` wrote every sample into the working folder (``Path("")``)."""
    monkeypatch.chdir(tmp_path)
    checkpoint = str(real_checkpoint("keyed-hash-p2-p4"))
    with pytest.raises(SystemExit) as exit_:
        main([checkpoint if word == "CHECKPOINT" else word for word in argv])
    assert exit_.value.code == 2
    assert (
        capsys.readouterr().err.splitlines()[-1].endswith("an empty path names no file or folder")
    )
    assert list(tmp_path.iterdir()) == []


def test_no_command_is_argparses_usage_and_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """It was the whole help on standard output, with status 2."""
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[-1] == (
        "flinkstate: error: name a command (flinkstate --help lists them)"
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command",
    [["--help"], ["--version"], ["scenarios"], ["keygroup", "42", "hello", "--parallelism", "4"]],
    ids=["help", "version", "scenarios", "keygroup"],
)
def test_a_full_disk_under_standard_output_is_one_line(command: list[str]) -> None:
    """``flinkstate scenarios > /dev/full`` was an OSError traceback; ``--help`` and
    ``--version`` ended with status 0 having written nothing."""
    with Path("/dev/full").open("w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "flinkstate", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 74  # EX_IOERR
    assert done.stderr == "flinkstate: error: cannot write the output: No space left on device\n"


#: the command's entry point, started once Python itself is up: the interpreter's own start
#: (tens of milliseconds, more on a busy machine) is Python's to report, not the package's
_STARTED = (
    "import sys; from flinkstate import launch; sys.argv[0] = 'flinkstate'; "
    "sys.stderr.write('started\\n'); sys.stderr.flush(); raise SystemExit(launch.main())"
)


@pytest.mark.parametrize("after", [0.1, 0.3, 1.0])
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_package_loads_is_one_line(sent: signal.Signals, after: float) -> None:
    """Ctrl-C in the first 0.3 s (the package still importing) was a KeyboardInterrupt
    traceback from the middle of an import. The entry point imports the command line (about
    0.4 s) inside its handlers: 0.1 and 0.3 s after it starts land in that import."""
    with subprocess.Popen(
        [sys.executable, "-c", _STARTED, "scenarios"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stderr is not None
        assert process.stderr.readline() == "started\n"
        time.sleep(after)
        process.send_signal(sent)
        out, errors = process.communicate(timeout=60)
    if process.returncode == 0:  # it had finished: the whole table, nothing else
        assert out.startswith("scenario")
        assert errors == ""
        return
    assert process.returncode == 128 + sent
    assert errors == "flinkstate: interrupted; nothing written\n"
    assert out == ""


def _ctrl_c_then_import_error(*args: object, **kwargs: object) -> None:
    """Ctrl-C in the middle of numpy's C extension's import: numpy makes an ImportError of
    the KeyboardInterrupt ("PyCapsule_Import could not import module "datetime"")."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # the handler raises before this ends
    except KeyboardInterrupt:
        raise ImportError('PyCapsule_Import could not import module "datetime"') from None


def test_ctrl_c_that_an_import_turned_into_another_error_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C 0.1 s in (the harness's sigint family) was numpy's ImportError traceback."""
    import builtins

    from flinkstate import launch

    real = builtins.__import__
    handler = signal.getsignal(signal.SIGINT)  # SIG_IGN where a shell started us in the background

    def importing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "flinkstate.cli":
            _ctrl_c_then_import_error()
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", importing)
    assert launch.main() == 130
    monkeypatch.undo()
    # and in a command's own lazy import, once the command line runs
    monkeypatch.setattr("flinkstate.cli.arithmetic.place_key", _ctrl_c_then_import_error)
    assert main(["keygroup", "42", "-p", "4"]) == 130
    assert capsys.readouterr().err == "flinkstate: interrupted; nothing written\n" * 2
    assert signal.getsignal(signal.SIGINT) is handler  # put back


def test_an_import_that_fails_without_a_signal_is_shown_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ImportError("a real fault")

    monkeypatch.setattr("flinkstate.cli.arithmetic.place_key", broken)
    with pytest.raises(ImportError, match="a real fault"):
        main(["keygroup", "42", "-p", "4"])
