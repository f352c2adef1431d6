"""What a reader sees first: each published claim's verdict on this run, beside the reference's.

The index opens with every claim across the seeds; each study page opens with its own
claims in plain sentences. A run that is not the committed reference run of its topology
(data/reference/reference_runs.yml) also shows the reference's verdict and effect, and
flags every claim whose verdict differs: what someone re-running on their own machine
wants to know first.
"""

from __future__ import annotations

import html
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from perflab.analysis.adaptive import (
    Ledger,
    Plan,
    beyond_any_design,
    judge_run_looks,
    margin_by_rounds,
    plan_look,
    with_spread,
)
from perflab.analysis.checked_coverage import coverage_sentence, read_results
from perflab.analysis.claims import Claim
from perflab.analysis.design_power import DesignPower, design_power, powers_sentence
from perflab.analysis.drift_history import MIN_RUNS, READINGS_HISTORY
from perflab.analysis.findings import (
    Readers,
    published_text,
    regime_lines,
    seed_paragraphs,
    stack_sentence,
    stated_test,
    versions_line,
)
from perflab.analysis.multiplicity import discoveries
from perflab.analysis.noise import NoiseFloor, margins_by_look, noise_floor
from perflab.analysis.power import MOST_ROUNDS, TARGET_POWER
from perflab.analysis.published import reference_claims
from perflab.analysis.run import Run, StudyHooks, read
from perflab.analysis.verdicts import (
    AT_THRESHOLD,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    MIN_MARGIN,
    NOT_MEASURED,
    UNDECIDABLE,
    VERDICTS,
    Judging,
    Verdict,
    format_effect,
    margin_for,
    percent,
)
from perflab.contract.adaptive import Adaptive

REFERENCE_RUNS_FILE = "reference_runs.yml"
COLOURS = {
    HOLDS: "#1a7f37",
    FAILS: "#cf222e",
    AT_THRESHOLD: "#8250df",
    INCONCLUSIVE: "#9a6700",
    NOT_MEASURED: "#57606a",
}
# Beside the power sentence: what the power column's two shares are.
POWER_NOTE = (
    "The power column gives, for the configuration that decides each claim, the chance "
    "that a run of this design (its rounds, the per-round spread this run measured, its "
    "metric's margin) returns 'holds' when the true effect is the seed's figure and 'does "
    "not hold' at the null (an effect as far on the wrong side), by Monte Carlo through the "
    "verdict rule; the spread comes from the run's few rounds, so read it as an estimate. "
    "An error rate's power is over its cells (their calls, and the clustering of failures "
    "within cells they showed); a 'within' claim the seed gives no figure for is priced at "
    "no difference. Hover a cell for its sentence."
)


# The notebook theme right-aligns output table cells (':not(.jp-RenderedMarkdown)
# .jp-RenderedHTMLCommon td'): words read better from the left, so the first rule names the
# same container to outrank it. A claim id and a configuration list have no spaces to break
# at: they may break anywhere, so the table fits the page; the other columns keep their
# words whole.
VERDICTS_TABLE_STYLE = (
    "<style>.jp-RenderedHTMLCommon table.verdicts td, .jp-RenderedHTMLCommon "
    "table.verdicts th {text-align: left; vertical-align: top} "
    "table.verdicts td:nth-child(2) b, table.verdicts td:nth-child(9) "
    "{overflow-wrap: anywhere} "
    "table.verdicts tr.conclusion td {background: #eef2f8; padding-top: 0.8em}</style>"
)


