"""Tables for people: medians with intervals and units in the headers, status counts.

No row index is shown where it is only 0..n (`hide_index`); a table with nothing in it
becomes a sentence (`or_note`).
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# Leads a figure that is only a lower bound (`stats.lower_bounds`): "≥ 27,100 [...]".
FLOOR_MARK = "≥"

# Units of metrics that count things (ghz's calls, GNU time's page faults): a count is a
# whole number and reads as one, "200 calls", never "200.0".
COUNT_UNITS = frozenset({"calls", "count"})


def fmt_number(value: float, digits: int) -> str:
    if value != value:  # NaN
        return "–"
    return f"{value:,.{digits}f}"


def whole(value: object) -> object:
    """A whole number as an int ("200", not "200.0"); a fraction, NaN or a non-number as it is."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    return int(value) if float(value).is_integer() else value


def counts_as_integers(
    table: pd.DataFrame, columns: Sequence[object] | None = None, rows: pd.Series | None = None
) -> pd.DataFrame:
    """`table` for display with its counts' whole numbers as ints: the cells of `columns`
    (all by default) in `rows` (a boolean mask, all by default).

    Those columns become object columns, so pandas and `hide_index` print an int as an
    integer beside the other rows' decimals; a fraction (the median of an even number of
    repeats) and NaN stay as they are, for the caller's NaN handling."""
    import pandas as pd

    shown = table.copy()
    keep = [True] * len(table) if rows is None else [bool(r) for r in rows]
    for column in table.columns if columns is None else columns:
        if column not in table.columns:
            continue
        values = [whole(v) if k else v for v, k in zip(table[column], keep, strict=True)]
        shown[column] = pd.Series(values, index=table.index, dtype=object)
    return shown


def floor_marked(text: str, floor: bool) -> str:
    """`text` led by FLOOR_MARK when its figure is only a lower bound."""
    return f"{FLOOR_MARK} {text}" if floor else text


def with_interval(summary: pd.DataFrame, digits: int = 0) -> pd.Series:
    """'median [low – high]' strings; one repeat (no interval) shows the value alone; a rate
    resting on a `bound` repeat is led by "≥" (`stats.lower_bounds`; say so: `floor_note`)."""
    import pandas as pd

    from perflab.analysis.stats import lower_bounds

    if summary.empty:
        return pd.Series(dtype=object, index=summary.index)
    texts = summary.apply(
        lambda row: (
            fmt_number(row["median"], digits)
            if row["n"] <= 1 or row["ci_low"] != row["ci_low"]
            else f"{fmt_number(row['median'], digits)} [{fmt_number(row['ci_low'], digits)} – "
            f"{fmt_number(row['ci_high'], digits)}]"
        ),
        axis=1,
    )
    floors = lower_bounds(summary)
    return pd.Series(
        [floor_marked(t, f) for t, f in zip(texts, floors, strict=True)],
        index=summary.index,
        dtype=object,
    )


def floor_note(table: pd.DataFrame) -> str:
    """The sentence under a table saying what its "≥" means; '' when no figure is marked."""
    from perflab.contract.bounds import BOUND_FRACTION

    marked = sum(str(v).startswith(FLOOR_MARK) for v in table.to_numpy().ravel())
    if not marked:
        return ""
    figures = "this figure rests" if marked == 1 else f"each of these {marked} figures rests"
    return (
        f"{FLOOR_MARK}: {figures} on at least one repeat bound by the load generator (above "
        f"{BOUND_FRACTION:.0%} of its calibrated ceiling), so it is only a lower bound: the "
        "server may be faster."
    )


def ci_table(
    summary: pd.DataFrame,
    index: str | list[str],
    columns: str,
    digits: int = 0,
    unit: str | None = None,
) -> pd.DataFrame:
    """Rows `index`, one column per `columns` value, cells 'median [interval]' (what the
    interval is: `stats.interval_sentence`)."""
    frame = summary.assign(cell=with_interval(summary, digits))
    table = frame.pivot_table(index=index, columns=columns, values="cell", aggfunc="first")
    unit = unit or (summary["unit"].iloc[0] if len(summary) else "")
    table.columns = [f"{columns} {c} ({unit})" for c in table.columns]
    return table.fillna("–")


AA_COLUMN = "A/A copies (noise only)"


