"""Parsers against real tool output captured once (tests/data), and against malformed files."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from perflab.analysis import frames
from perflab.contract.parsers import (
    MalformedRawFile,
    client_cdfs,
    parse_ghz,
    parse_resources,
    parse_server_stats,
    parse_time_v,
    read_raw_text,
    terminating_signal,
)
from perflab.host.ghz import store_thinned

DATA = Path(__file__).parent / "data"


def as_dict(rows):
    return {m.metric: (m.value, m.unit) for m in rows}


def test_ghz_real_report():
    path = DATA / "ghz_real.json"
    metrics = as_dict(parse_ghz(read_raw_text(path), path))  # only the .gz exists
    raw = json.loads(gzip.decompress((DATA / "ghz_real.json.gz").read_bytes()))
    assert metrics["ok"] == (raw["statusCodeDistribution"]["OK"], "calls")
    assert metrics["errors"] == (0, "calls")
    assert metrics["rps"][0] == pytest.approx(
        raw["statusCodeDistribution"]["OK"] / (raw["total"] / 1e9)
    )
    assert metrics["latency_p50"] == (raw["latencyDistribution"][2]["latency"] / 1e6, "ms")
    assert metrics["latency_p99"][0] > metrics["latency_p50"][0]


def test_a_ghz_report_is_stored_thinned_and_gzipped_keeping_its_figures(tmp_path):
    raw = gzip.decompress((DATA / "ghz_real.json.gz").read_bytes())
    path = tmp_path / "ghz.json"
    path.write_bytes(raw)
    before = as_dict(parse_ghz(raw.decode(), path))
    note = store_thinned(path, keep=1000)
    assert not path.exists()
    stored = gzip.decompress((tmp_path / "ghz.json.gz").read_bytes())
    thinned = json.loads(stored)
    assert thinned["perflabDetailsThinned"] == {"of": 6664, "kept": 1000}
    # Exactly `keep`, never fewer: the sample capacity's p99.9 needs (10 000 at the default).
    assert len(thinned["details"]) == 1000 and "1000 evenly spaced of 6664" in note
    original = json.loads(raw)["details"]
    assert thinned["details"][0] == original[0] and thinned["details"][-1] == original[6657]
    assert as_dict(parse_ghz(read_raw_text(path), path)) == before
    # A report already small enough is stored as it was written, byte for byte, no note.
    path.write_bytes(stored)
    assert store_thinned(path, keep=1000) == ""
    assert gzip.decompress((tmp_path / "ghz.json.gz").read_bytes()) == stored


def test_ghz_errors_are_counted_by_status_and_not_taken_for_throughput():
    path = DATA / "ghz_all_unavailable.json"
    metrics = as_dict(parse_ghz(path.read_text(), path))
    assert metrics["errors_Unavailable"] == (20, "calls")
    assert metrics["ok"] == (0, "calls")
    assert metrics["rps"] == (0, "req/s")  # ghz itself claims thousands per second here
    assert metrics["rps_ghz"][0] > 1000
    assert "latency_p50" not in metrics


@pytest.mark.parametrize(
    ("name", "reason"),
    [("ghz_truncated.json", "not JSON"), ("ghz_not_ghz.json", "not a ghz JSON report")],
)
def test_malformed_ghz_names_the_file(name, reason):
    path = DATA / name
    with pytest.raises(MalformedRawFile, match=reason) as err:
        parse_ghz(path.read_text(), path)
    assert name in str(err.value)


def test_time_v_real_output():
    metrics = as_dict(parse_time_v((DATA / "time_v_real.txt").read_text()))
    assert metrics["client_max_rss"] == (13384, "KiB")
    assert metrics["client_page_faults_minor"] == (9342, "count")
    assert metrics["client_ctx_switches_voluntary"] == (114, "count")
    assert metrics["client_cpu_seconds"][0] == pytest.approx(0.19)


def test_time_v_malformed_names_file_and_field():
    path = DATA / "time_v_malformed.txt"
    with pytest.raises(MalformedRawFile, match=r"time_v_malformed.txt: 'User time \(seconds\)'"):
        parse_time_v(path.read_text(), path)
    with pytest.raises(MalformedRawFile, match="not GNU time -v output"):
        parse_time_v("hello\n", "x.txt")


def test_time_v_names_the_signal_that_killed_the_command():
    real = (DATA / "time_v_real.txt").read_text()
    assert terminating_signal(real) is None
    assert terminating_signal("Command terminated by signal 9\n" + real) == 9
    # Only GNU time's own line counts, not the timed command's words quoted in it.
    assert terminating_signal('\tCommand being timed: "Command terminated by signal 9"') is None


def test_resources_real_samples():
    metrics = as_dict(parse_resources((DATA / "resources_real.csv").read_text()))
    assert metrics["server_rss_peak"][1] == "MiB"
    assert 0 < metrics["server_cpu_seconds"][0] < 10
    assert 0 < metrics["server_cpu_percent_mean"][0] <= 100 * 2
    assert "client_sampled_cpu_seconds" in metrics  # time -v owns client_cpu_seconds


def test_resources_real_cpu_is_the_difference_inside_the_phase():
    """The real file's server was busy in its warm-up: none of that is counted, and the
    mean over the measured window is the cumulative difference over its duration."""
    text = (DATA / "resources_real.csv").read_text()
    server = [line.split(",") for line in text.splitlines()[1:] if ",server,measure," in line]
    first, last = server[0], server[-1]
    metrics = as_dict(parse_resources(text))
    assert metrics["server_cpu_seconds"][0] == pytest.approx(float(last[6]) - float(first[6]))
    assert metrics["server_cpu_window"] == (pytest.approx(float(last[0]) - float(first[0])), "s")
    before = [line.split(",") for line in text.splitlines()[1:] if ",server,warmup," in line]
    # Counting from the last warm-up sample (the old rule) would add the CPU between them.
    assert float(first[6]) > float(before[-1][6])


def busy_core_csv(tick: float = 0.01, interval: float = 0.1) -> str:
    """A process pinned to one core and busy throughout: cumulative CPU rounded down to
    the kernel's tick, sampled a little late each time as psutil is; 0.8 s of warm-up
    before a 2 s measured phase."""
    lines = ["t,pid,role,phase,cpu_percent,rss_bytes,cpu_seconds"]
    t = 0.0
    while t < 3.0:
        phase = "warmup" if t < 0.8 else "measure"
        cpu = int(t / tick) * tick  # a full core, counted in whole ticks
        # cpu_percent as psutil reports it over uneven intervals: it can exceed 100.
        percent = 112.0 if phase == "measure" else 100.0
        lines.append(f"{t:.3f},7,server,{phase},{percent},1,{cpu:.2f}")
        t += interval + 0.007
    return "\n".join(lines) + "\n"


def test_resources_cpu_of_a_pinned_process_stays_within_one_core():
    metrics = as_dict(parse_resources(busy_core_csv()))
    window = metrics["server_cpu_window"][0]
    assert window > 1.5
    # At most one core, give or take one tick at each end of the window.
    assert metrics["server_cpu_percent_mean"][0] <= 100 * (1 + 2 * 0.01 / window)
    assert metrics["server_cpu_percent_mean"][0] >= 100 * (1 - 2 * 0.01 / window)
    # The warm-up's 0.8 s are not in the measured CPU.
    assert metrics["server_cpu_seconds"][0] <= window + 0.02


def test_resources_with_one_sample_in_the_phase_gives_no_cpu():
    text = "t,pid,role,phase,cpu_percent,rss_bytes,cpu_seconds\n0.1,7,server,warmup,90,5,0.5\n"
    text += "0.2,7,server,measure,90,6,0.6\n"
    metrics = as_dict(parse_resources(text))
    assert "server_cpu_seconds" not in metrics and "server_cpu_percent_mean" not in metrics
    assert metrics["server_rss_peak"][0] == pytest.approx(6 / 2**20)


def test_resources_without_its_columns_is_refused():
    with pytest.raises(MalformedRawFile, match="resources.csv: expected columns"):
        parse_resources("a,b\n1,2\n", "resources.csv")


def copy_run(tmp_path: Path) -> Path:
    src = DATA / "runs" / "hello_fixture"
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_load_gives_tidy_rows_with_units(tmp_path):
    frame = frames.read_run(copy_run(tmp_path))
    assert {
        "run_id",
        "study",
        "scenario",
        "implementation",
        "client",
        "repeat",
        "metric",
        "value",
        "unit",
        "concurrency",
    } <= set(frame.columns)
    rps = frame[(frame.study == "hello") & (frame.metric == "rps")]
    assert len(rps) == len(frame[frame.study == "hello"].cell_id.unique())
    assert (rps.unit == "req/s").all() and (rps.value > 0).all()


def test_whole_number_parameters_stay_integers_beside_gaps():
    import pandas as pd

    from perflab.analysis.frames import whole_numbers_as_int

    mixed = whole_numbers_as_int(pd.Series([2.0, 50.0, float("nan")]))
    assert str(mixed.dtype) == "Int64" and mixed.tolist()[:2] == [2, 50]
    assert mixed.isna().tolist() == [False, False, True]
    fractions = pd.Series([0.5, 2.0])
    assert whole_numbers_as_int(fractions).dtype == fractions.dtype
    words = pd.Series(["tls", None])
    assert whole_numbers_as_int(words) is words


def test_load_names_a_missing_raw_file(tmp_path):
    run = copy_run(tmp_path)
    victim = next(run.glob("hello/*/ghz.json.gz"))
    victim.unlink()
    with pytest.raises(MalformedRawFile, match=f"{victim.parent.name}/ghz.json: missing"):
        frames.read_run(run)


def test_load_names_a_malformed_raw_file(tmp_path):
    run = copy_run(tmp_path)
    victim = next(run.glob("hello/*/time.txt"))
    victim.write_text("Command terminated by signal 9\n")
    with pytest.raises(MalformedRawFile, match=f"{victim.parent.name}/time.txt: not GNU time"):
        frames.read_run(run)


RUNS = DATA / "runs"


def test_server_stats_line_of_a_real_server_log():
    path = next(RUNS.glob("aws_io_fixture/aws_io/*list_stream*/server.log"))
    stats = parse_server_stats(path.read_text(), path)
    assert stats["calls"]["ListObjectsStream"] > 0
    assert stats["messages_sent"]["ListObjectsStream"] >= stats["calls"]["ListObjectsStream"]


def test_server_stats_take_the_last_line_and_are_empty_without_one():
    assert parse_server_stats('STATS {"calls": 1}\nSTATS {"calls": 2}\n') == {"calls": 2}
    assert parse_server_stats("listening on 127.0.0.1:5000\n") == {}


@pytest.mark.parametrize(
    ("line", "reason"), [("STATS {", "not JSON"), ("STATS [1]", "not a JSON object")]
)
def test_malformed_server_stats_name_the_file(line, reason):
    with pytest.raises(MalformedRawFile, match=f"server.log: STATS line is {reason}"):
        parse_server_stats(line, "server.log")


def test_client_cdfs_of_a_real_client_report():
    path = next(RUNS.glob("orders_fixture/orders/*/client.json"))
    cdfs = client_cdfs(path.read_text(), path)
    quantiles = [q for q, _ in cdfs["rtt"]]
    assert quantiles == sorted(quantiles) and 0 < quantiles[-1] <= 1
    assert client_cdfs('{"metrics": []}') == {}


@pytest.mark.parametrize("text", ["{", "[]", '{"cdf_us": 3}'])
def test_malformed_client_cdfs_name_the_file(text):
    with pytest.raises(MalformedRawFile, match="client.json: not a client report"):
        client_cdfs(text, "client.json")
