"""`perflab_rounds`: a study's cells cut into its rounds, for one runner process per round.

The cells arrive in run order (perflab.contract.rounds: round by round, shuffled inside a
round); a round is a run of consecutive cells with one `repeat`. Order is kept as given:
regrouping would undo the shuffle.
"""

from __future__ import annotations

from typing import Any


def perflab_rounds(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{repeat, first, cells}]: each round's cells and the 1-based position of its first
    cell in the study (the i of the runner's [i/n] progress)."""
    rounds: list[dict[str, Any]] = []
    for position, cell in enumerate(cells, start=1):
        if not rounds or rounds[-1]["repeat"] != cell["repeat"]:
            rounds.append({"repeat": cell["repeat"], "first": position, "cells": []})
        rounds[-1]["cells"].append(cell)
    return rounds


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"perflab_rounds": perflab_rounds}
