"""A repeat is a round: cells run round by round in a seeded shuffle, and every study can run
one configuration twice per round (A/A cells) whose drift sets the run's decision margin."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import fields, replace
from importlib import import_module

import pandas as pd
import pytest

from perflab.analysis.adaptive import judge_run_looks, judging_of
from perflab.analysis.claims import Claim, read_claims
from perflab.analysis.frames import read_run
from perflab.analysis.noise import KindFloor, NoiseFloor, claim_kinds, kind_floor, noise_floor
from perflab.analysis.replication import Replication, index_html, noise_html, replicate
from perflab.analysis.run import read as read_folder
from perflab.analysis.verdicts import MIN_MARGIN, Judging
from perflab.cli import claim_frame_hooks
from perflab.contract.cell import AA_PARAM, iter_cells
from perflab.contract.matrix import MatrixError, expand
from perflab.contract.rounds import aa_copies, copied_id, round_order, round_seed
from perflab.host.impls import discover
from perflab.host.manifest import build_manifest
from perflab.studies import get_study, runnable
from tests.conftest import REPO, study_vars

STUDIES = tuple(runnable())
# The studies whose matrix declares an A/A pair (capacity's steps are judged on no floor).
AA_STUDIES = tuple(
    study
    for study in STUDIES
    if "aa_pair"
    in {f.name for f in fields(import_module(f"perflab.studies.{study}.matrix").Matrix)}
)
KNOWN = set(discover(REPO / "servers"))
FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"


def study_cells(study: str, profile: str, run_id: str = "run1", **changes):
    matrix, profiles = study_vars(study)
    matrix.update(changes)
    return expand(run_id, get_study(study), matrix, profiles, profile, KNOWN)


# --- the order of a run --------------------------------------------------------------------


@pytest.mark.parametrize("study", STUDIES)
def test_cells_run_round_by_round(study):
    repeats = [cell.repeat for cell in study_cells(study, "quick")]
    assert repeats == sorted(repeats)


def test_the_order_within_a_round_is_a_shuffle_the_run_id_reproduces():
    first, again = study_cells("hello", "quick", "run-a"), study_cells("hello", "quick", "run-a")
    other = study_cells("hello", "quick", "run-b")
    ids = [cell.cell_id for cell in first]
    assert ids == [cell.cell_id for cell in again]  # a resume runs what is left in one order
    assert ids != [cell.cell_id for cell in other]
    round_one = [cell.cell_id for cell in first if cell.repeat == 1]
    assert round_one != sorted(round_one)  # shuffled, not the expand order or the id order
    assert sorted(round_one) == sorted(c.cell_id for c in other if c.repeat == 1)


def test_the_order_depends_on_the_cells_and_seed_not_on_how_they_were_listed():
    cells = study_cells("orders", "quick")
    assert round_order(list(reversed(cells)), "s") == round_order(cells, "s")


def test_a_lower_phase_runs_first_within_its_round():
    cells = study_cells("hello", "smoke")
    probe = replace(cells[-1], cell_id="probe", phase=-1)
    ordered = round_order([*cells, probe], "seed")
    assert ordered[0].cell_id == "probe"
    late = replace(cells[0], cell_id="late-round-2", repeat=2, phase=-5)
    assert round_order([*cells, late], "seed")[-1].cell_id == "late-round-2"


def test_cells_that_share_a_server_are_gathered_at_the_first_of_them():
    cells = [c for c in study_cells("hello", "quick") if c.repeat <= 2]
    plain = round_order(cells, "s")
    sharing = [replace(c, reuse_server=True) for c in cells]
    ordered = round_order(sharing, "s")
    assert [c.repeat for c in ordered] == sorted(c.repeat for c in ordered)
    for repeat in (1, 2):
        mine = [c for c in ordered if c.repeat == repeat]
        keys = [c.server_key() for c in mine]
        # One block per server: a key never comes back once another has started.
        blocks = [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]
        assert len(blocks) == len(set(keys))
        # Servers first met in the shuffled order, cells in their shuffled order within.
        shuffled = [c for c in plain if c.repeat == repeat]
        first_seen = list(dict.fromkeys(c.server_key() for c in shuffled))
        assert blocks == first_seen
        for key in set(keys):
            assert [c.cell_id for c in mine if c.server_key() == key] == [
                c.cell_id for c in shuffled if c.server_key() == key
            ]
    # A cell with a proxy in front of what its server calls keeps its place: never shared.
    proxied = replace(sharing[0], latency_proxies=[{"option": "x", "one_way_ms": 1.0}])
    assert not proxied.shares_server()
    # Nothing moves where no cell shares: the shuffle leaves one server's cells apart.
    keys = [c.server_key() for c in plain if c.repeat == 1]
    assert sum(1 for i in range(1, len(keys)) if keys[i] != keys[i - 1]) + 1 > len(set(keys))


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_large_payloads_run_one_after_another_where_the_first_of_them_fell(profile):
    """The throughput study's 10 GiB cells (gather_bytes) form one block per round, in their
    shuffled order, where the first of them fell; every other cell keeps its shuffled place."""
    cells = study_cells("throughput", profile, gather_bytes=4 << 30)
    plain = study_cells("throughput", profile, gather_bytes=0)
    assert not any(c.gather for c in plain)
    for repeat in sorted({c.repeat for c in cells}):
        mine = [c for c in cells if c.repeat == repeat]
        shuffled = [c for c in plain if c.repeat == repeat]
        large = [i for i, c in enumerate(mine) if c.params.get("payload_bytes", 0) >= 4 << 30]
        if not large:
            continue
        assert all(mine[i].gather == "large_payload" for i in large)
        assert large == list(range(large[0], large[0] + len(large)))  # one block
        in_shuffle = [c.cell_id for c in shuffled if c.params.get("payload_bytes", 0) >= 4 << 30]
        assert [mine[i].cell_id for i in large] == in_shuffle
        assert shuffled[large[0]].cell_id == in_shuffle[0]  # where the first of them fell
        rest = [c.cell_id for c in mine if c.params.get("payload_bytes", 0) < 4 << 30]
        assert rest == [c.cell_id for c in shuffled if c.params.get("payload_bytes", 0) < 4 << 30]


def test_an_aa_copy_b_never_starts_its_blocks_server():
    from perflab.contract.rounds import gathered

    cells = study_cells("hello", "quick", reuse_servers=True)
    b = next(c for c in cells if c.params.get(AA_PARAM) == "b" and c.repeat == 1)
    block = [c for c in cells if c.repeat == 1 and c.reuse_server]
    block = [c for c in block if c.server_key() == b.server_key() and c is not b]
    others = [c for c in block if c.params.get(AA_PARAM) != "b"]
    ordered = gathered([b, *others])  # b drawn first by the shuffle
    assert ordered[0] is others[0] and ordered[1] is b
    assert gathered([*others, b])[-1] is b  # anywhere else it stays where it fell
    # hello's two A/A configurations share one server: both copies b may come first.
    second_b = next(c for c in block if c.params.get(AA_PARAM) == "b")
    ordered = gathered([b, second_b, *others])
    assert ordered[0] is others[0] and ordered[1:3] == [b, second_b]


def test_the_manifest_records_the_rule_and_each_studys_seed(tmp_path):
    run = tmp_path / "my-run"
    (run / "hello").mkdir(parents=True)
    rounds = build_manifest(run, "quick", "localhost", {"start": "", "end": "", "git_sha": ""})[
        "rounds"
    ]
    assert rounds["seeds"] == {"hello": round_seed("my-run", "hello")}
    assert "shuffle" in rounds["rule"] and "phase" in rounds["rule"]


# --- A/A cells ------------------------------------------------------------------------------


def test_every_study_but_capacity_has_an_aa_pair():
    assert set(STUDIES) - set(AA_STUDIES) == {"capacity"}


@pytest.mark.parametrize("study", AA_STUDIES)
def test_smoke_runs_an_aa_pair_in_its_round(study):
    twins = [cell for cell in study_cells(study, "smoke") if AA_PARAM in cell.params]
    pairs: dict[str, list] = {}
    for cell in twins:
        pairs.setdefault(cell.cell_id[len("aa-a-") :], []).append(cell)
    assert pairs
    for pair in pairs.values():
        assert sorted(cell.params[AA_PARAM] for cell in pair) == ["a", "b"]
        a, b = sorted(pair, key=lambda cell: cell.params[AA_PARAM])
        # Identical but for the marker and the id.
        assert replace(a, cell_id="", params={}) == replace(b, cell_id="", params={})
        assert {k: v for k, v in a.params.items() if k != AA_PARAM} == {
            k: v for k, v in b.params.items() if k != AA_PARAM
        }


@pytest.mark.parametrize("study", ["hello", "pyclients", "throughput", "watch", "orders", "aws_io"])
def test_quick_runs_the_aa_pair_in_every_round(study):
    cells = study_cells(study, "quick")
    twins = [cell for cell in cells if AA_PARAM in cell.params]
    configurations = {cell.cell_id[len("aa-a-") :].rsplit("-r", 1)[0] for cell in twins}
    rounds = {cell.repeat for cell in twins}
    # Every configuration's two copies in every round of its own (aws_io's far regime runs
    # more rounds than its near cells).
    assert len(twins) == 2 * len(configurations) * len(rounds)
    if study != "aws_io":
        assert rounds == {cell.repeat for cell in cells}


def test_aa_copies_are_the_cell_twice_with_ids_of_their_own():
    cell = study_cells("hello", "smoke")[0]
    a, b = aa_copies(cell)
    assert (a.cell_id, b.cell_id) == (f"aa-a-{cell.cell_id}", f"aa-b-{cell.cell_id}")
    assert AA_PARAM not in cell.params  # the original is untouched


@pytest.mark.parametrize(
    ("study", "pair", "key"),
    [
        ("hello", {"implementation": "nope", "scenario": "steady", "concurrency": 10}, "aa_pair"),
        ("hello", {"implementation": "cpp", "scenario": "steady"}, "aa_pair.concurrency"),
        ("hello", {"implementation": "cpp", "scenario": "x", "concurrency": 1}, "aa_pair"),
        ("hello", {"colour": "blue"}, "aa_pair: unknown key"),
        ("hello", ["cpp"], r"aa_pair\[0\]: expected a mapping"),
        (
            "pyclients",
            {
                "client": "grpc_aio",
                "loop": "asyncio",
                "scenario": "stream_100000",
                "method": "seed",
            },
            "aa_pair: method seed does not run stream_100000",
        ),
        (
            "pyclients",
            {"client": "grpcio_sync", "loop": "asyncio", "scenario": "stream_10", "method": "seed"},
            "aa_pair: grpcio_sync does not run on asyncio",
        ),
        (
            "orders",
            {"mode": "unary", "security": "plaintext", "clients": 10, "orders": 5},
            "aa_pair.orders",
        ),
        ("watch", {"strategy": "frame_cache", "message": "mono", "folder": "huge"}, "aa_pair"),
        (
            "throughput",
            {"server": "go", "client": "go", "security": "none", "size": 0},
            "aa_pair.size",
        ),
    ],
)
def test_a_bad_aa_pair_is_refused_naming_its_key(study, pair, key):
    with pytest.raises(MatrixError, match=f"perflab_matrix_{study}.{key}"):
        study_cells(study, "quick", aa_pair=pair)


def test_a_copys_id_leads_back_to_the_cell_it_repeats():
    # The estimate prices a copy by it and the noise floor groups copies by it.
    cell = next(c for c in study_cells("pyclients", "quick") if AA_PARAM not in c.params)
    assert [copied_id(twin.cell_id) for twin in aa_copies(cell)] == [cell.cell_id] * 2
    assert copied_id(cell.cell_id) == cell.cell_id
    assert copied_id("aa-c-x-r1") == "aa-c-x-r1"  # no copy label `aa_copies` writes


def test_an_empty_aa_pair_runs_no_aa_cell():
    assert not [c for c in study_cells("hello", "quick", aa_pair={}) if AA_PARAM in c.params]


# --- analyses leave A/A cells out; the floor reads them ----------------------------------


def run_with_aa_pair(tmp_path, a: str = "cpp-steady-c10-r1", b: str = "go-steady-c10-r1"):
    """The hello fixture plus an A/A pair made of two of its cells (their drift is known)."""
    run = tmp_path / "aa-run"
    shutil.copytree(FIXTURE, run)
    add_aa_pair(run, a, b)
    return run


def add_aa_pair(run, a: str, b: str, scenario: str = "steady") -> None:
    """An A/A pair of configuration `a` (in `scenario`) whose copy b holds cell b's values."""
    configuration = a.replace("-steady-", f"-{scenario}-")
    for label, source in (("a", a), ("b", b)):
        folder = run / "hello" / f"aa-{label}-{configuration}"
        shutil.copytree(run / "hello" / source, folder)
        record = json.loads((folder / "cell.json").read_text())
        record["cell_id"] = folder.name
        record["scenario"] = scenario
        record["params"] = {**record["params"], AA_PARAM: label}
        (folder / "cell.json").write_text(json.dumps(record))


