"""A seeded harness for the command line: bad command lines for every command, standard output
on a full disk, Ctrl-C and SIGTERM while a command works.

Each line of :mod:`tests.cli.fuzz_lines` runs as ``flinkstate`` would (the console script's
entry point, in a child process of its own session), in a working folder of its own that holds
hostile files to name (a FIFO, a folder, a folder holding a file, a text file, binary junk, an
empty file), with its memory bounded (``prlimit --as``) and a time limit. Its outcome is
classified:

- ``error``: bad input refused: one line ``flinkstate: error: ...`` (or argparse's usage and
  its one error line), status 2, nothing on standard output; on a full disk, status 74 and the
  line saying so;
- ``ok``: a valid line that did its work (with its documented status), or one a signal reached
  only after it had finished;
- ``interrupted``: a signal's one line ``flinkstate: interrupted; ...``, status 130 (SIGINT) or
  143 (SIGTERM);
- failures: ``traceback``, ``hang``, ``memory``, ``exit0-on-bad`` (status 0 on bad input),
  ``wrong-status``, ``messy`` (refused, but not in one line), ``litter`` (a file, folder or
  process left behind that the command did not say it wrote) and ``damage`` (a file that was
  there before changed or gone).

``python -m tests.cli.fuzz [--seed S] [--limit N] [--package-root DIR]`` (``make fuzz``) prints
tried / clean / failure counts per family and lists the failures; ``--package-root`` runs the
children on another checkout's package (an older commit, to count what it did).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from flinkstate.flinkcheckpoint import REAL_CHECKPOINTS
from tests.cli.fuzz_lines import Line, catalogue, families

#: the repository whose package the children run unless told otherwise
REPOSITORY = Path(__file__).resolve().parents[2]
#: what a command may cost: address space (a JVM's is not bounded: it reserves far more than
#: it uses), and resident memory past which it is a failure anyway
ADDRESS_SPACE = 3 << 30
MEMORY_PEAK = 2 << 30
#: what the child writes first, so that a signal's time counts from the entry point's start
MARK = "flinkstate-fuzz: started"
STUB = f"""
import importlib.util, pathlib, sys
sys.argv[0] = "flinkstate"
sys.stderr.write({MARK!r} + "\\n")
sys.stderr.flush()
# the package's own folder, not its import path: an editable install extends the path of an
# older checkout's package with the installed one's, where a newer launch module lies
package = pathlib.Path(importlib.util.find_spec("flinkstate").origin).parent
if not (package / "launch.py").is_file():  # before the entry point had one
    from flinkstate.cli import main
else:
    from flinkstate.launch import main
sys.exit(main())
"""
CLEAN = ("error", "ok", "interrupted")
FAILURES = (
    "traceback", "hang", "memory", "exit0-on-bad", "wrong-status", "messy", "litter", "damage",
)  # fmt: skip
TRACEBACK_MARKS = ("Traceback (most recent call last)", "Exception ignored", "ERROR:root:")
ERROR_LINE = re.compile(r"^flinkstate(?: [\w-]+)*: error: ")
FULL_DISK_LINE = "flinkstate: error: cannot write the output: No space left on device"
#: the hostile files every case's working folder holds
FIXTURES = ("fifo", "folder", "busy", "file.txt", "junk.bin", "empty")


@dataclass(frozen=True)
class Setup:
    """Where the children's package is and what their lines read."""

    package_root: Path
    checkpoint: Path
    dataset: Path
    scratch: Path


@dataclass(frozen=True)
class Run:
    """What one line did."""

    status: int | None
    out: str
    err: str
    peak: int
    timed_out: bool
    new: frozenset[str]
    damaged: tuple[str, ...]
    leftover: bool
    seconds: float


@dataclass(frozen=True)
class Result:
    line: Line
    outcome: str
    detail: str
    seconds: float