@dataclass(frozen=True)
class Replication:
    """A run's verdicts, and the reference run's where this run is not the reference."""

    run_id: str
    verdicts: list[Verdict]
    reference_id: str | None = None
    reference: list[Verdict] | None = None
    # The margin of a study without a margin of its own in `by_study`.
    judging: Judging = Judging()
    # The run's A/A drift per kind of client (none: no A/A cells) ...
    noise: NoiseFloor = NoiseFloor(())
    # ... and the margin each study's own floor set.
    by_study: dict[str | tuple[str, str], Judging] = field(default_factory=dict)
    # The looks the run took (its adaptive.json); None: every claim judged on the base rounds.
    ledger: Ledger | None = None
    # The studies the run has cells of; None: not known, every claim is listed.
    studies: frozenset[str] | None = None
    # What the index says beside each claim: regimes and library versions (readers.yml),
    # the run's manifest (its versions) and topology.
    readers: Readers = Readers()
    manifest: dict = field(default_factory=dict)
    topology: str = "localhost"
    # Per claim, whether the pooled runs (data/readings/) agree (perflab.analysis.pooled).
    pooled: dict[str, str] = field(default_factory=dict)
    # What the simulation suite found about the intervals' coverage (checked_coverage).
    coverage: str = ""

    def listed(self) -> list[Verdict]:
        """The verdicts the index lists: a claim of a study the run left out (make run
        STUDIES=...) is not measured by choice, and is counted in a sentence instead."""
        if self.studies is None:
            return self.verdicts
        return [v for v in self.verdicts if v.claim.study in self.studies]

    def powers(self) -> dict[str, DesignPower]:
        """Each listed claim's design power; an open claim's rounds priced at the margin
        its A/A copies would set over them, as the headline (reach_sentence) and the
        planner price them, so the index's counts and its power column agree."""
        return {
            v.claim.id: design_power(
                v,
                margin_at=margin_by_rounds(
                    self.noise.margin_at, v.claim.id, margin_for(v.claim, v.judging)
                ),
            )
            for v in self.listed()
        }

    def margin_sentence(self) -> str:
        """How the data decide: the margins the listed verdicts were judged with, per study
        and metric and per look (a look's A/A rounds narrow them)."""
        if not self.by_study:
            return self.judging.sentence()
        used = margins_used(self.listed())
        margins = "; ".join(
            f"{study}/{metric} {margins_text(by_look)}"
            + ("" if (study, metric) in self.by_study else " (no A/A of this metric: its study's)")
            for (study, metric), by_look in sorted(used.items())
        )
        return (
            f"Decision margin per study and metric, as the verdicts below are judged, each from "
            f"that metric's own A/A cells ({history_clause(self.noise)}never below "
            f"{MIN_MARGIN:.0%}): {margins}. Where a study runs an A/A configuration per "
            "kind of client or method, each claim is judged with its own kind's (the range "
            "shown; see the noise floor table); a claim decided at a look is judged with the "
            "margin of that look's A/A rounds. A decided direction clears its threshold by its "
            f"metric's margin with an interval of at least {percent(self.judging.coverage)} "
            "coverage, and an interval wholly inside the margin zone is 'at its threshold'; a "
            "band holds with its whole interval inside its edges and fails with it wholly "
            "outside them, and where the margin is wider than the band its edges widen to the "
            "margin and it cannot hold ('undecidable by this design')."
        )

    def for_study(self, study: str) -> Replication:
        """The verdicts of one study's claims, and the reference's of the same claims."""
        verdicts = [v for v in self.verdicts if v.claim.study == study]
        compared = self.reference is not None and bool(verdicts)
        return replace(
            self,
            verdicts=verdicts,
            reference_id=self.reference_id if compared else None,
            reference=[v for v in self.reference or [] if v.claim.study == study]
            if compared
            else None,
        )

    def reference_of(self, claim: Claim) -> Verdict | None:
        if self.reference is None:
            return None
        return next((v for v in self.reference if v.claim.id == claim.id), None)

    def sibling_of(self, claim: Claim) -> Verdict | None:
        """The verdict of the same claim judged on the study's other method, if any."""
        if not claim.sibling:
            return None
        return next((v for v in self.verdicts if v.claim.id == claim.sibling), None)

    def differs(self, verdict: Verdict) -> bool:
        other = self.reference_of(verdict.claim)
        return self.reference is not None and (other is None or other.verdict != verdict.verdict)


def reference_run(run: Run, reference_dir: Path) -> Path | None:
    """The committed reference run of this run's topology; None if this run is it, or if
    no reference is named for the topology or its folder is not here."""
    import yaml

    path = reference_dir / REFERENCE_RUNS_FILE
    if not path.is_file():
        return None
    named = (yaml.safe_load(path.read_text()) or {}).get(run.topology)
    if not named or named == run.run_id:
        return None
    folder = reference_dir.parent / named
    return folder if folder.is_dir() else None


def plan_next_look(run: Run, reference_dir: Path, adaptive: Adaptive, index: int) -> Plan:
    """Look `index`'s rounds, the claims judged as the report will judge them: each study
    with the margin its own A/A cells set."""
    claims = reference_claims(reference_dir, run.seed_rows_hooks)
    floor = noise_floor(run, claims)
    return plan_look(
        run,
        claims,
        adaptive,
        index,
        Judging(),
        floor.judging_by_study(),
        floor.aa_configurations(),
        look_margins(run, claims),
        floor.margin_at,
    )


def look_margins(run: Run, claims: list[Claim]) -> dict[int, dict]:
    """Each recorded look's margins from the A/A rounds it had ({} without a ledger: one
    look, every round)."""
    if run.ledger is None:
        return {}
    return margins_by_look(run, claims, run.ledger.looks(), run.ledger.base_rounds)


def replicate(
    run: Run,
    reference_dir: str | Path,
    study: str | None = None,
    against: Run | None = None,
    judging: Judging | None = None,
    side_by_side: bool = False,
) -> Replication:
    """The verdicts of one run (one study's claims, or all), with the reference's beside,
    or those of the run `against` names (e.g. a second run of the same commit); with a
    `judging` given both are judged with it. Without one each run is judged with the margins
    its own A/A cells set per metric (perflab.analysis.noise), the margins its own index
    uses, so a run's verdicts do not depend on which view judges it. `side_by_side` reads
    and judges the reference run in a second process meanwhile (a report's renderer)."""
    reference_dir = Path(reference_dir)
    # A judging given by the caller is every study's; else each study's own floor sets its.
    given = judging is not None
    judging = judging or Judging()
    folder = reference_run(run, reference_dir) if against is None else None
    with ProcessPoolExecutor(max_workers=1) as pool:
        # The two runs share nothing: on 2 cores the reference is read and judged meanwhile,
        # from the start (its claims are the same file's, read there too).
        reference = (
            pool.submit(judge_reference, folder, run.hooks, reference_dir, study, judging, given)
            if folder is not None and side_by_side
            else None
        )
        every_claim = reference_claims(reference_dir, run.seed_rows_hooks)
        claims = of_study(every_claim, study)
        noise = noise_floor(run, every_claim)
        by_study = {} if given else noise.judging_by_study()
        by_look = {} if given else look_margins(run, every_claim)
        verdicts = judge_run_looks(run, claims, judging, by_study, by_look) if claims else []
        other = against if against is not None else folder
        theirs_id, theirs = (None, None)
        if reference is not None:
            theirs_id, theirs = reference.result()
        elif other is not None and claims:
            theirs_id, theirs = judge_other(other, run.hooks, claims, judging, given)
    return Replication(
        run.run_id,
        verdicts,
        theirs_id,
        theirs,
        judging,
        noise,
        by_study,
        run.ledger,
        run.studies,
        Readers.read(reference_dir),
        run.manifest or {},
        run.topology,
        pooled_agreements(reference_dir, verdicts),
        coverage_sentence(read_results(reference_dir)),
    )


