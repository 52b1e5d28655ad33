"""The captions of netty's steps between tasks: a buffer or event sent on credit, and a floating
buffer taken for the credit it announces (the credit-based transport)."""

from __future__ import annotations

from flinkstate.views.captions.step import (
    Step,
    byte_count,
    plural,
    record_count,
)


def send(s: Step) -> str:
    channel = s.world.channels[s.actor.channel]
    travelled = [j for _, j in s.moved() if j["of"] == channel.name]
    if travelled and travelled[0]["kind"] != "buffer":
        item = travelled[0]
        ahead = " at the head, ahead of the received buffers" if item.get("priority") else ""
        return (
            f"netty sent {item['label']} to {channel.name}{ahead}: events need no credit "
            "(PartitionRequestQueue, CreditBasedPartitionRequestClientHandler)."
        )
    data = travelled[:1]
    persisted = (
        "; the channel persists it, since its checkpoint's barrier has not arrived yet"
        if s.added("request")
        else ""
    )
    return (
        f"netty sent a buffer ({byte_count(data)} bytes, "
        f"{plural(record_count(data), 'record')}) to {channel.name}, using one credit: "
        f"{channel.buffers.available} left, backlog "
        f"{channel.buffers.backlog_seen}{persisted} (CreditBasedSequenceNumberingViewReader)."
    )


def request_floating(s: Step) -> str:
    channel = s.world.channels[s.actor.channel]
    gate = s.world.gates[channel.gate]
    return (
        f"{channel.name} took a floating buffer from its gate's pool: it held fewer buffers "
        f"than its announced backlog ({channel.buffers.backlog_seen}) plus its "
        f"{gate.exclusive_per_channel} exclusive ones; the new credit goes to the sender "
        "(BufferManager.requestFloatingBuffers)."
    )
