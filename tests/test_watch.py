"""watch study (seed 004): its matrix, and the analysis on the real smoke fixture run."""

from __future__ import annotations

import pandas as pd
import pytest

from perflab.analysis import stats
from perflab.analysis.frames import read_reference, read_run
from perflab.analysis.run import read as read_folder
from perflab.contract.matrix import MatrixError, expand
from perflab.studies import get_study
from perflab.studies.watch import analysis as watch
from perflab.studies.watch.matrix import memory_needed
from tests.conftest import REPO, matrix_only, study_vars

KNOWN = {"node/watch", "go/watch_client"}
FIXTURE = REPO / "tests" / "data" / "runs" / "watch_fixture"


def cells(profile: str, **changes):
    """The profile's cells with the matrix's keys changed; a changed key the profile sets
    too is the matrix's here, so it is the value that gets checked."""
    matrix, profiles = study_vars("watch")
    matrix.update(changes)
    profiles = {
        name: {k: v for k, v in keys.items() if k not in changes} for name, keys in profiles.items()
    }
    return matrix_only(expand("run1", get_study("watch"), matrix, profiles, profile, KNOWN))


def test_matrix_names_existing_folders_and_options_they_declare():
    from perflab.host.impls import discover

    impls = discover(REPO / "servers")
    matrix, _ = study_vars("watch")
    assert {matrix["server"]["impl"], matrix["client"]["impl"]} <= set(impls)
    cell = cells("quick")[0]
    assert set(cell.server.options) <= set(impls["node/watch"].options)
    assert set(cell.load.client_options) <= set(impls["go/watch_client"].options)


def test_full_profile_is_the_seed_shape():
    full = cells("full")
    # 4 strategies x 2 message types x 3 folders x 10 repeats.
    assert len(full) == 4 * 2 * 3 * 10
    assert len({c.cell_id for c in full}) == len(full)
    assert [c.repeat for c in full] == sorted(c.repeat for c in full)
    cell = next(c for c in full if c.cell_id == "frame_cache-separated-large-r2")
    assert cell.scenario == "separated_large" and cell.implementation == "frame_cache"
    assert cell.params == {
        "message": "separated",
        "folder": "large",
        "clients": 25,
        "watches_per_client": 20,
        "kv_pairs": 1000,
        "pair_bytes": 50000,
    }
    assert cell.server.options == {
        "strategy": "frame_cache",
        "folder": "large",
        "pairs": 1000,
        "pair_bytes": 50000,
    }
    assert cell.load.kind == "client" and cell.load.client_impl == "go/watch_client"
    assert cell.load.client_options["method"] == "separated"
    assert cell.load.client_options["clients"] * cell.load.client_options["watches"] == 500


def test_scenarios_and_strategies_match_the_published_table():
    published = read_reference(REPO / "data" / "reference", "watch")
    full = cells("full")
    assert set(published["scenario"]) == {c.scenario for c in full}
    assert set(published["implementation"]) == {c.implementation for c in full}


def test_quick_and_smoke_profiles_are_smaller():
    quick, smoke = cells("quick"), cells("smoke")
    assert len(quick) == 4 * 2 * 3 * 5
    assert len(smoke) == 4 * 2
    assert {c.params["folder"] for c in smoke} == {"small"}
    assert all(c.params["clients"] * c.params["watches_per_client"] == 20 for c in smoke)
    # No quick cell needs more memory than this project's 24 GiB hosts.
    assert max(c.server.memory_bytes for c in quick) < 8 * 2**30
    # Each folder is larger than the one before, as the seed's are (else the same RSS).
    size = {c.params["folder"]: c.params["kv_pairs"] * c.params["pair_bytes"] for c in quick}
    assert size["small"] < size["medium"] < size["large"]


