"""One id convention for claims, and the ids files written before it still carry.

A claim judged on both of its study's methods names its method in its id: `-steady` or
`-seed-method` (its `sibling` is the other). Until 2026-11-25 hello left its steady claims
unsuffixed and pyclients its seed-method ones, so an unsuffixed id meant a different method
in each study. data/reference/claim_ids.yml maps those old ids to the current ones; it is
read once, and every reader of a file that stores claim ids (a run's adaptive.json, a
pooled readings file) passes the ids through `current_id`. No old id is a current id, so
the map applies to a file of any age.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from perflab.analysis.claims import STACK_SUFFIXES

IDS_FILE = Path(__file__).resolve().parents[2] / "data" / "reference" / "claim_ids.yml"


@cache
def renamed(path: Path = IDS_FILE) -> dict[str, str]:
    """Old id -> current id, each library-stack copy (`<id>-seed-stack`) included."""
    import yaml

    raw = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    pairs = raw.get("renamed") or {}
    if not isinstance(pairs, dict):
        raise ValueError(f"{path}: `renamed` must map old id -> current id")
    both = set(pairs) & set(pairs.values())
    if both:
        raise ValueError(f"{path}: an id is both old and current: {sorted(both)}")
    return {old + end: new + end for old, new in pairs.items() for end in STACK_SUFFIXES.values()}


def current_id(claim_id: str) -> str:
    return renamed().get(claim_id, claim_id)


def current_ids(claim_ids: list[str]) -> list[str]:
    return [current_id(claim_id) for claim_id in claim_ids]
