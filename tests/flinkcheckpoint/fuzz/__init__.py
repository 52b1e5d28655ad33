"""A seeded fuzzer for the checkpoint reader: real checkpoints, broken on purpose.

Each mutation copies one committed checkpoint's folder (its job directory and the
``job-config.txt`` beside it) and breaks it the way disks, copies and attackers do, in one of
these families (:data:`FAMILIES`):

- ``flip``, ``truncate``, ``inflate``: bits flipped, files cut short, counts and sizes
  inflated, in ``_metadata`` or a state file;
- ``field``: a field of ``_metadata`` changed to a value that still parses (indices, sizes,
  key groups, offsets, parallelism); ``chunk``: a chunk's length in a channel-state file;
- ``special``: every place a file is read (``_metadata``, each channel-state and keyed-state
  file, ``job-config.txt``) replaced by each special file: a FIFO, links to ``/dev/zero`` and
  ``/dev/null``, a symlink loop, a broken link, a directory, a sparse file of 3 GiB;
- ``job-config``: the job's configuration damaged (not UTF-8, UTF-16, a NUL, over a
  megabyte, a special file found before it, values Flink refuses for the keys the forecast
  reads) or rewritten as Flink reads the same values;
- ``repoint``: a channel handle's chunk offsets pointed at another handle's chunk, at one of
  its own twice, inside a chunk or outside the stream (``--repoints`` counts these apart).

Every broken copy is read three ways (``inspect --json``, ``inspect --json --export`` and
``forecast --json``; :mod:`.reads` says how each outcome is told) by a reader process that
runs each command line in a forked child with its memory bounded and a time limit
(:mod:`.reader`). ``--code TREE`` reads with another tree's flinkstate (an older commit's, to
count what it did) while the mutations stay this tree's.

``python -m tests.flinkcheckpoint.fuzz --mutations 1800 --repoints 255 --seed 0``
(``make fuzz``) prints tried, clean and failed mutations per family, and the failures.
"""

from tests.flinkcheckpoint.fuzz.damage import (
    SPECIAL_KINDS,
    Mutation,
    committed_checkpoints,
    copy_checkpoint,
    copy_variant,
    make_special,
    rewrite_metadata,
)
from tests.flinkcheckpoint.fuzz.harness import Outcome, run_mutations
from tests.flinkcheckpoint.fuzz.reads import FAILURES, OUTCOMES, READS
from tests.flinkcheckpoint.fuzz.stream import FAMILIES, MIXED, mutations, sample

__all__ = [
    "FAILURES",
    "FAMILIES",
    "MIXED",
    "OUTCOMES",
    "READS",
    "SPECIAL_KINDS",
    "Mutation",
    "Outcome",
    "committed_checkpoints",
    "copy_checkpoint",
    "copy_variant",
    "make_special",
    "mutations",
    "rewrite_metadata",
    "run_mutations",
    "sample",
]
