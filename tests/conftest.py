"""Shared fixtures: reference values computed by Flink's own jar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REFERENCE = Path(__file__).parent / "reference" / "flink-2.3.0-arithmetic.json"


@pytest.fixture(scope="session")
def flink_reference() -> dict[str, Any]:
    """Values printed by tests/reference/FlinkArithmeticReference.java against flink-dist 2.3.0."""
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data
