from __future__ import annotations

from flinkstate.sim import Wait, find_deadlock


def test_cycle_among_longer_chain() -> None:
    waits = [
        Wait("a", "r1", ("b",)),
        Wait("b", "r2", ("c",)),
        Wait("c", "r3", ("b",)),
        Wait("d", "r4", ("a",)),
    ]
    report = find_deadlock(waits, 10)
    assert report.cycle == ("b", "c")
    assert "b -> c -> b" in report.describe()


def test_stuck_without_cycle() -> None:
    report = find_deadlock([Wait("a", "input", ())], 3)
    assert not report.has_cycle
    assert "held by nobody" in report.describe()
    assert "no waits-for cycle" in report.describe()