def test_tables_and_claims_never_see_aa_cells_unless_asked(tmp_path):
    run = run_with_aa_pair(tmp_path)
    assert not [cell for _, cell in iter_cells(run) if AA_PARAM in cell["params"]]
    assert AA_PARAM not in read_run(run).columns
    with_twins = read_run(run, include_aa=True)
    assert sorted(with_twins[AA_PARAM].dropna().unique()) == ["a", "b"]


def test_the_floor_is_the_aa_effect_and_sets_its_study_s_margin(tmp_path):
    run = run_with_aa_pair(tmp_path)
    frame = read_run(run)
    rps = frame[frame["metric"] == "rps"].set_index("implementation")["value"]
    drift = math.expm1(abs(math.log(rps["cpp"] / rps["go"])))
    replication = replicate(
        read_folder(run, claim_frame_hooks()), REPO / "data" / "reference", study="hello"
    )
    (kind,) = replication.noise.kinds
    assert kind.study == "hello" and kind.rounds == 1 and "rps" in kind.metrics
    assert kind.floor >= drift - 1e-12  # rps is one of the metrics the claims use
    margin = max(MIN_MARGIN, kind.floor)
    assert replication.by_study["hello"].margin == pytest.approx(margin)
    # One round: no interval, so each metric's margin is its own point drift (issue 26: a
    # metric's margin from its own A/A cells, never another metric's).
    rps_margin = max(MIN_MARGIN, kind.per_metric["rps"])
    assert kind.per_metric["rps"] == pytest.approx(drift)
    assert replication.by_study[("hello", "rps")].margin == pytest.approx(rps_margin)
    on_rps = [v for v in replication.verdicts if v.claim.metric == "rps"]
    assert on_rps and all(v.judging.margin == pytest.approx(rps_margin) for v in on_rps)
    page = index_html(replication, {})
    assert "Noise floor" in page and "ghz on hello" in page
    assert f"hello/rps {rps_margin:.0%}" in page


