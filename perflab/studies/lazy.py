"""A study record's hook that imports its analysis when called, not when the record is.

A host imports every study record (perflab.runargs reads the registry before the venv
exists), so a record names its pandas-using hooks without importing them; the controller
calls them. A dataclass, not a closure: the judged run a report hands its notebooks is
pickled with its hooks (perflab.analysis.judged).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LazyHook:
    """`module.name(*args)`, with the module imported on the first call."""

    module: str
    name: str

    def __call__(self, *args: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.name)(*args)
