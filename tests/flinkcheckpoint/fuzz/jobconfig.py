"""Damage to the ``job-config.txt`` beside a checkpoint, which the forecast reads (its network
settings and whether output is recovered on the downstream side): bytes that are not UTF-8,
UTF-16, a NUL, a file too large to be a configuration, a special file in its place or in a
place found before it, and values of the keys the reader uses that Flink refuses (booleans,
counts, memory sizes). Some rewrites Flink reads as the same values (``+2``, ``4 KB``,
``FALSE``, CRLF lines, a byte-order mark before an unused key): the forecast must agree."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from tests.flinkcheckpoint.fuzz.damage import (
    JOB_CONFIG,
    SPECIAL_KINDS,
    Mutation,
    make_special,
)

RECOVER_OUTPUT = "execution.checkpointing.unaligned.recover-output-on-downstream.enabled"
SEGMENT_SIZE = "taskmanager.memory.segment-size"
#: the counts the forecast reads, each with the least value it takes
COUNTS = {
    "taskmanager.network.memory.buffers-per-channel": 0,
    "taskmanager.network.memory.floating-buffers-per-gate": 0,
    "taskmanager.network.memory.max-buffers-per-channel": 1,
    "taskmanager.numberOfTaskSlots": 1,
    "execution.checkpointing.unaligned.max-subtasks-per-channel-state-file": 1,
}
#: values Flink refuses for a boolean (``ConfigurationUtils.convertToBoolean``)
BAD_BOOLEANS = ("maybe", "", "yes", "no", "1", "0", "on", "t", "true false")
#: values Flink refuses for an int (``Integer.parseInt``)
BAD_INTS = ("two", "2.0", "1_000", "0x10", "2147483648", "-2147483649", "1e3", "9" * 30, "", "2 2")
#: values Flink refuses for a segment size (``MemorySize.parse``, then the page-size check)
BAD_SIZES = ("4kx", "", "-4kb", "0", "4 gb", "1b", "6kb", "4.5kb", "kb", "3000", "9" * 25 + "tb")
#: rewrites Flink reads as the committed values (4 KiB segments, 2 slots; not recovering
#: output downstream is the default)
SAME_SIZES = ("4096", "4 kb", "4KB", "4k", "4096b", "4 kibibytes")
SAME_SLOTS = ("+2", "02")
SAME_BOOLEANS = ("false", "FALSE", "False")
#: invalid UTF-8: a lone continuation byte, a cut sequence, an overlong form, a surrogate
NOT_UTF8 = (b"\x80", b"\xff", b"\xc3(", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80")

Apply = Callable[[Path], None]


def _text(root: Path) -> str:
    return (root / JOB_CONFIG).read_text(encoding="utf-8")


def with_value(key: str, value: str) -> Apply:
    """``key=value`` in the copy's job-config.txt: the line of ``key`` changed, or added."""

    def apply(root: Path) -> None:
        lines = _text(root).splitlines()
        found = [i for i, line in enumerate(lines) if line.partition("=")[0].strip() == key]
        if found:
            lines[found[0]] = f"{key}={value}"
        else:
            lines.append(f"{key}={value}")
        (root / JOB_CONFIG).write_text("\n".join(lines) + "\n", encoding="utf-8")

    return apply


def with_bytes(change: Callable[[bytes], bytes]) -> Apply:
    def apply(root: Path) -> None:
        path = root / JOB_CONFIG
        path.write_bytes(change(path.read_bytes()))

    return apply


def _inserted(at: float, value: bytes) -> Callable[[bytes], bytes]:
    def change(data: bytes) -> bytes:
        # inside a line (a value or a key), never splitting a line ending
        index = int(at * len(data))
        while index > 0 and data[index - 1 : index] in (b"\n", b"\r"):
            index -= 1
        return data[:index] + value + data[index:]

    return change


