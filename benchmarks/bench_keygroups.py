"""Key-group assignment: the vectorised path against the scalar one it must equal.

The Spark pipeline assigns key groups to millions of records through the vectorised functions;
the baseline is the per-key scalar function over the same keys, in the same run.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Measurement, best_of
from flinkstate.keygroups import (
    assign_key_to_parallel_operator,
    assign_key_to_parallel_operator_array,
)


def run(smoke: bool) -> list[Measurement]:
    vector_keys = 20_000 if smoke else 2_000_000
    scalar_keys = 2_000 if smoke else 100_000
    repeat = 2 if smoke else 5
    rng = np.random.default_rng(7)
    keys = rng.integers(-(2**62), 2**62, size=vector_keys, dtype=np.int64)
    sample = keys[:scalar_keys].tolist()

    expected = [assign_key_to_parallel_operator(k, 128, 7, "long") for k in sample]
    actual = assign_key_to_parallel_operator_array(keys[:scalar_keys], 128, 7, "long").tolist()
    if actual != expected:
        raise AssertionError("vectorised key-group assignment differs from the scalar one")

    scalar = best_of(
        lambda: [assign_key_to_parallel_operator(k, 128, 7, "long") for k in sample], repeat
    )
    vector = best_of(lambda: assign_key_to_parallel_operator_array(keys, 128, 7, "long"), repeat)
    copy = best_of(lambda: keys.copy(), repeat)
    scalar_same_keys = scalar / scalar_keys * vector_keys
    return [
        Measurement(
            "vectorised assignment",
            vector,
            f"scalar assignment (timed on {scalar_keys:,} keys, scaled)",
            scalar_same_keys,
            vector_keys,
        ),
        Measurement("vectorised assignment", vector, "numpy copy of the keys", copy, vector_keys),
    ]
