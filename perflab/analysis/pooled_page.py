"""The pooled index (reports/pooled/index.html): every claim over every run, verdict first,
then the sites, then one forest plot per claim.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from perflab.analysis.claims import Claim
from perflab.analysis.pooled import NOT_POOLED, PooledConfiguration, PooledReading
from perflab.analysis.pooling import TAU_METHOD, Pooled
from perflab.analysis.replication import badge
from perflab.analysis.sites import BOOT_FALLBACK, MACHINE_FACTS, RunReadings, sites_of
from perflab.analysis.verdicts import NOT_MEASURED, format_effect, significant

FIGURES = "figures"
STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:80em}"
    "table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #d0d7de;padding:0.3em 0.6em;text-align:left;vertical-align:top}"
    # Twelve columns: the claim ids, run ids and notes may break anywhere, so the summary fits
    # the window instead of running past its right edge; figures and headings keep whole.
    ".summary td:nth-child(2),.summary td:nth-child(4),.summary td:nth-child(12)"
    "{overflow-wrap:anywhere}"
    "th{background:#f6f8fa}.flag{color:#cf222e;font-weight:bold}"
    ".not-pooled{color:#57606a;font-style:italic;white-space:nowrap}"
)


def newest(runs: list[RunReadings]) -> RunReadings:
    return max(runs, key=lambda run: run.start)


def newest_of(claim_id: str, runs: list[RunReadings]) -> RunReadings | None:
    """The newest run that measured this claim (a netns run measures few localhost ones)."""
    measured = [r for r in runs if r.verdicts.get(claim_id, NOT_MEASURED) != NOT_MEASURED]
    return newest(measured) if measured else None


def newest_verdict(claim_id: str, runs: list[RunReadings]) -> tuple[str, str]:
    run = newest_of(claim_id, runs)
    return (NOT_MEASURED, "") if run is None else (run.verdicts[claim_id], run.run_id)


def differs_from_newest(reading: PooledReading, runs: list[RunReadings]) -> bool:
    single, _ = newest_verdict(reading.claim.id, runs)
    return reading.runs >= 2 and reading.verdict != single


def verdict_badge(verdict: str) -> str:
    """A verdict's badge; 'not pooled' is no verdict, and is drawn apart from them."""
    if verdict == NOT_POOLED:
        return f'<span class="not-pooled">{html.escape(NOT_POOLED)}</span>'
    return badge(verdict)


def ratio(claim: Claim, value: float) -> str:
    """A log-scale figure as the claim's effect is shown (three significant digits: two
    decimals print the context-switch ratios of 0.0006 as 0.00x)."""
    return format_effect(claim, math.exp(value))


def pooled_effect(claim: Claim, p: Pooled) -> str:
    interval = f"[{ratio(claim, p.low)}, {ratio(claim, p.high)}]"
    # The method beside the coverage, as every interval on a page states both.
    return f"{ratio(claim, p.estimate)} {interval} ({p.coverage:.0%} Hartung-Knapp)"


def runs_measured(count: int) -> str:
    return f"{count} run{'' if count == 1 else 's'} measured it"


def tau_number(value: float) -> str:
    return f"{value:.3f}" if value == 0 or value >= 0.001 else significant(value)


def tau_cell(config: PooledConfiguration) -> str:
    """Tau and its Q-profile interval, or why the interval is empty rather than [0, 0]."""
    p = config.pooled
    empty = config.empty_tau_interval()
    if empty is None:
        return f"{tau_number(p.tau)} [{tau_number(p.tau_low)}, {tau_number(p.tau_high)}]"
    q, quantile = empty
    return (
        f"{tau_number(p.tau)}; Q-profile interval empty: Q at tau 0 is {significant(q)}, below "
        f"its {(1 - p.coverage) / 2:.1%} chi-square quantile {significant(quantile)} on "
        f"{p.k - 1} df (the sites agree more closely than their own errors predict)"
    )


def one_site_cells(claim: Claim, config: PooledConfiguration) -> list[str]:
    """The cells of a configuration only one site measured: nothing to pool, said so."""
    pair = config.pair
    shown = format_effect(claim, pair.effect)
    if pair.interval is not None:
        low, high = pair.interval.low, pair.interval.high
        bounds = f"[{format_effect(claim, low)}, {format_effect(claim, high)}]"
        shown += f" {bounds} ({pair.interval.label()})"
    if config.runs == 1:
        return [f"one run: its own verdict, {shown}", *["none: one run"] * 3]
    combined = f"one site: {config.runs} runs of one boot, by inverse variance, {shown}"
    return [combined, *["none: one site"] * 3]