def test_a_mono_burst_that_copies_per_call_needs_a_message_per_watcher():
    large = {"pairs": 1000, "pair_bytes": 50000}
    # The seed's 500 x 50 MB: 20-22.5 GB observed for js-object and protobuf cache mono on
    # the server, and OOM-killed clients (which hold 25 GB of messages being assembled).
    assert memory_needed("js_object", "mono", large, 500) > 48 * 10**9
    assert 24 * 10**9 < memory_needed("frame_cache", "mono", large, 500) < 26 * 10**9
    assert memory_needed("js_object", "separated", large, 500) < 10**9
    full = cells("full", refuse_without_memory=False)
    assert {c.server.memory_bytes for c in full} == {0}


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("strategies", ["js_object", "redis"], "perflab_matrix_watch.strategies"),
        ("messages", [], "perflab_matrix_watch.messages"),
        ("folders", {"small": {"pairs": 0, "pair_bytes": 500}}, "folders.small.pairs"),
        ("folders", {"small": {"pairs": 10}}, "folders.small"),
        ("folders", {"tiny": {"pairs": 10, "pair_bytes": 8}}, "folders.tiny.pair_bytes"),
        ("run_folders", ["huge"], "perflab_matrix_watch.run_folders"),
        ("clients", 0, "perflab_matrix_watch.clients"),
        ("watches_per_client", "20", "perflab_matrix_watch.watches_per_client"),
        ("warmup_watches", -1, "perflab_matrix_watch.warmup_watches"),
        ("timeout_s", 0, "perflab_matrix_watch.timeout_s"),
        ("repeats", True, "perflab_matrix_watch.repeats"),
        ("refuse_without_memory", "yes", "perflab_matrix_watch.refuse_without_memory"),
        ("server", {"name": "x", "impl": "node/nothing"}, "perflab_matrix_watch.server"),
        ("client", {"impl": "go/watch_client"}, "perflab_matrix_watch.client"),
    ],
)
def test_a_bad_value_is_refused_naming_its_key(key, value, named):
    # A profile that does not override the key under test.
    with pytest.raises(MatrixError, match=named.replace(".", r"\.")):
        cells("full" if key == "folders" else "quick", **{key: value})


# --- analysis on the real smoke run ---------------------------------------------------------


@pytest.fixture(scope="module")
def fixture():
    frame = read_run(FIXTURE)
    timeline = watch.timelines(read_folder(FIXTURE))
    return frame, timeline, watch.summarize(frame, timeline)


def test_fixture_run_is_complete_and_loads(fixture):
    frame, timeline, _ = fixture
    assert set(frame["study"]) == {"watch"}
    assert "failed" not in set(frame["metric"])
    assert {"serve_all", "watches_ok", "server_rss_peak", "complete_max"} <= set(frame["metric"])
    ok = frame[frame["metric"] == "watches_ok"]
    assert len(ok) == 8 and set(ok["value"]) == {20.0}
    assert set(timeline["strategy"]) == set(watch.STRATEGIES)
    assert (FIXTURE / "manifest.json").is_file()


def test_timeline_starts_at_the_burst_and_sums_each_process_tree(fixture):
    _, timeline, _ = fixture
    for _, cell in timeline.groupby("cell_id"):
        measured = cell[cell["phase"] == "measure"]
        assert measured["t"].min() == 0.0
        # Before the burst only the server runs (starting, preparing its cache).
        assert set(cell[cell["t"] < 0]["role"]) <= {"server"}
    server = timeline[timeline["role"] == "server"]
    assert (server["rss_mib"] > 20).all() and (server["cpu_percent"].dropna() >= 0).all()
    assert (server.groupby("cell_id")["cpu_seconds"].diff().dropna() >= 0).all()


def test_burst_rows_come_from_the_server_samples(fixture):
    _, timeline, summary = fixture
    rows = watch.burst_rows(timeline)
    assert set(rows["metric"]) == set(watch.BURST_METRICS)
    cell = timeline[
        (timeline["cell_id"] == "js_object-separated-small-r1") & (timeline["role"] == "server")
    ]
    peak = rows[
        (rows["cell_id"] == "js_object-separated-small-r1")
        & (rows["metric"] == "server_cpu_percent_peak")
    ]["value"].iloc[0]
    assert peak == watch.peak_cpu(cell) > 0
    assert {"server_cpu_percent_peak", "serve_all", "server_rss_peak"} <= set(summary["metric"])