def test_a_run_without_aa_cells_keeps_the_floor_margin_and_shows_no_floor(tmp_path):
    assert noise_floor(read_folder(FIXTURE), []).kinds == ()
    assert NoiseFloor(()).judging().margin == MIN_MARGIN


def aa_rows(pairs: list[tuple[int, str, float, float]]) -> pd.DataFrame:
    """(round, metric, a, b) -> A/A rows of one study."""
    rows = []
    for repeat, metric, a, b in pairs:
        for label, value in (("a", a), ("b", b)):
            rows.append(
                {
                    "study": "hello",
                    "implementation": "x",
                    "scenario": "steady",
                    "client": "ghz",
                    "concurrency": 10,
                    "repeat": repeat,
                    "metric": metric,
                    "value": value,
                    "status": "ok",
                    "cell_id": f"aa-{label}-r{repeat}",
                    AA_PARAM: label,
                }
            )
    return pd.DataFrame(rows)


def test_kind_floor_is_the_largest_aa_effect_over_the_claim_metrics_only():
    rows = aa_rows(
        [
            (1, "rps", 100.0, 105.0),
            (2, "rps", 100.0, 80.0),  # one bad round: 1.25 alone, but not the effect
            (3, "rps", 100.0, 110.0),
            (1, "latency_p50", 10.0, 12.0),
            (2, "latency_p50", 10.0, 12.0),
            (3, "latency_p50", 10.0, 12.0),
            (2, "p99", 1.0, 9.0),  # no claim is judged on p99: not part of the floor
        ]
    )
    floor = kind_floor("hello", rows, {"rps", "latency_p50"})
    assert floor is not None
    # rps: the median of the nine a_i / b_j is 100 / 105, a drift of 5%, not the 25% of
    # round 2 alone; latency_p50: 10 / 12 every time, 20%: the kind's floor.
    assert floor.floor == pytest.approx(0.2)
    assert (floor.widest_metric, floor.rounds) == ("latency_p50", 3)
    only_rps = kind_floor("hello", rows, {"rps"})
    assert only_rps is not None and only_rps.floor == pytest.approx(0.05)
    assert "concurrency=10" in floor.configuration
    judging = NoiseFloor((floor,)).judging()
    assert judging.margin == pytest.approx(0.2) and "over 3 rounds" in judging.source


