"""Running mutations: a copy broken per mutation, read three ways by a reader process (the
flinkstate under test), each read classified against the unbroken copy's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import flinkstate
from tests.flinkcheckpoint.fuzz.damage import Mutation, copy_variant, remove_tree
from tests.flinkcheckpoint.fuzz.reads import (
    FAILURES,
    READS,
    ReadOptions,
    argv,
    classify,
    expected_of,
    read_otherwise,
)

READER = Path(__file__).with_name("reader.py")
#: the address space a read of a broken checkpoint may take: the reads of the committed ones
#: take under 400 MB, a sparse file of 3 GiB mapped whole fits beside them
MEMORY_LIMIT = 4 << 30
TIME_LIMIT = 30.0
#: this tree's flinkstate: what the reads run unless told another
THIS_CODE = Path(flinkstate.__file__).resolve().parents[1]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One mutation's three reads: (read, outcome, why) each."""

    mutation: str
    family: str
    reads: tuple[tuple[str, str, str], ...]

    @property
    def failures(self) -> list[tuple[str, str, str]]:
        return [r for r in self.reads if r[1] in FAILURES]

    @property
    def clean(self) -> bool:
        return not self.failures

    @property
    def outcome(self) -> str:
        """The worst of its reads' outcomes (a failure before an error before an answer)."""
        found = [r[1] for r in self.reads]
        return next((o for o in (*FAILURES, "error", "answer") if o in found), "answer")


class Reader:
    """A reader process (``reader.py``) running the flinkstate found first in ``code``."""

    def __init__(self, code: Path, log: Path) -> None:
        self.code = code
        self.log = log
        self._start()

    def _start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(self.code)}
        self._log = self.log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-P", str(READER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            text=True,
        )
        hello = self._receive()
        if hello is None:
            raise RuntimeError(f"the reader did not start: {self.log.read_text()[-2000:]}")
        found = Path(hello["flinkstate"])
        if found != self.code.resolve():
            raise RuntimeError(f"the reader imports flinkstate from {found}, not {self.code}")

    def _receive(self) -> dict[str, Any] | None:
        stdout: IO[str] | None = self.process.stdout
        assert stdout is not None
        line = stdout.readline()
        return json.loads(line) if line else None

    def read(self, request: dict[str, Any]) -> dict[str, Any]:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            answer = self._receive()
        except BrokenPipeError:
            answer = None
        if answer is None:  # the reader process itself died: say so, start another
            self.close()
            self._start()
            return {"status": "traceback", "stdout": "", "stderr": "the reader process died"}
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)
        self._log.close()


class Worker:
    """Reads mutations in a scratch folder of its own, through a reader of its own."""

    def __init__(self, scratch: Path, code: Path, memory: int, seconds: float) -> None:
        scratch.mkdir()
        self.scratch = scratch
        self.reader = Reader(code, scratch.parent / f"{scratch.name}.log")
        self.limits = {"memory": memory, "seconds": seconds}

    def root(self, mutation: Mutation) -> Path:
        return self.scratch / mutation.checkpoint.parents[1].name

    def read_all(self, chk: Path, options: ReadOptions) -> Iterable[tuple[str, dict[str, Any]]]:
        """Each read's answer; the export's folder emptied after each."""
        out = self.scratch / "out"
        for read in READS:
            out.mkdir()
            request = {
                "argv": argv(read, chk, out / "dataset", options),
                "out": str(out) if read == "export" else None,
                **self.limits,
            }
            try:
                yield read, self.reader.read(request)
            finally:
                remove_tree(out)

    def baseline(self, chk: Path, options: ReadOptions) -> dict[str, Any]:
        """The unbroken checkpoint's figures, read at the place its mutations are."""
        root = self.scratch / chk.parents[1].name
        copy = copy_variant(chk, root)
        try:
            return {read: expected_of(read, a, root) for read, a in self.read_all(copy, options)}
        finally:
            remove_tree(root)

    def run(self, mutation: Mutation, options: ReadOptions, expected: Mapping[str, Any]) -> Outcome:
        root = self.root(mutation)
        copy = copy_variant(mutation.checkpoint, root)
        try:
            mutation.apply(root)
            reads = []
            otherwise = ""
            for read, answer in self.read_all(copy, options):
                if read == "json":
                    otherwise = read_otherwise(answer, expected[read], root)
                reads.append((read, *classify(read, answer, expected[read], root, otherwise)))
        finally:
            remove_tree(root)
        return Outcome(str(mutation), mutation.family, tuple(reads))

    def close(self) -> None:
        self.reader.close()


def run_mutations(
    chosen: list[Mutation],
    *,
    jobs: int = 1,
    code: Path = THIS_CODE,
    memory: int = MEMORY_LIMIT,
    seconds: float = TIME_LIMIT,
    progress: Callable[[int, Counter[str]], None] | None = None,
) -> list[Outcome]:
    """Each mutation read three ways by ``code``'s flinkstate, ``jobs`` at a time; the
    outcomes in the mutations' order."""
    checkpoints = sorted({m.checkpoint for m in chosen})
    options = {chk: ReadOptions.of(chk) for chk in checkpoints}
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="flinkstate-fuzz-") as scratch:
        workers = [
            Worker(Path(scratch) / f"w{i}", code, memory, seconds) for i in range(max(1, jobs))
        ]
        try:
            expected = {chk: workers[0].baseline(chk, options[chk]) for chk in checkpoints}
            free = list(workers)

            def one(mutation: Mutation) -> Outcome:
                with lock:
                    worker = free.pop()
                try:
                    outcome = worker.run(
                        mutation, options[mutation.checkpoint], expected[mutation.checkpoint]
                    )
                finally:
                    with lock:
                        free.append(worker)
                with lock:
                    counts.update(r[1] for r in outcome.reads)
                    counts["done"] += 1
                    if progress is not None:
                        progress(counts["done"], counts)
                return outcome

            with ThreadPoolExecutor(len(workers)) as pool:
                return list(pool.map(one, chosen))
        finally:
            for worker in workers:
                worker.close()
