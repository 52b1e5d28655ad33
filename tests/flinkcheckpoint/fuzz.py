"""A seeded fuzzer for the checkpoint reader: real checkpoints, broken on purpose.

Each mutation copies one committed checkpoint's job directory and breaks it the way disks,
copies and attackers do: bits flipped, files cut short, counts and sizes inflated, fields of
``_metadata`` changed to values that still parse (indices, sizes, key groups), chunk lengths
changed, and files replaced by special files (a FIFO, a device, a symlink loop, a directory,
a sparse file of gigabytes). Every broken checkpoint is read in a child process, with its
memory bounded and a time limit, through the command line or the API, and its outcome is
classified:

- ``error``: one line ``flinkstate: error: ...`` and a non-zero status (or a
  :class:`FlinkstateError` from the API);
- ``answer``: a summary whose figures are those of the unbroken checkpoint, or any summary
  that carries warnings;
- ``silent``: a summary without warnings whose figures differ from the unbroken checkpoint's
  (the reader was fooled and said nothing);
- ``traceback``, ``hang``, ``memory``: the failures this harness exists to find.

``python -m tests.flinkcheckpoint.fuzz --mutations 5000`` (``make fuzz``) prints the counts.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import multiprocessing
import os
import random
import resource
import shutil
import signal
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flinkstate.flinkcheckpoint import REAL_CHECKPOINTS
from flinkstate.flinkcheckpoint.handles import (
    ByteStreamStateHandle,
    ChannelStateHandle,
    KeyGroupsStateHandle,
    MergedChannelStateHandle,
)
from flinkstate.flinkcheckpoint.metadata import CheckpointMetadata, SubtaskState, read_metadata
from flinkstate.flinkcheckpoint.metadata_writer import write_metadata

#: what a broken checkpoint may cost a reader
MEMORY_LIMIT = 8 << 30
TIME_LIMIT = 30.0
OUTCOMES = ("error", "answer", "silent", "traceback", "hang", "memory")
#: the summary's figures a broken checkpoint must not change without a word
FIGURES = ("input_bytes", "output_bytes", "records", "split_records", "unclean_channels")


def committed_checkpoints() -> list[Path]:
    """Every committed ``chk-N`` directory."""
    return sorted(p for p in REAL_CHECKPOINTS.glob("*/*/chk-*") if p.is_dir())


@dataclass(frozen=True, slots=True)
class Mutation:
    """One way of breaking one checkpoint: ``apply`` breaks the copy at ``job``."""

    checkpoint: Path
    kind: str
    what: str
    apply: Callable[[Path], None]

    def __str__(self) -> str:
        return f"{self.checkpoint.parents[1].name}: {self.kind}: {self.what}"


@dataclass(frozen=True, slots=True)
class Outcome:
    mutation: str
    outcome: str
    detail: str


# -- mutations


def _files(chk: Path) -> list[Path]:
    """The checkpoint's files, relative to its job directory (_metadata first)."""
    job = chk.parent
    found = [p.relative_to(job) for p in job.rglob("*") if p.is_file()]
    found.sort(key=lambda p: (p.name != "_metadata", str(p)))
    return [
        p for p in found if chk.name in p.parts or "taskowned" in p.parts or "shared" in p.parts
    ]


