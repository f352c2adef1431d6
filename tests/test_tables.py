"""perflab.analysis.tables: how numbers read in the tables people see."""

from __future__ import annotations

import re

import pandas as pd

from perflab.analysis import tables


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


def repeats(server: str, statuses: list[str], metric: str = "rps") -> list[dict]:
    """One row per repeat of a server's cell, each with its recorded status."""
    return [
        {
            "server": server,
            "metric": metric,
            "unit": "req/s",
            "value": 27_000.0 + 100 * i,
            "status": status,
        }
        for i, status in enumerate(statuses)
    ]


def test_a_rate_resting_on_a_bound_repeat_is_marked_and_the_note_says_what_the_mark_means():
    from perflab.analysis import stats

    frame = pd.DataFrame(
        repeats("cpp", ["bound"] * 3)
        + repeats("mixed", ["ok", "bound", "ok"])  # one bound repeat is enough
        + repeats("py", ["ok"] * 3)
    )
    summary = stats.summarize(frame, ["server"])
    assert dict(zip(summary["server"], summary["bound"], strict=True)) == {
        "cpp": True,
        "mixed": True,
        "py": False,
    }
    table = tables.ci_table(summary.assign(scenario="steady"), "server", "scenario")
    column = table["scenario steady (req/s)"]
    assert column["cpp"] == "≥ 27,100 [27,000 – 27,200]"
    assert column["mixed"] == "≥ 27,100 [27,000 – 27,200]"
    assert column["py"] == "27,100 [27,000 – 27,200]"
    assert tables.floor_note(table).startswith("≥: each of these 2 figures rests on at least one")
    # The other way: no bound repeat, no mark and no sentence.
    calm = tables.ci_table(
        summary[summary["server"] == "py"].assign(scenario="s"), "server", "scenario"
    )
    assert not any("≥" in v for v in calm.to_numpy().ravel())
    assert tables.floor_note(calm) == ""
    one = tables.ci_table(
        summary[summary["server"] == "cpp"].assign(scenario="s"), "server", "scenario"
    )
    assert tables.floor_note(one).startswith("≥: this figure rests")


def test_only_rates_are_floors_and_numbers_are_computed_as_before():
    from perflab.analysis import stats

    frame = pd.DataFrame(
        repeats("cpp", ["bound", "ok", "ok"]) + repeats("cpp", ["bound", "ok", "ok"], "latency_p50")
    )
    summary = stats.summarize(frame, ["server"])
    # The bound cell's latency is what was measured, not a bound: flagged, not marked.
    assert summary["bound"].all()
    assert stats.lower_bounds(summary).tolist() == [False, True]  # latency_p50, rps
    texts = tables.with_interval(summary).tolist()
    assert texts == ["27,100 [27,000 – 27,200]", "≥ 27,100 [27,000 – 27,200]"]
    unflagged = stats.summarize(frame.drop(columns="status"), ["server"])
    assert not unflagged["bound"].any()
    numbers = ["median", "ci_low", "ci_high", "n", "coverage"]
    assert summary[numbers].equals(unflagged[numbers])


def test_published_table_marks_a_measured_rate_that_rests_on_a_bound_repeat():
    from perflab.analysis import stats

    frame = pd.DataFrame(repeats("cpp", ["ok", "bound", "ok"]) + repeats("py", ["ok"] * 3))
    published = pd.DataFrame(
        {
            "server": ["cpp", "py"],
            "metric": ["rps"] * 2,
            "value": [20_000.0, 30_000.0],
            "unit": ["req/s"] * 2,
            "source": ["seed"] * 2,
        }
    )
    compared = stats.compare_published(
        stats.summarize(frame, ["server"]), published, ["server"], "rps"
    )
    shown = tables.published_table(compared, ["server"], "req/s")
    measured = shown["measured median (req/s)"]
    assert (measured["cpp"], measured["py"]) == ("≥ 27100.0", 27100.0)
    assert "≥: this figure rests" in tables.floor_note(shown)
    assert tables.floor_note(shown.loc[["py"]]) == ""


def test_the_status_table_counts_the_aa_copies_in_a_column_of_their_own():
    import pandas as pd

    from perflab.analysis.tables import AA_COLUMN, status_counts

    cells = pd.DataFrame(
        {
            "study": ["hello", "hello", "hello", "watch"],
            "cell_id": ["a-r1", "b-r1", "c-r1", "d-r1"],
            "status": ["ok", "ok", "bound", "ok"],
        }
    )
    aa = pd.DataFrame({"study": ["hello", "hello", "orders"], "cell_id": ["x", "y", "z"]})
    counts = status_counts(cells, aa)
    assert counts.loc["hello"].to_dict() == {"bound": 1, "ok": 2, AA_COLUMN: 2}
    # A study whose only cells here are A/A copies still shows them; one without any, 0.
    assert counts.loc["orders", AA_COLUMN] == 1 and counts.loc["watch", AA_COLUMN] == 0
    assert int(counts.to_numpy().sum()) == len(cells) + len(aa)
    # Without them (a run with no A/A pairs) the table is the statuses alone.
    assert AA_COLUMN not in status_counts(cells).columns
    assert AA_COLUMN not in status_counts(cells, aa.iloc[0:0]).columns