def test_a_server_pinned_to_one_core_never_reads_above_one_core(fixture):
    """Every fixture server ran on one CPU (cell.json pinning): its peak and mean CPU stay
    within 100% plus the tick resolution (10 ms at each end of a window of >= 1 s)."""
    frame, timeline, _ = fixture
    limit = 100 * (1 + 2 * 0.01 / watch.WINDOW_S)
    peaks = watch.burst_rows(timeline)
    peaks = peaks[peaks["metric"] == "server_cpu_percent_peak"]["value"]
    assert len(peaks) == 8 and (peaks <= limit).all(), peaks.max()
    server = timeline[timeline["role"] == "server"]["cpu_percent"].dropna()
    assert len(server) and (server <= limit).all()
    windows = frame[frame["metric"] == "server_cpu_window"].set_index("cell_id")["value"]
    means = frame[frame["metric"] == "server_cpu_percent_mean"].set_index("cell_id")["value"]
    assert (means <= 100 * (1 + 2 * 0.01 / windows)).all()


def busy_server_csv(folder, sampled_percent: float) -> None:
    """A server busy on one core for 3 s, sampled every 107 ms, whose psutil percentages
    read `sampled_percent`; the burst is the last 2 s."""
    lines = ["t,pid,role,phase,cpu_percent,rss_bytes,cpu_seconds"]
    t = 0.1
    while t < 3.0:
        phase = "start" if t < 1.0 else "measure"
        cpu = int(t / 0.01) * 0.01  # whole 10 ms ticks, as /proc counts
        lines.append(f"{t:.3f},7,server,{phase},{sampled_percent},{2**25},{cpu:.2f}")
        t += 0.107
    folder.mkdir(parents=True)
    (folder / "resources.csv").write_text("\n".join(lines) + "\n")


def test_peak_cpu_comes_from_cumulative_cpu_not_the_sampled_percentages(tmp_path):
    busy_server_csv(tmp_path / "a", sampled_percent=116.0)
    timeline = watch.cell_timeline(tmp_path / "a")
    peak = watch.peak_cpu(timeline[timeline["role"] == "server"])
    assert 98 <= peak <= 100 * (1 + 2 * 0.01 / watch.WINDOW_S)
    # The other way round: a server using half a core reads half, whatever psutil said.
    (tmp_path / "b").mkdir()
    half = (tmp_path / "a" / "resources.csv").read_text().splitlines()
    rows = [half[0]] + [
        ",".join([*r.split(",")[:6], f"{float(r.split(',')[6]) / 2:.3f}"]) for r in half[1:]
    ]
    (tmp_path / "b" / "resources.csv").write_text("\n".join(rows) + "\n")
    timeline = watch.cell_timeline(tmp_path / "b")
    assert 48 <= watch.peak_cpu(timeline[timeline["role"] == "server"]) <= 52


def test_seed_shape_has_every_strategy_and_message_type(fixture):
    _, _, summary = fixture
    table = watch.seed_shape(summary)
    assert list(table.index) == [
        (m, "small", watch.STRATEGY_NAMES[s]) for m in watch.MESSAGES for s in watch.STRATEGIES
    ]
    assert "peak RSS (MiB)" in table.columns
    assert "time to serve all watchers (s)" in table.columns
    # A burst shorter than the sampling interval has one sample in its phase: no CPU window
    # inside it, so no mean CPU or CPU seconds (rather than counting the start before it).
    cpu = ["mean CPU during the burst (%)", "server CPU (s)"]
    assert table.drop(columns=cpu).notna().all().all()
    frame, timeline, _ = fixture
    short = {
        cell
        for cell, part in timeline[timeline["role"] == "server"].groupby("cell_id")
        if (part["phase"] == "measure").sum() < 2
    }
    missing = set(frame["cell_id"]) - set(frame[frame["metric"] == "server_cpu_seconds"]["cell_id"])
    assert missing == short