def test_a_quiet_aa_pair_leaves_the_margin_at_its_floor():
    rows = aa_rows([(1, "rps", 100.0, 101.0), (2, "rps", 100.0, 99.0)])
    floor = kind_floor("hello", rows, {"rps"})
    assert floor is not None and floor.floor < MIN_MARGIN
    assert NoiseFloor((floor,)).judging().margin == MIN_MARGIN


def test_a_round_missing_one_copy_gives_no_floor():
    rows = aa_rows([(1, "rps", 100.0, 80.0)])
    assert kind_floor("hello", rows[rows[AA_PARAM] == "a"], {"rps"}) is None


def test_each_metric_is_judged_with_its_own_floor_and_one_without_with_the_default():
    quiet = KindFloor("hello", "ghz", "x", ("rps",), 3, 0.04, "rps", {"rps": 0.04})
    per_metric = {"server_cpu_seconds": 0.6, "server_rss_peak": 0.01}
    noisy = KindFloor("watch", "watch_client", "y", tuple(per_metric), 3, 0.6, "rps", per_metric)
    by_study = NoiseFloor((quiet, noisy)).judging_by_study()
    assert by_study["hello"].margin == MIN_MARGIN  # below the floor of 10%: 10%
    assert by_study[("watch", "server_cpu_seconds")].margin == pytest.approx(0.6)
    # Issue 26 item 6: the CPU's noise is not applied to a RAM claim.
    assert by_study[("watch", "server_rss_peak")].margin == MIN_MARGIN
    claims = read_claims(REPO / "data" / "reference" / "claims.yml")
    picked = [next(c for c in claims if c.study == s) for s in ("hello", "orders")] + [
        next(c for c in claims if c.study == "watch" and c.metric == metric)
        for metric in ("server_cpu_seconds", "server_rss_peak")
    ]
    verdicts = judge_run_looks(read_folder(FIXTURE), picked, None, by_study)
    margins = {(v.claim.study, v.claim.metric): v.judging.margin for v in verdicts}
    assert margins == {
        ("hello", "rps"): MIN_MARGIN,
        ("orders", picked[1].metric): MIN_MARGIN,
        ("watch", "server_cpu_seconds"): pytest.approx(0.6),
        ("watch", "server_rss_peak"): MIN_MARGIN,
    }
    sentence = Replication("r", verdicts, by_study=by_study).margin_sentence()
    # The sentence lists the margins the measured verdicts used: the fixture has hello
    # cells only, so the watch and orders claims (not measured) say none.
    assert "hello/rps 10%." in sentence
    assert "watch/" not in sentence and "orders/" not in sentence
    assert Replication("r", verdicts).margin_sentence().startswith("Decision margin: 10%")