def pooled_cell(reading: PooledReading) -> list[str]:
    """Effect [CI], tau [interval], I^2, prediction interval of the configuration the
    verdict rests on; in words where nothing was pooled (a blank reads as lost data)."""
    config = reading.deciding
    if reading.verdict == NOT_POOLED:
        return [f"{reading.reason}; each run's own verdict stands", *["—"] * 3]
    if config is None:
        return ["none: no run measured it", *["—"] * 3]
    if config.pooled.k < 2:
        return one_site_cells(reading.claim, config)
    p = config.pooled
    pi = (
        f"[{ratio(reading.claim, p.prediction[0])}, {ratio(reading.claim, p.prediction[1])}]"
        if p.prediction is not None
        else f"none: {p.k} sites (t on k-2 df needs 3)"
    )
    return [pooled_effect(reading.claim, p), tau_cell(config), f"{p.i2:.0%}", pi]


def published_cell(claim: Claim) -> str:
    return "—" if claim.published is None else format_effect(claim, claim.published)


def said_once(why: str, said_above: str) -> str:
    """A reason whose head the page's left-out paragraph states in full ('measured before
    fix 1713c63f'), cut to that head: the paragraph says what the fix was."""
    head, sep, _ = why.partition(": ")
    if sep and said_above and head in said_above:
        return f"{head} (see the note above the table)"
    return why


def left_out_notes(reading: PooledReading, said_above: str = "") -> list[str]:
    """One note per reason runs give this claim nothing, the reason said once and its runs
    listed under it: the same reason for 15 runs made a cell of 3,000 characters."""
    by_reason: dict[str, list[str]] = {}
    for run_id, why in sorted(reading.left_out.items()):
        by_reason.setdefault(said_once(why, said_above), []).append(run_id)
    notes = []
    for why, ids in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
        if len(ids) == 1:
            notes.append(f"{html.escape(ids[0])} gives nothing: {html.escape(why)}")
            continue
        notes.append(
            f"{len(ids)} runs give nothing: {html.escape(why)} <details><summary>which runs"
            f"</summary>{html.escape(', '.join(ids))}</details>"
        )
    return notes


def notes(reading: PooledReading, said_above: str = "") -> str:
    parts = []
    if reading.depends_on_machine:
        flagged = sum(c.pooled.depends_on_machine for c in reading.configurations)
        parts.append(
            f'<span class="flag">depends on the site</span> ({flagged} of '
            f"{len(reading.configurations)} configurations)"
        )
    if len(reading.revisions) > 1:
        # Folded like the runs below: 18 commit ids made the column a screen tall.
        parts.append(
            f"runs of {len(reading.revisions)} revisions, judged with today's claim and cells "
            "selected by its parameters <details><summary>which revisions</summary>"
            f"{html.escape(', '.join(reading.revisions))}</details>"
        )
    if reading.unshared:
        parts.append(f"shares no configuration with the others: {', '.join(reading.unshared)}")
    parts += left_out_notes(reading, said_above)
    return "".join(f"<div>{part}</div>" for part in parts)


def runs_cell(reading: PooledReading) -> str:
    if reading.verdict == NOT_POOLED:
        return f"not pooled; {runs_measured(len(reading.own_verdicts))}"
    return f"{reading.sites} / {reading.runs}"


