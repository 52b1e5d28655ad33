"""Reading checkpoints that Flink itself wrote: the ``_metadata`` file, the channel-state files
and the records inside them. Nothing read is ever executed or unpickled; every length read from
a file is checked against what remains before anything is allocated."""

from pathlib import Path

from flinkstate.errors import InvalidParameterError

#: the checkpoints Flink 2.3.0 wrote, committed with the repository
REAL_CHECKPOINTS = Path(__file__).resolve().parents[2] / "data" / "real-checkpoints"


def real_checkpoint(name: str) -> Path:
    """The ``chk-N`` directory of one of ``data/real-checkpoints`` (e.g. ``keyed-hash-p2-p4``).

    Examples
    --------
    The checkpoints Flink 2.3.0 wrote, committed in ``data/real-checkpoints``:

    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> checkpoint.relative_to(REAL_CHECKPOINTS).as_posix()
    'keyed-hash-p2-p4/5d009e04dbf8e413889bc15e43e79d49/chk-48'
    >>> sorted(path.name for path in checkpoint.iterdir())
    ['5f9f274d-7b0c-4d04-8390-709817c72ab4', '_metadata']
    >>> real_checkpoint("no-such-job")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: no real checkpoint 'no-such-job' in ...
    """
    found = sorted(REAL_CHECKPOINTS.glob(f"{name}/*/chk-*"))
    found = [p for p in found if p.is_dir()]
    if not found:
        known = (
            sorted(p.name for p in REAL_CHECKPOINTS.iterdir() if p.is_dir())
            if (REAL_CHECKPOINTS.is_dir())
            else []
        )
        raise InvalidParameterError(
            f"no real checkpoint {name!r} in {REAL_CHECKPOINTS}"
            + (f"; known: {', '.join(known)}" if known else " (run from the repository)")
        )
    return found[0]
