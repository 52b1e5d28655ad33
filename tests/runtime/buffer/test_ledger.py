"""The segment ledger: every move checked against the owner, reference counting, the journal."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flinkstate.runtime.buffer.ledger import (
    KEY_CHUNK,
    ReturnKind,
    ReturnTo,
    SegmentLedger,
    StepJournal,
)
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.checkpoint.channel.happenings import RecordFilteredOut
from flinkstate.runtime.tasks.happenings import RecordEmitted, RecordProcessed
from flinkstate.sim.action import Action
from flinkstate.sim.core import Move

W = Owner(OwnerKind.CHANNEL_STATE_WRITER, "tm0.0")
V = Owner(OwnerKind.CHANNEL_STATE_WRITER, "tm0.1")
POOL_P = Owner(OwnerKind.POOL, "p")
POOL_Q = Owner(OwnerKind.POOL, "q")
QUEUE_AB = Owner(OwnerKind.QUEUE, "a>b")
QUEUE_AB0 = Owner(OwnerKind.QUEUE, "a>b0")
QUEUE_AB1 = Owner(OwnerKind.QUEUE, "a>b1")
QUEUE_X = Owner(OwnerKind.QUEUE, "x")
RECEIVED_C = Owner(OwnerKind.RECEIVED, "c")
BUILDER_X = Owner(OwnerKind.BUILDER, "x")
EXCLUSIVE_C = Owner(OwnerKind.EXCLUSIVE, "c")
DESERIALIZER_B = Owner(OwnerKind.DESERIALIZER, "task b")
WRITER = Owner(OwnerKind.CHANNEL_STATE_WRITER, "w0")


def ledger_of(count: int = 3, owner: Owner = POOL_P) -> SegmentLedger:
    ledger = SegmentLedger(StepJournal())
    ledger.new_segments(count, owner)
    return ledger


def test_a_move_from_the_owner_is_recorded_and_breaks_nothing() -> None:
    ledger = ledger_of()
    ledger.move(1, POOL_P, QUEUE_AB)
    assert ledger.owner == [
        POOL_P,
        QUEUE_AB,
        POOL_P,
    ]
    assert ledger.home == [POOL_P] * 3
    assert ledger.journal.moves == [Move(1, POOL_P, QUEUE_AB)]
    assert ledger.journal.violations == []


def test_a_move_from_the_wrong_holder_is_a_violation_and_a_repeated_recycle_a_double_one() -> None:
    ledger = ledger_of()
    ledger.journal.step = 7
    ledger.move(0, QUEUE_AB, POOL_P)  # the pool already has it: recycled twice
    ledger.move(1, RECEIVED_C, POOL_Q)
    found = [(v.invariant, v.step) for v in ledger.journal.violations]
    assert found == [("double-recycle", 7), ("segment-ownership", 7)]
    assert "expected at received c but owned by pool p" in ledger.journal.violations[1].message


def test_the_last_holder_of_a_shared_segment_learns_where_it_returns() -> None:
    ledger = ledger_of()
    ledger.move(2, POOL_P, QUEUE_AB0)
    back = ReturnTo(ReturnKind.PARTITION, "a>b")
    ledger.share(2, QUEUE_AB1, back)
    ledger.share(2, WRITER)
    assert ledger.let_go(2, QUEUE_AB1, None) is None
    # the owner lets go while the writer still holds it: the writer becomes the owner
    assert ledger.let_go(2, QUEUE_AB0, None) is None
    assert ledger.owner[2] == WRITER
    assert ledger.shares == {}
    assert ledger.let_go(2, WRITER, None) == back
    assert ledger.returns == {}


def test_an_unshared_segment_returns_where_its_holder_says() -> None:
    ledger = ledger_of()
    to_channel = ReturnTo(ReturnKind.CHANNEL, "b<a")
    assert ledger.let_go(0, POOL_P, to_channel) == to_channel


def test_a_shared_reference_changes_hands_without_moving_the_segment() -> None:
    ledger = ledger_of()
    ledger.share(0, QUEUE_X)
    ledger.hand_over(0, QUEUE_X, DESERIALIZER_B)
    assert ledger.shares == {0: [DESERIALIZER_B]}
    assert ledger.owner[0] == POOL_P
    assert ledger.journal.moves == []
    ledger.hand_over(0, POOL_P, BUILDER_X)  # the owner's reference is a move
    assert ledger.journal.moves == [Move(0, POOL_P, BUILDER_X)]


def test_the_heap_keeps_its_peak() -> None:
    ledger = ledger_of()
    ledger.heap(32768)
    ledger.heap(4096)
    ledger.heap(-32768)
    assert (ledger.heap_bytes, ledger.heap_peak) == (4096, 36864)


def test_a_copy_is_independent_and_writes_into_its_own_journal() -> None:
    ledger = ledger_of()
    ledger.share(1, W)
    journal = ledger.journal.copy()
    twin = ledger.copy(journal)
    twin.move(0, POOL_P, BUILDER_X)
    twin.rehome(2, EXCLUSIVE_C)
    twin.shares[1].append(V)
    assert ledger.owner[0] == POOL_P
    assert ledger.home[2] == POOL_P
    assert ledger.shares == {1: [W]}
    assert ledger.journal.moves == []
    assert journal.moves == [Move(0, POOL_P, BUILDER_X)]


def test_the_journal_turns_a_step_into_an_event_and_starts_the_next_one_empty() -> None:
    journal = StepJournal()
    journal.emitted.append(4)
    journal.tell(RecordEmitted(4, 1, 21))
    event = journal.event(Action("task src[0]", "emit"), "record 4 key 1 (21 bytes)")
    assert (event.step, event.emitted, event.note) == (0, (4,), "record 4 key 1 (21 bytes)")
    assert event.happenings == (RecordEmitted(4, 1, 21),)
    assert journal.step == 1
    assert (journal.emitted, journal.happenings) == ([], ())


def test_a_happening_told_replaces_the_steps_and_one_told_also_follows_it() -> None:
    journal = StepJournal()
    journal.tell(RecordProcessed(1, 5))
    journal.tell(RecordProcessed(2, 6))
    journal.tell_also(RecordFilteredOut(3, subtask=1))
    assert journal.happenings == (RecordProcessed(2, 6), RecordFilteredOut(3, 1))
    assert journal.copy().happenings == ()


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 299), st.booleans()), max_size=60))
def test_the_kept_chunks_of_the_key_are_the_key_made_anew(
    steps: list[tuple[int, int, bool]],
) -> None:
    """Moves, new homes and copies in any order: the chunks a ledger keeps are always the
    ones made afresh, and a chunk no step changed (or that changed back) is the very object
    it was, in the ledger and in its copies."""
    owners = (POOL_P, POOL_Q, QUEUE_AB, RECEIVED_C)
    ledger = ledger_of(300)
    before = ledger.chunk_keys()
    for owner, segment, rehome in steps:
        if rehome:
            ledger.rehome(segment, owners[owner])
        else:
            ledger.move(segment, ledger.owner[segment], owners[owner])
        if segment % 3 == 0:
            ledger = ledger.copy(StepJournal())
        kept = ledger.chunk_keys()
        assert kept == ledger.chunk_keys(fresh=True) == ledger.state_key()[: len(kept)]
        assert len(kept) == 2 * -(-300 // KEY_CHUNK)
        for old, new in zip(before, kept, strict=True):
            assert (old == new) == (old is new)
        before = kept
