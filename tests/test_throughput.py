"""throughput study: the matrix expands and refuses bad values; the floor parsers read real
captures; the analysis computes shares of the floor and costs from known numbers."""

from __future__ import annotations

import copy
import json
from types import ModuleType

import pandas as pd
import pytest

from perflab.analysis import tables
from perflab.analysis.frames import read_reference, read_run
from perflab.contract.matrix import MatrixError, expand
from perflab.host.impls import discover
from perflab.studies import get_study
from perflab.studies.throughput import analysis as throughput
from perflab.studies.throughput import matrix as throughput_matrix
from tests.conftest import REPO, load_script, matrix_only, study_vars

KNOWN = set(discover(REPO / "servers"))
FIXTURE = REPO / "tests" / "data" / "runs" / "throughput_fixture"
GIB = 2**30


def cells(profile: str, **changes):
    matrix, profiles = study_vars("throughput")
    matrix = {**copy.deepcopy(matrix), **changes}
    return matrix_only(expand("r", get_study("throughput"), matrix, profiles, profile, KNOWN))


def test_matrix_names_only_existing_folders_that_serve_the_study():
    matrix, _ = study_vars("throughput")
    impls = discover(REPO / "servers")
    folders = [e[r] for e in matrix["implementations"].values() for r in ("server", "client")]
    folders += [e[r] for e in matrix["floor"].values() for r in ("server", "client")]
    for folder in folders:
        assert "throughput" in impls[folder].serves, folder


def test_full_profile_is_the_seed_matrix_plus_cross_pairs_and_floor():
    spec = cells("full")
    grpc = [c for c in spec if c.params["pair"] != "floor"]
    # 4 own pairs + 3 clients on the C++ server, 3 modes, 3 sizes, 10 repeats.
    assert len(grpc) == 7 * 3 * 3 * 10
    pairs = {(c.implementation, c.client) for c in grpc}
    assert pairs == {
        ("go", "go"),
        ("cpp", "cpp"),
        ("python", "python"),
        ("python_aio", "python_aio"),
        ("cpp", "go"),
        ("cpp", "python"),
        ("cpp", "python_aio"),
    }
    assert {c.params["payload_bytes"] for c in grpc} == {512 * 2**20, GIB, 10 * GIB}
    assert {c.scenario for c in grpc} == {"none", "tls", "mtls"}
    floor = [c for c in spec if c.params["pair"] == "floor"]
    assert {c.scenario for c in floor} == {"floor_tcp", "floor_cipher"}
    assert len(floor) == 2 * 5
    # Repeats interleaved: every repeat-1 cell before any repeat-2 cell.
    repeats = [c.repeat for c in spec]
    assert repeats == sorted(repeats)


def test_every_grpc_cell_declares_its_payload_and_passes_it_to_both_sides():
    for cell in cells("full"):
        if cell.params["pair"] == "floor":
            continue
        size = cell.params["payload_bytes"]
        assert cell.server.memory_bytes == size  # refused before start when it does not fit
        assert cell.server.options["size"] == size
        assert cell.load.client_options["expect_bytes"] == size
        assert (
            cell.server.options["security"] == cell.load.client_options["security"] == cell.scenario
        )
        assert cell.server.options["chunk_bytes"] == cell.params["chunk_bytes"] == 4193280
        assert (
            cell.load.timeout_s > cell.load.client_options["timeout_s"]
        )  # the client's deadline first
        assert cell.server.ready_timeout_s >= 60 + 10 * size / GIB
        # grpc.aio is the Python folders with an option, on both sides of its own pair.
        aio = cell.implementation == "python_aio", cell.client == "python_aio"
        assert (cell.server.options.get("api") == "aio") == aio[0]
        assert (cell.load.client_options.get("api") == "aio") == aio[1]


