"""Reading checkpoints that Flink itself wrote: the ``_metadata`` file, the channel-state files
and the records inside them. Nothing read is ever executed or unpickled; every length read from
a file is checked against what remains before anything is allocated."""

from pathlib import Path

from flinkstate.errors import InvalidParameterError

#: the checkpoints Flink 2.3.0 wrote, committed with the repository
REAL_CHECKPOINTS = Path(__file__).resolve().parents[2] / "data" / "real-checkpoints"


def real_checkpoint(name: str) -> Path:
    """The ``chk-N`` directory of one of ``data/real-checkpoints`` (e.g. ``keyed-hash-p2-p4``)."""
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
