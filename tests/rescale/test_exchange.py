from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkstate.errors import FlinkstateError, InvalidParameterError, UnsupportedRescaleError
from flinkstate.keygroups import assign_to_key_group, compute_operator_index_for_key_group
from flinkstate.rescale import (
    NO_RESCALE,
    ExchangeRescale,
    ExchangeSummary,
    MappingType,
    Partitioner,
    RescaleMappings,
    SubtaskStateMapper,
    VirtualChannel,
    VirtualChannelBlock,
    rescale_exchange,
    summarise_exchange,
)

from .test_mapper import mappings


def identity_like(mapping: RescaleMappings) -> tuple[tuple[int, ...], ...]:
    return mapping.all_rows()


# --- Flink's StateAssignmentOperationTest (RANGE downstream, ROUND_ROBIN upstream) ----------


@pytest.mark.parametrize("on_downstream", [False, True])
def test_channel_state_assignment_downscaling(on_downstream: bool) -> None:
    plan = rescale_exchange("keyBy", (3, 2), (3, 2), recover_output_on_downstream=on_downstream)
    assert [d.input_state_from for d in plan.downstream] == [(0, 1), (1, 2)]
    up0, up1 = plan.upstream
    assert up0.descriptor.old_subtask_indexes == (0, 2)
    assert up0.descriptor.rescaled_channels_mapping == mappings((0, 1), (1, 2))
    assert up0.descriptor.ambiguous_subtask_indexes == frozenset()
    assert up1.descriptor.old_subtask_indexes == (1,)
    assert up1.descriptor.rescaled_channels_mapping == mappings((0, 1), (1, 2))
    down0, down1 = plan.downstream
    assert down0.descriptor.old_subtask_indexes == (0, 1)
    assert down0.descriptor.rescaled_channels_mapping == mappings((0, 2), (1,))
    assert down0.descriptor.ambiguous_subtask_indexes == {1}
    assert down1.descriptor.old_subtask_indexes == (1, 2)
    assert down1.descriptor.rescaled_channels_mapping == mappings((0, 2), (1,))
    assert down1.descriptor.ambiguous_subtask_indexes == {1}
    if on_downstream:
        assert [u.output_state_from for u in plan.upstream] == [(), ()]
        assert down0.upstream_output_state_from == ((0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1))
        assert down1.upstream_output_state_from == ((0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2))
    else:
        assert [u.output_state_from for u in plan.upstream] == [(0, 2), (1,)]
        assert down0.upstream_output_state_from == ()


@pytest.mark.parametrize("on_downstream", [False, True])
def test_channel_state_assignment_upscaling(on_downstream: bool) -> None:
    plan = rescale_exchange("keyBy", (2, 3), (2, 3), recover_output_on_downstream=on_downstream)
    assert [d.input_state_from for d in plan.downstream] == [(0,), (0, 1), (1,)]
    assert plan.upstream[0].descriptor.old_subtask_indexes == (0,)
    assert plan.upstream[0].descriptor.rescaled_channels_mapping == mappings((0,), (0, 1), (1,))
    assert plan.upstream[1].descriptor.old_subtask_indexes == (1,)
    assert plan.upstream[2].descriptor is NO_RESCALE  # unmapped subtask: nothing to do
    expected_old = [(0,), (0, 1), (1,)]
    for down, old in zip(plan.downstream, expected_old, strict=True):
        assert down.descriptor.old_subtask_indexes == old
        assert down.descriptor.rescaled_channels_mapping == mappings((0,), (1,), ())
        assert down.descriptor.ambiguous_subtask_indexes == {0, 1}
        assert down.descriptor.mapping_type is MappingType.RESCALING
    if on_downstream:
        assert [d.upstream_output_state_from for d in plan.downstream] == [
            ((0, 0), (1, 0)),
            ((0, 0), (0, 1), (1, 0), (1, 1)),
            ((0, 1), (1, 1)),
        ]
    else:
        assert [u.output_state_from for u in plan.upstream] == [(0,), (1,), ()]