def shape_summary(folders: list[str]) -> pd.DataFrame:
    """A summary of every SHAPE figure of two strategies of mono in `folders`."""
    rows = [
        {
            "scenario": f"mono_{folder}",
            "message": "mono",
            "folder": folder,
            "implementation": strategy,
            "metric": metric,
            "unit": "x",
            "median": 100.0 * (1 + watch.FOLDERS.index(folder)) + j,
        }
        for folder in folders
        for j, strategy in enumerate(["frame_cache", "js_object"])
        for metric in watch.SHAPE
    ]
    return pd.DataFrame(rows)


def test_seed_shape_puts_folders_in_rows_so_its_width_stays_the_seven_figures():
    one = watch.seed_shape(shape_summary(["small"]))
    three = watch.seed_shape(shape_summary(["large", "small", "medium"]))
    names = [name for name, _ in watch.SHAPE.values()]
    # The seed's folders side by side made 21 columns: here every folder adds rows.
    assert list(one.columns) == list(three.columns) == names
    assert (len(one), len(three)) == (2, 6)
    assert list(three.index) == [
        ("mono", folder, watch.STRATEGY_NAMES[s])
        for folder in ("small", "medium", "large")
        for s in ("js_object", "frame_cache")
    ]
    assert three.loc[("mono", "large", "js-object cache"), "peak RSS (MiB)"] == 301
    assert three.loc[("mono", "small", "gRPC frame cache"), "server CPU (s)"] == 100


def test_published_vs_measured_pairs_the_seed_cells(fixture):
    _, _, summary = fixture
    published = read_reference(REPO / "data" / "reference", "watch")
    table = watch.published_vs_measured(summary, published)
    measured = table.dropna(subset=["measured"])
    # The smoke run has the small folder only: 2 message types x 4 strategies x 2 metrics.
    assert len(measured) == 16
    assert set(measured["scenario"]) == {"mono_small", "separated_small"}
    row = measured[
        (measured["scenario"] == "mono_small")
        & (measured["strategy"] == "js_object")
        & (measured["metric"] == "server_rss_peak")
    ].iloc[0]
    assert row["published"] == 260 and row["ratio"] == pytest.approx(row["measured"] / 260)
    # Each row says the coverage its own repeats give.
    (ours,) = summary[
        (summary["scenario"] == "mono_small")
        & (summary["implementation"] == "js_object")
        & (summary["metric"] == "server_rss_peak")
    ].itertuples()
    assert row["interval"] == stats.interval_label(ours.n, ours.coverage, ours.interval)
    assert row["interval"] != ""


def test_a_scaled_folder_and_a_capped_peak_are_noted_beside_the_seeds_figure(fixture):
    _, _, summary = fixture
    published = read_reference(REPO / "data" / "reference", "watch")
    at_seed = watch.published_vs_measured(summary, published, {"small": 1000 * 500}, cores=4)
    small = at_seed.dropna(subset=["measured"])
    # The seed's small folder is 1 000 pairs of 500 B: ours the same, and 4 cores far above.
    assert (small["note"] == "").all()
    scaled = watch.published_vs_measured(summary, published, {"small": 150 * 500}, cores=4)
    notes = scaled.dropna(subset=["measured"])["note"]
    assert (notes == "folder 0.15x the seed's (0.075 of 0.5 MB)").all()
    capped = summary.assign(ci_high=100.0)
    at_cap = watch.published_vs_measured(capped, published, {}, cores=1).dropna(subset=["measured"])
    cpu = at_cap[at_cap["metric"] == "server_cpu_percent_peak"]["note"]
    assert (cpu == "at the cap of its 1 pinned core(s): 100%").all() and len(cpu) == 8