def lay_out(work: Path) -> dict[str, bytes]:
    """The hostile files of a working folder; returns what each regular one holds."""
    work.mkdir(parents=True)
    os.mkfifo(work / "fifo")
    (work / "folder").mkdir()
    (work / "busy").mkdir()
    contents = {
        "busy/keep.txt": b"the user's\n",
        "file.txt": b"not a checkpoint, not a configuration\n",
        "junk.bin": bytes(random.Random(7).randrange(256) for _ in range(512)),
        "empty": b"",
    }
    for name, data in contents.items():
        (work / name).write_bytes(data)
    return contents


def damaged(work: Path, contents: dict[str, bytes]) -> tuple[str, ...]:
    """The hostile files that are gone or changed."""
    gone = [name for name in FIXTURES if not os.path.lexists(work / name)]
    changed = [
        name
        for name, data in contents.items()
        if (work / name).is_file() and (work / name).read_bytes() != data
    ]
    if not (work / "fifo").is_fifo() and "fifo" not in gone:
        changed.append("fifo")
    return tuple(gone + changed)


def child_env(setup: Setup, case: Path) -> dict[str, str]:
    """The environment of a child: its package, and state and temporary folders of its own
    (no Spark Connect server of the user's, no state file of theirs touched)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLINKSTATE_")}
    env.pop("PYTHONSTARTUP", None)
    (case / "state").mkdir()
    (case / "tmp").mkdir()
    env.update(
        PYTHONPATH=str(setup.package_root),
        PYTHONDONTWRITEBYTECODE="1",
        FLINKSTATE_STATE_DIR=str(case / "state"),
        TMPDIR=str(case / "tmp"),
    )
    return env


def _argv(line: Line, setup: Setup) -> list[str]:
    words = {"{chk}": str(setup.checkpoint), "{dataset}": str(setup.dataset)}
    return [words.get(word, word) for word in line.argv]


def _wait(pid: int, deadline: float) -> tuple[int | None, int]:
    """The child's exit status (negative: the signal that ended it) and peak resident
    memory in bytes; None if it outlived ``deadline`` (then it was killed)."""
    while time.monotonic() < deadline:
        done, code, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(code), usage.ru_maxrss * 1024
        time.sleep(0.02)
    _kill_group(pid)
    _, _, usage = os.wait4(pid, 0)
    return None, usage.ru_maxrss * 1024


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _group_left(pgid: int, patience: float = 5.0) -> bool:
    """Whether a process of the child's group outlives it by ``patience`` seconds (then it
    is killed)."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        time.sleep(0.1)
    _kill_group(pgid)
    return True


def _send_when_started(line: Line, pid: int, err: Path, deadline: float) -> None:
    """``line``'s signal, ``line.after`` seconds after the child wrote :data:`MARK`."""
    waited = min(deadline, time.monotonic() + 30)
    while time.monotonic() < waited:
        if err.stat().st_size >= len(MARK):
            break
        time.sleep(0.005)
    time.sleep(line.after)
    try:
        if line.signal == "SIGINT":  # a terminal's Ctrl-C reaches the whole foreground group
            os.killpg(pid, signal.SIGINT)
        else:  # kill, timeout
            os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def run_line(line: Line, setup: Setup) -> Run:
    """Run ``line`` in a working folder of its own, as the console script would."""
    case = Path(tempfile.mkdtemp(prefix="case-", dir=setup.scratch))
    work = case / "work"
    contents = lay_out(work)
    before = set(os.listdir(work))
    limit = [] if line.spark else ["prlimit", f"--as={ADDRESS_SPACE}", "--"]
    command = [*limit, sys.executable, "-c", STUB, *_argv(line, setup)]
    started = time.monotonic()
    deadline = started + line.seconds
    with (
        open("/dev/full" if line.full else case / "out", "w") as out,
        open(case / "err", "w") as err,
    ):
        process = subprocess.Popen(
            command, cwd=work, env=child_env(setup, case), stdin=subprocess.DEVNULL,
            stdout=out, stderr=err, start_new_session=True,
        )  # fmt: skip
        if line.signal:
            _send_when_started(line, process.pid, case / "err", deadline)
        status, peak = _wait(process.pid, deadline)
        process.returncode = -9 if status is None else status  # reaped here, not by Popen
    leftover = _group_left(process.pid, 30.0 if line.spark else 5.0)  # a JVM's shutdown
    seconds = time.monotonic() - started
    if line.argv[:2] == ("spark-server", "start") and status == 0:
        _stop_server(setup, case)
    result = Run(
        status=status,
        out="" if line.full else (case / "out").read_text(errors="replace"),
        err=(case / "err").read_text(errors="replace").replace(MARK + "\n", "", 1),
        peak=peak,
        timed_out=status is None,
        new=frozenset(set(os.listdir(work)) - before),
        damaged=damaged(work, contents),
        leftover=leftover,
        seconds=seconds,
    )
    shutil.rmtree(case, ignore_errors=True)
    return result


