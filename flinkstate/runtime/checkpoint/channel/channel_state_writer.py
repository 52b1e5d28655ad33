"""The channel-state writer: the thread that writes an unaligned checkpoint's in-flight data.

A task does not write its channel state itself. It hands each buffer to a writer
(``ChannelStateWriter.addInputData`` / ``addOutputData``) which queues the request for a
separate thread (``ChannelStateWriteRequestExecutorImpl``) and keeps processing records. The
handed-over network buffers are *retained*: the segment is referenced by the writer as well as
by the queue or channel that holds it, and goes back to its pool only when both let go. A slow
writer therefore keeps network buffers away from the tasks, and a task acknowledges its
checkpoint only once the writer has written everything it was given.

One writer thread serves up to ``execution.checkpointing.unaligned.max-subtasks-per-channel-
state-file`` subtasks (default 5) of a job on one TaskManager, in the order the subtasks
register (``ChannelStateWriteRequestExecutorFactory``); those subtasks share one file.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from flinkstate.errors import InvalidParameterError
from flinkstate.runtime.buffer.buffer import HEAP
from flinkstate.runtime.buffer.ledger import Changes
from flinkstate.runtime.buffer.owners import Owner, OwnerKind
from flinkstate.runtime.buffer.records import Fragment
from flinkstate.runtime.copying import FIXED, NotState, StateKey

#: ``CheckpointingOptions.UNALIGNED_MAX_SUBTASKS_PER_CHANNEL_STATE_FILE`` default
DEFAULT_MAX_SUBTASKS_PER_CHANNEL_STATE_FILE = 5


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """One buffer of channel state to write: input (a channel) or output (a subpartition).

    ``segment`` is the retained network segment, or ``HEAP`` for bytes the task copied out of
    its deserializer (a partial record, the unread rest of a buffer).

    Examples
    --------
    Checkpoint 1's input state of ``map[0]``'s channel from ``source[1]``: a buffer retained in
    segment 3, holding one 104-byte record:

    >>> record = (Fragment(7, 0, 104, 104),)
    >>> request = WriteRequest(1, "map[0]", "map[0]<source[1]", False, record, segment=3)
    >>> request.output, request.segment == HEAP
    (False, False)
    """

    checkpoint: int
    task: str
    channel: str
    output: bool
    fragments: tuple[Fragment, ...]
    segment: int = HEAP
    #: the last chunk of a V2 spill slice: once written, the writer releases the checkpoint's
    #: reference to this task's spill files
    release_spill: str = ""
    #: the request's own number and the uid of the buffer it retains (-1: bytes copied from
    #: the deserializer or a spill file), for drawing; not part of the state's equality
    uid: int = field(default=-1, compare=False)
    buffer: int = field(default=-1, compare=False)


@dataclass(slots=True)
class ChannelStateWriter:
    """One writer thread and its request queue (written in the order requests were added).

    Examples
    --------
    The first writer thread of TaskManager 0, serving Flink's default of at most 5 subtasks:

    >>> writer = assign_writers([(f"map[{i}]", 0) for i in range(3)], 5)[0]
    >>> writer.name, writer.subtasks, len(writer.requests)
    ('channel-state-writer tm0.0', ('map[0]', 'map[1]', 'map[2]'), 0)
    """

    name: str
    #: what holds the buffers it retains until written
    owner: Owner
    task_manager: int
    subtasks: tuple[str, ...]
    requests: deque[WriteRequest] = field(default_factory=deque)

    NOT_STATE: ClassVar[NotState] = {
        "name": FIXED,
        "owner": FIXED,
        "task_manager": FIXED,
        "subtasks": FIXED,
    }

    def state_key(self) -> StateKey:
        # a request's equality leaves out its drawing numbers (``uid``, ``buffer``)
        return (tuple(self.requests),)

    def copy(self) -> ChannelStateWriter:
        return ChannelStateWriter(
            self.name, self.owner, self.task_manager, self.subtasks, deque(self.requests)
        )

    # -- its changes, each noted in the stepping world's ``changes`` (a copy's in the copy's)

    def submit(self, request: WriteRequest, changes: Changes) -> None:
        """A task hands it a request (``ChannelStateWriteRequestExecutor.submit``), written
        after those before it: its thread has one more to write.

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import Owner, OwnerKind
        >>> writer = ChannelStateWriter("w", Owner(OwnerKind.CHANNEL_STATE_WRITER, "w"), 0, ())
        >>> changes = Changes(writers={"w": (4,)})  # the writer's actor is slot 4
        >>> writer.submit(WriteRequest(1, "task map[0]", "channel", False, ()), changes)
        >>> writer.poll(changes).checkpoint, len(writer.requests), changes.stale
        (1, 0, {4})
        """
        self.requests.append(request)
        changes.writer(self.name)

    def poll(self, changes: Changes) -> WriteRequest:
        """Its thread takes the next request to write (the executor's loop polls its deque)."""
        changes.writer(self.name)
        return self.requests.popleft()

    def abort(self, checkpoint: int) -> list[WriteRequest]:
        """Drop the requests of an aborted checkpoint (``ChannelStateWriter.abort``), keeping
        the others in order; the dropped ones are returned for their buffers to be recycled
        and their spill references released by whoever holds the pools.

        Examples
        --------
        >>> from flinkstate.runtime.buffer.owners import Owner, OwnerKind
        >>> owner = Owner(OwnerKind.CHANNEL_STATE_WRITER, "writer tm0.0")
        >>> writer = ChannelStateWriter("writer tm0.0", owner, 0, ("map[0]",))
        >>> writer.requests.extend(
        ...     WriteRequest(checkpoint, "task map[0]", "channel", False, (), uid=uid)
        ...     for uid, checkpoint in enumerate((1, 2, 1))
        ... )
        >>> [r.uid for r in writer.abort(1)], [r.uid for r in writer.requests]
        ([0, 2], [1])
        """
        dropped = [r for r in self.requests if r.checkpoint == checkpoint]
        if dropped:
            self.requests = deque(r for r in self.requests if r.checkpoint != checkpoint)
        return dropped


def assign_writers(
    subtasks: Iterable[tuple[str, int]], max_subtasks_per_file: int
) -> list[ChannelStateWriter]:
    """Group ``(subtask, task manager)`` pairs, in registration order, into writer threads.

    A TaskManager's current writer takes subtasks until it has ``max_subtasks_per_file``; the
    next subtask there starts a new one.

    Examples
    --------
    With Flink's default of 5 subtasks per channel-state file, 7 subtasks on TaskManager 0
    share two writer threads, and one on TaskManager 1 has its own:

    >>> subtasks = [(f"map[{i}]", 0) for i in range(7)] + [("map[7]", 1)]
    >>> writers = assign_writers(subtasks, DEFAULT_MAX_SUBTASKS_PER_CHANNEL_STATE_FILE)
    >>> [(writer.owner.holder, len(writer.subtasks)) for writer in writers]
    [('tm0.0', 5), ('tm0.1', 2), ('tm1.0', 1)]
    """
    if isinstance(max_subtasks_per_file, bool) or max_subtasks_per_file < 1:
        raise InvalidParameterError(
            "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file must be at "
            f"least 1, got {max_subtasks_per_file}"
        )
    groups: dict[int, list[list[str]]] = {}
    for subtask, task_manager in subtasks:
        per_tm = groups.setdefault(task_manager, [])
        if not per_tm or len(per_tm[-1]) == max_subtasks_per_file:
            per_tm.append([])
        per_tm[-1].append(subtask)
    writers = []
    for tm in sorted(groups):
        for number, members in enumerate(groups[tm]):
            owner = Owner(OwnerKind.CHANNEL_STATE_WRITER, f"tm{tm}.{number}")
            # named as its owner reads: the actor and the ownership graph's node are one name
            writers.append(ChannelStateWriter(str(owner), owner, tm, tuple(members)))
    return writers