@pytest.mark.parametrize("on_downstream", [False, True])
def test_channel_state_assignment_no_rescale(on_downstream: bool) -> None:
    # StateAssignmentOperationTest.testChannelStateAssignmentNoRescale: RANGE downstream,
    # ROUND_ROBIN upstream, 2 -> 2 on both sides: every subtask its own state, NO_RESCALE
    plan = rescale_exchange("keyBy", (2, 2), (2, 2), recover_output_on_downstream=on_downstream)
    assert [d.input_state_from for d in plan.downstream] == [(0,), (1,)]
    assert all(u.descriptor is NO_RESCALE for u in plan.upstream)
    assert all(d.descriptor is NO_RESCALE for d in plan.downstream)
    if on_downstream:
        # indexes0 {0, 0, 1, 0} and indexes1 {0, 1, 1, 1}: (old upstream, old subpartition)
        assert [u.output_state_from for u in plan.upstream] == [(), ()]
        assert [d.upstream_output_state_from for d in plan.downstream] == [
            ((0, 0), (1, 0)),
            ((0, 1), (1, 1)),
        ]
    else:
        assert [u.output_state_from for u in plan.upstream] == [(0,), (1,)]
        assert [d.upstream_output_state_from for d in plan.downstream] == [(), ()]


def test_channel_state_assignment_stability() -> None:
    # StateAssignmentOperationTest.testChannelStateAssignmentStability: 100 subtasks kept,
    # RANGE downstream and ROUND_ROBIN upstream: each new subtask gets its old subtask's state
    plan = rescale_exchange("keyBy", (100, 100), (100, 100))
    assert [d.input_state_from for d in plan.downstream] == [(i,) for i in range(100)]
    assert [u.output_state_from for u in plan.upstream] == [(i,) for i in range(100)]


@pytest.mark.parametrize(
    ("upstream", "downstream", "upstream_old_subtasks", "downstream_old_subtasks"),
    [
        # testOnlyUpstreamChannelRescaleStateAssignment: only the upstream has (output)
        # state; the downstream goes from 5 to 3
        ((5, 5), (5, 3), 5, 7),
        # testOnlyDownstreamChannelRescaleStateAssignment: only the downstream has (input)
        # state; the upstream goes from 5 to 3
        ((5, 3), (5, 5), 5, 5),
    ],
)
def test_only_upstream_or_downstream_rescaling(
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    upstream_old_subtasks: int,
    downstream_old_subtasks: int,
) -> None:
    """StateAssignmentOperationTest.testOnlyUpstreamOrDownstreamRescalingInternal (FLINK-31963):
    RANGE downstream, ROUND_ROBIN upstream. Every new subtask on either side has a descriptor
    naming at least one old subtask, and their old subtasks add up to Flink's counts."""
    plan = rescale_exchange("keyBy", upstream, downstream)
    ups = [len(u.descriptor.old_subtask_indexes) for u in plan.upstream]
    downs = [len(d.descriptor.old_subtask_indexes) for d in plan.downstream]
    assert all(n > 0 for n in ups + downs)
    assert (sum(ups), sum(downs)) == (upstream_old_subtasks, downstream_old_subtasks)


# --- FLINK-40269: which edge's mapping a descriptor carries ---------------------------------


