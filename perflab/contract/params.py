"""Matrix parameters added after cells were recorded, and what those older cells ran.

A parameter becomes a key of the matrix (and a column of `perflab.analysis.frames`) when a study
starts to vary it; cells recorded before then ran its old fixed value and do not name it.
The analysis reads them with that value, so old and new runs compare and render alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# The library stack every server and client runs unless a cell names another (a seed's
# pinned versions): servers/python/requirements.txt.
CURRENT_STACK = "current"

# parameter -> the value every cell ran before the parameter was recorded
RECORDED_LATE = {
    # ghz --connections: its default, one HTTP/2 connection, is what the seeds ran.
    "connections": 1,
    # pyclients' library stack: runs before the seed-stack cells ran only the current one.
    "stack": CURRENT_STACK,
    # orders' client order: runs before the sequential cells started their clients together.
    "client_order": "parallel",
}


def with_defaults(
    rows: pd.DataFrame, names: tuple[str, ...] = tuple(RECORDED_LATE)
) -> pd.DataFrame:
    """`rows` with each named parameter present, filled with its old value where missing."""
    filled = {}
    for name in names:
        default = RECORDED_LATE[name]
        column = rows.get(name)
        filled[name] = default if column is None else column.fillna(default).astype(type(default))
    return rows.assign(**filled)


def own_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """One study's rows without the parameter columns only other studies record.

    `perflab.analysis.frames` gives a run one frame, so a study's rows carry every other study's
    parameters as empty columns; grouping or pivoting on those drops every row (pandas
    skips NaN keys). A column that is empty in all of `rows` is not the study's own.
    """
    empty = [c for c in rows.columns if rows[c].isna().all() and c not in ("value", "unit")]
    return rows.drop(columns=empty)