# --- one A/A per kind of client or method (issue 26) -------------------------------------


def hello_claims_by_method() -> dict[str, Claim]:
    """A hello rps claim of each method, as claims.yml states them."""
    claims = read_claims(REPO / "data" / "reference" / "claims.yml")
    return {
        method: next(c for c in claims if c.study == "hello" and c.method == method)
        for method in ("seed", "steady")
    }


@pytest.mark.parametrize("noisy", ["seed", "steady"])
def test_a_claim_takes_the_margin_of_its_own_methods_aa_cells(tmp_path, noisy):
    """Two A/A configurations on hello, steady and seed_n200, one quiet (the same cell
    twice) and one noisy (cpp's cell against go's): each method's claim takes its own."""
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    quiet = "cpp-steady-c10-r1", "cpp-steady-c10-r1"
    loud = "cpp-steady-c10-r1", "go-steady-c10-r1"
    add_aa_pair(run, *(loud if noisy == "steady" else quiet), scenario="steady")
    add_aa_pair(run, *(loud if noisy == "seed" else quiet), scenario="seed_n200")
    rps = read_run(run).query("metric == 'rps'").set_index("implementation")["value"]
    drift = math.expm1(abs(math.log(rps["cpp"] / rps["go"])))
    assert drift > MIN_MARGIN  # else both would read the floor and the test shows nothing
    claims = hello_claims_by_method()
    noise = noise_floor(read_folder(run, claim_frame_hooks()), list(claims.values()))
    assert sorted(kind.coordinates["scenario"] for kind in noise.kinds) == ["seed_n200", "steady"]
    by_study = noise.judging_by_study()
    margins = {m: judging_of(c, by_study, Judging()).margin for m, c in claims.items()}
    other = "steady" if noisy == "seed" else "seed"
    assert margins[noisy] == pytest.approx(drift)
    assert margins[other] == MIN_MARGIN
    # Each verdict's margin names the A/A configuration it came from.
    scenario = {"seed": "seed_n200", "steady": "steady"}
    for method, claim in claims.items():
        source = judging_of(claim, by_study, Judging()).source
        assert f", {scenario[method]}," in source
        assert f", {scenario['seed' if method == 'steady' else 'steady']}," not in source
    # The index's noise table counts the claims each A/A configuration judged.
    page = noise_html(noise, by_study)
    assert page.count("<td>1</td></tr>") == 2 and "judged at the floor" not in page