@pytest.mark.parametrize("on_downstream", [False, True])
def test_duplicate_connections_carry_their_own_edges_mapping_or_the_first_edges(
    on_downstream: bool,
) -> None:
    """StateAssignmentOperationTest.testChannelStateAssignmentUsesResultIdForDuplicateJob-
    VertexConnections: two edges join the same two vertices, both 3 -> 2, with different
    mappers. Since FLINK-40269 each partition's descriptor carries the downstream mapping of
    its own edge (here keyBy: RANGE); before, of the first edge (here rebalance: ROUND_ROBIN).
    The gates' carry the upstream mapping, ARBITRARY on every edge Flink checkpoints
    unaligned, so on that side the two lookups agree."""
    own = rescale_exchange("keyBy", (3, 2), (3, 2), recover_output_on_downstream=on_downstream)
    first = rescale_exchange(
        "keyBy",
        (3, 2),
        (3, 2),
        recover_output_on_downstream=on_downstream,
        connected="rebalance",
    )
    range_3_to_2 = mappings((0, 1), (1, 2))
    round_robin_3_to_2 = mappings((0, 2), (1,))
    assert SubtaskStateMapper.RANGE.new_to_old(3, 2) == range_3_to_2
    assert SubtaskStateMapper.ROUND_ROBIN.new_to_old(3, 2) == round_robin_3_to_2
    assert SubtaskStateMapper.ARBITRARY.new_to_old(3, 2) == round_robin_3_to_2
    assert (own.connected, first.connected) == (None, Partitioner.REBALANCE)
    for plan, partition_mapping in ((own, range_3_to_2), (first, round_robin_3_to_2)):
        assert {u.descriptor.rescaled_channels_mapping for u in plan.upstream} == {
            partition_mapping
        }
        assert {d.descriptor.rescaled_channels_mapping for d in plan.downstream} == {
            round_robin_3_to_2
        }
        # a side's own mapping is its edge's either way
        assert [d.input_state_from for d in plan.downstream] == [(0, 1), (1, 2)]
        assert [d.descriptor.old_subtask_indexes for d in plan.downstream] == [(0, 1), (1, 2)]
    if on_downstream:
        # ResultSubpartitionDistributor: old subpartition s to the new subtasks the partition's
        # mapping gives it
        assert [d.upstream_output_state_from for d in first.downstream] == [
            ((0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)),
            ((0, 1), (1, 1), (2, 1)),
        ]
        assert own.downstream[0].upstream_output_state_from == (
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 1),
            (2, 0),
            (2, 1),
        )
    else:
        assert [own.upstream[0].new_subpartitions(s) for s in range(3)] == [(0,), (0, 1), (1,)]
        assert [first.upstream[0].new_subpartitions(s) for s in range(3)] == [(0,), (1,), (0,)]


def test_no_rescale_reads_own_state() -> None:
    plan = rescale_exchange("keyBy", (3, 3), (3, 3))
    for d in plan.downstream:
        assert d.descriptor is NO_RESCALE
        assert d.input_state_from == (d.subtask,)
        assert not d.demultiplexes
        assert d.virtual_channels == tuple(
            (VirtualChannel(d.subtask, channel),) for channel in range(3)
        )
    assert "unchanged" in plan.note


def test_virtual_channels_of_an_upscale() -> None:
    # DemultiplexingRecordDeserializerTest.testUpscale-like: new subtask 1 of RANGE 2 -> 3 reads
    # old subtasks 0 and 1 over every old channel, filtering both (both are shared).
    plan = rescale_exchange("keyBy", (2, 2), (2, 3))
    down1 = plan.downstream[1]
    assert down1.demultiplexes
    assert down1.virtual_channels == (
        (VirtualChannel(0, 0, True), VirtualChannel(1, 0, True)),
        (VirtualChannel(0, 1, True), VirtualChannel(1, 1, True)),
    )


def test_rebalance_never_filters() -> None:
    plan = rescale_exchange("rebalance", (4, 4), (10, 4))
    assert not plan.filters
    assert [d.input_state_from for d in plan.downstream] == [(0, 4, 8), (1, 5, 9), (2, 6), (3, 7)]


def test_pointwise_and_broadcast_carry_no_channel_state() -> None:
    for name in ("forward", "rescale", "broadcast"):
        upstream = (3, 2) if name == "forward" else (3, 5)
        plan = rescale_exchange(name, upstream, (3, 2))
        assert not plan.carries_channel_state
        assert all(d.input_state_from == () for d in plan.downstream)
        assert "no in-flight data" in plan.note


def test_a_rebalance_aligned_by_its_consumer_carries_no_channel_state() -> None:
    plan = rescale_exchange("rebalance", (5, 2), (10, 4), aligned_by_graph=True)
    assert not plan.carries_channel_state
    assert all(d.input_state_from == () for d in plan.downstream)
    assert all(u.output_state_from == () for u in plan.upstream)
    assert "aligns all of its inputs" in plan.note
    assert rescale_exchange("rebalance", (5, 2), (10, 4)).carries_channel_state


