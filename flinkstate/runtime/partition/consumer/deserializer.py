"""Reassembling records from the fragments buffers carry, one partial record at a time.

A record longer than what is left in a buffer continues in the next one (Flink's
``SpanningRecordSerializer``); the consumer's ``SpillingAdaptiveSpanningRecordDeserializer``
keeps the bytes of the record it is in the middle of. The model keeps (record, bytes received)
and checks the framing as it goes: a record that starts while another is unfinished cuts that
one off, and a fragment that does not continue the unfinished record cannot be placed. Every
reader of records uses this one function: a task's input channel and each virtual channel
while it demultiplexes, and the V1 and V2 readers that filter recovered records.
"""

from __future__ import annotations

from enum import Enum

from flinkstate.runtime.buffer.records import Fragment

#: the record being reassembled and how many of its bytes have arrived
Partial = tuple[int, int]


class Framing(Enum):
    """What a fragment did to the framing.

    Examples
    --------
    A record that starts while another is unfinished cuts that one off:

    >>> partial, framing = reassemble(None, Fragment(1, 0, 100, 300))
    >>> reassemble(partial, Fragment(2, 0, 104, 104))
    (None, <Framing.CUT_OFF: 'cut-off'>)
    """

    #: it fits: it starts a record, or continues the unfinished one
    IN_ORDER = "in-order"
    #: it starts a record while another was unfinished: that one is lost
    CUT_OFF = "cut-off"
    #: it continues a record other than the unfinished one (or none): it is dropped
    NOT_CONTINUED = "not-continued"


# read once: a member read through its class costs about 45 ns, and every fragment is fed
_IN_ORDER = Framing.IN_ORDER
_CUT_OFF = Framing.CUT_OFF
_NOT_CONTINUED = Framing.NOT_CONTINUED


def reassemble(partial: Partial | None, fragment: Fragment) -> tuple[Partial | None, Framing]:
    """Feed one fragment: the partial record after it, and how it fitted. The fragment
    completes its record when it is the record's last and was not dropped; the partial is
    then None.

    Examples
    --------
    A record of 40004 serialized bytes spanning two 32 KiB buffers: after the first
    fragment the deserializer holds 32768 of its bytes, after the second it is complete:

    >>> partial, framing = reassemble(None, Fragment(1, 0, 32_768, 40_004))
    >>> partial, framing
    ((1, 32768), <Framing.IN_ORDER: 'in-order'>)
    >>> reassemble(partial, Fragment(1, 32_768, 7_236, 40_004))
    (None, <Framing.IN_ORDER: 'in-order'>)
    >>> reassemble(None, Fragment(1, 32_768, 7_236, 40_004))[1]
    <Framing.NOT_CONTINUED: 'not-continued'>
    """
    framing = _IN_ORDER
    if fragment.is_first:
        if partial is not None:
            framing = _CUT_OFF
        partial = (fragment.record, fragment.length)
    elif partial is None or partial[0] != fragment.record:
        return partial, _NOT_CONTINUED
    else:
        partial = (fragment.record, partial[1] + fragment.length)
    if fragment.is_last:
        return None, framing
    return partial, framing
