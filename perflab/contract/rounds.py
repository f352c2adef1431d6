"""The unit of replication: a round of the run, and the A/A cells that measure its noise.

A repeat is a round: every cell of repeat 1 runs, then every cell of repeat 2, ..., so slow
drift of the host falls on every configuration alike, and two groups measured in one round
can be compared within it (perflab.analysis.verdicts pairs them). Within a round the cells
run in a shuffled order, so no configuration always runs first, last or after the same
neighbour. The shuffle's seed comes from the run id and the study: a resume with the same
run id runs the cells left in the order the first attempt would have, and the manifest
records the seed and ROUND_RULE, so anyone can recompute the order.

Cells that may share a server (CellSpec.reuse_server, the same server_key) are then
gathered where the first of them fell, in their shuffled order: one server per
implementation and round, started once, while which server runs first still changes from
round to round. So are cells that name the same `gather` (the throughput study's 10 GiB
cells: a server that fills its payload in memory the one before it freed a moment ago is
ready in 6.5 s instead of 22 s, data/experiments/20261128-large-payload-gather). Nothing
moves in a study whose cells neither share nor gather.

A cell's `phase` orders it inside its round before the shuffle: a cell that another cell of
the same round needs first (e.g. a probe that sets a step's offered rate) takes a lower
phase. Every cell of today's studies is phase 0: none needs another of its round first.

A/A cells: one configuration of a study run twice in every round, identical but for the
param `aa` ("a", "b") and their ids. Their ratio would be 1 on a perfectly quiet host; how
far it strays is the run's own noise floor (perflab.analysis.noise).

Standard library only: the benchmark host expands matrices.
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Callable

from perflab.contract.cell import AA_PARAM, CellSpec

AA_COPIES = ("a", "b")
# The label `aa_copies` puts before a copy's id.
AA_COPY_LABEL = re.compile(rf"^aa-(?:{'|'.join(AA_COPIES)})-")
ROUND_RULE = (
    "round by round (every cell of repeat 1, then of repeat 2, ...); inside a round by phase; "
    "inside a phase the cells sorted by cell id, then shuffled by Python's "
    "random.Random(f'{seed}:{repeat}:{phase}').shuffle, seed = the study's entry in "
    "`round_seeds` (sha256 of '<run_id>/<study>', first 16 hex digits); then the cells that "
    "share a server (reuse_server, the same server_key), and those that name the same "
    "`gather`, gathered at the first of them, in their shuffled order"
)


def round_seed(run_id: str, study: str) -> str:
    """The seed of a study's shuffles in a run: the same run id gives the same order."""
    return hashlib.sha256(f"{run_id}/{study}".encode()).hexdigest()[:16]


def round_order(cells: list[CellSpec], seed: str) -> list[CellSpec]:
    """The cells in run order (ROUND_RULE). Sorting by id before the shuffle makes the order
    depend on the cells and the seed only, not on the order a study's expand() made them."""
    groups: dict[tuple[int, int], list[CellSpec]] = defaultdict(list)
    for cell in cells:
        groups[(cell.repeat, cell.phase)].append(cell)
    ordered: list[CellSpec] = []
    for repeat, phase in sorted(groups):
        group = sorted(groups[(repeat, phase)], key=lambda cell: cell.cell_id)
        random.Random(f"{seed}:{repeat}:{phase}").shuffle(group)
        ordered += gathered(group)
    return ordered


def block_key(cell: CellSpec, index: int) -> str:
    """Which block of its round a cell runs in: its server's, its `gather`'s, or its own."""
    if cell.shares_server():
        return cell.server_key()
    return f"gather:{cell.gather}" if cell.gather else f"own:{index}"


def gathered(cells: list[CellSpec]) -> list[CellSpec]:
    """The cells in their order, but those that share a server, or name the same `gather`,
    moved up to the first of them (any other cell stays a block of its own)."""
    blocks: dict[str, list[CellSpec]] = {}
    for index, cell in enumerate(cells):
        blocks.setdefault(block_key(cell, index), []).append(cell)
    for block in blocks.values():
        # An A/A copy b first in its block would start the server: then both copies are
        # fresh, and the pair no longer measures reused against fresh. The first cell that
        # is no copy b starts it (two copies b of one server, hello's two A/A
        # configurations, may both come first in the shuffle).
        first = next(
            (i for i, cell in enumerate(block) if cell.params.get(AA_PARAM) != AA_COPIES[1]), 0
        )
        block.insert(0, block.pop(first))
    return [cell for block in blocks.values() for cell in block]


def aa_copies(cell: CellSpec) -> list[CellSpec]:
    """The A/A pair of one cell: two copies differing only by the `aa` param and their ids."""
    copies = []
    for label in AA_COPIES:
        twin = copy.deepcopy(cell)
        twin.cell_id = f"aa-{label}-{cell.cell_id}"
        twin.params = {**cell.params, AA_PARAM: label}
        # Where the study keeps servers between cells, copy a starts its own: the pair is
        # then reused against fresh, and whatever keeping a server changes widens the floor.
        twin.reuse_server = cell.reuse_server and label != AA_COPIES[0]
        copies.append(twin)
    return copies


def copied_id(cell_id: str) -> str:
    """The id of the cell an A/A copy repeats (`aa-a-x-r1` -> `x-r1`); any other id as it is."""
    return AA_COPY_LABEL.sub("", cell_id)


def aa_cells(cell_of_round: Callable[[int], CellSpec], rounds: int) -> list[CellSpec]:
    """The A/A pair of one configuration in every round; `cell_of_round(repeat)` builds the
    configuration's cell of that round as the study's matrix builds any other."""
    return [twin for repeat in range(1, rounds + 1) for twin in aa_copies(cell_of_round(repeat))]