def _padded(data: bytes) -> bytes:
    """A valid configuration made longer than a megabyte by comment lines."""
    line = b"# " + b"padding " * 15 + b"\n"
    return data + line * ((1 << 20) // len(line) + 1)


def _sparse_tail(root: Path) -> None:
    """The committed configuration followed by a 3 GiB hole (NUL bytes on reading)."""
    with (root / JOB_CONFIG).open("r+b") as out:
        out.truncate(3 << 30)


def _shadowed(where: str, make: Callable[[Path], None]) -> Apply:
    """``make`` run on a job-config.txt in the copy's ``chk-N`` or job folder (found before
    the committed one beside them)."""

    def apply(root: Path) -> None:
        (job,) = [p for p in root.iterdir() if p.is_dir()]
        folder = job if where == "job" else next(p for p in job.glob("chk-*") if p.is_dir())
        make(folder / JOB_CONFIG)

    return apply


def _value_damage(rng: random.Random) -> tuple[str, Apply]:
    roll = rng.randrange(6)
    if roll == 0:
        value = rng.choice(BAD_BOOLEANS)
        return f"{RECOVER_OUTPUT}={value!r}", with_value(RECOVER_OUTPUT, value)
    if roll == 1:
        key, least = rng.choice(sorted(COUNTS.items()))
        value = rng.choice([*BAD_INTS, str(least - 1)])
        return f"{key}={value!r}", with_value(key, value)
    if roll == 2:
        value = rng.choice(BAD_SIZES)
        return f"{SEGMENT_SIZE}={value!r}", with_value(SEGMENT_SIZE, value)
    if roll == 3:
        value = rng.choice(SAME_SIZES)
        return f"{SEGMENT_SIZE}={value!r} (the same size)", with_value(SEGMENT_SIZE, value)
    if roll == 4:
        value = rng.choice(SAME_SLOTS)
        key = "taskmanager.numberOfTaskSlots"
        return f"{key}={value!r} (the same count)", with_value(key, value)
    value = rng.choice(SAME_BOOLEANS)
    return f"{RECOVER_OUTPUT}={value!r} (the default)", with_value(RECOVER_OUTPUT, value)


def _encoding_damage(rng: random.Random) -> tuple[str, Apply]:
    roll = rng.randrange(9)
    at = rng.random()
    if roll < 2:
        value = rng.choice(NOT_UTF8)
        return f"bytes {value.hex()} (not UTF-8) at {at:.0%}", with_bytes(_inserted(at, value))
    if roll == 2:
        return f"a NUL at {at:.0%}", with_bytes(_inserted(at, b"\0"))
    if roll == 3:
        codec = rng.choice(["utf-16", "utf-16-le", "utf-16-be"])
        return f"written in {codec}", with_bytes(lambda d: d.decode().encode(codec))
    if roll == 4:
        return "longer than a megabyte (comment lines)", with_bytes(_padded)
    if roll == 5:
        return "followed by a 3 GiB hole", _sparse_tail
    if roll == 6:
        return "CRLF line endings", with_bytes(lambda d: d.replace(b"\n", b"\r\n"))
    if roll == 7:
        return "a UTF-8 byte-order mark first", with_bytes(lambda d: b"\xef\xbb\xbf" + d)
    line = rng.choice([f"{SEGMENT_SIZE}=4kb", "not a key value line", "=4kb"])
    return f"a line {line!r} added", with_bytes(lambda d: d + line.encode() + b"\n")


def _shadow_damage(rng: random.Random) -> tuple[str, Apply]:
    where = rng.choice(["chk", "job"])
    kind = rng.choice([*SPECIAL_KINDS, "bad-boolean", "copy"])
    if kind == "copy":

        def make(path: Path) -> None:
            path.write_bytes((path.parents[2 if where == "chk" else 1] / JOB_CONFIG).read_bytes())

    elif kind == "bad-boolean":

        def make(path: Path) -> None:
            path.write_text(f"{RECOVER_OUTPUT}=maybe\n", encoding="utf-8")

    else:

        def make(path: Path) -> None:
            make_special(path, kind)

    return f"a job-config.txt ({kind}) in the {where} folder", _shadowed(where, make)


def job_config_mutation(chk: Path, rng: random.Random) -> Mutation:
    """One damage to the checkpoint's job configuration."""
    roll = rng.random()
    if roll < 0.5:
        what, apply = _value_damage(rng)
    elif roll < 0.85:
        what, apply = _encoding_damage(rng)
    else:
        what, apply = _shadow_damage(rng)
    return Mutation(chk, "job-config", what, apply)
