"""The parallelism a forecast restores at: every operator's, or some operators' by name."""

from __future__ import annotations

import pytest

from flinkstate.errors import InvalidParameterError
from flinkstate.lab.new_parallelism import NewParallelism

NOW = {"to-record": 2, "slow-counter": 4}


@pytest.mark.parametrize(
    ("given", "expected", "text"),
    [
        (["3"], {"to-record": 3, "slow-counter": 3}, "3"),
        (["slow-counter=3"], {"to-record": 2, "slow-counter": 3}, "slow-counter=3"),
        (["slow-counter=5", "3"], {"to-record": 3, "slow-counter": 5}, "3, slow-counter=5"),
        ([" slow-counter = 3 "], {"to-record": 2, "slow-counter": 3}, "slow-counter=3"),
        ({"to-record": 1}, {"to-record": 1, "slow-counter": 4}, "to-record=1"),
        (7, {"to-record": 7, "slow-counter": 7}, "7"),
    ],
)
def test_each_operator_gets_its_new_parallelism(
    given: object, expected: dict[str, int], text: str
) -> None:
    target = NewParallelism.parse(given)  # type: ignore[arg-type]
    assert target.of(NOW) == expected
    assert str(target) == text
    assert NewParallelism.parse(target) is target


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["3", "4"], "every operator's parallelism twice"),
        (["slow-counter=3", "slow-counter=4"], "operator 'slow-counter' twice"),
        (["three"], "'three' is not a parallelism"),
        (["slow-counter="], "'slow-counter=' is not a parallelism"),
        (["0"], "--to"),
        (["slow-counter=0"], "--to slow-counter"),
        ([], "names no parallelism"),
    ],
)
def test_what_is_not_a_parallelism_is_refused_in_one_line(given: list[str], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message) as refused:
        NewParallelism.parse(given)
    assert "\n" not in str(refused.value)


def test_an_operator_not_in_the_job_is_named() -> None:
    with pytest.raises(InvalidParameterError, match=r"'sink', not an operator.*to-record"):
        NewParallelism.parse(["sink=3"]).of(NOW)


def test_the_file_label_has_no_spaces() -> None:
    assert NewParallelism.parse(["3", "slow-counter=5"]).label == "3-slow-counter=5"