def status_counts(cells: pd.DataFrame, aa_cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Cells per study and status (ok, bound, failed); with `aa_cells`, each study's A/A
    copies counted in a column of their own. They set the noise margins and enter no claim
    or table, but a reader adding up the run's cells must find them all: left out silently,
    the reference's index counted 1 452 cells of the 1 700 its README gives."""
    if cells.empty:
        return cells
    counts = cells.pivot_table(
        index="study", columns="status", values="cell_id", aggfunc="count", fill_value=0
    )
    if aa_cells is None or aa_cells.empty:
        return counts
    aa = aa_cells.groupby("study")["cell_id"].count().rename(AA_COLUMN)
    return counts.join(aa, how="outer").fillna(0).astype(int)


def failures(cells: pd.DataFrame) -> pd.DataFrame:
    """Failed cells with the first line of their error, for the report."""
    failed = cells[cells["status"] == "failed"].copy()
    failed["error"] = failed["error"].str.split("\n").str[0]
    return failed[["study", "cell_id", "error"]].reset_index(drop=True)


def errors_by_code(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Load-tool error counts by status code, summed over repeats; empty when none."""
    import pandas as pd

    errors = frame[frame["metric"].str.startswith("errors_")]
    if errors.empty:
        return pd.DataFrame(columns=[*by, "status_code", "calls"])
    table = errors.groupby([*by, "metric"], as_index=False)["value"].sum()
    table["status_code"] = table.pop("metric").str.removeprefix("errors_")
    return counts_as_integers(table.rename(columns={"value": "calls"}), ["calls"])


def or_note(table: pd.DataFrame, note: str, index: bool = True):  # -> table | Markdown
    """The table, or a sentence saying there is nothing to show (an empty grid says nothing).

    `index=False` shows it without its row index (`hide_index`), for a 0..n index."""
    if len(table):
        return table if index else hide_index(table)
    from IPython.display import Markdown

    return Markdown(f"*{note}*")


def published_table(
    table: pd.DataFrame, keys: list[str], unit: str, digits: int = 1
) -> pd.DataFrame:
    """Published vs measured for display: keys as index, units in the headers.

    Only rows with both a published and a measured number; the interval's header says its
    coverage (from the `coverage` column when the table has one); a ratio that is not a
    number (a published zero) shows as "–"; a measured rate resting on a `bound` repeat is
    led by "≥" (`stats.lower_bounds`; say so: `floor_note`)."""
    from perflab.analysis.stats import interval_header, lower_bounds

    both = table.dropna(subset=["published", "measured"])
    floors = lower_bounds(both).tolist()
    header = interval_header(both)
    shown = both.set_index(keys)[["published", "measured", "ci_low", "ci_high", "ratio"]]
    shown = shown.assign(ratio=shown["ratio"].where(shown["ratio"].abs() != float("inf")))
    shown = shown.round(
        {"published": digits, "measured": digits, "ci_low": digits, "ci_high": digits, "ratio": 2}
    )
    if shown["ci_low"].isna().all():  # one repeat everywhere: no interval to show
        shown = shown.drop(columns=["ci_low", "ci_high"])
    # As pandas shows a number of an object column (str), led by the mark where it is a floor.
    marked = [
        floor_marked(str(v), True) if f else v
        for v, f in zip(shown["measured"], floors, strict=True)
    ]
    shown = shown.assign(measured=marked)
    return (
        shown.rename(
            columns={
                "published": f"published ({unit})",
                "measured": f"measured median ({unit})",
                "ci_low": f"{header} low",
                "ci_high": f"{header} high",
                "ratio": "measured / published",
            }
        )
        .astype(object)
        .fillna("–")
    )


def bound_note(frame: pd.DataFrame, keys: list[str]) -> str:
    """A sentence naming the cells whose rate is a lower bound set by the load generator."""
    bound = frame[frame["status"] == "bound"][keys].drop_duplicates()
    if bound.empty:
        return "No cell reached 70% of the load generator's ceiling: every rate is the server's."
    listed = ", ".join(
        " ".join(str(value) for value in row) for row in bound.itertuples(index=False)
    )
    return (
        f"**Lower bounds** (the load generator, not the server, may be the limit): {listed}. "
        "Read these rates as 'at least'."
    )


def hide_index(table: pd.DataFrame):  # -> pandas Styler
    """The table without its row numbers (0..n say nothing); values formatted as pandas
    would, NaN as "–"."""
    # pandas names a styled table with a random id: one drawn from the table's own content
    # keeps a re-render of the same data byte-identical (and two tables on a page apart).
    uid = hashlib.sha1(table.to_csv().encode()).hexdigest()[:10]
    styled = table.style.set_uuid(uid).hide(axis="index")
    return styled.format(na_rep="–", precision=2, thousands=",")
