"""The catalogue of :mod:`tests.cli.fuzz`: bad command lines for every ``flinkstate`` command,
and the valid lines the full-disk and signal families run.

A line's words may name what the harness lays out in each case's own working folder
(``fifo``, ``folder``, ``busy`` (a folder holding a file), ``file.txt``, ``junk.bin``,
``empty``) or what it fills in: ``{chk}`` (a checkpoint Flink wrote, under
:data:`flinkstate.flinkcheckpoint.REAL_CHECKPOINTS`) and ``{dataset}`` (a committed dataset).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

#: how the keyed real checkpoint's records read and are keyed
RECORD_TYPE = "Tuple2<Long,String>"
EXCHANGE = "to-record->slow-counter=hash:f0%1000"
#: what Flink counts in a Java int, and a Java long
JAVA_INT_MAX = 2**31 - 1
JAVA_LONG_MAX = 2**63 - 1
#: the largest parallelism and max parallelism Flink accepts
MAX_PARALLELISM = 1 << 15
#: what a refused line exits with (README: 2 bad input)
BAD_INPUT = 2


@dataclass(frozen=True)
class Line:
    """One command line and what it must do.

    ``bad``: the line is bad input, to be refused in one line with status 2 (``statuses``
    for a valid line: what it may exit with). ``outputs``: files or folders a valid line may
    leave in its working folder. ``signal``/``after``: a signal sent that long after the entry
    point starts (SIGINT to the process group, as a terminal's Ctrl-C; SIGTERM to the process,
    as ``kill``). ``full``: standard output is ``/dev/full``."""

    family: str
    command: str
    argv: tuple[str, ...]
    bad: bool = True
    statuses: tuple[int, ...] = (BAD_INPUT,)
    outputs: tuple[str, ...] = ()
    signal: str | None = None
    after: float = 0.0
    full: bool = False
    seconds: float = 60.0
    spark: bool = field(default=False)

    def __str__(self) -> str:
        words = " ".join(repr(w) if not w or " " in w or "<" in w else w for w in self.argv)
        how = ""
        if self.full:
            how = " > /dev/full"
        if self.signal:
            how = f" ({self.signal} at {self.after:g} s)"
        return f"[{self.family}] flinkstate {words}{how}"


#: valid lines, quick: each command's base for its bad variants
BASES: dict[str, tuple[str, ...]] = {
    "keygroup": ("keygroup", "42", "-p", "4"),
    "mapping": ("mapping", "--mapper", "RANGE", "--old", "3", "--new", "2"),
    "mapping-plan": (
        "mapping", "--partitioner", "keyBy", "--old", "3", "--new", "2",
        "--subtask", "1", "--channel", "0", "--key", "7",
    ),
    "buffers": ("buffers", "--channels", "4"),
    "buffers-partition": ("buffers", "--subpartitions", "4"),
    "buffers-tm": ("buffers", "--channels", "4", "--network-memory", "64m", "--gates", "1"),
    "buffers-tm-partitions": (
        "buffers", "--subpartitions", "4", "--network-memory", "64m", "--partitions", "1",
    ),
    "topologies": ("topologies",),
    "scenarios": ("scenarios",),
    "scenario": ("scenarios", "baseline-recovery"),
    "scenarios-bug": ("scenarios", "--bug", "FLINK-35351"),
    "run": ("run", "baseline-recovery", "--set", "records=20"),
    "run-topology": ("run", "keyed", "--set", "records=20"),
    "explore": ("explore", "keyed-upscale", "--max-states", "200", "--quiet"),
    "explore-walks": (
        "explore", "keyed-upscale", "--strategy", "random-walk", "--walks", "3",
        "--max-depth", "20", "--quiet",
    ),
    "whatif": ("whatif", "baseline-recovery", "--quiet", "--set", "records=20"),
    "samples": ("samples",),
    "generate": ("generate", "out", "--records", "1000"),
    "rescale": ("rescale", "{dataset}", "--to", "3", "--quiet"),
    "rescale-flink": (
        "rescale", "{chk}", "--to", "3", "--exchange", EXCHANGE, "--record-type", RECORD_TYPE,
        "--quiet",
    ),
    "inspect": ("inspect", "{chk}"),
    "inspect-export": (
        "inspect", "{chk}", "--export", "out", "--exchange", EXCHANGE,
        "--record-type", RECORD_TYPE,
    ),
    "forecast": (
        "forecast", "{chk}", "--to", "3", "--record-type", RECORD_TYPE, "--exchange", EXCHANGE,
        "--quiet",
    ),
    "lessons": (
        "lessons", "--out", "out", "--only", "failed-as-finished-counterexample", "--jobs", "1",
    ),
    "spark-server": ("spark-server", "status"),
    "spark-server-start": ("spark-server", "start", "--port", "15999"),
}  # fmt: skip

#: the statuses and outputs of the valid lines (0 and nothing written unless named)
VALID: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "generate": ((0,), ("out",)),
    "inspect-export": ((0,), ("out",)),
    "lessons": ((0,), ("out",)),
    "spark-server": ((1,), ()),  # status: not running
}


@dataclass(frozen=True)
class Number:
    """A numeric option of a base line: whole numbers from ``low`` to ``high`` (None: no
    bound), or a memory size, a number of seconds, a list of seeds. ``prefix``: what the
    value follows (``--set records=``)."""

    base: str
    flag: str | None
    low: int = 1
    high: int | None = None
    kind: str = "int"
    prefix: str = ""


def _whole(base: str, flag: str, low: int, high: int | None = None, prefix: str = "") -> Number:
    return Number(base, flag, low, high, "int", prefix)


SEED = (0, JAVA_INT_MAX)
NUMBERS: tuple[Number, ...] = (
    _whole("keygroup", "-p", 1, MAX_PARALLELISM),
    _whole("keygroup", "--max-parallelism", 4, MAX_PARALLELISM),
    _whole("mapping", "--old", 1, MAX_PARALLELISM),
    _whole("mapping", "--new", 1, MAX_PARALLELISM),
    _whole("mapping-plan", "--upstream-old", 1, MAX_PARALLELISM),
    _whole("mapping-plan", "--upstream-new", 1, MAX_PARALLELISM),
    _whole("mapping-plan", "--subtask", 0, 1),
    _whole("mapping-plan", "--channel", 0, 1),
    _whole("mapping-plan", "--key", -(2**63), JAVA_LONG_MAX),
    _whole("mapping-plan", "--max-parallelism", 3, MAX_PARALLELISM),
    _whole("buffers", "--channels", 1, JAVA_INT_MAX),
    _whole("buffers", "--buffers-per-channel", 0, JAVA_INT_MAX),
    _whole("buffers", "--floating-buffers", 0, JAVA_INT_MAX),
    _whole("buffers", "--max-required", 1, JAVA_INT_MAX),
    _whole("buffers-partition", "--subpartitions", 1, JAVA_INT_MAX),
    _whole("buffers-partition", "--sort-shuffle-min-buffers", 1, JAVA_INT_MAX),
    _whole("buffers-tm", "--gates", 1, JAVA_INT_MAX),
    _whole("buffers-tm-partitions", "--partitions", 1, JAVA_INT_MAX),
    Number("buffers-tm", "--network-memory", kind="size"),
    Number("buffers-tm", "--segment-size", kind="segment"),
    _whole("run", "--seed", *SEED),
    _whole("run", "--steps", 1),
    _whole("run", "--set", 1, 512, prefix="parallelism="),
    _whole("run-topology", "--seed", *SEED),
    _whole("explore", "--max-states", 1),
    _whole("explore", "--max-depth", 1),
    Number("explore", "--time", kind="seconds"),
    Number("explore", "--max-memory", kind="budget"),
    _whole("explore-walks", "--walks", 1),
    _whole("explore", "--seed", *SEED),
    _whole("explore", "--set", 1, 512, prefix="parallelism="),
    Number("whatif", "--seeds", kind="seeds"),
    _whole("whatif", "--vary", 1, 512, prefix="parallelism="),
    _whole("generate", "--records", 1),
    _whole("generate", "--source-parallelism", 1, 128),
    _whole("generate", "--parallelism", 1, 128),
    _whole("generate", "--max-parallelism", 4, MAX_PARALLELISM),
    _whole("generate", "--record-size", 1, JAVA_INT_MAX),
    _whole("generate", "--record-size-max", 0, JAVA_INT_MAX),
    _whole("generate", "--keys", 1, 10**9),
    Number("generate", "--segment-size", kind="segment"),
    _whole("generate", "--input-buffers", 0),
    _whole("generate", "--seed", *SEED),
    _whole("generate", "--batch", 1),
    _whole("rescale", "--to", 1, 128),
    Number("rescale-flink", "--segment-size", kind="segment"),
    Number("inspect-export", "--segment-size", kind="segment"),
    _whole("forecast", "--to", 1, 128),
    _whole("forecast", "--seed", *SEED),
    _whole("forecast", "--steps", 1),
    _whole("lessons", "--jobs", 0),
    _whole("spark-server-start", "--port", 1, 65535),
)

#: words that are no number at all
NOT_NUMBERS = ("abc", "", "1.5", "0x10", "1e3", "nan", "--")
#: of each kind, values Flink or the model refuses whatever the bounds
KIND_VALUES = {
    # no network memory is a what-if Flink refuses as its setup runs (exit 1), not bad input
    "size": ("-1", "abc", "", "1.5g", "64 parsecs", "99999999999999999999tb"),
    "segment": ("0", "-1", "3000", "6000", "4gb", "abc", "", "2147483648"),
    "seconds": ("0", "-1", "abc", "", "nan", "inf", "-inf"),
    # a memory budget: a memory size of at least one mebibyte
    "budget": ("0", "12", "1023kb", "-1", "abc", "", "1.5g", "99999999999999999999tb"),
    "seeds": ("-1", "2147483648", "abc", "", "1,,2", "0,-5", "1.5"),
}


def number_values(number: Number, rng: random.Random) -> list[str]:
    """The values of ``number`` that are bad: just out of its bounds, past a Java int, drawn
    from ``rng`` beyond its bounds (so a seed varies them), and two words that are no whole
    number."""
    if number.kind != "int":
        return list(KIND_VALUES[number.kind])
    candidates = [number.low - 1, 2**31, rng.randint(-(2**64), number.low - 1)]
    if number.high is not None:
        candidates += [number.high + 1, rng.randint(number.high + 1, 2**64)]
    bad = sorted({v for v in candidates if not _within(v, number)})
    return [str(v) for v in bad] + rng.sample(NOT_NUMBERS, 2)


def _within(value: int, number: Number) -> bool:
    return value >= number.low and (number.high is None or value <= number.high)


def with_option(base: tuple[str, ...], flag: str | None, value: str) -> tuple[str, ...]:
    """``base`` with ``flag``'s value replaced by ``value`` (or the option added); an option
    that ``base`` repeats (``--set``) is added again rather than replaced."""
    words = list(base)
    if flag is not None and flag in words and flag not in ("--set", "--vary"):
        at = words.index(flag)
        words[at + 1] = value
        return tuple(words)
    return (*words, *((flag,) if flag else ()), value)


def command_of(base: str) -> str:
    return BASES[base][0]


def numbers(rng: random.Random) -> Iterator[Line]:
    for number in NUMBERS:
        for value in number_values(number, rng):
            argv = with_option(BASES[number.base], number.flag, number.prefix + value)
            if value.startswith("-") and number.flag and not number.prefix:
                argv = _joined(argv, number.flag)  # --seed=-1: argparse reads -1 as a value
            yield Line("numbers", command_of(number.base), argv)
    keys = [
        ("int", "2147483648"), ("int", "abc"), ("int", ""), ("long", "9223372036854775808"),
        ("short", "32768"), ("byte", "128"), ("char", "ab"), ("char", ""),
        ("boolean", "maybe"), ("double", "abc"), ("float", ""),
    ]  # fmt: skip
    for kind, key in keys:
        yield Line("numbers", "keygroup", ("keygroup", "-p", "4", "--type", kind, "--", key))


def _joined(argv: tuple[str, ...], flag: str) -> tuple[str, ...]:
    """``--flag value`` written ``--flag=value`` (the last time ``flag`` is given)."""
    at = len(argv) - 1 - argv[::-1].index(flag)
    return (*argv[:at], f"{flag}={argv[at + 1]}", *argv[at + 2 :])


def _bad(*argv: str) -> Line:
    """A bad line of the ``names`` family; its command is its first word, if one."""
    command = argv[0] if argv and argv[0] in {b[0] for b in BASES.values()} else "(none)"
    return Line("names", command, argv)


def names() -> Iterator[Line]:
    """Unknown names and malformed specs, one per option that names something."""
    keyed = BASES["inspect"]
    forecast = BASES["forecast"]
    yield from (
        _bad("nosuch"),
        _bad(),
        _bad("--nosuch"),
        _bad("keygroup", "42", "-p", "4", "--type", "nosuch"),
        _bad("keygroup", "42", "-p", "4", "--nosuch"),
        _bad("mapping", "--mapper", "NOSUCH", "--old", "3", "--new", "2"),
        _bad("mapping", "--partitioner", "nosuch", "--old", "3", "--new", "2"),
        _bad("mapping", "--mapper", "RANGE", "--partitioner", "keyBy", "--old", "3", "--new", "2"),
        _bad("mapping", "--mapper", "", "--old", "3", "--new", "2"),
        _bad("buffers", "--channels", "4", "--type", "nosuch"),
        _bad("buffers"),
        _bad("topologies", "extra"),
        _bad("scenarios", "nosuch"),
        _bad("scenarios", ""),
        _bad("scenarios", "--bug", "FLINK-1"),
        _bad("scenarios", "--bug", "FLINK-"),
        _bad("scenarios", "--bug", "\u00b9\u00b2"),
        _bad("scenarios", "--bug"),
        _bad("scenarios", "baseline-recovery", "--bug", "35351"),
        _bad("run", "nosuch"),
        _bad("run", ""),
        _bad("run", "baseline-recovery", "--scheduler", "nosuch"),
        _bad("run", "baseline-recovery", "--preset", "nosuch"),
        _bad("run", "baseline-recovery", "--set", "nosuch=1"),
        _bad("run", "baseline-recovery", "--set", "records"),
        _bad("run", "baseline-recovery", "--set", "=1"),
        _bad("run", "baseline-recovery", "--set", "records=abc"),
        _bad("run", "baseline-recovery", "--set", "unaligned=maybe"),
        _bad("run", "baseline-recovery", "--set", "generation=nosuch"),
        _bad("explore", "nosuch"),
        _bad("explore", "keyed-upscale", "--strategy", "nosuch"),
        _bad("explore", "keyed-upscale", "--reduction", "nosuch"),
        _bad("explore", "keyed-upscale", "--fault", "nosuch"),
        _bad("explore", "keyed-upscale", "--phase", "nosuch"),
        _bad("explore", "keyed-upscale", "--set", "nosuch=1"),
        _bad("explore", "keyed-upscale", "--walks", "3"),  # without random-walk
        _bad("explore", "keyed-upscale", "--spark", "--master", "nosuch://x"),
        _bad("explore", "keyed-upscale", "--master", "local[1]"),  # without --spark
        _bad("explore", "keyed-upscale", "--spark", "--swarm", "0"),
        _bad("whatif", "nosuch"),
        _bad("whatif", "baseline-recovery", "--vary", "nosuch=1,2"),
        _bad("whatif", "baseline-recovery", "--vary", "records="),
        _bad("whatif", "baseline-recovery", "--vary", "records"),
        _bad("whatif", "baseline-recovery", "--set", "nosuch=1"),
        _bad("samples", "nosuch"),
        _bad("samples", ""),
        _bad("generate", "out", "--records", "10", "--partitioner", "nosuch"),
        _bad("generate", "out"),
        _bad("rescale", "{dataset}", "--to", "3", "--operator", "nosuch"),
        _bad("rescale", "{dataset}", "--to", "3", "--master", "nosuch://x"),
        _bad("rescale", "{dataset}", "--to", "3", "--master", "spark://256.1.1.1:7077"),
        _bad("rescale", "{dataset}", "--to", "3", "--exchange", EXCHANGE),
        _bad("rescale", "{chk}", "--to", "3"),
        _bad("rescale", "{chk}", "--to", "3", "--exchange", "nosuch->x=hash:f0"),
        _bad("rescale", "{dataset}"),
        _bad(*keyed, "--record-type", "Nosuch"),
        _bad(*keyed, "--record-type", "Tuple2<Long"),
        _bad(*keyed, "--record-type", ""),
        _bad(*keyed, "--exchange", "to-record->slow-counter=nosuch"),
        _bad(*keyed, "--exchange", "nosuch->slow-counter=rebalance"),
        _bad(*keyed, "--exchange", "garbage"),
        _bad(*keyed, "--record-type", RECORD_TYPE, "--exchange",
             "to-record->slow-counter=hash:f9"),
        _bad(*keyed, "--edge", "garbage"),
        _bad(*keyed, "--edge", "a:0>b:0"),
        _bad(*keyed, "--reroot", "garbage"),
        _bad(*keyed, "--reroot", "relative=folder"),
        _bad(*keyed, "--segment-size", "4kb"),  # without --export
        _bad(*forecast, "--generation", "nosuch"),
        _bad(*forecast, "--set", "nosuch=1"),
        _bad(*forecast, "--set", "network_buffers=abc"),
        _bad(*forecast, "--edge", "garbage"),
        _bad(*forecast, "--reroot", "garbage"),
        _bad(*BASES["rescale-flink"], "--edge", "garbage"),
        _bad(*BASES["rescale"], "--recover-output-on-downstream", "--operator", "nosuch"),
        _bad("rescale", "{dataset}", "--to", "3", "--quiet", "--driver-host", "256.256.256.256"),
        _bad("forecast", "{chk}", "--to", "3", "--quiet"),  # no --exchange
        _bad("lessons"),  # no --out
        _bad("lessons", "--out", "out", "--only", "nosuch"),
        _bad("spark-server"),
        _bad("spark-server", "nosuch"),
    )  # fmt: skip


#: hostile paths where a file or folder is read
READ_PATHS = ("fifo", "folder", "/dev/zero", "missing", "junk.bin", "empty", "file.txt/x")
#: hostile paths where a file is written (an existing file may be replaced)
FILE_TARGETS = ("fifo", "folder", "busy", "/dev/full", "file.txt/x", "")
#: hostile paths where a folder is written (an empty one may be filled)
FOLDER_TARGETS = ("fifo", "file.txt", "/dev/full", "/dev/null", "file.txt/x", "")
#: where the keyed real checkpoint's files were stored
STORED = "/flink-checkpoints"


def paths() -> Iterator[Line]:
    """Special files, folders, missing and impossible paths where each command reads or
    writes one."""
    for base in ("inspect", "forecast", "rescale", "rescale-flink"):
        for path in READ_PATHS:
            argv = list(BASES[base])
            argv[1] = path
            yield Line("paths", command_of(base), tuple(argv))
    for path in (*READ_PATHS, "/dev/full"):
        if path != "empty":  # an empty configuration is Flink's defaults
            yield Line("paths", "forecast", with_option(BASES["forecast"], "--job-config", path))
            yield Line(
                "paths", "inspect", with_option(BASES["inspect-export"], "--job-config", path)
            )
    files = (("run", "--trace"), ("run", "--html"), ("whatif", "--csv"), ("forecast", "--html"),
             ("rescale", "--html"))  # fmt: skip
    folders = (("run", "--export"), ("explore", "--trace-dir"), ("samples", "--write"),
               ("generate", None), ("inspect-export", "--export"),
               ("lessons", "--out"))  # fmt: skip
    for targets, kinds in ((FILE_TARGETS, files), (FOLDER_TARGETS, folders)):
        for base, flag in kinds:
            for path in targets:
                if flag is None:
                    argv = list(BASES[base])
                    argv[1] = path
                    yield Line("paths", command_of(base), tuple(argv))
                else:
                    yield Line("paths", command_of(base), with_option(BASES[base], flag, path))
    # a dataset's folder that holds other files
    yield Line("paths", "generate", ("generate", "busy", *BASES["generate"][2:]))


def repeats() -> Iterator[Line]:
    """Options given twice: an appended one naming the same thing twice is refused (one of its
    values would win, or one run be made twice, without a word); a plain one given twice
    takes the last (valid)."""
    flink = BASES["rescale-flink"]
    twice = (
        ("run", (*BASES["run"], "--set", "records=30")),
        ("explore", (*BASES["explore"], "--set", "records=2", "--set", "records=3")),
        ("whatif", (*BASES["whatif"], "--set", "records=30")),
        ("whatif", (*BASES["whatif"], "--vary", "keys=1,2", "--vary", "keys=3")),
        ("whatif", (*BASES["whatif"], "--vary", "keys=2,2")),
        ("whatif", (*BASES["whatif"], "--seeds", "1,1")),
        ("forecast", (*BASES["forecast"], "--set", "seed=1", "--set", "seed=2")),
        ("rescale", (*BASES["rescale"], "--to", "3")),
        ("rescale", ("rescale", "{dataset}", "--to", "3,3", "--quiet")),
        ("rescale", ("rescale", "{dataset}", "--to", "2-4,3", "--quiet")),
        ("rescale", (*flink, "--exchange", EXCHANGE)),
        ("rescale", (*flink, "--exchange", "to-record->slow-counter=rebalance")),
        ("rescale", (*flink, "--reroot", f"{STORED}=folder", "--reroot", f"{STORED}=busy")),
        ("inspect", (*BASES["inspect-export"], "--exchange", EXCHANGE)),
        ("inspect", (*BASES["inspect"], "--reroot", f"{STORED}=a", "--reroot", f"{STORED}=b")),
        ("forecast", (*BASES["forecast"], "--exchange", EXCHANGE)),
    )
    for command, argv in twice:
        yield Line("repeats", command, argv)
    last = {"keygroup": ("-p", "5"), "generate": ("--records", "20"), "run": ("--seed", "3")}
    for base, (flag, value) in last.items():
        statuses, outputs = VALID.get(base, ((0,), ()))
        yield Line("repeats", base, (*BASES[base], flag, value), False, statuses, outputs)


def valid() -> Iterator[Line]:
    """Every base line, which must succeed: what the bad lines vary is valid as given."""
    for base, argv in BASES.items():
        if base.startswith(("rescale", "spark-server-start")):
            continue  # a minute of Spark each: run once, in the full-disk family
        statuses, outputs = VALID.get(base, ((0,), ()))
        yield Line("valid", command_of(base), argv, False, statuses, outputs)
    for base in ("keygroup", "mapping-plan", "buffers-tm", "run", "explore", "whatif", "inspect",
                 "forecast"):  # fmt: skip
        statuses, outputs = VALID.get(base, ((0,), ()))
        yield Line("valid", command_of(base), (*BASES[base], "--json"), False, statuses, outputs)
    plan = (*BASES["mapping-plan"], "--recover-output-on-downstream")
    yield Line("valid", "mapping", plan, False, (0,))


#: valid lines that run a second or more: what a signal interrupts
LONG: dict[str, tuple[str, ...]] = {
    "keygroup": ("keygroup", "1", "2", "3", "-p", "4"),
    "mapping": ("mapping", "--mapper", "FULL", "--old", "2000", "--new", "2000"),
    "buffers": BASES["buffers-tm"],
    "topologies": BASES["topologies"],
    "scenarios": BASES["scenarios"],
    "run": ("run", "keyed-upscale", "--set", "records=3000", "--trace", "trace.jsonl"),
    "explore": ("explore", "keyed-upscale", "--max-states", "100000", "--quiet",
                "--trace-dir", "traces"),
    "whatif": ("whatif", "keyed-upscale", "--vary", "records=2000,4000", "--seeds", "0,1",
               "--csv", "table.csv", "--quiet"),
    "samples": ("samples", "--write", "out"),
    "generate": ("generate", "out", "--records", "50000000"),
    "rescale": ("rescale", "{dataset}", "--to", "2-6", "--html", "report.html", "--quiet"),
    "inspect": BASES["inspect-export"],
    "forecast": (*BASES["forecast"], "--html", "page.html"),
    "lessons": ("lessons", "--out", "out", "--only", "prefilter-deadlock"),
    "spark-server": BASES["spark-server"],
}  # fmt: skip
#: what each long line writes when it is not interrupted
LONG_OUTPUTS = {
    "run": ("trace.jsonl",), "explore": ("traces",), "whatif": ("table.csv",),
    "samples": ("out",), "generate": ("out",), "rescale": ("report.html",),
    "inspect": ("out",), "forecast": ("page.html",), "lessons": ("out",),
}  # fmt: skip
#: when signals come (seconds after the entry point starts); Spark's JVM starts later
SIGNAL_TIMES = (0.1, 0.3, 1.0)
JVM_STARTING = (5.0, 10.0)


def full_disk() -> Iterator[Line]:
    """Every valid base line, each command's ``--help`` and ``--version``, with standard
    output on a full disk: status 74 and one line."""
    lines: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
        ("(none)", ("--help",), ()),
        ("(none)", ("--version",), ()),
    ]
    for base, argv in BASES.items():
        if base == "spark-server-start":
            continue
        lines.append((argv[0], argv, VALID.get(base, ((0,), ()))[1]))
        if base == argv[0]:
            lines.append((argv[0], (argv[0], "--help"), ()))
    for command, argv, outputs in lines:
        seconds = 240.0 if command == "rescale" else 60.0
        yield Line("full-disk", command, argv, False, (74,), outputs, full=True, seconds=seconds)


def signals() -> Iterator[Line]:
    """Each command's long line interrupted at 0.1, 0.3 and 1 s (SIGINT) and at 1 s (SIGTERM);
    ``rescale`` again while its JVM starts."""
    for command, argv in LONG.items():
        statuses = VALID.get(command, ((0, 1), ()))[0]
        outputs = LONG_OUTPUTS.get(command, ())
        times = SIGNAL_TIMES + (JVM_STARTING if command == "rescale" else ())
        for after in times:
            yield Line("sigint", command, argv, False, statuses, outputs, "SIGINT", after)
        for after in (1.0,) + (JVM_STARTING if command == "rescale" else ()):
            yield Line("sigterm", command, argv, False, statuses, outputs, "SIGTERM", after)


def catalogue(seed: int) -> list[Line]:
    """Every line, in a fixed order for ``seed``."""
    rng = random.Random(seed)
    lines = [
        *numbers(rng), *names(), *paths(), *repeats(), *valid(), *full_disk(), *signals(),
    ]  # fmt: skip
    return [_timed(line) for line in lines]


def _timed(line: Line) -> Line:
    spark = line.command == "rescale" or line.argv[:2] == ("spark-server", "start")
    return Line(**{**line.__dict__, "spark": spark})


def families(lines: Sequence[Line]) -> list[str]:
    seen: dict[str, None] = {}
    for line in lines:
        seen.setdefault(line.family, None)
    return list(seen)
