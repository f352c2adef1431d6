"""perflab.tables: how numbers read in the tables people see."""

from __future__ import annotations

import re

import pandas as pd

from perflab import tables


def cells(styled) -> list[str]:
    """The texts of a styled table's data cells, row by row."""
    return re.findall(r'class="data [^"]*" >([^<]*)</td>', styled.to_html())


def test_counts_read_as_whole_numbers_beside_decimals_of_other_metrics():
    table = pd.DataFrame(
        {
            "metric": ["ok", "latency_mean", "ok"],
            "unit": ["calls", "ms", "calls"],
            "measured": [1200.0, 27.0, 100.5],  # 100.5: the median of two repeats
            "ratio": [1.0, 1.5, float("nan")],
        }
    )
    counted = tables.counts_as_integers(
        table, ["measured"], rows=table["unit"].isin(tables.COUNT_UNITS)
    )
    # A whole count reads as one; the latency's 27.0, the fraction and the ratio stay decimals.
    assert cells(tables.hide_index(counted)) == [
        *("ok", "calls", "1,200", "1.00"),
        *("latency_mean", "ms", "27.00", "1.50"),
        *("ok", "calls", "100.50", "–"),
    ]
    assert "1200.0" in table.to_string()  # the input is left as it was
    # The same table without the count rows named: every number keeps its decimals.
    assert cells(tables.hide_index(table))[2] == "1,200.00"


def test_error_counts_are_whole_numbers():
    frame = pd.DataFrame(
        {
            "server": ["a", "a", "b"],
            "metric": ["errors_Unavailable", "errors_Unavailable", "rps"],
            "value": [91.0, 9.0, 4.5],
        }
    )
    table = tables.errors_by_code(frame, ["server"])
    assert table["calls"].tolist() == [100] and isinstance(table["calls"].iloc[0], int)
    assert ">100<" in table.to_html() and "100.0" not in table.to_html()
    assert tables.errors_by_code(frame[frame["metric"] == "rps"], ["server"]).empty


def test_whole_keeps_what_is_not_a_whole_number():
    assert tables.whole(200.0) == 200 and isinstance(tables.whole(200.0), int)
    assert tables.whole(2.5) == 2.5
    assert tables.whole(True) is True and tables.whole("200.0") == "200.0"
    nan = tables.whole(float("nan"))
    assert nan != nan
