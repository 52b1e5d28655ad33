"""The seeded streams of mutations: each family's, and the mixed stream ``--mutations`` reads
(every family but the re-pointed offsets, which ``--repoints`` counts apart)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from tests.flinkcheckpoint.fuzz.damage import (
    SPECIAL_KINDS,
    Mutation,
    checkpoint_files,
    flip,
    overwrite,
    read_places,
    special,
    truncate,
)
from tests.flinkcheckpoint.fuzz.fields import chunk_mutation, field_mutation
from tests.flinkcheckpoint.fuzz.jobconfig import job_config_mutation
from tests.flinkcheckpoint.fuzz.repoint import repoint_mutation

#: every family: the project's mutators, job-config damage, special files in every place a
#: file is read, re-pointed chunk offsets
FAMILIES = ("flip", "truncate", "inflate", "field", "chunk", "special", "job-config", "repoint")
#: the share of each family in the mixed stream
MIXED: Mapping[str, float] = {
    "flip": 0.24,
    "truncate": 0.12,
    "inflate": 0.16,
    "field": 0.16,
    "chunk": 0.08,
    "special": 0.12,
    "job-config": 0.12,
}
INFLATED = (
    (0x7FFFFFFF).to_bytes(4, "big"),
    (0xFFFFFFFF).to_bytes(4, "big"),
    (0x80000000).to_bytes(4, "big"),
    (1 << 24).to_bytes(4, "big"),
    ((1 << 63) - 1).to_bytes(8, "big"),
    (1 << 40).to_bytes(8, "big"),
)

Maker = Callable[[Path, random.Random], "Mutation | None"]


def _file(chk: Path, rng: random.Random) -> tuple[Path, int]:
    """A file of the checkpoint (``_metadata`` more often than not) and its size."""
    files = checkpoint_files(chk)
    relative = files[0] if rng.random() < 0.6 else rng.choice(files)
    return relative, (chk.parents[1] / relative).stat().st_size


def _flip(chk: Path, rng: random.Random) -> Mutation:
    relative, size = _file(chk, rng)
    bits = [rng.randrange(max(1, size) * 8) for _ in range(rng.choice([1, 1, 2, 3, 8]))]
    return Mutation(chk, "flip", f"{len(bits)} bit(s) of {relative}", flip(relative, bits))


def _truncate(chk: Path, rng: random.Random) -> Mutation:
    relative, size = _file(chk, rng)
    length = rng.randrange(max(1, size))
    what = f"{relative} cut to {length} of {size} bytes"
    return Mutation(chk, "truncate", what, truncate(relative, length))


def _inflate(chk: Path, rng: random.Random) -> Mutation:
    relative, size = _file(chk, rng)
    at = rng.randrange(max(1, size - 8))
    value = rng.choice(INFLATED)
    what = f"{value.hex()} at byte {at} of {relative}"
    return Mutation(chk, "inflate", what, overwrite(relative, at, value))


MAKERS: Mapping[str, Maker] = {
    "flip": _flip,
    "truncate": _truncate,
    "inflate": _inflate,
    "field": field_mutation,
    "chunk": chunk_mutation,
    "job-config": job_config_mutation,
    "repoint": repoint_mutation,
}


def _specials(checkpoints: list[Path], rng: random.Random) -> Iterator[Mutation]:
    """Every place a file is read in every checkpoint replaced by every special file, in a
    seeded order, over and over."""
    every = [
        (chk, place, kind)
        for chk in checkpoints
        for place in read_places(chk)
        for kind in SPECIAL_KINDS
    ]
    rng.shuffle(every)
    for chk, place, kind in itertools.cycle(every):
        yield Mutation(chk, "special", f"{place} replaced by {kind}", special(place, kind))


def mutations(
    checkpoints: list[Path], seed: int, families: Mapping[str, float] = MIXED
) -> Iterator[Mutation]:
    """An endless, seeded stream of mutations over ``checkpoints``, each of a family drawn by
    its weight in ``families``."""
    rng = random.Random(seed)
    specials = _specials(checkpoints, random.Random(f"special {seed}"))
    names = list(families)
    weights = [families[name] for name in names]
    while True:
        family = rng.choices(names, weights)[0]
        chk = rng.choice(checkpoints)
        found = next(specials) if family == "special" else MAKERS[family](chk, rng)
        if found is not None:
            yield found


def special_places(checkpoints: list[Path]) -> int:
    """How many (checkpoint, place, special file) there are: the special family meets each
    once in that many of its mutations."""
    return sum(len(read_places(chk)) for chk in checkpoints) * len(SPECIAL_KINDS)


def sample(checkpoints: list[Path], seed: int, each: int) -> list[Mutation]:
    """``each`` mutations of every family, in family order."""
    found: list[Mutation] = []
    for family in FAMILIES:
        stream = mutations(checkpoints, seed, {family: 1.0})
        found += itertools.islice(stream, each)
    return found