def of_study(claims: list[Claim], study: str | None) -> list[Claim]:
    """The claims of one study (every claim where `study` is None)."""
    return claims if study is None else [claim for claim in claims if claim.study == study]


def judge_reference(
    folder: Path,
    hooks: StudyHooks,
    reference_dir: Path,
    study: str | None,
    judging: Judging,
    given: bool,
) -> tuple[str | None, list[Verdict] | None]:
    """The reference run in `folder` judged on the same claims as the run (nothing where
    the study has none), in a process of its own (`replicate`)."""
    other = read(folder, hooks, READINGS_HISTORY)
    claims = of_study(reference_claims(reference_dir, other.seed_rows_hooks), study)
    if not claims:
        return None, None
    return judge_other(other, hooks, claims, judging, given)


def judge_other(
    other: Run | Path, hooks: StudyHooks, claims: list[Claim], judging: Judging, given: bool
) -> tuple[str, list[Verdict]]:
    """The run beside (a Run, or the folder to read it from with `hooks`) and its verdicts.
    Each run is judged with the margins its own A/A cells set, whichever view asks: the
    index of a run and `verdicts --against` it then agree (issue 26, item 6)."""
    if not isinstance(other, Run):
        other = read(other, hooks, READINGS_HISTORY)
    by_study = {} if given else noise_floor(other, claims).judging_by_study()
    by_look = {} if given else look_margins(other, claims)
    return other.run_id, judge_run_looks(other, claims, judging, by_study, by_look)


def pooled_agreements(reference_dir: Path, verdicts: list[Verdict]) -> dict[str, str]:
    from perflab.analysis.fixes import read_fixes
    from perflab.analysis.pooled import agreements
    from perflab.analysis.sites import READINGS_DIR

    # The verdicts may be some claims only: the fixes file is checked where runs are pooled.
    fixes = read_fixes(reference_dir)
    return agreements(reference_dir.parent / READINGS_DIR, verdicts, fixes)


SAME = "same"
OPPOSITE = "opposite"
UNDECIDED = "decided vs inconclusive"
UNMEASURED = "measured vs not measured"
DECIDED = (HOLDS, FAILS)


def change(verdict: Verdict, other: Verdict | None) -> str:
    """How a claim's verdict moved between two runs. Only OPPOSITE is a contradiction: the
    other moves are what a margin and honest intervals are for (issue 12)."""
    theirs = NOT_MEASURED if other is None else other.verdict
    pair = {verdict.verdict, theirs}
    if len(pair) == 1:
        return SAME
    if pair == set(DECIDED):
        return OPPOSITE
    if NOT_MEASURED in pair:
        return UNMEASURED
    return UNDECIDED


def comparison_table(replication: Replication) -> str:
    """Markdown: per claim, this run's verdict and effect, the other run's, and the change;
    then one line counting the changes."""
    assert replication.reference is not None, "a comparison needs a second run"
    run, other = replication.run_id, replication.reference_id
    rows = [f"| claim | {run} | {other} | change |", "|---|---|---|---|"]
    counts: Counter[str] = Counter()
    for verdict in replication.verdicts:
        theirs = replication.reference_of(verdict.claim)
        moved = change(verdict, theirs)
        counts[moved] += 1
        rows.append(
            f"| {verdict.claim.id} | {short(verdict)} | {short(theirs)} "
            f"| {'' if moved == SAME else moved} |"
        )
    summary = ", ".join(
        f"{counts[kind]} {kind}" for kind in (SAME, UNDECIDED, UNMEASURED, OPPOSITE)
    )
    return "\n".join([*rows, "", f"{len(replication.verdicts)} claims: {summary}."])


def short(verdict: Verdict | None) -> str:
    """'holds, 1.52x' or 'not measured'."""
    if verdict is None or verdict.effect is None:
        return NOT_MEASURED if verdict is None else verdict.verdict
    return f"{verdict.verdict}, {format_effect(verdict.claim, verdict.effect)}"


def conclusion_of(claim: Claim) -> str:
    """The seed conclusion a claim reads: the claim its `conclusion` names (a table's
    figure and the prose's are two readings of one), else its id on the current stack, and
    of a method pair the id of the steady-method claim (the same conclusion judged on the
    seed's method and a library stack, or on clients run one after another, are readings of
    it, not findings of their own)."""
    if claim.conclusion:
        return claim.conclusion
    base = claim.stack_of or claim.client_order_of or claim.id
    sibling = claim.sibling.removesuffix("-seed-stack") if claim.sibling else ""
    if sibling and claim.method == "seed":
        return sibling
    return base


