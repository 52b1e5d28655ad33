"""A real checkpoint's job configuration: its ``key=value`` lines read, and the network settings
taken from them or from Flink's defaults. (The checkpoint in the model's terms is held to
Flink's own reports by the forecast's tests, tests/lab/test_forecast.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.real_checkpoint import network_settings, read_job_config
from tests.lab.test_forecast import by_name


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


def test_a_bad_job_config_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "job-config.txt"
    path.write_text("a=1\nno equals sign\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match=r"job-config.txt:2"):
        read_job_config(path)