def test_quick_profile_has_1_gib_everywhere_and_512_mib_and_10_gib_per_own_pair():
    spec = cells("quick")
    # Three repeats of the once sizes: the size claims pair 10 GiB and 512 MiB with the 1 GiB
    # cells of the same rounds. Five of 1 GiB: rounds 4-5 decided more readings there, at
    # the once sizes none (data/experiments/20261128-throughput-rounds). grpc.aio, under no
    # size claim, is left out (once.implementations).
    for size in (10 * GIB, GIB // 2):
        once = [c for c in spec if c.params.get("payload_bytes") == size]
        assert sorted((c.implementation, c.client, c.scenario, c.repeat) for c in once) == [
            (name, name, "none", repeat) for name in ("cpp", "go", "python") for repeat in (1, 2, 3)
        ]
    rest = [c for c in spec if c.params["pair"] != "floor" and c.params["payload_bytes"] == GIB]
    assert len(rest) == 7 * 3 * 5
    # What quick streams in all, to keep it within minutes on 2 cores.
    assert sum(c.server.memory_bytes for c in spec) / GIB == 199.5


def test_smoke_profile_is_one_tiny_stream_per_pair_and_mode():
    spec = cells("smoke")
    grpc = [c for c in spec if c.params["pair"] != "floor"]
    assert len(grpc) == 21
    assert all(c.params["payload_bytes"] <= 16 * 2**20 for c in grpc)
    assert len(spec) - len(grpc) == 2


def test_measured_bytes_sets_whole_payload_calls_per_cell():
    # 0: one call, as before the knob; else enough whole payloads to stream at least that much.
    assert throughput_matrix.timed_calls(0, GIB) == 1
    assert throughput_matrix.timed_calls(3 * GIB, GIB) == 3
    assert throughput_matrix.timed_calls(3 * GIB, 512 * 2**20) == 6
    assert throughput_matrix.timed_calls(3 * GIB + 1, GIB) == 4
    assert throughput_matrix.timed_calls(3 * GIB, 10 * GIB) == 1
    by_size = {
        c.params["payload_bytes"]: c.load.client_options["calls"]
        for c in cells("full", measured_bytes=3 * GIB)
        if c.params["pair"] != "floor"
    }
    assert by_size == {512 * 2**20: 6, GIB: 3, 10 * GIB: 1}
    unset = {c.load.client_options["calls"] for c in cells("full") if c.params["pair"] != "floor"}
    assert unset == {1}


def test_once_calls_time_that_many_calls_in_the_once_sizes_cells_only():
    once = {"sizes": [10 * GIB], "securities": ["none"], "implementations": ["go"], "calls": 3}
    calls = {
        (c.params["payload_bytes"], c.load.client_options["calls"])
        for c in cells("full", sizes=[GIB], once=once)
        if c.params["pair"] != "floor"
    }
    assert calls == {(GIB, 1), (10 * GIB, 3)}
    # quick's 512 MiB and 10 GiB cells time three calls; its 1 GiB cells one.
    quick = {
        (c.params["payload_bytes"], c.load.client_options["calls"])
        for c in cells("quick")
        if c.params["pair"] != "floor"
    }
    assert quick == {(512 * 2**20, 3), (GIB, 1), (10 * GIB, 3)}


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"sizes": [0]}, "perflab_matrix_throughput.sizes"),
        ({"sizes": []}, "perflab_matrix_throughput.sizes"),
        ({"securities": ["ssl"]}, "perflab_matrix_throughput.securities"),
        ({"reference_server": "java"}, "perflab_matrix_throughput.reference_server"),
        ({"run_implementations": ["rust"]}, "perflab_matrix_throughput.run_implementations"),
        ({"chunk_bytes": -1}, "perflab_matrix_throughput.chunk_bytes"),
        ({"chunk_bytes": 128 * 2**20}, "perflab_matrix_throughput.chunk_bytes"),
        ({"warmup_bytes": "lots"}, "perflab_matrix_throughput.warmup_bytes"),
        ({"measured_bytes": -1}, "perflab_matrix_throughput.measured_bytes"),
        ({"measured_bytes": "3 GiB"}, "perflab_matrix_throughput.measured_bytes"),
        ({"timeout_s": 0}, "perflab_matrix_throughput.timeout_s"),
        ({"repeats": 0}, "perflab_matrix_throughput.repeats"),
        (
            {"once": {"sizes": [GIB], "securities": ["plain"]}},
            "perflab_matrix_throughput.once.securities",
        ),
        (
            {"once": {"sizes": [GIB], "securities": ["none"], "repeats": 0}},
            "perflab_matrix_throughput.once.repeats",
        ),
        (
            {"once": {"sizes": [GIB], "securities": ["none"], "implementations": ["rust"]}},
            "perflab_matrix_throughput.once.implementations",
        ),
        (
            {"once": {"sizes": [GIB], "securities": ["none"], "calls": -1}},
            "perflab_matrix_throughput.once.calls",
        ),
        (
            {"implementations": {"go": {"server": "go/nothing", "client": "go/throughput_client"}}},
            "perflab_matrix_throughput.implementations.go.server",
        ),
        (
            {"floor": {"netperf": {"server": "floor/idle", "client": "floor/idle"}}},
            "perflab_matrix_throughput.floor",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_key(changes, key):
    with pytest.raises(MatrixError, match=key.replace(".", r"\.")):
        cells("full", **changes)  # full overrides nothing: the change is what expands


def load_wrapper(name: str) -> ModuleType:
    """A floor wrapper's module (servers/floor/<name>/client.py), for its pure parser."""
    return load_script(REPO / "servers" / "floor" / name / "client.py", f"floor_{name}")


def test_iperf3_parser_reads_a_real_capture():
    raw = json.loads((FIXTURE / "throughput" / "floor-iperf3-r1" / "iperf3.json").read_text())
    metrics = {m["metric"]: m for m in load_wrapper("iperf3_client").parse_iperf3(raw)}
    received = raw["end"]["sum_received"]
    assert metrics["throughput"]["unit"] == "GiB/s"
    assert metrics["throughput"]["value"] == pytest.approx(
        received["bytes"] / GIB / received["seconds"]
    )
    assert metrics["bytes"]["value"] == received["bytes"] > 0
    assert 0 < metrics["iperf3_client_cpu_percent"]["value"] <= 100


def test_iperf3_parser_refuses_iperf3_errors_and_truncated_output():
    parse = load_wrapper("iperf3_client").parse_iperf3
    with pytest.raises(ValueError, match="unable to connect"):
        parse({"start": {}, "error": "unable to connect to server: Connection refused"})
    with pytest.raises(KeyError):
        parse({"start": {}, "end": {}})


def test_openssl_speed_parser_reads_a_real_capture():
    text = (FIXTURE / "throughput" / "floor-openssl-r1" / "openssl_speed.txt").read_text()
    metrics = {m["metric"]: m for m in load_wrapper("openssl_speed").parse_openssl_speed(text)}
    line = next(x for x in text.splitlines() if x.startswith("+F:"))
    assert metrics["cipher_bytes_per_s"]["value"] == float(line.split(":")[3])
    assert metrics["throughput"]["value"] == pytest.approx(float(line.split(":")[3]) / GIB)
    with pytest.raises(ValueError, match=r"\+F"):
        load_wrapper("openssl_speed").parse_openssl_speed("openssl: unknown option -evp\n")


def rows(
    cell_id: str,
    scenario: str,
    impl: str,
    client: str,
    size: float,
    pair: str,
    metrics: dict[str, tuple[float, str]],
    repeat: int = 1,
) -> list[dict]:
    return [
        {
            "run_id": "r",
            "study": "throughput",
            "scenario": scenario,
            "implementation": impl,
            "client": client,
            "chunk_bytes": 4193280,
            "pair": pair,
            "payload_bytes": size,
            "repeat": repeat,
            "metric": m,
            "value": v,
            "unit": u,
            "cell_id": cell_id,
            "status": "ok",
        }
        for m, (v, u) in metrics.items()
    ]


def synthetic() -> pd.DataFrame:
    """Known numbers: raw TCP 4 GiB/s, cipher 5 GiB/s, Go 2 GiB/s plain, 1 GiB/s TLS."""
    data = []
    data += rows(
        "f1", "floor_tcp", "iperf3", "iperf3", float("nan"), "floor", {"throughput": (4.0, "GiB/s")}
    )
    data += rows(
        "f2",
        "floor_cipher",
        "openssl",
        "openssl",
        float("nan"),
        "floor",
        {"throughput": (5.0, "GiB/s")},
    )
    for repeat, (plain, tls) in enumerate([(2.0, 1.0), (2.2, 1.1), (1.8, 0.9)], start=1):
        for scenario, value in (("none", plain), ("tls", tls)):
            data += rows(
                f"g-{scenario}-{repeat}",
                scenario,
                "go",
                "go",
                GIB,
                "own",
                {
                    "throughput": (value, "GiB/s"),
                    "bytes": (GIB, "B"),
                    "warmup_bytes": (GIB, "B"),
                    "client_cpu_user": (3.0, "s"),
                    "client_cpu_system": (1.0, "s"),
                    "server_cpu_seconds": (2.0, "s"),
                    "client_max_rss": (20480.0, "KiB"),
                    "server_rss_peak": (1100.0, "MiB"),
                },
                repeat,
            )
    failed = rows("x", "none", "go", "go", GIB, "own", {"failed": (1.0, "")})
    failed[0]["status"] = "failed"
    return pd.DataFrame(data + failed)


def test_fraction_of_floor_divides_by_raw_tcp_and_by_the_cipher_for_tls():
    summary = throughput.summarize(synthetic())
    assert throughput.floors(summary) == {"floor_tcp": 4.0, "floor_cipher": 5.0}
    table = throughput.fraction_of_floor(summary).set_index("security")
    assert table.loc["none", "of raw TCP"] == 0.5
    assert table.loc["tls", "of raw TCP"] == 0.25
    assert table.loc["tls", "of the cipher"] == 0.2
    assert table.loc["none", "of the cipher"] != table.loc["none", "of the cipher"]  # NaN


def test_cost_per_gib_counts_the_warmup_and_both_cpu_kinds():
    table = throughput.cost_table(throughput.summarize(synthetic()))
    row = table.loc[("Go", "none", "1 GiB")]
    assert row["client CPU (s/GiB)"] == 2.0  # (3 + 1) s over 1 GiB measured + 1 GiB warm-up
    assert row["server CPU (s/GiB)"] == 1.0
    assert row["client peak RSS (MiB)"] == 20
    assert row["server peak RSS (MiB)"] == 1100


def test_seed_table_and_published_comparison_use_the_own_pair():
    summary = throughput.summarize(synthetic())
    table = throughput.seed_table(summary)
    assert list(table.index) == ["Go, 1 GiB"]
    assert table.loc["Go, 1 GiB", "scenario none (GiB/s)"].startswith("2.00 [")
    compared = throughput.published_vs_measured(
        summary, read_reference(REPO / "data" / "reference", "throughput")
    )
    go_plain = compared[
        (compared["implementation"] == "go")
        & (compared["scenario"] == "none")
        & (compared["payload_bytes"] == GIB)
    ].iloc[0]
    assert go_plain["published"] == 3.0 and go_plain["measured"] == 2.0
    assert go_plain["ratio"] == pytest.approx(2.0 / 3.0)
    # Sizes this run did not measure keep the published number and no measured one; the
    # page shows only measured rows and names the others in one sentence.
    assert compared["published"].notna().sum() == len(compared) == 24
    shown = tables.published_table(compared, ["implementation", "scenario", "payload"], "GiB/s")
    assert len(shown) == compared["measured"].notna().sum() < 24
    note = throughput.unmeasured_note(compared)
    assert note.startswith(f"Not measured in this run (its profile lacks them), {24 - len(shown)}")
    assert "512 MiB" in note and "10 GiB" in note
    # A size measured in some modes names only the modes and implementations it lacks:
    # Go's no-TLS and TLS 1 GiB cells are here, its mutual TLS one is not.
    assert "1 GiB without TLS (C++, Python), with TLS (C++, Python), with mutual TLS (Go," in note
    everything = compared.assign(measured=1.0)
    assert throughput.unmeasured_note(everything) == ""
    ranked = throughput.ranking(compared)
    assert list(ranked["case"]) == ["none, 1 GiB", "tls, 1 GiB"]
    assert list(ranked["measured order (fastest first)"]) == ["Go", "Go"]


def test_closing_note_states_the_floor_and_each_share():
    note = throughput.closing_note(throughput.summarize(synthetic()))
    assert "4.00 GiB/s in one stream" in note and "AES-128-GCM at 5.00 GiB/s" in note
    assert "Go (none): 2.00 GiB/s at 1 GiB, 50% of raw TCP." in note
    assert "Go (tls): 1.00 GiB/s at 1 GiB, 25% of raw TCP, 20% of the cipher." in note


def test_a_run_without_grpc_cells_says_so():
    floor_only = throughput.summarize(synthetic()[lambda f: f["pair"] == "floor"])
    assert throughput.seed_table(floor_only).empty
    assert throughput.fraction_of_floor(floor_only).empty
    assert throughput.cost_table(floor_only).empty
    assert "no gRPC throughput cell" in throughput.closing_note(floor_only)
    assert throughput.floors(floor_only) == {"floor_tcp": 4.0, "floor_cipher": 5.0}


def test_fixture_run_is_complete_and_loads():
    frame = read_run(FIXTURE)
    assert set(frame["study"]) == {"throughput"}
    assert "failed" not in set(frame["status"])
    assert (FIXTURE / "manifest.json").is_file()
    summary = throughput.summarize(frame)
    assert set(summary[summary["metric"] == "throughput"]["scenario"]) == {
        "none",
        "tls",
        "mtls",
        "floor_tcp",
        "floor_cipher",
    }
    assert throughput.chunk_note(frame) == "Chunk size (bytes per message): 4,193,280."


def test_memory_note_gives_each_clients_peak_at_the_largest_size():
    frame = synthetic()
    bigger = frame[frame["cell_id"] == "g-none-1"].copy()
    bigger["cell_id"], bigger["payload_bytes"] = "big", 10 * GIB
    bigger.loc[bigger["metric"] == "client_max_rss", "value"] = 30720.0  # KiB
    note = throughput.memory_note(
        throughput.summarize(pd.concat([frame, bigger], ignore_index=True))
    )
    assert note == (
        "Largest peak RSS over modes and pairs: the Go client peaked at 20 MiB at 1 GiB "
        "and 30 MiB at 10 GiB."
    )
    assert "No client peak RSS" in throughput.memory_note(throughput.summarize(frame.iloc[0:2]))


def test_closing_note_without_floor_cells_says_so_and_gives_no_share():
    note = throughput.closing_note(
        throughput.summarize(synthetic()[lambda f: f["pair"] != "floor"])
    )
    assert "no raw-TCP floor cell" in note and "no cipher floor cell" in note
    assert "Go (none): 2.00 GiB/s at 1 GiB." in note
    assert "nan" not in note


def test_floor_table_rows_are_named_by_what_they_bound_not_numbered():
    table = throughput.floor_table(throughput.summarize(synthetic()))
    assert table.index.name == "floor"
    assert set(table.index) == {"raw TCP, one stream (iperf3)", "AES-128-GCM, one core (openssl)"}
    assert list(table.columns) == ["throughput (GiB/s)", "repeats"]
    assert table.loc["raw TCP, one stream (iperf3)", "throughput (GiB/s)"].startswith("4.00")
    grpc_only = throughput.summarize(synthetic()[lambda f: f["pair"] != "floor"])
    assert throughput.floor_table(grpc_only).empty


def legend_of(fig) -> list[str]:
    return [text.get_text() for text in fig.axes[0].get_legend().get_texts()]


def bar_colour(fig, mode: str) -> tuple[float, ...]:
    handles = fig.axes[0].get_legend().legend_handles
    return next(
        tuple(h.get_facecolor()) for h, t in zip(handles, legend_of(fig), strict=True) if t == mode
    )


def test_bars_list_only_the_security_modes_measured_at_that_size():
    """At 1 GiB the synthetic run has none and tls (no mtls): the legend names those two
    and the floors; at 10 GiB, where only none was measured, none alone."""
    import matplotlib.pyplot as plt

    data = synthetic()
    ten = data[(data["scenario"] == "none") & (data["pair"] == "own")]
    data = pd.concat([data, ten.assign(payload_bytes=10 * GIB, cell_id=ten["cell_id"] + "-10")])
    summary = throughput.summarize(data)
    floors = ["raw TCP (iperf3)", "AES-128-GCM, one core"]
    one, ten_gib = throughput.bars(summary, GIB), throughput.bars(summary, 10 * GIB)
    assert sorted(legend_of(one)) == sorted(["none", "tls", *floors])
    assert sorted(legend_of(ten_gib)) == sorted(["none", *floors])
    # A mode keeps its colour whichever modes share the chart.
    assert bar_colour(one, "none") == bar_colour(ten_gib, "none") != bar_colour(one, "tls")
    plt.close(one)
    plt.close(ten_gib)
