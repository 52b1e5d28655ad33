"""Closed sets of named options a user picks by name (policies, modes, sources)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Self

from flinkstate.errors import InvalidParameterError


class Choice(StrEnum):
    """A StrEnum whose ``parse`` turns a typo into an error naming the valid options."""

    @classmethod
    def parse(cls, value: str | Self) -> Self:
        try:
            return cls(value)
        except ValueError:
            what = re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()
            raise InvalidParameterError(
                f"unknown {what} {value!r}; choose " + ", ".join(m.value for m in cls)
            ) from None
