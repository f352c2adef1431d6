"""grpc-perflab: run cells of the gRPC measurement matrix and analyse what they wrote.

The host side (runner, agent, manifest facts) needs only the standard library and psutil;
the analysis side (load, stats, plots, report) needs pandas and matplotlib. Importing
`perflab` loads neither: the loader's names below are resolved on first use, so
`perflab.load(run_dir)` works in a notebook while a benchmark host never imports the
analysis code (tests/test_host_imports.py guards it).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perflab.load import MalformedRawFile, load, load_cells, load_manifest, load_reference

__all__ = ["MalformedRawFile", "load", "load_cells", "load_manifest", "load_reference"]

# Attribute -> the module that defines it, imported when the attribute is first read.
LAZY = {
    "MalformedRawFile": "perflab.parsers",
    "load": "perflab.load",
    "load_cells": "perflab.load",
    "load_manifest": "perflab.load",
    "load_reference": "perflab.load",
}


def __getattr__(name: str) -> Any:
    if name not in LAZY:
        raise AttributeError(f"module 'perflab' has no attribute {name!r}")
    value = getattr(importlib.import_module(LAZY[name]), name)
    # Cached on the package, so the next read is a plain attribute lookup.
    globals()[name] = value
    return value


class Package(types.ModuleType):
    """`perflab.load` is both a submodule and the package's loader function. Importing the
    submodule would bind the module over the function on the package; the function wins (the
    module stays in sys.modules), as it did when this file imported it eagerly."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = Package