def conclusions(claims: list[Claim]) -> dict[str, str]:
    """Each claim's seed conclusion, `conclusion_of` followed to its end among `claims`: a
    library-stack reading of the seed's method reads the seed-method claim, which reads the
    steady one (hello-sync-w10-beats-grpclib-asyncio-seed-method-seed-stack ->
    ...-seed-method -> ...-steady): one conclusion, not two."""
    by_id = {claim.id: claim for claim in claims}
    found = {}
    for claim in claims:
        conclusion, seen = conclusion_of(claim), {claim.id}
        while conclusion in by_id and conclusion not in seen:
            seen.add(conclusion)
            conclusion = conclusion_of(by_id[conclusion])
        found[claim.id] = conclusion
    return found


def conclusions_sentence(
    verdicts: list[Verdict], judging: Judging, family_alpha: float | None = None
) -> str:
    """How many seed conclusions the readings are, how they came out, and what the counts
    control: each reading's error, and across readings a false-discovery rate
    (perflab.analysis.multiplicity). `family_alpha`: the error the run's looks spend
    together (its ledger's family error; without looks, the base coverage's)."""
    groups: dict[str, set[str]] = {}
    conclusion = conclusions([verdict.claim for verdict in verdicts])
    for verdict in verdicts:
        groups.setdefault(conclusion[verdict.claim.id], set()).add(verdict.verdict)
    every = Counter(next(iter(found)) for found in groups.values() if len(found) == 1)
    mixed = sum(len(found) > 1 for found in groups.values())
    side = (1 - judging.coverage) / 2
    control = discoveries(verdicts, family_alpha or 1 - judging.coverage)
    # A claim judged again at a look may be decided wrongly at either: per side, the looks
    # spend the family error between them (Bonferroni), more than the base coverage's.
    looks = ""
    if family_alpha and family_alpha > 1 - judging.coverage + 1e-9:
        looks = f", {family_alpha / 2:.0%} per side over the run's looks"
    undecided = len(groups) - every[HOLDS] - every[FAILS] - mixed
    return (
        f"These {len(verdicts)} readings are {len(groups)} seed conclusions (a conclusion's "
        f"readings: the seed's method and a steadier one, the library stack it ran): "
        f"{counted(every[HOLDS], 'holds', 'hold')} in every reading, "
        f"{counted(every[FAILS], 'does not hold', 'do not hold')} in every reading, "
        f"{counted(mixed, 'differs', 'differ')} between readings, "
        f"{counted(undecided, 'is', 'are')} undecided or not measured in every reading. "
        f"Each reading's decision errs by "
        f"chance with at most {side:.0%} per side ({percent(judging.coverage)} coverage)"
        f"{looks}. "
        f"{control.sentence()}"
    )


def counted(n: int, one: str, many: str) -> str:
    """'1 holds', '0 hold', '3 hold': a count and its verb agreeing."""
    return f"{n} {one if n == 1 else many}"


def tally(verdicts: list[Verdict]) -> str:
    """e.g. '12 hold, 3 do not hold, 5 inconclusive (2 of them undecidable by this design),
    2 not measured' (zero counts left out): an inconclusive reading the design, not the data,
    leaves open is counted apart, as the verdicts' reasons say it."""
    counts = Counter(v.verdict for v in verdicts)
    # One claim and several read differently: "1 does not hold", "3 do not hold".
    words = {
        HOLDS: ("holds", "hold"),
        FAILS: ("does not hold", "do not hold"),
        AT_THRESHOLD: ("at its threshold", "at their threshold"),
        INCONCLUSIVE: ("inconclusive", "inconclusive"),
        NOT_MEASURED: ("not measured", "not measured"),
    }
    by_design = sum(
        v.verdict == INCONCLUSIVE and v.reason.startswith(UNDECIDABLE) for v in verdicts
    )
    parts = []
    for verdict in VERDICTS:
        if counts[verdict]:
            part = counted(counts[verdict], *words[verdict])
            if verdict == INCONCLUSIVE and by_design:
                part += (
                    f" ({UNDECIDABLE})"
                    if by_design == counts[verdict] == 1
                    else f" ({by_design} of them {UNDECIDABLE})"
                )
            parts.append(part)
    return ", ".join(parts) if parts else "no claims"


def published_figure(claim: Claim, missing: str = "") -> str:
    """The seed's figure as the verdicts show effects ('2.13x', '75.00%')."""
    return missing if claim.published is None else published_text(claim)


def margins_used(verdicts: list[Verdict]) -> dict[tuple[str, str], dict[int, list[float]]]:
    """(study, metric) -> look -> the margins its ratio verdicts were judged with there."""
    used: dict[tuple[str, str], dict[int, list[float]]] = {}
    for verdict in verdicts:
        if verdict.claim.kind != "ratio" or verdict.deciding is None:
            continue
        key = (verdict.claim.study, verdict.claim.metric)
        used.setdefault(key, {}).setdefault(verdict.look, []).append(
            margin_for(verdict.claim, verdict.judging)
        )
    return used


def history_clause(noise: NoiseFloor) -> str:
    """How the margins were set: the run's own A/A far end, and where the machine's earlier
    runs predict a metric's drift, that prediction (drift_history), with how many."""
    own = "the far end of its A/A ratio's 90% interval"
    predicted = [p for kind in noise.kinds for p in kind.history.values()]
    if not predicted:
        return own + ", "
    runs = sorted({p.runs for p in predicted})
    counted = f"{runs[0]}" if len(runs) == 1 else f"{runs[0]}-{runs[-1]}"
    return (
        f"for {len(predicted)} of them, the far end of the 90% prediction interval of this "
        f"run's drift from the A/A series of {counted} runs of this machine, this run's among "
        "them (random effects: the drift may change from boot to boot); for the rest, "
        f"{own}; "
    )


