"""The benchmark's pandas baseline must answer what the Spark pipeline answers, or its timings
compare two different computations: checked here against the model's own state assignment on
every sample, the same reference the Spark pipeline is held to."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from benchmarks.pandas_rescaling import PandasRescaling
from flinkstate.errors import InvalidParameterError
from flinkstate.lab.scenario_run import run_scenario
from flinkstate.runtime.checkpoint.state_assignment import assign_state
from flinkstate.samples import SAMPLES
from tests.movement_model import model_movement, normalised, sweep

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.slow
@pytest.mark.parametrize("recover_output_on_downstream", [False, True])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_movement_equals_the_model_state_assignment(
    name: str, recover_output_on_downstream: bool
) -> None:
    sample = SAMPLES[name]
    run = run_scenario(sample.scenario, seed=sample.seed, overrides=sample.overrides)
    assert run.checkpoint is not None
    scenarios = dict(enumerate(sweep(run), start=1))
    baseline = PandasRescaling(DATA / name)
    answer = baseline.movement(scenarios, recover_output_on_downstream=recover_output_on_downstream)
    expected = pd.concat(
        [
            model_movement(
                assign_state(
                    run.checkpoint,
                    parallelism,
                    recover_output_on_downstream=recover_output_on_downstream,
                ),
                label,
            )
            for label, parallelism in scenarios.items()
        ],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(normalised(answer), normalised(expected))
    # the cache of record starts answers a second question without changing the first answer
    again = baseline.movement(scenarios, recover_output_on_downstream=recover_output_on_downstream)
    pd.testing.assert_frame_equal(normalised(again), normalised(answer))


def test_bad_questions_get_the_pipeline_errors() -> None:
    baseline = PandasRescaling(DATA / "keyed")
    operator = baseline.shape.operators[-1].name
    with pytest.raises(InvalidParameterError, match="parallelism"):
        baseline.movement({1: {operator: 0}})
    with pytest.raises(InvalidParameterError, match="no-such-operator"):
        baseline.movement({1: {"no-such-operator": 2}})
