"""Pooling runs across machines: random effects on synthetic runs, sites, the pooled
verdict by the single-run rule, and the pooled index."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import pytest

from perflab.analysis.forest import title
from perflab.analysis.pooled import NOT_POOLED, agreement, pool_claim, pool_claims
from perflab.analysis.pooled_page import (
    lead,
    notes,
    page,
    pooled_cell,
    render_pooled,
    summary_rows,
    tau_cell,
)
from perflab.analysis.pooling import pool
from perflab.analysis.simulate_pooling import CLAIM, simulate, synthetic_run
from perflab.analysis.sites import (
    BOOT_FALLBACK,
    ReadingsError,
    load_readings,
    read_run_readings,
    sites_of,
    write_readings,
)
from perflab.analysis.verdicts import FAILS, HOLDS, INCONCLUSIVE, NOT_MEASURED
from perflab.cli import main

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "runs" / "hello_fixture"


def runs_at(effects: list[float], se: float = 0.03) -> list:
    return [synthetic_run(i, math.log(e), se) for i, e in enumerate(effects)]


def test_identical_runs_give_tau_zero_and_narrow_as_runs_are_added():
    widths = []
    for k in (2, 3, 5, 8):
        pooled = pool([math.log(1.3)] * k, [0.04] * k)
        assert pooled.tau == 0.0
        assert pooled.tau_low == 0.0
        assert pooled.i2 == 0.0
        assert pooled.estimate == pytest.approx(math.log(1.3))
        widths.append(pooled.high - pooled.low)
    assert widths == sorted(widths, reverse=True)
    assert len(set(widths)) == len(widths)


def test_a_known_spread_is_recovered_at_the_rate_the_method_promises():
    """Short: 300 simulated pools of 6 sites with tau = 0.1. The Q-profile interval is
    exact under the model: its coverage must be 95% within Monte Carlo error."""
    result = simulate(6, 0.1, reps=300)
    error = result.error(result.tau_covered, result.reps)
    print(result.line())
    assert abs(result.tau_covered / result.reps - 0.95) <= 3 * max(error, 0.0126)
    # Hartung-Knapp (never narrower than the normal interval) keeps its 95% too.
    assert result.mu_covered / result.reps >= 0.95 - 3 * 0.0126


def test_one_run_alone_keeps_the_single_run_verdicts():
    from perflab.analysis.claims import read_claims
    from perflab.analysis.run import read as read_folder
    from perflab.cli import claim_frame_hooks

    claims = read_claims(REPO / "data" / "reference" / "claims.yml")
    run = read_run_readings(read_folder(FIXTURE, claim_frame_hooks()), REPO / "data" / "reference")
    pooled = pool_claims(claims, [run])
    judged = {p.claim.id: p.verdict for p in pooled}
    assert judged == run.verdicts
    assert any(v != NOT_MEASURED for v in judged.values())


def test_pooled_verdict_goes_both_ways_by_the_single_run_rule():
    holds = pool_claim(CLAIM, runs_at([1.5, 1.6, 1.45, 1.55]))
    assert holds.verdict == HOLDS
    assert holds.sites == 4 and holds.runs == 4
    fails = pool_claim(CLAIM, runs_at([0.6, 0.65, 0.55, 0.62]))
    assert fails.verdict == FAILS
    # The sites disagree across the threshold: the pooled interval straddles it.
    split = pool_claim(CLAIM, runs_at([0.7, 1.5, 0.8, 1.4]))
    assert split.verdict == INCONCLUSIVE


def test_a_spread_beyond_the_runs_noise_depends_on_the_machine():
    spread = pool_claim(CLAIM, runs_at([0.79, 1.13, 0.9, 1.25, 0.85]))
    assert spread.depends_on_machine
    assert spread.deciding.pooled.tau > spread.deciding.pooled.within_se
    alike = pool_claim(CLAIM, runs_at([1.01, 1.0, 0.99, 1.02, 1.0]))
    assert not alike.depends_on_machine
    runs = runs_at([0.79, 1.13, 0.9, 1.25, 0.85])
    assert "1 depend on the site" in lead([spread], runs)
    assert "0 depend on the site" in lead([alike], runs)


def test_two_runs_of_one_boot_are_one_site():
    a, b, c = runs_at([1.2, 1.25, 1.3])
    same_boot = dataclasses.replace(b, hosts=a.hosts)
    assert len(sites_of([a, same_boot, c])) == 2
    pooled = pool_claim(CLAIM, [a, same_boot, c])
    assert pooled.sites == 2 and pooled.runs == 3
    assert pooled.deciding.pooled.k == 2
    # Without a boot id the day the run started stands in.
    old = {"localhost": {"cpu_model": "x", "cpus": 2, "kernel": "k", "boot_id": None}}
    day1 = dataclasses.replace(a, hosts=old, start="2026-11-23T10:00:00")
    day1_later = dataclasses.replace(b, hosts=old, start="2026-11-23T20:00:00")
    day2 = dataclasses.replace(c, hosts=old, start="2026-11-24T10:00:00")
    assert day1.boot() == f"{BOOT_FALLBACK} 2026-11-23"
    assert len(sites_of([day1, day1_later, day2])) == 2


def test_agreement_says_whether_the_pooled_evidence_agrees():
    pooled = pool_claim(CLAIM, runs_at([1.5, 1.6, 1.45]))
    assert agreement(HOLDS, pooled).startswith("pooled agrees")
    assert agreement(INCONCLUSIVE, pooled).startswith("pooled differs: holds")
    assert agreement(HOLDS, None) == "no pooled evidence"


def test_a_run_sharing_no_configuration_is_named():
    a, b = runs_at([1.3, 1.4])
    other = dataclasses.replace(b.readings[0], configuration={"concurrency": "50"})
    b = dataclasses.replace(b, readings=(other,))
    pooled = pool_claim(CLAIM, [a, b])
    assert pooled.unshared == (a.run_id, b.run_id)
    assert len(pooled.configurations) == 2


def test_readings_file_round_trip_and_a_bad_one_is_named(tmp_path):
    run = runs_at([1.3])[0]
    path = write_readings(run, tmp_path)
    assert load_readings(path) == run
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"run_id": "x"}))
    with pytest.raises(ReadingsError, match="bad.json"):
        load_readings(bad)


def as_claim(run, claim_id: str):
    readings = tuple(dataclasses.replace(r, claim=claim_id) for r in run.readings)
    return dataclasses.replace(run, readings=readings, verdicts={claim_id: INCONCLUSIVE})


def test_cli_pools_readings_files_into_an_index(tmp_path, capsys):
    claim = "hello-sync-w1-beats-grpclib-asyncio-steady"
    runs = [as_claim(run, claim) for run in runs_at([1.2, 0.8, 1.1])]
    files = [write_readings(run, tmp_path / "readings") for run in runs]
    out = tmp_path / "pooled"
    assert main(["verdicts", "--runs", *map(str, files), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "over 3 runs on 3 independent sites" in page
    assert "1 depend on the site" in page
    assert (out / "figures" / f"forest-{claim}.png").is_file()
    assert main(["verdicts", "--runs", str(files[0]), str(files[0]), "--out", str(out)]) == 2
    assert "given twice" in capsys.readouterr().err


def test_render_draws_a_forest_plot_per_pooled_claim(tmp_path):
    runs = runs_at([1.2, 0.9, 1.1])
    index = render_pooled([pool_claim(CLAIM, runs)], runs, tmp_path)
    assert (tmp_path / "figures" / f"forest-{CLAIM.id}.png").stat().st_size > 1000
    assert f"figures/forest-{CLAIM.id}.png" in index.read_text()


def test_the_pooled_page_names_a_seed_by_its_number_not_its_file(tmp_path):
    claim = dataclasses.replace(CLAIM, seed="000_b853735c5b3bff6d.txt")
    runs = runs_at([1.2, 0.9, 1.1])
    page = render_pooled([pool_claim(claim, runs)], runs, tmp_path).read_text()
    assert "<td>000</td>" in page and "b853735c5b3bff6d" not in page


def test_the_single_run_index_is_told_whether_the_pool_agrees(tmp_path):
    from perflab.analysis.pooled import agreements
    from perflab.analysis.replication import Replication, pooled_note
    from perflab.analysis.verdicts import Verdict

    for run in runs_at([1.5, 1.6, 1.45]):
        write_readings(run, tmp_path)
    said = agreements(tmp_path, [Verdict(CLAIM, INCONCLUSIVE, "")])
    assert said[CLAIM.id].startswith("pooled differs: holds over 3 site(s)")
    assert agreements(tmp_path, [Verdict(CLAIM, HOLDS, "")])[CLAIM.id].startswith("pooled agrees")
    shown = pooled_note(Replication("r", [], pooled=said), CLAIM)
    assert "pooled differs" in shown
    assert pooled_note(Replication("r", []), CLAIM) == ""
    assert agreements(tmp_path / "none", [Verdict(CLAIM, HOLDS, "")]) == {}


@pytest.mark.live  # `perflab readings` asks git which measurement fixes the run held
def test_a_runs_readings_file_carries_the_verdicts_its_own_index_shows(
    tmp_path, localhost_reference
):
    # The committed localhost reference, judged by `perflab readings` and by the index's
    # replication: a claim whose seed figure sits inside the noise at a configuration reads
    # 'at its threshold' as expected there (verdicts.at_threshold), which needs the seed
    # configurations; judged from the claims file alone, two watch claims of
    # 20261127T111956Z-quick read 'at its threshold' and 'inconclusive' in the readings
    # file while the index said 'holds'.
    run_id, index = localhost_reference
    out = tmp_path / "readings"
    assert main(["readings", "--run", str(REPO / "data" / run_id), "--out", str(out)]) == 0
    written = load_readings(out / f"{run_id}.json")
    assert written.verdicts == {v.claim.id: v.verdict for v in index.verdicts}
    # The committed readings file is the one the command writes.
    committed = load_readings(REPO / "data" / "readings" / f"{run_id}.json")
    assert committed.verdicts == written.verdicts
    assert committed.fixes == written.fixes and all(written.fixes.values())


ERRORS = dataclasses.replace(CLAIM, id="simulated-errors", kind="error_rate")


def with_verdict(runs: list, claim_id: str, verdict: str, why: str = "") -> list:
    return [
        dataclasses.replace(
            run,
            verdicts={**run.verdicts, claim_id: verdict},
            not_measured={claim_id: why} if why else {},
        )
        for run in runs
    ]


def test_an_error_rate_claim_some_run_measured_reads_not_pooled_not_not_measured():
    runs = with_verdict(runs_at([1.5, 1.6, 1.45]), ERRORS.id, HOLDS)
    ratio, errors = pool_claims([CLAIM, ERRORS], runs)
    assert errors.verdict == NOT_POOLED and errors.runs == 0
    assert errors.own_verdicts == {run.run_id: HOLDS for run in runs}
    said = lead([ratio, errors], runs)
    assert "Pooled: 1 holds; 1 not pooled (error rates" in said
    assert "not measured" not in said
    html = page([ratio, errors], runs, {})
    assert "not pooled; 3 runs measured it" in html and "<td>0 / 0</td>" not in html
    # The pooled interval names its method beside its coverage, as every interval does.
    assert f"] ({ratio.deciding.pooled.coverage:.0%} Hartung-Knapp)</td>" in html
    assert agreement(HOLDS, errors) == errors.reason
    # Without an error-rate claim the lead names none.
    assert "not pooled" not in lead([ratio], runs)
    # One no run measured is 'not measured', and counted so.
    unmeasured = with_verdict(runs, ERRORS.id, NOT_MEASURED, "no cells of it")
    (nobody,) = pool_claims([ERRORS], unmeasured)
    assert nobody.verdict == NOT_MEASURED
    assert "1 not measured" in lead([nobody], unmeasured)
    assert "not pooled" not in lead([nobody], unmeasured)
    assert "3 runs give nothing: no cells of it" in notes(nobody)


def without_reading(run, why: str):
    return dataclasses.replace(
        run, readings=(), verdicts={CLAIM.id: NOT_MEASURED}, not_measured={CLAIM.id: why}
    )


def test_notes_say_a_reason_shared_by_runs_once_and_list_the_runs():
    runs = runs_at([1.5, 1.6, 1.4, 1.5, 1.5, 1.5])
    netns = "it needs a localhost run, this is netns"
    runs[2:5] = [without_reading(run, netns) for run in runs[2:5]]
    runs[5] = without_reading(runs[5], "no cells of it")
    said = notes(pool_claim(CLAIM, runs))
    assert said.count(netns) == 1
    assert f"3 runs give nothing: {netns} <details>" in said
    assert "sim-2, sim-3, sim-4</details>" in said
    assert "sim-5 gives nothing: no cells of it" in said
    # One run per reason: each named with its own.
    runs[3] = without_reading(runs_at([1.5] * 4)[3], "another reason")
    runs[4] = without_reading(runs_at([1.5] * 5)[4], "a third reason")
    apart = notes(pool_claim(CLAIM, runs))
    assert f"sim-2 gives nothing: {netns}" in apart and "<details>" not in apart


def test_notes_fold_the_revisions_a_reading_rests_on():
    """18 commit ids in the notes column made each row of the pooled page a screen tall."""
    reading = dataclasses.replace(
        pool_claim(CLAIM, runs_at([1.5, 1.6, 1.4])), revisions=("1a9bad4f", "64d7ab81")
    )
    said = notes(reading)
    assert "runs of 2 revisions, judged with today's claim" in said
    assert "<details><summary>which revisions</summary>1a9bad4f, 64d7ab81</details>" in said
    one = notes(dataclasses.replace(reading, revisions=("64d7ab81",)))
    assert "revisions" not in one


def on_boot(run, of, topology: str = "localhost"):
    """`run` on the machine and boot `of` ran on, as `topology` names its hosts."""
    facts = of.hosts["localhost"]
    hosts = (
        {"localhost": facts}
        if topology == "localhost"
        else {"perflab-client": facts, "perflab-server": facts}
    )
    return dataclasses.replace(run, topology=topology, hosts=hosts)


def test_the_lead_counts_machine_boots_and_says_independent_only_when_they_are():
    a, b, c = runs_at([1.2, 1.25, 1.3])
    netns_on_a = on_boot(b, a, "netns")
    runs = [a, netns_on_a, c]
    assert len(sites_of(runs)) == 3
    said = lead(pool_claims([CLAIM], runs), runs)
    assert "on 3 sites (2 distinct machine boots: runs of localhost and netns on one boot" in said
    assert "independent" not in said
    apart = [a, b, c]
    assert "on 3 independent sites (each a machine boot of its own)" in lead(
        pool_claims([CLAIM], apart), apart
    )


def test_a_claim_one_run_measured_says_so_in_words():
    a, b = runs_at([1.5, 1.6])
    runs = [a, without_reading(b, "no cells of it")]
    alone = pool_claim(CLAIM, runs)
    assert alone.runs == 1
    assert pooled_cell(alone)[0].startswith("one run: its own verdict, 1.50x [")
    assert pooled_cell(alone)[1:] == ["none: one run"] * 3
    assert "1 rest on one run and keep that run's verdict" in lead([alone], runs)
    assert title(alone) == f"{CLAIM.id}: one run, its own verdict: {alone.verdict}"
    both = pool_claim(CLAIM, [a, b])
    assert not pooled_cell(both)[0].startswith("one ")
    assert "rest on one run" not in lead([both], [a, b])
    assert title(both).startswith(f"{CLAIM.id}: pooled ")
    # Two runs of one boot are one site: nothing pooled between sites either.
    one_site = pool_claim(CLAIM, [a, dataclasses.replace(b, hosts=a.hosts)])
    assert pooled_cell(one_site)[0].startswith("one site: 2 runs of one boot")
    assert pooled_cell(one_site)[1:] == ["none: one site"] * 3


def test_an_empty_q_profile_interval_is_said_not_printed_as_zero_to_zero():
    # Sites closer than their own errors predict: Q at tau 0 is below its lower quantile.
    agree = pool_claim(CLAIM, runs_at([1.3, 1.3001], se=0.1)).deciding
    q, quantile = agree.empty_tau_interval()
    assert q < quantile
    said = tau_cell(agree)
    assert "Q-profile interval empty" in said and "on 1 df" in said
    assert "[0.000, 0.000]" not in said
    # Sites apart: an interval with an upper bound above 0, printed as one.
    apart = pool_claim(CLAIM, runs_at([1.2, 0.8], se=0.03)).deciding
    assert apart.empty_tau_interval() is None
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d+\.\d{3}\]", tau_cell(apart))


def test_the_summary_shows_the_published_figure_beside_the_pooled_one():
    runs = runs_at([1.5, 1.6, 1.45])
    reading = pool_claim(dataclasses.replace(CLAIM, published=1.5), runs)
    pooled = pooled_cell(reading)[0]
    (row,) = summary_rows([reading], runs)
    assert f"<td>1.50x</td><td>{pooled}</td>" in row
    (none,) = summary_rows([pool_claim(CLAIM, runs)], runs)
    assert f"<td>—</td><td>{pooled}</td>" in none
    assert "<th>pooled verdict</th><th>published</th><th>pooled effect" in page([reading], runs, {})
    # Tiny ratios keep three significant digits: two decimals printed them as 0.00x.
    tiny = pool_claim(CLAIM, runs_at([0.0006, 0.0007, 0.0005]))
    assert pooled_cell(tiny)[0].startswith("0.000")
    assert "0.00x" not in pooled_cell(tiny)[0]


def test_a_byte_count_in_a_configuration_reads_in_binary_units():
    from perflab.analysis.pooled import readable

    assert readable("payload_bytes", "1073741824") == "1 GiB"
    assert readable("payload_bytes", "536870912") == "512 MiB"
    assert readable("chunk_bytes", "4193280") == "4095 KiB"
    assert readable("payload_bytes", "10737418240") == "10 GiB"
    assert readable("payload_bytes", "1025") == "1025"
    # The other way: small counts and other keys stay as they are.
    assert readable("payload_bytes", "512") == "512"
    assert readable("concurrency", "1073741824") == "1073741824"