def margins_text(by_look: dict[int, list[float]]) -> str:
    """'25%', '22-100%', or '35% at the base rounds, 25% at look 1'."""

    def span(margins: list[float]) -> str:
        low, high = round(min(margins) * 100), round(max(margins) * 100)
        return f"{low}%" if low == high else f"{low}-{high}%"

    if len(by_look) == 1:
        return span(next(iter(by_look.values())))
    return ", ".join(
        f"{span(margins)} at " + ("the base rounds" if look == 0 else f"look {look}")
        for look, margins in sorted(by_look.items())
    )


def badge(verdict: str) -> str:
    colour = COLOURS[verdict]
    return (
        f'<span style="color:{colour};font-weight:bold;white-space:nowrap">'
        f"{html.escape(verdict)}</span>"
    )


def headline_html(replication: Replication) -> list[str]:
    """The index's first two paragraphs: readings and conclusions with their tally, then
    how the conclusions came out and what the counts control across them."""
    verdicts = replication.verdicts
    ledger = replication.ledger
    family = ledger.family_error() if ledger is not None else None
    # The correction beside the counts it qualifies, not only in the next paragraph.
    control = discoveries(verdicts, family or 1 - replication.judging.coverage)
    return [
        f"<p>{len(verdicts)} readings of "
        f"{len(set(conclusions([v.claim for v in verdicts]).values()))} published conclusions of "
        f"{len({v.claim.seed for v in verdicts})} seeds, decided on run "
        f"<code>{html.escape(replication.run_id)}</code>: "
        f"{tally(verdicts)}; {html.escape(control.short())}.</p>",
        f"<p>{html.escape(conclusions_sentence(verdicts, replication.judging, family))} "
        f"{html.escape(reach_sentence(replication))}</p>",
    ]


def reach_sentence(replication: Replication) -> str:
    """How many undecided readings more rounds could decide and how many no design could
    (`adaptive.beyond_any_design`), at the effect this run measured."""
    undecided = [v for v in replication.listed() if v.verdict in (INCONCLUSIVE, AT_THRESHOLD)]
    paired = [v for v in undecided if with_spread(v)]
    if not paired:
        return ""
    beyond = beyond_any_design(paired, replication.noise.margin_at)
    return (
        f"Of the {len(undecided)} undecided readings, {len(paired)} have a paired interval: "
        f"{len(beyond)} of them sit where no design up to {MOST_ROUNDS} rounds would decide "
        f"them with {TARGET_POWER:.0%} chance at the effect measured, even at the margin "
        "their A/A copies would set over as many rounds (the effect lies in the noise zone "
        f"around the threshold); more rounds would decide the other {len(paired) - len(beyond)}"
        " (perflab plan prices them)."
    )


def index_html(replication: Replication, pages: dict[str, str]) -> str:
    """One table of every claim: seed, claim, published, measured, verdict, evidence link.

    `pages` maps a study id to its rendered page; a study without one gets no link.
    """
    verdicts = replication.verdicts
    # The verdicts first (counts, then each seed's), then the table of evidence, then how
    # they were decided: margins, the noise floor, the looks.
    lines = [*headline_html(replication)]
    if replication.reference is not None:
        # A study the run left out is not a difference: its claims are not listed.
        compared = replication.listed()
        moved = [v for v in compared if replication.differs(v)]
        lines.append(
            "<p>Compared with the reference run "
            f"<code>{html.escape(replication.reference_id or '')}</code>: "
            f"{len(moved)} of {len(compared)} verdicts differ"
            + (" in the studies this run measured" if len(compared) < len(verdicts) else "")
            + (" (marked ≠)." if moved else ".")
            + "</p>"
        )
    lines += [f"<p>{html.escape(text)}</p>" for text in seed_paragraphs(replication.listed())]
    powers = replication.powers()
    lines.append(f"<p>{html.escape(powers_sentence(list(powers.values())))} {POWER_NOTE}</p>")
    if replication.coverage:
        lines.append(f"<p>{html.escape(replication.coverage)}</p>")
    head = ["seed", "claim", "test", "published", "measured [interval]", "verdict", "rounds"]
    head.append("power of this design")
    head.append("configurations")
    if replication.reference is not None:
        head += ["reference run", "≠"]
    head.append("evidence")
    lines.append(VERDICTS_TABLE_STYLE)
    listed = replication.listed()
    if len(listed) < len(verdicts):
        left_out = sorted({v.claim.study for v in verdicts} - {v.claim.study for v in listed})
        lines.append(
            f"<p>The {len(verdicts) - len(listed)} claims of the studies this run did not "
            f"include ({', '.join(left_out)}) are not listed.</p>"
        )
    notes = context_notes(replication, listed)
    lines.append(context_list_html(notes))
    lines.append('<table class="verdicts"><thead><tr>')
    lines += [f"<th>{html.escape(h)}</th>" for h in head]
    lines.append("</tr></thead><tbody>")
    for conclusion, readings in by_conclusion(listed):
        if len(readings) > 1:
            lines.append(conclusion_row(conclusion, readings, len(head)))
        lines += [index_row(replication, v, pages, powers[v.claim.id], notes) for v in readings]
    lines.append("</tbody></table>")
    lines += [
        '<h3 id="how-decided">How these verdicts were decided</h3>',
        f"<p>{html.escape(replication.margin_sentence())} {html.escape(EFFECTS)}</p>",
        noise_html(replication.noise, replication.by_study),
        f"<p>{html.escape(looks_sentence(replication))}</p>",
    ]
    return "\n".join(lines)


