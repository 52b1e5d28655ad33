"""Tests of the scripts in ``tools/``, which are files to run, not modules to import."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).parents[2] / "tools"


def load_script(relative: str, name: str) -> ModuleType:
    """The script ``tools/<relative>`` loaded as module ``name``."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / relative)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
