"""Make retained unaligned checkpoints with a real Flink: ``make real-checkpoints``.

Compiles ``CheckpointJob.java`` against the jars of the ``apache-flink`` package in the flink
extra's environment and runs it once per variant: a local MiniCluster (2 TaskManagers with 2
slots each) runs a back-pressured job with unaligned checkpoints for a while, is cancelled, and
leaves its last checkpoints (retained on cancellation) under ``OUT/<variant>/<job id>/chk-N``,
with the job's settings in ``OUT/<variant>/job-config.txt``. The variants are the kinds of the
checkpoints in ``data/real-checkpoints``, and those of :data:`NOT_COMMITTED`. Standard library
only: any Python 3.11 runs it.

A variant with ``restore_downstream`` (``keyed-restored-p2-p4-to-3``) is a pair of jobs, so that
a forecast can be held to what Flink did after a restore: the keyed job runs as above; then the
same job starts again from the latest of its retained checkpoints with in-flight data
(``execution.state-recovery.path``) with the keyed operator (``slow-counter``, and its chained
sink) at the new parallelism, the upstream unchanged, checkpoints every 100 ms, and keeps every
checkpoint it takes (``restore_seconds``, 3 s) under ``OUT/<variant>/restored/<job id>/chk-N``.
Its ``restored/job-config.txt`` says which checkpoint it restored from (``restored_from``,
relative to ``OUT/<variant>``, and ``restored_from_checkpoint_id``), the parallelism before and
after (``downstream_parallelism_before_restore``, ``downstream_parallelism``) and
``checkpointing_during_recovery``: with ``during_recovery=true`` both
``execution.checkpointing.unaligned.recover-output-on-downstream.enabled`` and
``execution.checkpointing.during-recovery.enabled`` are set, so that Flink 2.3 (its first,
in-memory design) filters the recovered records before the task runs and may checkpoint them
while they are still in flight. The checkpoint ids of the restored job continue from the one it
restored from.

    python tools/real-checkpoints/generate.py --flink-python .venv-flink/bin/python \\
        [--out DIR] [--variants a,b] [--seconds N] [--upstream P] [--downstream P]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SLOTS = 4  # 2 TaskManagers x 2 slots; with slot sharing a job needs its largest parallelism

#: the job's settings per variant (CheckpointJob's KEY=VALUE arguments)
VARIANTS: dict[str, dict[str, str]] = {
    "keyed-hash-p2-p4": {"topology": "keyed", "upstream": "2", "downstream": "4"},
    "keyed-hash-p2-p4-allinline": {
        "topology": "keyed",
        "upstream": "2",
        "downstream": "4",
        "inline_threshold": "1mb",
    },
    "keyed-hash-p2-p4-nothreshold": {
        "topology": "keyed",
        "upstream": "2",
        "downstream": "4",
        "inline_threshold": "0b",
    },
    "keyed-hash-p2-p4-filemerging": {
        "topology": "keyed",
        "upstream": "2",
        "downstream": "4",
        "file_merging": "true",
    },
    "bigrecord-10k-keyed-p2-p3": {
        "topology": "keyed",
        "upstream": "2",
        "downstream": "3",
        "payload": "10240",
        "sleep_micros": "2000",
    },
    "rebalance-forward-p2-p3": {"topology": "rebalance", "upstream": "2", "downstream": "3"},
    # a String key (String.hashCode()) and another record type: Tuple2<String,Long>
    "string-keyed-p2-p3": {"topology": "string-keyed", "upstream": "2", "downstream": "3"},
    # the keyed job, then the same job restored from one of its checkpoints with in-flight
    # data at slow-counter parallelism 3, checkpointing during recovery (Flink 2.3's V1)
    "keyed-restored-p2-p4-to-3": {
        "topology": "keyed",
        "upstream": "2",
        "downstream": "4",
        "restore_downstream": "3",
        "during_recovery": "true",
    },
    "union-keyed-p2-p3-p4": {
        "topology": "union",
        "upstream": "2",
        "second_upstream": "3",
        "downstream": "4",
    },
}


#: variants of a kind no committed checkpoint shows (CI makes them): a String key over
#: ``Tuple2<String,Long>`` records, and a checkpoint taken after a restore at a new parallelism
NOT_COMMITTED = ("string-keyed-p2-p3", "keyed-restored-p2-p4-to-3")


class GenerateError(Exception):
    """A problem the user can fix, said in one line."""


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flink-python", required=True, help="python of the flink extra")
    parser.add_argument("--out", default=str(ROOT / "data" / "generated-checkpoints"))
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    parser.add_argument("--seconds", type=int, default=12, help="how long each job runs")
    parser.add_argument("--upstream", type=int, help="parallelism of source and to-record")
    parser.add_argument("--downstream", type=int, help="parallelism after the exchange")
    args = parser.parse_args(argv)
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown or not chosen:
        raise GenerateError(
            f"unknown variant {', '.join(unknown) or '(none given)'}; known: {', '.join(VARIANTS)}"
        )
    args.variants = chosen
    if args.seconds < 3:
        raise GenerateError(f"--seconds must be at least 3 (a few checkpoints), got {args.seconds}")
    for name in ("upstream", "downstream"):
        value = getattr(args, name)
        if value is not None and not 1 <= value <= SLOTS:
            raise GenerateError(
                f"--{name} must be from 1 to {SLOTS} (the local cluster's slots), got {value}"
            )
    return args


def flink_lib(flink_python: str) -> Path:
    """The jars directory of the installed ``apache-flink`` package."""
    try:
        found = subprocess.run(
            [flink_python, "-c", "import os, pyflink; print(os.path.dirname(pyflink.__file__))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as failure:
        raise GenerateError(
            f"{flink_python} cannot import pyflink ({failure}); run 'make real-checkpoints', "
            "which installs the flink extra"
        ) from None
    lib = Path(found) / "lib"
    if not (lib / "flink-dist-2.3.0.jar").exists():
        raise GenerateError(f"no flink-dist-2.3.0.jar in {lib}: apache-flink 2.3.0 is expected")
    return lib


def compile_job(lib: Path, classes: Path) -> None:
    source = HERE / "CheckpointJob.java"
    built = classes / "CheckpointJob.class"
    if built.exists() and built.stat().st_mtime >= source.stat().st_mtime:
        return
    if shutil.which("javac") is None:
        raise GenerateError("no 'javac' on PATH: the job is compiled with a JDK 17")
    classes.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["javac", "-d", str(classes), "-cp", f"{lib}/*", str(source)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise GenerateError(f"javac failed:\n{result.stderr}")


def run_variant(name: str, settings: dict[str, str], lib: Path, classes: Path, out: Path) -> None:
    target = out / name
    if target.exists():
        if not (target / "job-config.txt").exists():
            raise GenerateError(f"{target} exists and was not made here; choose another --out")
        shutil.rmtree(target)  # an earlier run of this generator: replaced
    arguments = [f"{k}={v}" for k, v in {"variant": name, "out": str(out), **settings}.items()]
    command = ["java", "-cp", f"{lib}/*:{classes}", "CheckpointJob", *arguments]
    started = time.monotonic()
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(f"{name}:"):
                print(f"  {line.rstrip()}", flush=True)
        _, errors = process.communicate()
    if process.returncode != 0:
        raise GenerateError(f"the job of {name} failed:\n{errors[-3000:]}")
    checkpoints = sorted(target.glob("*/chk-*/_metadata"))
    if not checkpoints:
        raise GenerateError(f"the job of {name} retained no checkpoint in {target}")
    restored = sorted(target.glob("restored/*/chk-*/_metadata"))
    if "restore_downstream" in settings and not restored:
        raise GenerateError(f"the restored job of {name} retained no checkpoint in {target}")
    print(
        f"{name}: {len(checkpoints)} checkpoints"
        + (f" and {len(restored)} of the restored job" if restored else "")
        + f" in {time.monotonic() - started:.0f} s, "
        f"e.g. flinkstate inspect {checkpoints[-1].parent}",
        flush=True,
    )


def main(argv: list[str]) -> int:
    try:
        args = parse(argv)
        if shutil.which("java") is None:
            raise GenerateError("no 'java' on PATH: Flink 2.3 needs Java 17")
        lib = flink_lib(args.flink_python)
        classes = ROOT / "build" / "real-checkpoints"
        compile_job(lib, classes)
        out = Path(args.out).resolve()
        out.mkdir(parents=True, exist_ok=True)
        for number, name in enumerate(args.variants, 1):
            settings = dict(VARIANTS[name], seconds=str(args.seconds))
            if args.upstream is not None or args.downstream is not None:
                settings["upstream"] = str(args.upstream or settings["upstream"])
                settings["downstream"] = str(args.downstream or settings["downstream"])
                # the variant's name says its parallelism: a changed one is another variant
                name = f"{name}-as-p{settings['upstream']}-p{settings['downstream']}"
            print(f"[{number}/{len(args.variants)}] {name}", flush=True)
            run_variant(name, settings, lib, classes, out)
    except GenerateError as problem:
        print(f"real-checkpoints: {problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
