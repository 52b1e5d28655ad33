"""``tools/verify-independence.py``: it sweeps every topology, fault and scenario, and a
footprint that misses something fails it with the two actions named."""

from __future__ import annotations

from collections.abc import Hashable
from types import ModuleType

import pytest

from flinkstate.runtime.world.exploration.footprint import Resource, ResourceKind
from flinkstate.runtime.world.world import NetworkWorld
from flinkstate.sim import Action
from tests.tools import load_script


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_script("verify-independence.py", "verify_independence")


def test_every_topology_fault_and_scenario_restart_is_a_subject(tool: ModuleType) -> None:
    from flinkstate.runtime.options import FAULTS

    labels = [label for label, _ in tool.subjects({"keyed", "baseline-recovery"}, seeds=2)]
    assert labels[0] == "keyed"
    assert {f"keyed +{fault}" for fault in FAULTS} <= set(labels)
    assert labels[-2:] == [
        "baseline-recovery restart (seed 0)",
        "baseline-recovery restart (seed 1)",
    ]


@pytest.mark.slow
def test_footprints_that_hold_pass(tool: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    # a dozen steps of the job alone and with each fault: the sweep's way through, not its
    # breadth (tests/runtime/world/test_independence.py checks the claims along whole runs)
    assert tool.main(["--only", "two-input", "--seeds", "1", "--limit", "12"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("two-input: ")
    assert "independence claims commutes" in out.splitlines()[-1]


def test_a_footprint_that_misses_something_fails_naming_the_pair(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def own_actor_only(self: NetworkWorld, action: Action) -> frozenset[Hashable]:
        # every two actors independent (false), each touching no component (false too)
        return frozenset([Resource(ResourceKind.RECORDS, action.actor)])

    monkeypatch.setattr(NetworkWorld, "footprint", own_actor_only)
    assert tool.main(["--only", "keyed", "--seeds", "1", "--limit", "40"]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("keyed: at step ")
    assert "said to be independent" in out


def test_a_footprint_that_misses_what_its_action_changes_fails_naming_it(
    tool: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    honest = NetworkWorld.footprint

    def no_pipes(self: NetworkWorld, action: Action) -> frozenset[Resource] | None:
        touched = honest(self, action)
        if touched is None:
            return None
        return frozenset(
            r for r in touched if r.kind not in (ResourceKind.LINK, ResourceKind.BUILDER)
        )

    monkeypatch.setattr(NetworkWorld, "footprint", no_pipes)
    assert tool.main(["--only", "keyed", "--seeds", "1", "--limit", "60"]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("keyed: at step ")
    assert "its footprint does not name" in out
