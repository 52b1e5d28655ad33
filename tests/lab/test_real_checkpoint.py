"""A real checkpoint's job configuration: its ``key=value`` lines read, and the network settings
taken from them or from Flink's defaults. (The checkpoint in the model's terms is held to
Flink's own reports by the forecast's tests, tests/lab/test_forecast.py.)"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from flinkstate.errors import CheckpointFormatError, InvalidParameterError
from flinkstate.lab.forecast import prepare_forecast
from flinkstate.lab.real_checkpoint import (
    MAX_JOB_CONFIG_BYTES,
    config_boolean,
    find_job_config,
    network_settings,
    read_job_config,
)
from tests.lab.test_forecast import TUPLE, by_name, exchanges


def test_job_config_lines() -> None:
    path = by_name("keyed-hash-p2-p4").parents[1] / "job-config.txt"
    config = read_job_config(path)
    assert config["taskmanager.memory.segment-size"] == "4kb"
    values, _ = network_settings({"taskmanager.memory.segment-size": "32 kb"})
    assert values["segment_size"] == 32768
    with pytest.raises(InvalidParameterError, match=r"power of two|segment"):
        network_settings({"taskmanager.memory.segment-size": "1000b"})
    with pytest.raises(InvalidParameterError, match="not a number"):
        network_settings({"taskmanager.network.memory.buffers-per-channel": "two"})


def test_subtasks_per_state_file_is_read_under_flinks_unaligned_key() -> None:
    # Flink's CheckpointingOptions.UNALIGNED_MAX_SUBTASKS_PER_CHANNEL_STATE_FILE: the key sits
    # under execution.checkpointing.unaligned. (1.20 to master) and has no deprecated or
    # fallback key, so the key without "unaligned." is not Flink's and leaves the default
    values, settings = network_settings(
        {"execution.checkpointing.unaligned.max-subtasks-per-channel-state-file": "2"}
    )
    assert values["subtasks_per_state_file"] == 2
    assert any(
        s.name == "subtasks_per_state_file" and s.source.startswith("job-config.txt: ")
        for s in settings
    )
    values, _ = network_settings(
        {"execution.checkpointing.max-subtasks-per-channel-state-file": "2"}
    )
    assert values["subtasks_per_state_file"] == 5


def test_a_bad_job_config_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "job-config.txt"
    path.write_text("a=1\nno equals sign\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=r"job-config.txt:2"):
        read_job_config(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a=1\n\xff\xfeb=2\n", r"job-config.txt: at byte 4: .* in UTF-8, found byte 0xff"),
        ("a=1\n".encode("utf-16"), r"at byte 0: .* in UTF-8, found byte 0xff"),
        ("a=1\n".encode("utf-16-le"), r"at byte 1: .* found a NUL byte"),
    ],
)
def test_a_job_config_that_is_not_utf8_is_named(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "job-config.txt"
    path.write_bytes(content)
    with pytest.raises(CheckpointFormatError, match=message):
        read_job_config(path)


def test_a_job_config_past_the_bound_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "job-config.txt"
    with path.open("wb") as file:  # sparse: costs no disk
        file.truncate(3 * 2**30)
    with pytest.raises(CheckpointFormatError, match=f"at most {MAX_JOB_CONFIG_BYTES} bytes"):
        read_job_config(path)


def special(path: Path, kind: str) -> None:
    """``path`` made a file of ``kind`` that is not a regular file."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    ("kind", "found"),
    [("directory", "a directory"), ("zero", "a character device"), ("fifo", "a FIFO")],
)
def test_a_job_config_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, kind: str, found: str
) -> None:
    path = tmp_path / "job-config.txt"
    special(path, kind)
    with pytest.raises(CheckpointFormatError, match=f"a regular file, found {found}"):
        read_job_config(path)


