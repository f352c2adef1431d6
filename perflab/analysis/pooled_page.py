"""The pooled index (reports/pooled/index.html): every claim over every run, verdict first,
then the sites, then one forest plot per claim.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from pathlib import Path

from perflab.analysis.pooled import PooledConfiguration, PooledReading
from perflab.analysis.pooling import TAU_METHOD
from perflab.analysis.replication import badge
from perflab.analysis.sites import BOOT_FALLBACK, RunReadings, sites_of
from perflab.analysis.verdicts import NOT_MEASURED, format_effect

FIGURES = "figures"
STYLE = (
    "body{font-family:sans-serif;margin:2em;max-width:80em}"
    "table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #d0d7de;padding:0.3em 0.6em;text-align:left;vertical-align:top}"
    "th{background:#f6f8fa}.flag{color:#cf222e;font-weight:bold}"
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


def ratio(value: float) -> str:
    return f"{math.exp(value):.2f}x"


def pooled_cell(config: PooledConfiguration | None) -> list[str]:
    """Effect [CI], tau [interval], I^2, prediction interval: '' where not pooled."""
    if config is None or config.pooled.k < 2:
        return ["", "", "", ""]
    p = config.pooled
    cover = f"{p.coverage:.0%}"
    effect = f"{ratio(p.estimate)} [{ratio(p.low)}, {ratio(p.high)}] ({cover})"
    tau = f"{p.tau:.3f} [{p.tau_low:.3f}, {p.tau_high:.3f}]"
    pi = (
        f"[{ratio(p.prediction[0])}, {ratio(p.prediction[1])}]"
        if p.prediction is not None
        else f"none: {p.k} sites (t on k-2 df needs 3)"
    )
    return [effect, tau, f"{p.i2:.0%}", pi]


def notes(reading: PooledReading) -> str:
    parts = []
    if reading.depends_on_machine:
        flagged = sum(c.pooled.depends_on_machine for c in reading.configurations)
        parts.append(
            f'<span class="flag">depends on the machine</span> ({flagged} of '
            f"{len(reading.configurations)} configurations)"
        )
    if len(reading.revisions) > 1:
        parts.append(
            f"runs of {len(reading.revisions)} revisions ({', '.join(reading.revisions)}), "
            "judged with today's claim and cells selected by its parameters"
        )
    if reading.unshared:
        parts.append(f"shares no configuration with the others: {', '.join(reading.unshared)}")
    other_topology = [r for r, why in reading.left_out.items() if why.startswith("it needs a ")]
    if other_topology:
        parts.append(f"{len(other_topology)} run(s) of another topology left out")
    for run_id, why in sorted(reading.left_out.items()):
        if run_id not in other_topology:
            parts.append(f"{html.escape(run_id)} gives nothing: {html.escape(why)}")
    return "; ".join(parts)


def summary_rows(readings: list[PooledReading], runs: list[RunReadings]) -> list[str]:
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
            badge(reading.verdict) + mark,
            *map(html.escape, pooled_cell(reading.deciding)),
            f"{reading.sites} / {reading.runs}",
            notes(reading),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return rows


def sites_table(runs: list[RunReadings]) -> list[str]:
    lines = [
        "<table><thead><tr><th>site</th><th>machine</th><th>boot</th><th>run</th>"
        "<th>started</th><th>revision</th><th>kept as</th></tr></thead><tbody>"
    ]
    for number, (_, members) in enumerate(sites_of(runs).items(), start=1):
        for run in members:
            kept = (
                f"readings recovered from commit {run.recovered_from[:8]}"
                if run.recovered_from
                else "readings of the committed run"
            )
            cells = [
                str(number),
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
    counts = Counter(r.verdict for r in readings)
    return ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common())


def lead(readings: list[PooledReading], runs: list[RunReadings]) -> str:
    sites = len(sites_of(runs))
    machine = [r for r in readings if r.depends_on_machine]
    moved = [r for r in readings if differs_from_newest(r, runs)]
    return (
        f"{len(readings)} claims pooled over {len(runs)} runs on {sites} independent sites: "
        f"{tally(readings)}. {len(machine)} depend on the machine (the spread between sites "
        f"exceeds a run's own noise); {len(moved)} pooled verdicts differ from the newest "
        "run that measured the claim, marked ≠."
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
    "machine': tau's interval excludes 0 and tau exceeds the median within-site standard "
    "error. Error-rate claims are not pooled. The table shows the configuration the pooled "
    "verdict rests on."
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
        "pooled effect [CI]",
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
        "<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>",
        "</thead><tbody>",
        *summary_rows(readings, runs),
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
        f'<h3 id="{html.escape(claim.id)}">{html.escape(claim.id)}: {badge(reading.verdict)}</h3>',
        f"<p>{html.escape(claim.says)} Test: {html.escape(claim.expectation())}. "
        f"{html.escape(reading.reason)}.</p>",
    ]
    if figure:
        lines.append(f'<img src="{html.escape(figure)}" alt="forest plot of {claim.id}">')
    if reading.configurations:
        lines.append(
            "<table><thead><tr><th>configuration</th><th>run (site)</th><th>effect [interval]"
            "</th><th>verdict</th></tr></thead><tbody>"
        )
        for config in reading.configurations:
            for site in config.sites:
                for run_id, run in zip(site.run_ids, site.runs, strict=True):
                    shown = (
                        f"{format_effect(claim, run.effect)} [{format_effect(claim, run.low)}, "
                        f"{format_effect(claim, run.high)}] ({run.coverage:.0%} {run.method})"
                    )
                    cells = [config.where(), f"{run_id} ({site.site})", shown, run.verdict]
                    lines.append(
                        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
                    )
            pooled = pooled_cell(config)
            if config.pooled.k >= 2:
                cells = [
                    config.where(),
                    f"pooled, {config.pooled.k} sites",
                    pooled[0],
                    config.pair.verdict,
                ]
                lines.append(
                    "<tr><th>" + "</th><th>".join(html.escape(c) for c in cells) + "</th></tr>"
                )
        lines.append("</tbody></table>")
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