def _stop_server(setup: Setup, case: Path) -> None:
    """A Spark Connect server a bad port started: stopped, not left running."""
    subprocess.run(
        [sys.executable, "-c", STUB, "spark-server", "stop"],
        env={**os.environ, "PYTHONPATH": str(setup.package_root),
             "FLINKSTATE_STATE_DIR": str(case / "state")},
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip


def stderr_lines(err: str) -> list[str]:
    """The lines of standard error, progress bars' carriage returns taken as line ends."""
    return [line.rstrip() for line in err.replace("\r", "\n").split("\n") if line.strip()]


def _written(last: str) -> set[str]:
    """The files an interrupted command says it wrote whole: ``only A, B written``."""
    found = re.search(r"only (.*) written$", last)
    if not found:
        return set()
    return {Path(item.strip()).parts[0] for item in found.group(1).split(", ") if item.strip()}


def _one_error(lines: list[str]) -> bool:
    """One ``flinkstate: error:`` line, or argparse's usage and one error line."""
    if not lines or not ERROR_LINE.match(lines[-1]):
        return False
    usage = lines[:-1]
    return not usage or (
        usage[0].startswith("usage: ") and all(u.startswith(" ") for u in usage[1:])
    )


def classify(line: Line, run: Run) -> tuple[str, str]:
    """The outcome of ``line`` and a few words on it."""
    lines = stderr_lines(run.err)
    last = lines[-1] if lines else ""
    said = f"status {run.status}: {last[:160]!r}"
    if run.timed_out:
        return "hang", f"still running after {line.seconds:g} s: {last[:120]!r}"
    if "MemoryError" in run.err or run.peak > MEMORY_PEAK:
        return "memory", f"{run.peak / 2**30:.1f} GiB resident; {said}"
    if any(mark in run.err for mark in TRACEBACK_MARKS):
        return "traceback", _traceback_detail(run.err)
    if run.damaged:
        return "damage", f"changed or removed: {', '.join(run.damaged)}; {said}"
    if run.leftover:
        return "litter", f"a process of its group outlived it; {said}"
    if line.bad and run.status == 0:  # what it left behind is its work: it took the line
        return "exit0-on-bad", f"{said}; stdout {run.out[:80]!r}"
    number = signal.Signals[line.signal].value if line.signal else 0
    interrupted = bool(line.signal) and run.status == 128 + number
    interrupted = interrupted and last.startswith("flinkstate: interrupted")
    allowed = _written(last) if interrupted else set()
    if not line.bad and (run.status in line.statuses or line.full or line.signal):
        allowed |= set(line.outputs)
    litter = sorted(n for n in run.new if n not in allowed or n.startswith("."))
    if litter:
        return "litter", f"left {', '.join(litter)}; {said}"
    return _by_status(line, run, lines, interrupted, said)


def _by_status(
    line: Line, run: Run, lines: list[str], interrupted: bool, said: str
) -> tuple[str, str]:
    if line.signal:
        if interrupted:
            return "interrupted", said
        if run.status in line.statuses:
            return "ok", f"finished before the signal; {said}"
        return "wrong-status", said
    if line.full:
        if run.status == 74 and lines and lines[-1] == FULL_DISK_LINE:
            return "error", said
        return ("exit0-on-bad" if run.status == 0 else "wrong-status"), said
    if not line.bad:
        return ("ok" if run.status in line.statuses else "wrong-status"), said
    if run.status != 2:
        return "wrong-status", said
    if _one_error(lines) and not run.out:
        return "error", said
    return "messy", f"{len(lines)} lines on stderr, {len(run.out)} chars on stdout; {said}"


def _traceback_detail(err: str) -> str:
    lines = stderr_lines(err)
    tail = [line for line in lines if not line.startswith(" ")][-2:]
    return " / ".join(t[:140] for t in tail)


def choose(lines: Sequence[Line], seed: int, limit: int | None) -> list[Line]:
    """``limit`` lines of each family (all if None), drawn with ``seed``."""
    if limit is None:
        return list(lines)
    rng = random.Random(seed)
    chosen: list[Line] = []
    for family in families(lines):
        members = [line for line in lines if line.family == family]
        chosen += rng.sample(members, min(limit, len(members)))
    return chosen


def run_all(
    lines: Sequence[Line],
    setup: Setup,
    jobs: int = 2,
    report: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Every line run and classified, ``jobs`` at a time (Spark's one at a time)."""
    spark = threading.Lock()

    def one(line: Line) -> Result:
        if line.spark:
            with spark:
                run = run_line(line, setup)
        else:
            run = run_line(line, setup)
        outcome, detail = classify(line, run)
        result = Result(line, outcome, detail, run.seconds)
        if report is not None:
            report(result)
        return result

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, lines))


def table(results: Sequence[Result]) -> str:
    """Tried, clean and failed per family, with the outcomes of each."""
    rows = [("family", "tried", "clean", "failures", "outcomes")]
    order = families([r.line for r in results])
    for family in [*order, "total"]:
        chosen = [r for r in results if family in ("total", r.line.family)]
        counts = Counter(r.outcome for r in chosen)
        clean = sum(counts[o] for o in CLEAN)
        outcomes = ", ".join(f"{o} {n}" for o, n in sorted(counts.items()))
        rows.append((family, str(len(chosen)), str(clean), str(len(chosen) - clean), outcomes))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join([row[0].ljust(widths[0]), *(row[i].rjust(widths[i]) for i in (1, 2, 3)), row[4]])
        for row in rows
    )