def test_a_claim_of_a_kind_without_aa_cells_is_judged_at_the_stated_floor():
    steady = KindFloor(
        "hello", "ghz", "x", ("rps",), 3, 0.3, "rps", {"rps": 0.3}, {"scenario": "steady"}
    )
    other = replace(steady, coordinates={"scenario": "other"})
    claims = hello_claims_by_method()
    assert claim_kinds(claims["steady"], [steady, other]) == (steady,)
    assert claim_kinds(claims["seed"], [steady, other]) == ()
    noise = NoiseFloor(
        (steady, other),
        {c.id: claim_kinds(c, [steady, other]) for c in claims.values()},
        {c.id: c.metric for c in claims.values()},
    )
    by_study = noise.judging_by_study()
    seed = judging_of(claims["seed"], by_study, Judging())
    # Not the steady A/A's 30%: the seed method has none of its own here.
    assert seed.margin == MIN_MARGIN and "no A/A cells of the claim's own kind" in seed.source
    assert judging_of(claims["steady"], by_study, Judging()).margin == pytest.approx(0.3)
    assert claims["seed"].id in noise_html(noise, by_study).split("judged at the floor")[1]
    # One A/A configuration: no coordinate tells kinds apart, every claim of its study takes it.
    assert claim_kinds(claims["seed"], [steady]) == (steady,)


def reference_claim(claim_id: str) -> Claim:
    claims = read_claims(REPO / "data" / "reference" / "claims.yml")
    return next(c for c in claims if c.id == claim_id)


@pytest.mark.parametrize("measured", [False, True])
def test_a_claim_whose_kind_did_not_measure_its_metric_takes_the_floor_not_another_metrics(
    measured,
):
    """Issue 26: a metric's margin comes from its own A/A interval or a stated floor. The
    request-reply A/A cells measure no numbers per second: their context switches' 67% once
    judged the 100 000-number streams' rate."""
    claim = reference_claim("pyclients-grpcio-30pct-faster-stream-100000-summary")
    assert claim.metric == "numbers_per_s"
    per_metric = {"client_ctx_switches_involuntary": 0.67}
    if measured:
        per_metric["numbers_per_s"] = 0.3
    kinds = [
        KindFloor(
            "pyclients",
            client,
            "x",
            tuple(per_metric),
            3,
            0.67,
            "client_ctx_switches_involuntary",
            per_metric,
            {"client": client, "scenario": "stream_100000", "method": "steady"},
        )
        for client in ("grpc_aio", "betterproto_grpclib")
    ]
    noise = NoiseFloor(
        tuple(kinds), {claim.id: claim_kinds(claim, kinds)}, {claim.id: claim.aa_metric}
    )
    judging = judging_of(claim, noise.judging_by_study(), Judging())
    if measured:
        assert judging.margin == pytest.approx(0.3)
    else:
        assert judging.margin == MIN_MARGIN
        assert "did not measure numbers_per_s" in judging.source