def test_forced_unaligned_pointwise_rescale_fails_like_flink() -> None:
    with pytest.raises(UnsupportedRescaleError, match="Cannot rescale the given pointwise"):
        rescale_exchange("rescale", (3, 2), (3, 2), unaligned_forced=True)


def test_forward_needs_equal_parallelism() -> None:
    with pytest.raises(InvalidParameterError, match="forward partitioning"):
        rescale_exchange("forward", (3, 3), (3, 2))


def test_bad_parallelism_is_named() -> None:
    with pytest.raises(InvalidParameterError, match="downstream parallelism 0"):
        rescale_exchange("keyBy", (3, 3), (3, 0))


# --- every persisted record reaches exactly one new subtask --------------------------------

MAX_PARALLELISM = 128
scaled = st.tuples(st.integers(1, 12), st.integers(1, 12))


def _keeps(partitioner: Partitioner, key: int, subtask: int, new_parallelism: int) -> bool:
    """The record filter: keep iff the partitioner, set up with the new parallelism, picks us."""
    if partitioner is Partitioner.HASH:
        group = assign_to_key_group(key, MAX_PARALLELISM, "long")
        return compute_operator_index_for_key_group(MAX_PARALLELISM, new_parallelism, group) == (
            subtask
        )
    return key % new_parallelism == subtask  # a deterministic custom partitioner


def _old_target(partitioner: Partitioner, key: int, old_parallelism: int) -> int:
    return next(s for s in range(old_parallelism) if _keeps(partitioner, key, s, old_parallelism))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([Partitioner.HASH, Partitioner.CUSTOM]),
    scaled,
    scaled,
    st.booleans(),
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30),
    st.data(),
)
def test_each_filtered_record_is_kept_by_exactly_its_selected_subtask(
    partitioner: Partitioner,
    upstream: tuple[int, int],
    downstream: tuple[int, int],
    on_downstream: bool,
    keys: list[int],
    data: st.DataObject,
) -> None:
    plan = rescale_exchange(
        partitioner, upstream, downstream, recover_output_on_downstream=on_downstream
    )
    for key in keys:
        old_downstream = _old_target(partitioner, key, downstream[0])
        old_channel = data.draw(st.integers(0, upstream[0] - 1))
        keepers = [
            d.subtask
            for d in plan.downstream
            for vc in d.all_virtual_channels
            if (vc.old_subtask, vc.old_channel) == (old_downstream, old_channel)
            and (not vc.filtered or _keeps(partitioner, key, d.subtask, downstream[1]))
        ]
        selected = next(
            s for s in range(downstream[1]) if _keeps(partitioner, key, s, downstream[1])
        )
        assert keepers == [selected]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([Partitioner.REBALANCE, Partitioner.SHUFFLE, Partitioner.GLOBAL]),
    scaled,
    scaled,
)
def test_round_robin_and_first_give_each_old_channel_one_reader(
    partitioner: Partitioner, upstream: tuple[int, int], downstream: tuple[int, int]
) -> None:
    plan = rescale_exchange(partitioner, upstream, downstream)
    readers: dict[tuple[int, int], list[int]] = {}
    for d in plan.downstream:
        for vc in d.all_virtual_channels:
            assert not vc.filtered
            readers.setdefault((vc.old_subtask, vc.old_channel), []).append(d.subtask)
    # global() sends every record to subtask 0, so only old subtask 0 holds in-flight data.
    old_holders = [0] if partitioner is Partitioner.GLOBAL else range(downstream[0])
    for old in old_holders:
        for channel in range(upstream[0]):
            assert len(readers.get((old, channel), [])) == 1, (old, channel, readers)
    if partitioner is not Partitioner.GLOBAL:
        assert all(len(r) == 1 for r in readers.values())


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from([Partitioner.HASH, Partitioner.REBALANCE, Partitioner.CUSTOM]), scaled, scaled
)
def test_upstream_recovered_buffers_land_on_a_known_virtual_channel(
    partitioner: Partitioner, upstream: tuple[int, int], downstream: tuple[int, int]
) -> None:
    plan = rescale_exchange(partitioner, upstream, downstream)
    for new_upstream in plan.upstream:
        for old_upstream in new_upstream.output_state_from:
            for old_subpartition in range(downstream[0]):
                for target in new_upstream.new_subpartitions(old_subpartition):
                    channel = plan.downstream[target].virtual_channels[new_upstream.subtask]
                    assert (old_subpartition, old_upstream) in {
                        (vc.old_subtask, vc.old_channel) for vc in channel
                    }