def by_conclusion(verdicts: list[Verdict]) -> list[tuple[str, list[Verdict]]]:
    """The readings grouped under the seed conclusion each reads (`conclusions`), the
    conclusions in the order of their first reading, the readings in theirs."""
    groups: dict[str, list[Verdict]] = {}
    conclusion = conclusions([verdict.claim for verdict in verdicts])
    for verdict in verdicts:
        groups.setdefault(conclusion[verdict.claim.id], []).append(verdict)
    return list(groups.items())


def conclusion_row(conclusion: str, readings: list[Verdict], columns: int) -> str:
    """The row heading a conclusion's readings: 'orders-bidi-2x-slower-than-unary: 2
    readings of one seed conclusion (holds 1, does not hold 1)'."""
    counts = Counter(verdict.verdict for verdict in readings)
    outcome = ", ".join(f"{name} {counts[name]}" for name in VERDICTS if counts[name])
    return (
        f'<tr class="conclusion"><td colspan="{columns}"><b>{html.escape(conclusion)}</b>: '
        f"{len(readings)} readings of one seed conclusion ({html.escape(outcome)})</td></tr>"
    )


def index_row(
    replication: Replication,
    verdict: Verdict,
    pages: dict[str, str],
    power: DesignPower,
    notes: list[str],
) -> str:
    """One claim's row of the index table (columns as `index_html` names them; `notes`
    the context list above it, context_notes)."""
    claim = verdict.claim
    cells = [
        html.escape(claim.seed_number),
        f"<b>{html.escape(claim.id)}</b>{reading_label(claim)}<br>"
        f"<small>{html.escape(claim.says)}</small>{context_html(replication, claim, notes)}",
        html.escape(stated_test(claim)),
        # Said, not left blank: an empty cell reads as a figure lost.
        html.escape(published_figure(claim, "no figure")),
        html.escape(verdict.measured()),
        badge(verdict.verdict)
        + method_note(replication, verdict)
        + pooled_note(replication, claim),
        html.escape(rounds_of(verdict)),
        f'<span title="{html.escape(power.sentence())}">{html.escape(power.short())}</span>',
        rests_on(verdict),
    ]
    if replication.reference is not None:
        other = replication.reference_of(claim)
        cells.append(
            f"{badge(other.verdict)}<br><small>{html.escape(other.measured())}</small>"
            if other
            else badge(NOT_MEASURED)
        )
        cells.append("≠" if replication.differs(verdict) else "")
    page = pages.get(claim.study)
    cells.append(
        f'<a href="{html.escape(page)}#claim-{html.escape(claim.id)}">{claim.study}</a>'
        if page
        else html.escape(claim.study)
    )
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def reading_label(claim: Claim) -> str:
    """' (reading: prose)' beside a claim's id where it judges one reading of its seed."""
    return f" <small>(reading: {html.escape(claim.reading)})</small>" if claim.reading else ""


def context_lines(replication: Replication, claim: Claim) -> list[str]:
    """The claim's regimes, one a line, and the library versions of the run and the seed."""
    lines = regime_lines(claim, replication.readers, replication.topology)
    versions = versions_line(claim, replication.readers, replication.manifest)
    return lines + ([versions] if versions else [])


def context_inline_html(replication: Replication, claim: Claim) -> str:
    """The claim's context lines in full, for a study page's few claims."""
    lines = context_lines(replication, claim)
    return "".join(f"<br><small><i>{html.escape(line)}</i></small>" for line in lines)


def context_notes(replication: Replication, verdicts: list[Verdict]) -> list[str]:
    """Every distinct context line of the listed claims, in the order the rows first need
    them: said once above the table, and named by number in each row (one library line
    repeated under 179 claims buried the rows it explained)."""
    notes: dict[str, None] = {}
    for verdict in verdicts:
        notes.update(dict.fromkeys(context_lines(replication, verdict.claim)))
    return list(notes)


def context_list_html(notes: list[str]) -> str:
    if not notes:
        return ""
    items = "".join(
        f'<li id="context-{number}">{html.escape(note)}</li>'
        for number, note in enumerate(notes, start=1)
    )
    return f"<p>Context the rows refer to by number:</p><ol>{items}</ol>"


def context_html(replication: Replication, claim: Claim, notes: list[str]) -> str:
    """The claim's context notes by number, linked to the list above the table."""
    numbers = [notes.index(line) + 1 for line in context_lines(replication, claim)]
    if not numbers:
        return ""
    links = ", ".join(f'<a href="#context-{n}">{n}</a>' for n in numbers)
    return f"<br><small>context: {links}</small>"


def pooled_note(replication: Replication, claim: Claim) -> str:
    note = replication.pooled.get(claim.id)
    return f"<br><small>{html.escape(note)}</small>" if note else ""