def test_a_peak_above_the_pinned_core_is_capped_and_said(tmp_path):
    busy_server_csv(tmp_path / "a", sampled_percent=100.0)
    exact = watch.cell_timeline(tmp_path / "a").assign(cell_id="a", server_cores=1)
    rows = watch.burst_rows(exact)
    assert watch.peak_note(rows).startswith("No cell's CPU over a 1 s window read more")
    # One read 60 ms late: the window ending there reads 106% of the one core.
    late = exact.copy()
    index = late.index[late["t"] > 1.0][0]
    late.loc[late.index >= index, "cpu_seconds"] += 0.06
    late.loc[late.index > index, "cpu_seconds"] -= 0.06
    rows = watch.burst_rows(late).set_index("metric")["value"]
    assert rows["server_cpu_percent_peak_read"] > 104
    assert rows["server_cpu_percent_peak"] == 100.0
    note = watch.peak_note(watch.burst_rows(late))
    assert note.startswith("In 1 of 1 cells a 1 s window read more CPU") and "106%" in note


def test_a_client_killed_by_a_signal_is_named(tmp_path):
    import json
    import shutil

    run = tmp_path / "run"
    cell = run / "watch" / "js_object-mono-large-r1"
    shutil.copytree(FIXTURE / "watch" / "js_object-mono-small-r1", cell)
    record = json.loads((cell / "cell.json").read_text())
    record.update(
        cell_id=cell.name,
        status="failed",
        error="/usr/bin/time -v -o time.txt... exited with code 137:\n",
    )
    (cell / "cell.json").write_text(json.dumps(record))
    (cell / "time.txt").write_text(
        "Command terminated by signal 9\n" + (cell / "time.txt").read_text()
    )
    reasons = watch.failure_reasons(read_folder(run))
    assert list(reasons["cell_id"]) == [cell.name]
    assert reasons["reason"].iloc[0].startswith("client killed by signal 9 (SIGKILL")


def test_a_sample_written_at_each_phase_change_counts_once_a_process_tree_still_sums(tmp_path):
    """The sampler writes its phase-change sample once per phase, at the same instant: the
    server's RSS there is one reading (64 MiB), not two; two client processes sampled at
    the same instant are a tree, and their RSS adds up."""
    mib = 2**20
    lines = ["t,pid,role,phase,cpu_percent,rss_bytes,cpu_seconds"]
    for t, phase, cpu in [
        (0.1, "start", 0.0),
        (0.35, "start", 0.1),
        (0.35, "measure", 0.1),
        (1.5, "measure", 1.2),
        (2.5, "measure", 2.2),
        (2.5, "stop", 2.2),
    ]:
        lines.append(f"{t},7,server,{phase},0,{64 * mib},{cpu}")
    for pid in (8, 9):
        lines.append(f"1.5,{pid},client,measure,0,{10 * mib},0.5")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "resources.csv").write_text("\n".join(lines) + "\n")
    timeline = watch.cell_timeline(tmp_path / "a")
    server = timeline[timeline["role"] == "server"]
    assert list(server["t"]) == [-0.25, 0.0, 1.15, 2.15]
    assert (server["rss_mib"] == 64).all()
    assert list(server["phase"]) == ["start", "measure", "measure", "measure"]
    assert list(server["cpu_seconds"]) == pytest.approx([0.0, 0.1, 1.2, 2.2])
    client = timeline[timeline["role"] == "client"]
    assert list(client["rss_mib"]) == [20]
    growth = watch.burst_rows(timeline.assign(cell_id="a", server_cores=1)).set_index("metric")
    assert growth.loc["server_rss_growth", "value"] == 0


def test_rss_on_a_log_axis_only_where_the_lines_span_decades():
    import pandas as pd

    assert watch.rss_spans_decades(pd.Series([90.0, 95.0, 3700.0]))
    assert not watch.rss_spans_decades(pd.Series([90.0, 95.0, 300.0]))
    assert not watch.rss_spans_decades(pd.Series([], dtype=float))


def test_folder_bytes_are_the_cells_own_pairs_times_pair_size(fixture):
    frame, _, _ = fixture
    table = watch.sizes(frame)
    expected = {row.folder: int(row.kv_pairs * row.pair_bytes) for row in table.itertuples()}
    assert watch.folder_bytes(frame) == expected and expected
    assert watch.folder_bytes(frame.iloc[0:0]) == {}