def summary_rows(
    readings: list[PooledReading], runs: list[RunReadings], said_above: str = ""
) -> list[str]:
    rows = []
    for reading in readings:
        claim = reading.claim
        single, run_id = newest_verdict(claim.id, runs)
        mark = " ≠" if differs_from_newest(reading, runs) else ""
        cells = [
            html.escape(claim.seed_number),
            f'<a href="#{html.escape(claim.id)}">{html.escape(claim.id)}</a>',
            html.escape(claim.expectation()),
            badge(single) + (f"<br><small>{html.escape(run_id)}</small>" if run_id else ""),
            verdict_badge(reading.verdict) + mark,
            html.escape(published_cell(claim)),
            *map(html.escape, pooled_cell(reading)),
            html.escape(runs_cell(reading)),
            notes(reading, said_above),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return rows


def machine_boot(run: RunReadings) -> tuple[str, ...]:
    """The machine and boot a run ran on, whatever its topology: a netns run's hosts are
    namespaces of one machine, so their facts are one machine's."""
    machines = {
        "/".join(str(facts.get(key, "?")) for key in MACHINE_FACTS) for facts in run.hosts.values()
    }
    return (*sorted(machines), run.boot())


def sites_phrase(runs: list[RunReadings]) -> str:
    """'13 sites (8 distinct machine boots: ...)', or 'independent' where no two sites share
    a machine boot: a site is a topology on a machine boot, and two topologies on one boot
    share the machine's noise."""
    sites = sites_of(runs)
    boots: dict[tuple[str, ...], list[str]] = {}
    for key, members in sites.items():
        boots.setdefault(machine_boot(members[0]), []).append(key)
    if len(boots) == len(sites):
        return f"{len(sites)} independent sites (each a machine boot of its own)"
    topologies = sorted(
        {
            run.topology
            for keys in boots.values()
            if len(keys) > 1
            for key in keys
            for run in sites[key]
        }
    )
    plural = "s" if len(boots) > 1 else ""
    return (
        f"{len(sites)} sites ({len(boots)} distinct machine boot{plural}: runs of "
        f"{' and '.join(topologies)} on one boot count as separate sites)"
    )


def sites_table(runs: list[RunReadings]) -> list[str]:
    lines = [
        "<table><thead><tr><th>site</th><th>machine boot</th><th>machine</th><th>boot</th>"
        "<th>run</th>"
        "<th>started</th><th>revision</th><th>kept as</th></tr></thead><tbody>"
    ]
    boots: dict[tuple[str, ...], int] = {}
    for number, (_, members) in enumerate(sites_of(runs).items(), start=1):
        boot = boots.setdefault(machine_boot(members[0]), len(boots) + 1)
        for run in members:
            kept = (
                f"readings recovered from commit {run.recovered_from[:8]}"
                if run.recovered_from
                else "readings of the committed run"
            )
            cells = [
                str(number),
                str(boot),
                run.machine(),
                run.boot(),
                run.run_id,
                run.start[:16],
                run.commit[:8],
                kept,
            ]
            lines.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return lines


def tally(readings: list[PooledReading]) -> str:
    return tally_of(r.verdict for r in readings)


def not_pooled_phrase(readings: list[PooledReading]) -> str:
    """'; 6 not pooled (error rates)', or '' where every claim was pooled."""
    kinds = Counter(r.claim.kind for r in readings if r.verdict == NOT_POOLED)
    if not kinds:
        return ""
    named = ", ".join(kind.replace("_", " ") + "s" for kind in sorted(kinds))
    return f"; {sum(kinds.values())} not pooled ({named}: each run's own verdict stands)"


def lead(readings: list[PooledReading], runs: list[RunReadings]) -> str:
    pooled = [r for r in readings if r.verdict != NOT_POOLED]
    machine = [r for r in readings if r.depends_on_machine]
    moved = [r for r in readings if differs_from_newest(r, runs)]
    alone = [r for r in pooled if r.runs == 1]
    one_run = f" {len(alone)} rest on one run and keep that run's verdict." if alone else ""
    return (
        f"{len(readings)} claims over {len(runs)} runs on {sites_phrase(runs)}. Pooled: "
        f"{tally(pooled)}{not_pooled_phrase(readings)}.{one_run} {len(machine)} depend on the "
        "site (the spread between sites exceeds a run's own noise; sites differ in machine, "
        "boot and the commit that measured them, so this is not the machine alone); "
        f"{len(moved)} pooled verdicts differ from the newest run that measured the claim, "
        "marked ≠."
    )


METHOD = (
    "Each run's effect per configuration is its verdict's own (the ratio and its exact "
    "interval); on the log scale its standard error is half the interval's width over the "
    "normal quantile of its coverage. Runs of one site (same topology, CPU model, CPU count, "
    f"kernel and boot; a run without a recorded boot id stands in by its {BOOT_FALLBACK}) are "
    "combined by inverse variance. Sites are pooled by random effects (statsmodels "
    f"combine_effects, {TAU_METHOD} tau); the pooled interval is Hartung-Knapp with t on k-1 "
    "df, never narrower than the normal random-effects one; tau's interval is the Q-profile; "
    "the prediction interval for a new machine is mu ± t(k-2)·sqrt(tau² + se²) and needs "
    "three sites. Its coverage is nominal: make simulate-pooling (1000 pools each, 3 and 5 "
    "sites, tau 0-0.15) found 0.90-1.00 for a new site's true effect, 0.945-0.974 for tau's "
    "Q-profile and 0.955-1.00 for the pooled interval. A pooled verdict is decided by the "
    "single-run rule (verdicts.decide and "
    "verdicts.combine) on the pooled interval, with the floor margin. 'Depends on the "
    "site': tau's interval excludes 0 and tau exceeds the median within-site standard "
    "error. Where the sites agree more closely than their own errors predict (Q at tau 0 below "
    "the lower chi-square quantile), tau's Q-profile interval is empty and is said to be, "
    "not printed as [0, 0]. Error-rate claims are not pooled: they read 'not pooled' and "
    "each run's own verdict stands. The table shows the configuration the pooled verdict "
    "rests on; where one run or one site measured it, its own figure, said so."
)


def page(
    readings: list[PooledReading],
    runs: list[RunReadings],
    figures: dict[str, str],
    left_out: str = "",
) -> str:
    head = [
        "seed",
        "claim",
        "test",
        "newest run measuring it",
        "pooled verdict",
        "published",
        "pooled effect [Hartung-Knapp interval]",
        "tau (log) [95% Q-profile]",
        "I²",
        "prediction, new machine (nominal 95%)",
        "sites / runs",
        "notes",
    ]
    lines = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Pooled verdicts</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>Every run a site: verdicts pooled across machines</h1>",
        f"<p>{html.escape(lead(readings, runs))}</p>",
        *([f'<p class="left-out">{html.escape(left_out)}</p>'] if left_out else []),
        '<table class="summary"><thead><tr>'
        + "".join(f"<th>{html.escape(h)}</th>" for h in head)
        + "</tr>",
        "</thead><tbody>",
        *summary_rows(readings, runs, left_out),
        "</tbody></table>",
        "<h2>Sites</h2>",
        *sites_table(runs),
        f"<h2>Method</h2><p>{html.escape(METHOD)}</p>",
        "<h2>Per claim</h2>",
    ]
    for reading in readings:
        lines += claim_section(reading, figures.get(reading.claim.id))
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


