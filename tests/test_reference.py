"""data/reference/*.csv: the published numbers of the seeds, in the data-contract shape.

Besides shape checks, these tests re-read the seed files (../shared/seeds relative to
the repo root) with their own small parsers and compare every published table cell
with the CSV, so a transcription slip fails here.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "data" / "reference"
SEEDS = ROOT.parent / "shared" / "seeds"

COLUMNS = [
    "study",
    "scenario",
    "implementation",
    "client",
    "concurrency",
    "params",
    "repeat",
    "metric",
    "value",
    "unit",
    "source",
    "note",
]
STUDIES = ["hello", "aws_io", "pyclients", "throughput", "orders", "watch"]
# Studies beyond the seeds: their reference table has the columns and no published row.
UNSEEDED = ["capacity"]
UNITS = {
    "calls",
    "s",
    "ms",
    "req/s",
    "KiB",
    "MiB",
    "count",
    "numbers/s",
    "GiB/s",
    "percent",
    "min",
    "ratio",
}
IMPLEMENTATIONS = {
    "hello": {"grpcio_sync_w1", "grpcio_sync_w10", "grpclib_asyncio", "grpclib_uvloop"},
    "aws_io": {"grpcio_sync_w1", "grpcio_sync_w10", "grpclib_asyncio", "grpclib_uvloop"},
    "pyclients": {"cpp_numbers"},
    "throughput": {"go", "python", "cpp"},
    "orders": {"grpcio_python"},
    "watch": {"js_object", "protobuf_cache", "frame_cache", "protobuf_cache_2writes"},
}
GHZ_COLUMNS = {
    "sync grpcio server(max 1 worker)": "grpcio_sync_w1",
    "sync grpcio server(max 10 worker)": "grpcio_sync_w10",
    "async grpclib server": "grpclib_asyncio",
    "async grpclib server(with uvloop)": "grpclib_uvloop",
}
SEED_HELLO = "000_b853735c5b3bff6d.txt"
SEED_PYCLIENTS = "001_f796d1530addd1df.txt"
SEED_THROUGHPUT = "002_cb08f3b355b23222.txt"
SEED_ORDERS = "003_3f3d0c05c4e124e3.txt"
SEED_WATCH = "004_7f064a702e4dacff.txt"

needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed folder {SEEDS} not present")


def load(study: str) -> pd.DataFrame:
    return pd.read_csv(REF / f"{study}.csv", dtype=str, keep_default_na=False)


def seed(name: str) -> str:
    return (SEEDS / name).read_text()


def dec(text: str) -> Decimal:
    return Decimal(text)


def lookup(df: pd.DataFrame, **where: str) -> Decimal:
    mask = pd.Series(True, index=df.index)
    for col, val in where.items():
        mask &= df[col] == val
    hits = df[mask]
    assert len(hits) == 1, f"{where}: expected exactly one row, found {len(hits)}"
    return dec(hits["value"].iloc[0])


def absent(df: pd.DataFrame, **where: str) -> bool:
    mask = pd.Series(True, index=df.index)
    for col, val in where.items():
        mask &= df[col] == val
    return not mask.any()


# ------------------------------------------------------------------ shape


@pytest.mark.parametrize("study", STUDIES)
def test_columns_and_study(study):
    df = load(study)
    assert list(df.columns) == COLUMNS
    assert len(df) > 0
    assert set(df["study"]) == {study}


def test_no_other_csv_files():
    assert sorted(p.stem for p in REF.glob("*.csv")) == sorted(STUDIES + UNSEEDED)


@pytest.mark.parametrize("study", UNSEEDED)
def test_a_study_beyond_the_seeds_publishes_nothing(study):
    df = load(study)
    assert list(df.columns) == COLUMNS
    assert df.empty


@pytest.mark.parametrize("study", STUDIES)
def test_values_numeric_units_known(study):
    df = load(study)
    numeric = pd.to_numeric(df["value"], errors="coerce")
    assert not numeric.isna().any(), df.loc[numeric.isna(), ["metric", "value"]]
    assert set(df["unit"]) <= UNITS, set(df["unit"]) - UNITS
    assert set(df["implementation"]) <= IMPLEMENTATIONS[study]
    for col in ("scenario", "implementation", "client", "metric", "source"):
        assert (df[col] != "").all(), f"empty {col}"


@pytest.mark.parametrize("study", STUDIES)
def test_params_concurrency_repeat_well_formed(study):
    df = load(study)
    for text in df["params"]:
        assert isinstance(json.loads(text), dict), text
    for col in ("concurrency", "repeat"):
        filled = df.loc[df[col] != "", col]
        assert filled.str.fullmatch(r"[1-9]\d*").all(), filled
    if study not in ("hello", "aws_io"):
        assert (df["concurrency"] == "").all()
    if study != "orders":
        assert (df["repeat"] == "").all()
    key = [c for c in COLUMNS if c not in ("value", "unit", "source", "note")]
    dup = df[df.duplicated(key, keep=False)]
    assert dup.empty, dup[key]


@needs_seeds
@pytest.mark.parametrize("study", STUDIES)
def test_sources_are_seed_files(study):
    df = load(study)
    for source in set(df["source"]):
        assert (SEEDS / source).is_file(), source


def test_hello_grid():
    df = load("hello")
    assert set(df["scenario"]) == {"seed_n200"}
    assert set(df["client"]) == {"ghz"}
    grid = {(c, i) for c in ("2", "10", "25", "50") for i in IMPLEMENTATIONS["hello"]}
    assert set(zip(df["concurrency"], df["implementation"], strict=True)) == grid
    rps = df[df["metric"] == "rps"]
    assert set(zip(rps["concurrency"], rps["implementation"], strict=True)) == grid
    assert len(rps) == 16
    assert len(df) == 16 * 8


def test_readme_mentions_every_file():
    text = (REF / "README.md").read_text()
    for study in STUDIES + UNSEEDED:
        assert f"{study}.csv" in text


# ------------------------------------------------------------------ seed 000 (ghz)


def parse_ghz_tables(text: str) -> dict[tuple[str, int], dict[str, dict[str, str]]]:
    """{(section heading, concurrency): {implementation: {row label: cell}}}."""
    tables: dict[tuple[str, int], dict[str, dict[str, str]]] = {}
    section, key, header = "", None, None
    for line in text.splitlines():
        if line.startswith("### "):
            section, key = line[4:].strip(), None
            continue
        m = re.match(r"#### concurrency - (\d+)\b", line)
        if m:
            key, header = (section, int(m.group(1))), None
            tables[key] = {}
            continue
        if key is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip()[1:-1].split("|")]
        if header is None:
            header = [GHZ_COLUMNS[c] for c in cells[1:]]
            continue
        if re.fullmatch(r"-+", cells[0]):
            continue
        for impl, cell in zip(header, cells[1:], strict=True):
            tables[key].setdefault(impl, {})[cells[0]] = cell
    return tables


GHZ_ROWS = {
    # seed label: (metric, csv unit)
    "Count": ("count", "calls"),
    "OK": ("ok", "calls"),
    "DeadlineExceeded": ("errors_DeadlineExceeded", "calls"),
    "Unavailable": ("errors_Unavailable", "calls"),
    "Total": ("total", "s"),
    "Slowest": ("latency_slowest", "ms"),
    "Fastest": ("latency_fastest", "ms"),
    "Average": ("latency_mean", "ms"),
    "Requests/sec": ("rps", "req/s"),
}
TO_UNIT = {
    ("ms", "s"): Decimal("0.001"),
    ("s", "ms"): Decimal(1000),
    ("s", "s"): Decimal(1),
    ("ms", "ms"): Decimal(1),
}
SECTIONS = {
    "hello server": ("hello", "seed_n200"),
    "aws api unary": ("aws_io", "list_unary"),
    "aws api stream": ("aws_io", "list_stream"),
}


@needs_seeds
def test_hello_rps_equals_seed():
    tables = parse_ghz_tables(seed(SEED_HELLO))
    df = load("hello")
    checked = 0
    for (section, conc), by_impl in tables.items():
        if section != "hello server":
            continue
        for impl, rows in by_impl.items():
            got = lookup(df, concurrency=str(conc), implementation=impl, metric="rps")
            assert got == dec(rows["Requests/sec"]), (conc, impl)
            checked += 1
    assert checked == 16


@needs_seeds
def test_every_ghz_cell_equals_seed():
    tables = parse_ghz_tables(seed(SEED_HELLO))
    assert {s for s, _ in tables} == set(SECTIONS)
    frames = {"hello": load("hello"), "aws_io": load("aws_io")}
    counted = {"hello": 0, "aws_io": 0}
    for (section, conc), by_impl in tables.items():
        study, scenario = SECTIONS[section]
        df = frames[study]
        assert set(by_impl) == IMPLEMENTATIONS[study]
        for impl, rows in by_impl.items():
            for label, cell in rows.items():
                metric, unit = GHZ_ROWS[label]
                where = dict(
                    scenario=scenario, concurrency=str(conc), implementation=impl, metric=metric
                )
                got = lookup(df, **where)
                assert lookup(df, **where, unit=unit) == got
                counted[study] += 1
                if cell == "3.543.42":  # the seed's typo; see the row's note
                    assert (section, conc, impl) == ("aws api unary", 50, "grpclib_uvloop")
                    assert got == Decimal("3.42")
                    total = dec(rows["Total"].split()[0])
                    assert abs(dec(rows["Count"]) / total - got) < Decimal("0.005")
                    continue
                number, *seed_unit = cell.split()
                factor = TO_UNIT[(seed_unit[0], unit)] if seed_unit else Decimal(1)
                want = dec(number) * factor
                assert got == want, (where, cell)
    # every CSV row came from a seed cell and vice versa
    assert counted == {s: len(f) for s, f in frames.items()}


# ------------------------------------------------------------------ seed 001


@needs_seeds
def test_pyclients_console_block():
    text = seed(SEED_PYCLIENTS)
    df = load("pyclients")
    block = text.split("$ ./benchmark", 1)[1].split("```", 1)[0]
    client = None
    found = 0
    names = {"grpcio": "grpc_aio", "grpclib": "betterproto_grpclib"}
    scenarios = {"1 request-reply": "request_reply", "streaming 10 numbers": "stream_10"}
    scenario = None
    for line in block.splitlines():
        if line.strip() in names:
            client = names[line.strip()]
            continue
        m = re.match(r"\s+(.+?):\s+(\d+) loops, best of 5: ([\d.]+) msec per loop", line)
        if m:
            scenario = scenarios[m.group(1)]
            where = dict(client=client, scenario=scenario)
            assert lookup(df, **where, metric="time_per_call", unit="ms") == dec(m.group(3))
            row = df[
                (df["client"] == client)
                & (df["scenario"] == scenario)
                & (df["metric"] == "time_per_call")
            ]
            assert json.loads(row["params"].iloc[0]) == {"loops": int(m.group(2))}
            found += 1
            continue
        m = re.match(
            r"\s+(\d+) KB max \| (\d+);(\d+) in;voluntary context switches \| "
            r"(\d+);(\d+) major;minor page faults",
            line,
        )
        if m:
            where = dict(client=client, scenario=scenario)
            expected = {
                ("max_rss", "KiB"): m.group(1),
                ("ctx_switches_involuntary", "count"): m.group(2),
                ("ctx_switches_voluntary", "count"): m.group(3),
                ("page_faults_major", "count"): m.group(4),
                ("page_faults_minor", "count"): m.group(5),
            }
            for (metric, unit), want in expected.items():
                assert lookup(df, **where, metric=metric, unit=unit) == dec(want)
            found += 1
    assert found == 8


@needs_seeds
def test_pyclients_streaming_throughput_both_statements():
    text = " ".join(seed(SEED_PYCLIENTS).split())
    assert "about 9.500 numbers/second vs 12.500 numbers/second" in text
    assert "the throughput of [grpcio] is about 30% higher than [betterproto]/[grpclib]" in text
    assert "has a better throughput than [grpcio]" in text
    df = load("pyclients")
    s = dict(scenario="stream_100000")
    nps = df[(df["scenario"] == "stream_100000") & (df["metric"] == "numbers_per_s")]
    assert sorted(dec(v) for v in nps["value"]) == [Decimal(9500), Decimal(12500)]
    assert (nps["unit"] == "numbers/s").all()
    gains = df[(df["scenario"] == "stream_100000") & (df["metric"] == "claim_throughput_gain")]
    # one row per contradicting statement, each saying which one it is
    assert sorted(gains["client"]) == ["betterproto_grpclib", "grpc_aio"]
    assert all(dec(v) == 30 for v in gains["value"])
    assert all("contradict" in n.lower() for n in gains["note"])
    assert all("contradict" in n.lower() for n in nps["note"])
    assert lookup(df, **s, client="betterproto_grpclib", metric="claim_max_rss_reduction") == 60


# ------------------------------------------------------------------ seed 002


@needs_seeds
def test_throughput_table():
    df = load("throughput")
    sizes = {"512 MiB": 512 * 2**20, "1 GiB": 2**30, "10 GiB": 10 * 2**30}
    langs = {"Go": "go", "Python": "python", "C++": "cpp"}
    cells = 0
    for line in seed(SEED_THROUGHPUT).splitlines():
        parts = [c.strip() for c in line.strip()[1:-1].split("|")] if line.startswith("|") else []
        if len(parts) != 5 or parts[0] not in langs:
            continue
        impl, payload = langs[parts[0]], sizes[parts[4]]
        sub = df[
            (df["implementation"] == impl)
            & (df["params"].map(json.loads) == {"payload_bytes": payload})
        ]
        for security, cell in zip(("none", "tls", "mtls"), parts[1:4], strict=True):
            if not cell:
                assert absent(sub, scenario=security)
                continue
            value, unit = cell.split()
            assert lookup(sub, scenario=security, metric="throughput", unit=unit) == dec(value)
            cells += 1
    assert cells == len(df) == 24


# ------------------------------------------------------------------ seed 003


@needs_seeds
def test_orders_runs_and_batches():
    text = seed(SEED_ORDERS)
    df = load("orders")
    sections = re.split(r"^### ", text, flags=re.M)
    scenario_of = {
        "Localhost test results": "localhost_unary",
        "Server to Server test results": "server_to_server_unary",
        "localhost test results with both side streaming": "localhost_bidi",
    }
    seen = 0
    for sec in sections[1:]:
        scenario = scenario_of[sec.splitlines()[0].strip()]
        sub = df[(df["scenario"] == scenario) & ~df["metric"].str.startswith("claim_")]
        if scenario == "localhost_bidi":
            pairs = re.findall(
                r"1000 transactions and elapsed time ([\d.]+) in seconds\n"
                r"Elapsed time ([\d.]+) in seconds",
                sec,
            )
            assert len(pairs) == 13
            for i, (inner, outer) in enumerate(pairs, start=1):
                assert lookup(sub, repeat=str(i), metric="elapsed", unit="s") == dec(inner)
                assert lookup(sub, repeat=str(i), metric="elapsed_total") == dec(outer)
                seen += 2
            assert set(sub["params"].map(json.loads).map(json.dumps)) == {
                json.dumps({"clients": 10000, "orders": 1000})
            }
            continue
        runs = re.findall(
            r"--no-of-clients=(\d+) --count=(\d+)\n(.*?)(?=\n\$|\n```)", sec, flags=re.S
        )
        for clients, count, out in runs:
            base = {"clients": int(clients), "orders": int(count)}
            progress = re.findall(
                r"^(\d+) transactions and elapsed time ([\d.]+) in seconds", out, flags=re.M
            )
            final = re.findall(
                r"^transactions and elapsed time ([\d.]+) in seconds", out, flags=re.M
            )
            for n, value in progress:
                want = {**base, "progress_transactions": int(n)}
                rows = sub[sub["params"].map(json.loads) == want]
                assert lookup(rows, metric="elapsed", unit="s") == dec(value)
                seen += 1
            for value in final:
                rows = sub[sub["params"].map(json.loads) == base]
                assert lookup(rows, metric="elapsed", unit="s") == dec(value)
                seen += 1
    assert seen == len(df[~df["metric"].str.startswith("claim_")]) == 47


# ------------------------------------------------------------------ seed 004


@needs_seeds
def test_watch_table():
    df = load("watch")
    strategies = {
        "js-object-cache": "js_object",
        "protobuf-cache": "protobuf_cache",
        "frame-cache": "frame_cache",
        "protobuf-cache-2writes": "protobuf_cache_2writes",
    }
    expected_rows = 0
    cells = 0
    for line in seed(SEED_WATCH).splitlines():
        m = re.match(r"\|\s*(mono|separated)\s*\|\s*\[([\w-]+)\]", line)
        if not m:
            continue
        parts = [c.strip() for c in line.strip()[1:-1].split("|")]
        for folder, cell in zip(("small", "medium", "large"), parts[3:6], strict=True):
            sub = df[
                (df["scenario"] == f"{m.group(1)}_{folder}")
                & (df["implementation"] == strategies[m.group(2)])
            ]
            lines = cell.split("<br>")
            cpu_metrics = [
                ("cpu_percent_peak", "cpu_phase_minutes"),
                ("cpu_percent_phase2", "cpu_phase2_minutes"),
            ]
            for (pct_metric, min_metric), part in zip(cpu_metrics, lines[:-1], strict=False):
                pct, dur = re.fullmatch(r"~([\d.]+)% CPU for (\.\.\.|[\d.]+min)", part).groups()
                assert lookup(sub, metric=pct_metric, unit="percent") == dec(pct)
                expected_rows += 1
                if dur == "...":
                    assert absent(sub, metric=min_metric)
                else:
                    assert lookup(sub, metric=min_metric, unit="min") == dec(dur[:-3])
                    expected_rows += 1
            if len(lines) == 2:
                assert absent(sub, metric="cpu_percent_phase2")
            size, unit, dur = re.fullmatch(
                r"~([\d.]+)(MB|GB) RAM for (\.\.\.|[\d.]+min)", lines[-1]
            ).groups()
            mib = dec(size) * (1024 if unit == "GB" else 1)
            assert lookup(sub, metric="rss_peak", unit="MiB") == mib
            expected_rows += 1
            if dur == "...":
                assert absent(sub, metric="rss_phase_minutes")
                note = sub.loc[sub["metric"] == "rss_peak", "note"].iloc[0]
                assert "..." in note
            else:
                assert lookup(sub, metric="rss_phase_minutes", unit="min") == dec(dur[:-3])
                expected_rows += 1
            cells += 1
    assert cells == 24
    assert expected_rows == len(df)