def default_setup(package_root: Path, scratch: Path) -> Setup:
    checkpoint = next(p for p in REAL_CHECKPOINTS.glob("keyed-hash-p2-p4/*/chk-*") if p.is_dir())
    return Setup(package_root, checkpoint, REAL_CHECKPOINTS.parent / "keyed", scratch)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.cli.fuzz", description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="draws values and samples")
    parser.add_argument("--limit", type=int, help="at most this many lines of each family")
    parser.add_argument("--family", action="append", help="only these families")
    parser.add_argument("--command", action="append", help="only these commands' lines")
    parser.add_argument(
        "--package-root", type=Path, default=REPOSITORY, help="the checkout the children run"
    )
    parser.add_argument("--jobs", type=int, default=2, help="children at a time")
    parser.add_argument("--verbose", action="store_true", help="a line per command run")
    args = parser.parse_args(argv)
    lines = [
        line
        for line in choose(catalogue(args.seed), args.seed, args.limit)
        if (not args.family or line.family in args.family)
        and (not args.command or line.command in args.command)
    ]
    print(f"{len(lines)} command lines, seed {args.seed}, package {args.package_root}")

    def report(result: Result) -> None:
        if args.verbose or result.outcome in FAILURES:
            print(f"{result.outcome:12} {result.seconds:5.1f} s  {result.line}", flush=True)

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="flinkstate-cli-fuzz-") as scratch:
        setup = default_setup(args.package_root.resolve(), Path(scratch))
        results = run_all(lines, setup, args.jobs, report)
    print(f"\n{table(results)}\n\n{time.monotonic() - started:.0f} s")
    failed = [r for r in results if r.outcome in FAILURES]
    for result in failed:
        print(f"\n{result.outcome}: {result.line}\n  {result.detail}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