def rounds_of(verdict: Verdict) -> str:
    """The rounds a verdict was decided on, and at which look: '3', '5 (look 1)'."""
    if verdict.rounds is None or verdict.verdict == NOT_MEASURED:
        return ""
    return f"{verdict.rounds}" + (f" (look {verdict.look})" if verdict.look else "")


def looks_sentence(replication: Replication) -> str:
    """How many rounds decided the claims: the base rounds only, or the looks the run took,
    what each gave the open claims, and the error the whole procedure may make."""
    ledger = replication.ledger
    if ledger is None or not ledger.taken:
        return (
            "Every claim was judged once, on its study's base rounds: the run took no "
            "adaptive rounds."
        )
    adaptive = ledger.adaptive
    taken = [look for look in ledger.taken if look.cells]
    given = "; ".join(
        f"look {look.index}: {len(look.chosen_claims)} of {len(look.open_claims)} open claims "
        f"got {look.extra_rounds} round(s) more than the base"
        for look in taken
    )
    later = sum(1 for v in replication.verdicts if v.look > 0 and v.verdict != INCONCLUSIVE)
    return (
        f"Adaptive rounds: after the base rounds the run took {len(taken)} of at most "
        f"{adaptive.max_looks} look(s) ({given or 'none: no claim could use one'}); "
        f"{later} claim(s) were settled at a later look. Every later look demands "
        f"{percent(adaptive.look_coverage)} intervals, so a claim whose true effect sits on "
        f"its threshold is decided at some look with at most "
        f"{ledger.family_error():.0%} chance ({1 - ledger.base_coverage:.0%} at the base look "
        f"+ {adaptive.max_looks} x {1 - adaptive.look_coverage:.0%}, Bonferroni over looks)."
    )


# How the index names a claim's method (claims.yml `method`).
METHOD_NAMES = {"steady": "steady", "seed": "the seed's method"}


def method_sentence(verdict: Verdict, sibling: Verdict | None) -> str:
    """e.g. 'Depends on the method: holds on steady, inconclusive on the seed's method.';
    '' when the claim has no sibling or both methods give the same verdict."""
    if sibling is None or sibling.verdict == verdict.verdict:
        return ""
    ours = METHOD_NAMES.get(verdict.claim.method, verdict.claim.method)
    theirs = METHOD_NAMES.get(sibling.claim.method, sibling.claim.method)
    return f"Depends on the method: {verdict.verdict} on {ours}, {sibling.verdict} on {theirs}."


def method_note(replication: Replication, verdict: Verdict) -> str:
    """HTML beside a verdict's badge: the method and stack sentences, where the verdict
    depends on either."""
    said = [
        method_sentence(verdict, replication.sibling_of(verdict.claim)),
        stack_sentence(verdict, replication.verdicts),
    ]
    return "".join(f"<br><small>{html.escape(s)}</small>" for s in said if s)


EFFECTS = (
    "A ratio's effect is, where both groups ran once in each of the same rounds (at least 3; "
    "a look that repeated one side only is judged on the rounds both share), the geometric "
    "mean of the per-round ratios, the centre of a Student t interval on their logarithms "
    "(paired: a drift between rounds cancels, and the two spreads need not be equal); "
    "otherwise the Hodges-Lehmann factor (the median of the pairwise ratios of the two "
    "groups' repeats), the centre of its exact Mann-Whitney (Moses) interval, which assumes "
    "the groups differ by a factor only. An error rate's is the failed calls over all calls, "
    "its interval Clopper-Pearson on the calls divided by the design effect the spread "
    "between cells gives (Korn and Graubard), so failures that come in whole cells count as "
    "cells."
)


# What the noise floor table's columns mean, above it.
NOISE_FLOOR_HTML = (
    "<p>Noise floor: per kind of client or method, one configuration ran twice in every "
    "round (A/A cells, left out of every table and claim); its floor is the A/A effect a "
    "claim would see, |a / b - 1| for the Hodges-Lehmann factor of copy a over copy b "
    "across rounds, the largest over the metrics its study's claims are judged on. A "
    "claim takes the margin of its own kind (where a study runs several, the one whose "
    "method, call or regime its cells share) on its own metric, never below 10%: the far "
    "end of its A/A ratio's 90% interval over this run's rounds or, where the machine's "
    "earlier runs measured the same A/A configuration (at least "
    f"{MIN_RUNS} runs with this one), the far end of the 90% prediction interval of this "
    "run's drift from their A/A series (marked).</p>"
)


def noise_html(noise: NoiseFloor, by_study: dict[str | tuple[str, str], Judging]) -> str:
    """The run's noise floor per kind of client, and the margin it set for its study; '' for
    a run without A/A cells (the margin sentence says so)."""
    if not noise.kinds:
        return ""
    rows = [
        "<tr>"
        + "".join(
            f"<td>{html.escape(text)}</td>"
            for text in (
                kind.kind(),
                kind.configuration,
                ", ".join(kind.metrics),
                str(kind.rounds),
                f"{kind.floor:.1%}",
                ", ".join(
                    f"{metric} {kind.judging(metric).margin:.0%}"
                    + (
                        f" (A/A history, {kind.history[metric].runs} runs)"
                        if metric in kind.history
                        else ""
                    )
                    for metric in kind.metrics
                    if metric in kind.per_metric
                ),
                str(sum(kind in kinds for kinds in noise.by_claim.values())),
            )
        )
        + "</tr>"
        for kind in noise.kinds
    ]
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "kind of client",
            "A/A configuration",
            "metrics",
            "rounds",
            "noise floor",
            "margin per metric, over these rounds",
            "claims judged by it",
        )
    )
    unmatched = sorted(claim for claim, kinds in noise.by_claim.items() if not kinds)
    at_floor = (
        f"<p>No A/A cells of their own kind of client or method in this run, so judged at the "
        f"floor of {MIN_MARGIN:.0%}: {html.escape(', '.join(unmatched))}.</p>"
        if unmatched
        else ""
    )
    return (
        NOISE_FLOOR_HTML
        + f'<table class="verdicts"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
        f"</tbody></table>{at_floor}"
    )


