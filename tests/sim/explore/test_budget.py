"""The explorer's memory budget: read cheaply, it stops a search as a bound does and says so;
running out of memory before it is one error that says what was explored."""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.sim.core import Model
from flinkstate.sim.explore import (
    Bounds,
    ExplorationMemoryError,
    SleepSets,
    StopReason,
    default_memory_budget,
    explore,
    memory_bound,
    resident_bytes,
    search,
)
from flinkstate.sim.explore import budget as budgets
from tests.sim.explore.test_search import Increments, Workers

GIB = 1024**3


def reader(values: list[int]) -> Callable[[], int]:
    """A resident-memory reader that gives ``values`` one by one, then the last for ever,
    counting how often it was read (``reads``)."""
    reads: list[int] = []

    def read() -> int:
        reads.append(1)
        return values[min(len(reads), len(values)) - 1]

    read.reads = reads  # type: ignore[attr-defined]
    return read


@pytest.mark.parametrize("strategy", ["bfs", "dfs", "random-walk"])
def test_the_budget_stops_it_cleanly_with_what_was_explored(strategy: str) -> None:
    model = Workers(workers=4, private=4)
    whole = explore(model, strategy=strategy)
    # under the budget twice, then over it: the third reading stops it
    read = reader([GIB, GIB, 3 * GIB])
    result = explore(model, strategy=strategy, bounds=Bounds(max_memory=2 * GIB), resident=read)
    assert result.stopped_by is StopReason.MAX_MEMORY
    assert not result.exhausted
    assert len(read.reads) == 3  # type: ignore[attr-defined]
    assert result.states == 3 * search.CLOCK_EVERY  # read as often as the clock
    assert 0 < result.distinct <= whole.distinct
    assert result.resident == 3 * GIB
    assert result.summary().endswith(
        "so far; stopped by the memory budget (3,072 MiB resident of 2,048 MiB)"
    )


def test_findings_so_far_are_kept_when_the_budget_stops_it() -> None:
    model = Increments(workers=3, rounds=2)
    whole = explore(model)
    result = explore(
        model, strategy="dfs", bounds=Bounds(max_memory=GIB), resident=reader([0, 0, 0, GIB])
    )
    assert result.stopped_by is StopReason.MAX_MEMORY
    assert [f.name for f in result.violations] == [f.name for f in whole.violations]
    assert "1 invariant violation so far; stopped by the memory budget" in result.summary()


def test_a_tiny_budget_stops_it_at_the_first_reading() -> None:
    result = explore(Workers(workers=4, private=4), bounds=Bounds(max_memory=1))
    assert result.stopped_by is StopReason.MAX_MEMORY
    assert result.states == search.CLOCK_EVERY
    assert result.resident is not None
    assert result.resident > 1


def test_without_a_budget_memory_is_not_read() -> None:
    read = reader([10 * GIB])
    result = explore(Workers(workers=3, private=2), resident=read)
    assert result.exhausted
    assert result.resident is None
    assert read.reads == []  # type: ignore[attr-defined]


class Greedy(Workers):
    """Workers whose copies fail for want of memory after ``copies`` of them."""

    copies: int = 40

    def clone(self) -> Workers:
        Greedy.copies -= 1
        if Greedy.copies < 0:
            raise MemoryError
        return super().clone()


@pytest.mark.parametrize("budget", [None, 4 * GIB])
def test_a_memory_error_is_one_error_saying_what_was_explored(budget: int | None) -> None:
    Greedy.copies = 40
    model: Model = Greedy(workers=4, private=4)
    with pytest.raises(ExplorationMemoryError) as raised:
        explore(model, bounds=Bounds(max_memory=budget), reduction=SleepSets())
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("out of memory after ")
    assert " distinct states to depth " in message
    if budget is None:
        assert "before any memory budget (none was set)" in message
    else:
        assert "before the memory budget of 4,096 MiB was reached" in message


def test_resident_memory_is_the_resident_set_the_kernel_reports() -> None:
    """Compared with the kernel's own figure rather than with memory allocated here: how
    much of a fresh allocation a kernel counts resident, and when, differs between
    kernels and sandboxes."""
    try:
        fields = budgets.STATM.read_bytes().split()
    except OSError:
        pytest.skip("no /proc/self/statm here")
    kernel = int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
    assert abs(resident_bytes() - kernel) < 64 * 1024**2


def test_without_statm_the_peak_resident_set_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(budgets, "STATM", tmp_path / "no-statm")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    read = resident_bytes()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    unit = 1 if sys.platform == "darwin" else 1024
    assert before * unit <= read <= after * unit


def test_the_default_budget_stays_below_the_machine_and_an_address_space_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(budgets, "machine_memory", lambda: 64 * GIB)
    monkeypatch.setattr(budgets, "address_space_limit", lambda: None)
    assert default_memory_budget() == 4 * GIB
    monkeypatch.setattr(budgets, "machine_memory", lambda: 2 * GIB)
    assert default_memory_budget() == GIB
    monkeypatch.setattr(budgets, "address_space_limit", lambda: GIB)
    assert default_memory_budget() < 3 * GIB // 4
    monkeypatch.setattr(budgets, "machine_memory", lambda: None)
    monkeypatch.setattr(budgets, "address_space_limit", lambda: None)
    assert default_memory_budget() == 4 * GIB


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("0", "--max-memory takes a memory size of at least 1mb (512mb, 2gb), got '0'"),
        ("1023kb", "--max-memory takes a memory size of at least 1mb"),
        ("lots", "--max-memory: memory size 'lots' does not start with a whole number"),
        ("2 parsecs", "--max-memory: memory size unit 'parsecs' of '2 parsecs' is none of"),
    ],
)
def test_a_budget_that_is_not_a_memory_size_is_refused(raw: str, message: str) -> None:
    with pytest.raises(
        InvalidParameterError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        memory_bound(raw, "--max-memory")


def test_the_budget_is_a_bound_checked_as_the_others() -> None:
    with pytest.raises(InvalidParameterError, match="max_memory must be a whole number"):
        Bounds(max_memory=0)
    assert memory_bound("1mb", "budget") == 1024**2