def claim_section(reading: PooledReading, figure: str | None) -> list[str]:
    claim = reading.claim
    lines = [
        f'<h3 id="{html.escape(claim.id)}">{html.escape(claim.id)}: '
        f"{verdict_badge(reading.verdict)}</h3>",
        f"<p>{html.escape(claim.says)} Test: {html.escape(claim.expectation())}. "
        f"{html.escape(reading.reason)}.{own_verdicts(reading)}</p>",
    ]
    if figure:
        lines.append(f'<img src="{html.escape(figure)}" alt="forest plot of {claim.id}">')
    if reading.configurations:
        lines.append(
            "<table><thead><tr><th>configuration</th><th>run (site)</th><th>effect [interval]"
            "</th><th>verdict</th></tr></thead><tbody>"
        )
        for config in reading.configurations:
            lines += configuration_rows(claim, config)
        lines.append("</tbody></table>")
    return lines


def own_verdicts(reading: PooledReading) -> str:
    """A claim that is not pooled: what the runs that measured it said, each its own."""
    if not reading.own_verdicts:
        return ""
    each = ", ".join(
        f"{run_id}: {verdict}" for run_id, verdict in sorted(reading.own_verdicts.items())
    )
    return html.escape(
        f" Each run's own verdict ({runs_measured(len(reading.own_verdicts))}): "
        f"{tally_of(reading.own_verdicts.values())} ({each})."
    )


def tally_of(verdicts: Iterable[str]) -> str:
    return ", ".join(f"{n} {verdict}" for verdict, n in Counter(verdicts).most_common())


def configuration_rows(claim: Claim, config: PooledConfiguration) -> list[str]:
    """A row per run of one configuration, then its pooled row where sites were pooled."""
    lines = []
    for site in config.sites:
        for run_id, run in zip(site.run_ids, site.runs, strict=True):
            shown = (
                f"{format_effect(claim, run.effect)} [{format_effect(claim, run.low)}, "
                f"{format_effect(claim, run.high)}] ({run.coverage:.0%} {run.method})"
            )
            cells = [config.where(), f"{run_id} ({site.site})", shown, run.verdict]
            lines.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    if config.pooled.k >= 2:
        cells = [
            config.where(),
            f"pooled, {config.pooled.k} sites",
            pooled_effect(claim, config.pooled),
            config.pair.verdict,
        ]
        lines.append("<tr><th>" + "</th><th>".join(html.escape(c) for c in cells) + "</th></tr>")
    return lines


def render_pooled(
    readings: list[PooledReading], runs: list[RunReadings], out_dir: Path, left_out: str = ""
) -> Path:
    """index.html and one forest plot per pooled claim under `out_dir`; `left_out` says which
    readings pooling set aside (fixes.LeftOut.sentence)."""
    from perflab.analysis.forest import forest_plot

    out_dir.mkdir(parents=True, exist_ok=True)
    folder = out_dir / FIGURES
    folder.mkdir(exist_ok=True)
    for old in folder.glob("forest-*.png"):
        old.unlink()
    figures = {}
    for reading in readings:
        if reading.configurations:
            name = f"forest-{reading.claim.id}.png"
            forest_plot(reading, folder / name)
            figures[reading.claim.id] = f"{FIGURES}/{name}"
    index = out_dir / "index.html"
    index.write_text(page(readings, runs, figures, left_out))
    return index