def rests_on(verdict: Verdict) -> str:
    """HTML: every configuration's effect, interval and verdict, the deciding one marked,
    and which of the seed's configurations the run covers."""
    lines = [html.escape(line) for line in verdict.configurations()]
    if verdict.coverage():
        lines.append(f"<i>{html.escape(verdict.coverage())}</i>")
    return "<small>" + "<br>".join(lines) + "</small>" if lines else ""


# A study page sits beside its run's index (perflab report writes both into one folder).
BACK_TO_INDEX = "<p><a href=\"index.html\">&larr; This run's index: every study's verdicts</a></p>"


def study_html(replication: Replication) -> str:
    """A study page's opening: its claims' verdicts as sentences, each with an anchor."""
    verdicts = replication.verdicts
    if not verdicts:
        return "<p>The seeds state no claim that this study decides.</p>" + BACK_TO_INDEX
    lines = [
        BACK_TO_INDEX,
        f"<p>Of {len(verdicts)} published claims this study decides: {tally(verdicts)}.</p>",
    ]
    lines.append("<ul>")
    for verdict in verdicts:
        claim = verdict.claim
        item = (
            f'<li id="claim-{html.escape(claim.id)}">{badge(verdict.verdict)} '
            f"<b>{html.escape(claim.id)}</b> (seed {html.escape(claim.seed_number)}, "
            f"published {html.escape(published_figure(claim, 'no figure'))}): "
            f"{html.escape(verdict.sentence())}{reading_label(claim)}"
            f"{context_inline_html(replication, claim)}"
        )
        other = replication.reference_of(claim)
        if replication.reference is not None:
            # A verdict with no effect ("not measured") is said once, not twice.
            said = (
                f"{other.verdict}, {other.measured()}"
                if other is not None and other.deciding is not None
                else NOT_MEASURED
            )
            # The verdicts are compared, not the effects, which may differ widely.
            mark = (
                " <b>Verdict differs from</b>"
                if replication.differs(verdict)
                else " Same verdict as"
            )
            item += f"<br><small>{mark} the reference run: {html.escape(said)}.</small>"
        if len(verdict.pairs) > 1 or verdict.coverage():
            item += f"<br>{rests_on(verdict)}"
        if verdict.cell_ids:
            # Folded: with 8 rounds a side a claim rests on dozens of cells.
            item += (
                f"<details><summary><small>The {len(verdict.cell_ids)} cells it rests on"
                f"</small></summary><small>{html.escape(', '.join(verdict.cell_ids))}</small>"
                "</details>"
            )
        lines.append(item + "</li>")
    lines.append("</ul>")
    return "\n".join(lines)


def readme_summary(replication: Replication) -> str:
    """The README's verdict section: one paragraph per seed (what replicates on this
    machine, what does not, what this design cannot decide), then a link to the index."""
    paragraphs = seed_paragraphs(replication.listed())
    link = (
        f"Every claim with its test, regime, versions and evidence: "
        f"[reports/{replication.run_id}/index.html](reports/{replication.run_id}/index.html)."
    )
    return "\n\n".join([*paragraphs, link])


def markdown_table(replication: Replication) -> str:
    """The README's short summary: one row per claim."""
    rows = ["| seed | claim | published | measured | verdict |", "|---|---|---|---|---|"]
    for verdict in replication.verdicts:
        claim = verdict.claim
        measured = "" if verdict.effect is None else format_effect(claim, verdict.effect)
        rows.append(
            f"| {claim.seed_number} | {claim.id} | {published_figure(claim)} | {measured} "
            f"| {verdict.verdict} |"
        )
    return "\n".join(rows)


def forest_rows(replication: Replication) -> list[dict[str, object]]:
    """Per measured claim, what the forest plot draws: its effect and interval on the
    configuration it rests on, its threshold (band edges for 'within'), the published
    figure, its verdict's colour, grouped by seed."""
    rows: list[dict[str, object]] = []
    for verdict in replication.verdicts:
        claim, pair = verdict.claim, verdict.deciding
        if pair is None:
            continue
        interval = pair.interval
        rows.append(
            {
                "seed": claim.seed_number,
                "label": claim.id,
                "rate": claim.kind == "error_rate",
                "effect": pair.effect,
                "low": interval.low if interval else None,
                "high": interval.high if interval else None,
                # The edges the claim's bound tests against at this run's margin.
                "thresholds": claim.bound.edges(verdict.judging.margin)
                if claim.kind != "error_rate"
                else claim.bound.edges(),
                "published": claim.published,
                "colour": COLOURS[verdict.verdict],
                "verdict": verdict.verdict,
            }
        )
    return rows
