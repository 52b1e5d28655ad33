"""``--set KEY=VALUE`` options of ``flinkstate run`` and ``whatif``."""

from __future__ import annotations

from flinkstate.errors import InvalidParameterError


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """``--set KEY=VALUE`` options as a dict; a key given twice is refused rather than one of
    its values silently winning."""
    overrides: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InvalidParameterError(f"--set takes KEY=VALUE, got {pair!r}")
        if key in overrides:
            raise InvalidParameterError(
                f"--set {key} is given twice ({overrides[key]!r} and {value.strip()!r}); "
                "give it once"
            )
        overrides[key] = value.strip()
    return overrides
