"""The reader under the seeded fuzzer (``tests/flinkcheckpoint/fuzz.py``): every broken
checkpoint ends in one line naming the problem or in an answer that is right or warned;
``make fuzz`` runs the same harness longer."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.flinkcheckpoint.fuzz import OUTCOMES, committed_checkpoints, fuzz, mutations

#: enough to meet every kind of mutation on every checkpoint, in about a minute
MUTATIONS = 240


def test_the_mutations_cover_every_kind_and_checkpoint() -> None:
    stream = mutations(committed_checkpoints(), seed=1)
    seen = [next(stream) for _ in range(MUTATIONS)]
    assert {m.kind for m in seen} == {"flip", "truncate", "inflate", "field", "chunk", "special"}
    assert {m.checkpoint for m in seen} == set(committed_checkpoints())


def test_the_same_seed_breaks_the_same_way() -> None:
    first, second = mutations(committed_checkpoints(), 7), mutations(committed_checkpoints(), 7)
    assert [str(next(first)) for _ in range(50)] == [str(next(second)) for _ in range(50)]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1])
def test_every_broken_checkpoint_ends_in_a_clean_error_or_a_right_answer(seed: int) -> None:
    results = fuzz(MUTATIONS, seed)
    counts = Counter(r.outcome for r in results)
    bad = [
        f"{r.outcome}: {r.mutation}: {r.detail}"
        for r in results
        if r.outcome not in ("error", "answer")
    ]
    assert not bad, "\n".join(bad[:10])
    assert set(counts) <= set(OUTCOMES)
    assert counts["error"] > MUTATIONS // 3  # the mutations do break things
