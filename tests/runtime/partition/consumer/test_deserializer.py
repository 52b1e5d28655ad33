"""The one record reassembler: spanning records, and broken framing named as it happens."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.partition.consumer.deserializer import Framing, reassemble


def test_a_record_spanning_three_buffers_completes_with_its_last_fragment() -> None:
    partial, framing = reassemble(None, Fragment(7, 0, 100, 250))
    assert (partial, framing) == ((7, 100), Framing.IN_ORDER)
    partial, framing = reassemble(partial, Fragment(7, 100, 100, 250))
    assert (partial, framing) == ((7, 200), Framing.IN_ORDER)
    partial, framing = reassemble(partial, Fragment(7, 200, 50, 250))
    assert (partial, framing) == (None, Framing.IN_ORDER)


def test_a_record_starting_before_the_last_one_ended_cuts_it_off() -> None:
    partial, framing = reassemble((7, 100), Fragment(8, 0, 40, 40))
    assert (partial, framing) == (None, Framing.CUT_OFF)


def test_a_fragment_that_continues_another_record_is_dropped() -> None:
    assert reassemble((7, 100), Fragment(9, 40, 10, 50)) == ((7, 100), Framing.NOT_CONTINUED)
    assert reassemble(None, Fragment(9, 40, 10, 50)) == (None, Framing.NOT_CONTINUED)


@given(
    st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=20),
    st.integers(min_value=1, max_value=128),
)
def test_records_cut_into_buffers_of_any_size_reassemble_in_order(
    sizes: list[int], capacity: int
) -> None:
    fragments = []
    for record, size in enumerate(sizes):
        start = 0
        while start < size:
            length = min(capacity, size - start)
            fragments.append(Fragment(record, start, length, size))
            start += length
    partial = None
    completed = []
    for fragment in fragments:
        partial, framing = reassemble(partial, fragment)
        assert framing is Framing.IN_ORDER
        if partial is None:
            completed.append(fragment.record)
    assert completed == list(range(len(sizes)))