@pytest.mark.parametrize("kind", ["fifo", "directory", "zero", "dangling"])
def test_a_job_config_beside_the_checkpoint_is_never_taken_as_absent(
    tmp_path: Path, kind: str
) -> None:
    source = by_name("keyed-hash-p2-p4")
    copy = tmp_path / source.parent.name
    shutil.copytree(source.parent, copy)
    beside = tmp_path / "job-config.txt"
    if kind == "dangling":
        beside.symlink_to(tmp_path / "gone.txt")
    else:
        special(beside, kind)
    assert find_job_config(copy / source.name) is not None
    with pytest.raises((CheckpointFormatError, InvalidParameterError), match=r"job-config\.txt"):
        prepare_forecast(copy / source.name, 3, exchanges=exchanges(source), value=TUPLE)


RECOVER_OUTPUT = "execution.checkpointing.unaligned.recover-output-on-downstream.enabled"


@pytest.mark.parametrize(("raw", "value"), [("true", True), ("FALSE", False), ("True", True)])
def test_a_boolean_is_true_or_false_in_any_case(raw: str, value: bool) -> None:
    assert config_boolean({RECOVER_OUTPUT: raw}, RECOVER_OUTPUT, False, "job-config.txt") is value
    assert config_boolean({}, RECOVER_OUTPUT, True, "job-config.txt") is True


@pytest.mark.parametrize("raw", ["maybe", "", "yes", "1", "true "])
def test_a_boolean_flink_refuses_is_refused(raw: str) -> None:
    expected = (
        f'job-config.txt: {RECOVER_OUTPUT}={raw!r} is neither true nor false (Flink: "Could '
        f"not parse value '{raw}' for key '{RECOVER_OUTPUT}'.\", caused by 'Unrecognized option "
        f"for boolean: {raw}. Expected either true or false(case insensitive)')"
    )
    with pytest.raises(InvalidParameterError) as refused:
        config_boolean({RECOVER_OUTPUT: raw}, RECOVER_OUTPUT, False, "job-config.txt")
    assert str(refused.value) == expected


@pytest.mark.parametrize(("raw", "value"), [("+3", 3), ("007", 7), ("\u0663", 3)])
def test_an_int_as_integer_parse_int_reads_it(raw: str, value: int) -> None:
    values, _ = network_settings({"taskmanager.numberOfTaskSlots": raw})
    assert values["slots_per_tm"] == value


@pytest.mark.parametrize(
    ("key", "raw", "message"),
    [
        ("taskmanager.numberOfTaskSlots", "1_000", "is not a number Flink reads as an int"),
        ("taskmanager.numberOfTaskSlots", "2.0", 'For input string: "2.0"'),
        ("taskmanager.numberOfTaskSlots", "", "Could not parse value '' for key"),
        ("taskmanager.numberOfTaskSlots", "2147483648", "does not fit a Java int"),
        ("taskmanager.numberOfTaskSlots", "0", "='0': must be at least 1"),
        ("taskmanager.network.memory.buffers-per-channel", "-1", "='-1': must be at least 0"),
        (
            "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file",
            "0",
            "at least 1",
        ),
        ("taskmanager.memory.segment-size", "", "segment-size='': a memory size must not be"),
        ("taskmanager.memory.segment-size", "8 zb", "segment-size='8 zb': memory size unit"),
    ],
)
def test_a_count_or_size_flink_refuses_is_refused_naming_key_and_value(
    key: str, raw: str, message: str
) -> None:
    with pytest.raises(InvalidParameterError, match=re.escape(message)) as refused:
        network_settings({key: raw})
    assert key in str(refused.value)
    assert "\n" not in str(refused.value)


def test_an_unparsable_recover_output_is_refused_by_the_forecast(tmp_path: Path) -> None:
    source = by_name("keyed-hash-p2-p4")
    path = tmp_path / "job-config.txt"
    path.write_text(f"{RECOVER_OUTPUT}=maybe\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=f"{RECOVER_OUTPUT}='maybe' is neither"):
        prepare_forecast(source, 3, exchanges=exchanges(source), value=TUPLE, job_config=path)