@pytest.mark.parametrize("stands_in", [True, False])
def test_a_derived_metric_is_judged_with_the_aa_drift_of_the_metric_named_for_it(stands_in):
    """TLS over no-TLS throughput: no A/A pair runs TLS, so `noise_metric: throughput` names
    the drift each side of its ratio carries; without it the claim would read the floor."""
    claim = reference_claim("throughput-tls-costs-cpp-more-than-go")
    assert (claim.metric, claim.noise_metric) == ("tls_over_none", "throughput")
    if not stands_in:
        claim = replace(claim, noise_metric="", drift_ratios=1)
    kinds = [
        KindFloor(
            "throughput",
            impl,
            "x",
            ("throughput",),
            3,
            drift,
            "throughput",
            {"throughput": drift},
            {"implementation": impl, "client": impl},
        )
        for impl, drift in (("cpp", 0.45), ("go", 0.25), ("python", 0.6))
    ]
    mine = claim_kinds(claim, kinds)
    assert sorted(kind.study + "/" + kind.client for kind in mine) == [
        "throughput/cpp",
        "throughput/go",
    ]
    ratios = {claim.id: claim.drift_ratios}
    noise = NoiseFloor(tuple(kinds), {claim.id: mine}, {claim.id: claim.aa_metric}, ratios)
    judging = judging_of(claim, noise.judging_by_study(), Judging())
    # The wider of its own two pairs' (C++ and Go), never Python's 60%: widened for a ratio
    # of two ratios (four cells' drift), by sqrt(2) on the log scale.
    if stands_in:
        assert claim.drift_ratios == 2
        assert math.log1p(judging.margin) == pytest.approx(math.sqrt(2) * math.log1p(0.45))
        assert "a ratio of 2 ratios of throughput" in judging.source
    else:
        assert claim.drift_ratios == 1 and judging.margin == MIN_MARGIN


def test_a_derived_margin_grows_with_the_ratios_it_multiplies():
    from perflab.analysis.noise import derived_margin

    assert derived_margin(0.2, 1) == 0.2
    # 1.2 squared is two ratios each at the edge in the same direction: sqrt(2) is less.
    assert 0.2 < derived_margin(0.2, 2) < 0.44
    assert derived_margin(0.2, 2) == pytest.approx(math.exp(math.sqrt(2) * math.log(1.2)) - 1)
    assert derived_margin(0.2, 4) == pytest.approx(0.44)


def test_every_pyclients_claim_finds_aa_cells_of_its_own_client_method_and_scenario():
    """Quick's A/A pairs cover each (client, method, scenario) a pyclients claim fixes: none
    is judged with another scenario's noise, and none falls to the floor for want of one."""
    twins = [c for c in study_cells("pyclients", "quick") if AA_PARAM in c.params]
    kinds = {
        (c.client, c.params["method"], c.scenario): KindFloor(
            "pyclients",
            c.client,
            "x",
            ("m",),
            3,
            0.1,
            "m",
            {"m": 0.1},
            {
                "client": c.client,
                "scenario": c.scenario,
                "method": c.params["method"],
                "loop": c.params["loop"],
            },
        )
        for c in twins
    }
    claims = [
        c
        for c in read_claims(REPO / "data" / "reference" / "claims.yml")
        if c.study == "pyclients" and c.kind == "ratio"
    ]
    assert claims
    for claim in claims:
        mine = claim_kinds(claim, list(kinds.values()))
        assert mine, claim.id
        scenarios = {side.scenario for side in (claim.numerator, claim.denominator)}
        if None not in scenarios:
            assert {kind.coordinates["scenario"] for kind in mine} == scenarios, claim.id


@pytest.mark.parametrize(
    ("study", "column", "values"),
    [
        ("hello", "scenario", {"steady", "seed_n200"}),
        ("pyclients", "method", {"steady", "seed"}),
        ("aws_io", "scenario", {"list_unary", "list_stream"}),
    ],
)
@pytest.mark.parametrize("profile", ["smoke", "quick", "full"])
def test_each_method_and_kind_of_call_runs_its_own_aa_pair(study, column, values, profile):
    twins = [c for c in study_cells(study, profile) if AA_PARAM in c.params]
    rounds = {c.repeat for c in twins}
    found = {getattr(c, column) if column == "scenario" else c.params[column] for c in twins}
    assert found == values
    # Two copies of each A/A configuration in every round (a kind of client may have its
    # own in each method: pyclients' grpc.aio and grpclib).
    configurations = {c.cell_id.split("-", 2)[2].rsplit("-r", 1)[0] for c in twins}
    assert len(configurations) >= len(values)
    assert len(twins) == 2 * len(configurations) * len(rounds)