def _flip(relative: Path, bits: list[int]) -> Callable[[Path], None]:
    def apply(job: Path) -> None:
        path = job / relative
        data = bytearray(path.read_bytes())
        for bit in bits:
            data[(bit // 8) % len(data)] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))

    return apply


def _truncate(relative: Path, length: int) -> Callable[[Path], None]:
    def apply(job: Path) -> None:
        path = job / relative
        path.write_bytes(path.read_bytes()[:length])

    return apply


def _overwrite(relative: Path, at: int, value: bytes) -> Callable[[Path], None]:
    def apply(job: Path) -> None:
        path = job / relative
        data = bytearray(path.read_bytes())
        data[at : at + len(value)] = value
        path.write_bytes(bytes(data[: max(len(data), at)]))

    return apply


#: what a file of a checkpoint can be replaced by
SPECIAL_KINDS = ("fifo", "dev-zero", "symlink-loop", "directory", "sparse-3GiB")


def make_special(path: Path, kind: str) -> None:
    """Replace the file ``path`` by a special file of ``kind`` (one of SPECIAL_KINDS)."""
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "symlink-loop":
        path.symlink_to(path.name)
    elif kind == "directory":
        path.mkdir()
    elif kind == "sparse-3GiB":
        with path.open("wb") as out:
            out.truncate(3 << 30)
    else:
        raise ValueError(kind)


def _special(relative: Path, kind: str) -> Callable[[Path], None]:
    def apply(job: Path) -> None:
        make_special(job / relative, kind)

    return apply


def copy_checkpoint(chk: Path, into: Path) -> Path:
    """A copy of a committed checkpoint's job directory in ``into``; its ``chk-N``."""
    shutil.copytree(chk.parent, into / chk.parent.name, symlinks=True)
    return into / chk.parent.name / chk.name


def rewrite_metadata(chk: Path, change: Callable[[CheckpointMetadata], CheckpointMetadata]) -> None:
    """``chk``'s ``_metadata`` rewritten (same version and trailer) with ``change`` applied."""
    (chk / "_metadata").write_bytes(_rewritten(chk, change))


def _rewritten(chk: Path, change: Callable[[CheckpointMetadata], CheckpointMetadata]) -> bytes:
    metadata = read_metadata(chk)
    data = (chk / "_metadata").read_bytes()
    return write_metadata(change(metadata), metadata.version, data[metadata.trailer_offset :])


def _write_metadata(chk: Path, data: bytes) -> Callable[[Path], None]:
    relative = Path(chk.name) / "_metadata"

    def apply(job: Path) -> None:
        (job / relative).write_bytes(data)

    return apply


def _semantic(chk: Path, rng: random.Random) -> Mutation | None:
    """A field of ``_metadata`` changed to a value that still parses."""
    metadata = read_metadata(chk)
    places = [
        (o, s)
        for o, op in enumerate(metadata.operators)
        for s, sub in enumerate(op.subtasks)
        if sub.input_channel_state or sub.result_subpartition_state
    ]
    keyed = [
        (o, s)
        for o, op in enumerate(metadata.operators)
        for s, sub in enumerate(op.subtasks)
        if isinstance(sub.managed_keyed_state, KeyGroupsStateHandle)
    ]
    kind = rng.choice(
        [
            "gate",
            "channel",
            "state-size",
            "offset",
            "subtask",
            "duplicate",
            "key-group",
            "parallelism",
        ]
    )
    if (kind == "key-group" and not keyed) or (
        kind not in ("key-group", "parallelism") and not places
    ):
        return None
    if kind == "parallelism":
        o = rng.randrange(len(metadata.operators))
        op = metadata.operators[o]
        low = max((s.index for s in op.subtasks), default=0) + 1
        value = rng.choice([low, op.parallelism + 1, op.max_parallelism])
        if value == op.parallelism:
            return None

        def change(m: CheckpointMetadata) -> CheckpointMetadata:
            ops = list(m.operators)
            ops[o] = dataclasses.replace(ops[o], parallelism=value)
            return dataclasses.replace(m, operators=tuple(ops))

        what = f"parallelism of {op.label} {op.parallelism} -> {value}"
    elif kind == "key-group":
        o, s = rng.choice(keyed)
        op = metadata.operators[o]
        handle = op.subtasks[s].managed_keyed_state
        assert isinstance(handle, KeyGroupsStateHandle)
        shift = rng.choice([op.max_parallelism, 1, -1 if handle.first_key_group else 1])

        def change(m: CheckpointMetadata) -> CheckpointMetadata:
            return _with_subtask(
                m,
                o,
                s,
                lambda sub: dataclasses.replace(
                    sub,
                    managed_keyed_state=dataclasses.replace(
                        handle, first_key_group=handle.first_key_group + shift
                    ),
                ),
            )

        what = f"key groups of {op.label}[{op.subtasks[s].index}] shifted by {shift}"
    elif kind in ("subtask", "duplicate"):
        o, s = rng.choice(places)
        op = metadata.operators[o]
        others = [x.index for x in op.subtasks if x.index != op.subtasks[s].index]
        if kind == "duplicate" and not others:
            return None
        value = rng.choice(others) if kind == "duplicate" else op.subtasks[s].index
        if kind == "subtask":
            # the handles say another subtask than the state they are in
            def change(m: CheckpointMetadata) -> CheckpointMetadata:
                return _with_subtask(m, o, s, lambda sub: _channels_changed(sub, subtask=1))

            what = f"channel handles of {op.label}[{value}] name another subtask"
        else:

            def change(m: CheckpointMetadata) -> CheckpointMetadata:
                return _with_subtask(m, o, s, lambda sub: dataclasses.replace(sub, index=value))

            what = f"{op.label}: subtask {op.subtasks[s].index} listed as {value} (twice)"
    else:
        o, s = rng.choice(places)
        op = metadata.operators[o]
        field = {
            "gate": "gate_or_partition",
            "channel": "channel_or_subpartition",
            "state-size": "state_size",
            "offset": "offsets",
        }[kind]
        delta = rng.choice([1, 2, op.parallelism, 1 << 20]) if kind != "state-size" else None

        def change(m: CheckpointMetadata) -> CheckpointMetadata:
            return _with_subtask(
                m, o, s, lambda sub: _channels_changed(sub, **{field: delta}), pick=rng.random()
            )

        what = f"{field} of a channel of {op.label}[{op.subtasks[s].index}] changed"
    try:
        data = _rewritten(chk, change)
    except (ValueError, struct.error):
        return None
    return Mutation(chk, "field", what, _write_metadata(chk, data))


def _with_subtask(
    m: CheckpointMetadata,
    o: int,
    s: int,
    change: Callable[[SubtaskState], SubtaskState],
    pick: float = 0.0,
) -> CheckpointMetadata:
    ops = list(m.operators)
    subs = list(ops[o].subtasks)
    subs[s] = change(subs[s])
    ops[o] = dataclasses.replace(ops[o], subtasks=tuple(subs))
    return dataclasses.replace(m, operators=tuple(ops))


def _channels_changed(sub: SubtaskState, **deltas: int | None) -> SubtaskState:
    """The first channel handle of a subtask with one field changed."""
    inputs = list(sub.input_channel_state)
    side = "input_channel_state" if inputs else "result_subpartition_state"
    handles = list(getattr(sub, side))
    first = handles[0]
    channels = list(first.channels) if isinstance(first, MergedChannelStateHandle) else [first]
    channel = channels[0]
    ((field, delta),) = deltas.items()
    if field == "state_size":
        channel = dataclasses.replace(channel, state_size=(1 << 63) - 1)
    elif field == "offsets":
        if not channel.offsets:
            channel = dataclasses.replace(channel, offsets=(4,))
        else:
            channel = dataclasses.replace(
                channel, offsets=(channel.offsets[0] + (delta or 1), *channel.offsets[1:])
            )
    elif field == "subtask":
        channel = dataclasses.replace(channel, subtask=channel.subtask + 1)
    else:
        channel = dataclasses.replace(channel, **{field: getattr(channel, field) + (delta or 1)})
    channels[0] = channel
    if isinstance(first, MergedChannelStateHandle):
        handles[0] = dataclasses.replace(first, channels=tuple(channels))
    else:
        handles[0] = channel
    return dataclasses.replace(sub, **{side: tuple(handles)})


def _chunk_length(chk: Path, rng: random.Random) -> Mutation | None:
    """A chunk's 4-byte length in a channel-state file, shrunk or grown."""
    metadata = read_metadata(chk)
    handles = [
        h
        for _, h in metadata.channel_handles()
        if h.offsets
        and h.delegate is not None
        and not isinstance(h.delegate, ByteStreamStateHandle)
    ]
    if not handles:
        return None
    handle: ChannelStateHandle = rng.choice(handles)
    offset = rng.choice(handle.offsets)
    delegate = handle.delegate
    path = getattr(delegate, "relative_path", None)
    if path is None:
        return None
    relative = Path(chk.name) / path
    length = struct.unpack(">i", (chk / path).read_bytes()[offset : offset + 4])[0]
    new = max(0, length + rng.choice([-1, -4, -length // 2, 1, 4]))
    return Mutation(
        chk,
        "chunk",
        f"chunk at byte {offset} of {path}: length {length} -> {new}",
        _overwrite(relative, offset, struct.pack(">i", new)),
    )


INFLATED = (
    struct.pack(">i", 0x7FFFFFFF),
    struct.pack(">i", -1),
    struct.pack(">i", -0x80000000),
    struct.pack(">i", 1 << 24),
    struct.pack(">q", (1 << 63) - 1),
    struct.pack(">q", 1 << 40),
)


def mutations(checkpoints: list[Path], seed: int) -> Iterator[Mutation]:
    """An endless, seeded stream of mutations over ``checkpoints``."""
    rng = random.Random(seed)
    files = {chk: _files(chk) for chk in checkpoints}
    while True:
        chk = rng.choice(checkpoints)
        relative = files[chk][0] if rng.random() < 0.6 else rng.choice(files[chk])
        size = (chk.parent / relative).stat().st_size
        roll = rng.random()
        if roll < 0.3:
            bits = [rng.randrange(max(1, size) * 8) for _ in range(rng.choice([1, 1, 2, 3, 8]))]
            yield Mutation(chk, "flip", f"{len(bits)} bit(s) of {relative}", _flip(relative, bits))
        elif roll < 0.45:
            length = rng.randrange(max(1, size))
            yield Mutation(
                chk,
                "truncate",
                f"{relative} cut to {length} of {size} bytes",
                _truncate(relative, length),
            )
        elif roll < 0.65:
            at = rng.randrange(max(1, size - 8))
            value = rng.choice(INFLATED)
            yield Mutation(
                chk,
                "inflate",
                f"{value.hex()} at byte {at} of {relative}",
                _overwrite(relative, at, value),
            )
        elif roll < 0.85:
            found = _semantic(chk, rng)
            if found is not None:
                yield found
        elif roll < 0.95:
            found = _chunk_length(chk, rng)
            if found is not None:
                yield found
        else:
            kind = rng.choice(SPECIAL_KINDS)
            yield Mutation(
                chk, "special", f"{relative} replaced by {kind}", _special(relative, kind)
            )


# -- running


def _figures(summary: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: summary["totals"][k] for k in FIGURES},
        "channels": len(summary["channels"]),
        "logical_channels": len(summary["logical_channels"]),
        "keyed_entries": [k["entries"] for k in summary["keyed_state"]],
    }


def _child(directory: str, via_cli: bool, out: Any) -> None:
    """Read one checkpoint and report (status, stdout, stderr) through ``out``."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    stdout, stderr = io.StringIO(), io.StringIO()
    status: int | str
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            if via_cli:
                from flinkstate.cli import main

                status = main(["inspect", directory, "--json"])
            else:
                from flinkstate.errors import FlinkstateError
                from flinkstate.flinkcheckpoint.summary import summarize

                try:
                    print(json.dumps(summarize(directory)))
                    status = 0
                except FlinkstateError as error:
                    print(f"flinkstate: error: {error}", file=sys.stderr)
                    status = 2
    except MemoryError:
        status = "memory"
    except BaseException as error:  # the fuzzer's whole point: report it, do not die
        import traceback

        status = "traceback"
        stderr.write("".join(traceback.format_exception(error)))
    out.send((status, stdout.getvalue(), stderr.getvalue()))
    out.close()


def run_one(directory: Path, via_cli: bool, expected: dict[str, Any]) -> tuple[str, str]:
    """The outcome of reading ``directory`` and a line saying why."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(str(directory), via_cli, send))
    child.start()
    send.close()
    report = None
    if receive.poll(TIME_LIMIT):
        with contextlib.suppress(EOFError):
            report = receive.recv()
    child.join(5 if report is not None else 0)
    if child.is_alive():
        child.kill()
        child.join()
        return "hang", f"no answer in {TIME_LIMIT:.0f} s"
    child.join()
    if report is None:
        if child.exitcode == -signal.SIGKILL:
            return "memory", "killed"
        return "traceback", f"the reader died (exit {child.exitcode})"
    status, stdout, stderr = report
    if status == "memory" or "MemoryError" in stderr:
        return "memory", stderr.strip().splitlines()[-1] if stderr.strip() else "MemoryError"
    if status == 0:
        try:
            summary = json.loads(stdout)
        except json.JSONDecodeError:
            return "traceback", "exit 0 without a JSON summary"
        if summary.get("warnings") or _figures(summary) == expected:
            return "answer", "; ".join(summary.get("warnings", [])[:2])
        return "silent", json.dumps(
            {k: v for k, v in _figures(summary).items() if expected.get(k) != v}
        )[:300]
    lines = stderr.strip().splitlines()
    if (
        status == 2
        and len(lines) == 1
        and lines[0].startswith("flinkstate: error: ")
        and "Traceback" not in stderr
    ):
        return "error", lines[0]
    return "traceback", (lines[-1] if lines else f"status {status}")[:300]


def fuzz(
    count: int,
    seed: int = 0,
    checkpoints: list[Path] | None = None,
    progress: Callable[[int, Counter[str]], None] | None = None,
) -> list[Outcome]:
    """``count`` mutations, each read once (every other one through the command line)."""
    from flinkstate.flinkcheckpoint.summary import summarize

    chosen = checkpoints or committed_checkpoints()
    expected = {chk: _figures(summarize(chk)) for chk in chosen}
    results = []
    counts: Counter[str] = Counter()
    stream = mutations(chosen, seed)
    with tempfile.TemporaryDirectory(prefix="flinkstate-fuzz-") as scratch:
        for number in range(count):
            mutation = next(stream)
            job = copy_checkpoint(mutation.checkpoint, Path(scratch)).parent
            try:
                mutation.apply(job)
                outcome, detail = run_one(
                    job / mutation.checkpoint.name, number % 2 == 0, expected[mutation.checkpoint]
                )
            finally:
                _remove(job)
            results.append(Outcome(str(mutation), outcome, detail))
            counts[outcome] += 1
            if progress is not None:
                progress(number + 1, counts)
    return results


def _remove(job: Path) -> None:
    for path in sorted(job.rglob("*"), reverse=True):
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            path.rmdir()
    job.rmdir()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=20, help="failures to list")
    args = parser.parse_args(argv)
    started = time.monotonic()

    def progress(done: int, counts: Counter[str]) -> None:
        if done % 50 == 0 or done == args.mutations:
            line = ", ".join(f"{k} {counts[k]}" for k in OUTCOMES if counts[k])
            print(f"\r{done}/{args.mutations}: {line}", end="", file=sys.stderr, flush=True)

    results = fuzz(args.mutations, args.seed, progress=progress)
    print(file=sys.stderr)
    counts = Counter(r.outcome for r in results)
    print(f"tried {len(results)} mutated checkpoints in {time.monotonic() - started:.0f} s")
    for outcome in OUTCOMES:
        print(f"  {outcome:10} {counts[outcome]}")
    bad = [r for r in results if r.outcome not in ("error", "answer")]
    for result in bad[: args.show]:
        print(f"{result.outcome}: {result.mutation}\n    {result.detail}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