# --- the same plan in ranges ----------------------------------------------------------------


def _same_answer(plan: ExchangeRescale, summary: ExchangeSummary) -> None:
    assert (summary.note, summary.carries_channel_state) == (plan.note, plan.carries_channel_state)
    for full, short in zip(plan.downstream, summary.downstream, strict=True):
        assert tuple(short.input_state_from) == full.input_state_from
        assert short.upstream_output_handles == len(full.upstream_output_state_from)
        listed = sorted(
            (vc.old_subtask, vc.old_channel, vc.filtered) for vc in full.all_virtual_channels
        )
        blocks = sorted(
            (old, channel, block.filtered)
            for block in short.virtual_channels
            for old in block.old_subtasks
            for channel in block.old_channels
        )
        assert blocks == listed
        assert short.number_of_virtual_channels == len(listed)
        assert (short.demultiplexes, short.filters) == (full.demultiplexes, full.filters)
    for full_up, short_up in zip(plan.upstream, summary.upstream, strict=True):
        assert tuple(short_up.output_state_from) == full_up.output_state_from


def _refusal(plan: Callable[..., object], *args: object, **options: bool) -> str | None:
    try:
        plan(*args, **options)
    except FlinkstateError as refused:
        return f"{type(refused).__name__}: {refused}"
    return None


@pytest.mark.parametrize("kind", list(Partitioner))
def test_the_summary_answers_as_the_plan_for_every_small_exchange(kind: Partitioner) -> None:
    sizes = range(1, 5)
    for up_old, up_new, down_old, down_new in itertools.product(sizes, repeat=4):
        for options in (
            {},
            {"recover_output_on_downstream": True},
            {"unaligned_forced": True},
            {"aligned_by_graph": True},
        ):
            shape = ((up_old, up_new), (down_old, down_new))
            refusal = _refusal(rescale_exchange, kind, *shape, **options)
            if refusal is not None:  # the summary refuses it with the same words
                assert _refusal(summarise_exchange, kind, *shape, **options) == refusal
                continue
            plan = rescale_exchange(kind, *shape, **options)
            _same_answer(plan, summarise_exchange(kind, *shape, **options))


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from([p for p in Partitioner if p.supports_unaligned_checkpoint]),
    sizes=st.tuples(*[st.integers(min_value=1, max_value=40)] * 4),
    recover=st.booleans(),
)
def test_the_summary_answers_as_the_plan_at_larger_parallelism(
    kind: Partitioner, sizes: tuple[int, int, int, int], recover: bool
) -> None:
    up_old, up_new, down_old, down_new = sizes
    shape = ((up_old, up_new), (down_old, down_new))
    plan = rescale_exchange(kind, *shape, recover_output_on_downstream=recover)
    _same_answer(plan, summarise_exchange(kind, *shape, recover_output_on_downstream=recover))


@pytest.mark.slow
def test_a_plan_of_46_million_virtual_channels_is_summarised_in_little_memory() -> None:
    tracemalloc.start()
    try:
        summary = summarise_exchange("keyBy", (5000, 4999), (5000, 4999))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    reads = sum(len(SubtaskStateMapper.RANGE.old_subtasks(new, 5000, 4999)) for new in range(4999))
    assert summary.virtual_channels == reads * 5000
    assert summary.virtual_channels > 45_000_000
    assert peak < 50_000_000  # the listed plan ran out of memory at 8.7 GB
    first = summary.downstream[0]
    assert first.virtual_channels == (VirtualChannelBlock(range(0, 1), range(5000), False),)
