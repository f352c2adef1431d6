"""Verdicts over a run's looks, and the plan of the next look's rounds.

A run's `adaptive.json` (the ledger) records the knobs, the highest base round of each study
and every look taken: which claims were open, which got rounds, which cells ran. Verdicts are
recomputed from the raw files alone with it: at look k a study's rows are those of rounds up
to its base rounds plus the rounds added by then (perflab.contract.adaptive), judged at that
look's coverage and with that look's margins (each from the A/A rounds it had); a claim
keeps the verdict of the first look that decided it. A claim a look leaves undecided is judged
again at the next: on its new cells, or, where it has none, on the same cells against the
next look's margin, which the look's A/A rounds narrow (on 20261127T044109Z-quick watch's CPU
margin went from 123% at 3 A/A rounds to 20% at 8 while the claims it judged kept the first
look's verdict). The same cells with no new margin are not judged again: a stricter coverage
can only widen their interval. A run without a ledger has one look, the base one.

A claim of several configurations holds where each holds (an intersection-union test), so
a configuration that held at a look keeps that verdict at the later ones
(`with_held_configurations`), as a claim of one configuration keeps its own; the rest are
judged again. On the 20261128T071013Z-quick reference the look gave 23 claims rounds for
every configuration, 3 of them (hello's seed-method ones) where 3 of their 4 concurrencies
had held already: 6 configurations a claim for the 2 still open.

The plan of a look gives the open claims more rounds of the cells they rest on (the
configurations still open, `open_configurations`), first those the
look's rounds can decide at the effect and spread measured (perflab.analysis.power
.rounds_to_decide), then the rest, cheapest first within each, until the minutes left run
out. On data/20261126-reference 41 of the 48 undecided ratio readings had a measured effect
that no number of rounds decides at their margins (it sits in the noise zone), and
cheapest-first gave the look's rounds to such claims while one a look could settle
(watch-2writes-less-cpu-than-protobuf-cache) got none (issue 26). A claim that is settled
gets none, and a cell that no open claim rests on runs no more. A claim on a derived metric
rests on the cells its rows divide by too (perflab.analysis.frames.DIVIDED_BY_CELL): on
data/20261129T041406Z-quick the look, knowing only the TLS cells of the TLS-over-no-TLS
claims, ran C++'s TLS cells to 10 rounds and left its no-TLS ones at 5, and the claims were
judged on 5; replanned with them, it adds C++'s no-TLS rounds 6-10 (679 s to 683 s).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from perflab.analysis.decisions import DECIDING_COVERAGE
from perflab.analysis.ledger import LEDGER_FILE, Ledger, LookRecord
from perflab.analysis.power import MOST_ROUNDS, rounds_to_decide
from perflab.analysis.verdicts import (
    AT_THRESHOLD,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    Judging,
    PairResult,
    Verdict,
    combine,
    judge,
    margin_for,
)
from perflab.contract.adaptive import Adaptive, Look, configuration_of, in_round, looks, round_of
from perflab.contract.cell import CellSpec
from perflab.contract.phases import PhaseTimes, TimedCell, median_gap, run_pause_marks
from perflab.contract.rounds import round_order, round_seed

if TYPE_CHECKING:
    import pandas as pd

    from perflab.analysis.claims import Claim
    from perflab.analysis.run import Run

# The verdicts a later look does not judge again.
DECIDED = (HOLDS, FAILS)
# A study's configuration: (study, cell id without its round).
Configuration = tuple[str, str]
# (claim id, rounds) -> the margin its A/A copies would set over that many rounds; None:
# none predicted (perflab.analysis.noise.NoiseFloor.margin_at).
MarginAt = Callable[[str, int], "float | None"]


def base_rounds(run: Run) -> dict[str, int]:
    """Each study's highest round before any look: the rounds its matrix ran."""
    highest: dict[str, int] = {}
    for cell in run.cells_of(include_aa=True):
        found = round_of(cell.record["cell_id"])
        if found is not None:
            study = cell.record["study"]
            highest[study] = max(highest.get(study, 0), found)
    return highest


def judge_looks(
    frame: pd.DataFrame,
    claims: list[Claim],
    schedule: list[Look],
    rounds: dict[str, int],
    topology: str = "localhost",
    judging: Judging | None = None,
    by_study: dict[str | tuple[str, str], Judging] | None = None,
    by_look: Mapping[int, dict[str | tuple[str, str], Judging]] | None = None,
) -> list[Verdict]:
    """Each claim's verdict at the first look that settles it (else at the last look): at
    look k a study's rows are its rounds up to `rounds[study]` + the look's extra rounds,
    judged with look k's margins where `by_look` has them (its A/A rounds only), else with
    `by_study`."""
    judging, by_study, by_look = judging or Judging(), by_study or {}, by_look or {}
    settled: dict[str, Verdict] = {}
    for look in schedule:
        margins = by_look.get(look.index, by_study)
        limit = frame["study"].map(rounds).fillna(0).astype(float) + look.extra_rounds
        part = frame[frame["repeat"].astype(float) <= limit]
        # Each claim reads its own study's rows: split once per look, not masked per claim.
        study_rows = dict(tuple(part.groupby("study", sort=False)))
        no_rows = part.iloc[0:0]
        for claim in claims:
            earlier = settled.get(claim.id)
            if earlier is not None and earlier.verdict in DECIDED:
                continue
            base = judging_of(claim, margins, judging)
            rows = study_rows.get(claim.study, no_rows)
            verdict = judge(claim, rows, topology, replace(base, coverage=look.coverage))
            if earlier is not None:
                verdict = with_held_configurations(claim, verdict, earlier)
            verdict = replace(verdict, look=look.index, rounds=rounds_of(verdict))
            if earlier is None or keeps_later(earlier, verdict):
                settled[claim.id] = verdict
    return [settled[claim.id] for claim in claims]


def pair_key(pair: PairResult) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in pair.key.items()))


def with_held_configurations(claim: Claim, later: Verdict, earlier: Verdict) -> Verdict:
    """A ratio claim's configurations that held at an earlier look keep that verdict at a
    later one; the rest are the later look's. A claim holds where every configuration holds
    (an intersection-union test: each configuration's own error bounds the claim's), and
    each configuration's error over the looks is the family error of one configuration, so
    one that held is settled as a claim of one configuration would be: judged again at a
    stricter coverage it could only lose the decision its rounds had already made, and the
    look's rounds go to the configurations still open (`open_configurations`)."""
    if claim.kind != "ratio" or not later.pairs:
        return later
    held = {pair_key(p): p for p in earlier.pairs if p.verdict == HOLDS}
    if not held:
        return later
    pairs = [held.get(pair_key(pair), pair) for pair in later.pairs]
    verdict, reason, deciding = combine(claim, pairs, later.judging)
    return replace(later, verdict=verdict, reason=reason, deciding=deciding, pairs=tuple(pairs))


def keeps_later(earlier: Verdict, later: Verdict) -> bool:
    """Whether a later look's verdict of an undecided claim replaces the earlier one. New
    cells: always. The same cells (the look gave it none, or only to one side of a pairing,
    which verdicts.shared_rounds leaves out) at a stricter coverage can only widen the
    interval, so the later verdict counts only where the look's narrower margin decides it."""
    if set(later.cell_ids) != set(earlier.cell_ids):
        return True
    return later.verdict in DECIDED and later.judging.margin < earlier.judging.margin


def judging_of(
    claim: Claim, by_study: dict[str | tuple[str, str], Judging], default: Judging
) -> Judging:
    """The margin a claim is judged with: its own kind's on its metric (under its id,
    perflab.analysis.noise), else its metric's own, else its study's, else the default."""
    return (
        by_study.get(claim.id)
        or by_study.get((claim.study, claim.metric))
        or by_study.get(claim.study, default)
    )


def rounds_of(verdict: Verdict) -> int | None:
    """The rounds the cells of a verdict's deciding configuration ran in (an error rate's
    configuration may hold several cells a round: its rounds, not its cells)."""
    pair = verdict.deciding
    if pair is None:
        return None
    return len({round_of(cell) for cell in pair.cell_ids} - {None}) or None


def judge_run_looks(
    run: Run,
    claims: list[Claim],
    judging: Judging | None = None,
    by_study: dict[str | tuple[str, str], Judging] | None = None,
    by_look: Mapping[int, dict[str | tuple[str, str], Judging]] | None = None,
) -> list[Verdict]:
    """Every claim's verdict over the looks the run's ledger records (one look without);
    `by_look`: each look's own margins (perflab.analysis.noise.margins_by_look)."""
    judging = judging or Judging()
    ledger = run.ledger
    frame = run.judged_frame(claims)
    if ledger is None:
        # Without a ledger every round is the base look's.
        schedule = [Look(0, 0, judging.coverage)]
        frame_rounds = frame.groupby("study")["repeat"].max() if not frame.empty else {}
        rounds = {str(study): int(n) for study, n in dict(frame_rounds).items()}
    else:
        schedule, rounds = ledger.looks(), ledger.base_rounds
    return judge_looks(frame, claims, schedule, rounds, run.topology, judging, by_study, by_look)


def cell_gap_seconds(run: Run, records: list[dict[str, Any]]) -> float:
    """What one more cell costs beyond its own seconds: the run's own median gap between two
    cells of a study (one runner process runs a study's round, so about 0.01 s here; it was
    0.6 s when Ansible ran each cell as a task, and a constant kept from then priced the
    reference run's look at 688 s for the 445 its cells took)."""
    timed = [
        TimedCell(r["study"], r["start"], r["end"], PhaseTimes(total=cell_seconds(r)))
        for r in records
    ]
    return median_gap(timed, run_pause_marks(run.folder))


def cell_seconds(record: dict[str, Any]) -> float:
    """What a cell took, from its cell.json's start to its end."""
    took = datetime.fromisoformat(record["end"]) - datetime.fromisoformat(record["start"])
    return took.total_seconds()


def round_records(run: Run) -> list[dict[str, Any]]:
    """The cell.json of every complete cell in a round (A/A cells too, probes left out):
    for a plan's costs, its templates and the minutes spent."""
    return [
        cell.record
        for cell in run.cells_of(include_aa=True)
        if round_of(cell.record["cell_id"]) is not None
    ]


@dataclass(frozen=True)
class Latest:
    """A configuration's highest round so far, its spec to repeat, and what one more of its
    cells should take."""

    round: int
    # The mean of what its cells took so far, not the last one's: a look's cost is a sum of
    # cells, and some configurations alternate between fast and slow cells (a 10 GiB payload
    # fills in 6 s or in 20 s as the VM's host hands memory back, and the reference run's
    # look, priced at its last cell's 12.6 s, ran 7 of them at 22.6 s and overran its cap).
    seconds: float
    spec: dict[str, Any]


def latest_rounds(records: list[dict[str, Any]]) -> dict[Configuration, Latest]:
    """Each configuration's highest round among `records` (round_records), priced at the
    mean seconds of its cells there."""
    highest: dict[Configuration, tuple[int, dict[str, Any]]] = {}
    took: dict[Configuration, list[float]] = {}
    for record in records:
        found = round_of(record["cell_id"]) or 0  # round_records keeps cells in a round only
        key = (record["study"], configuration_of(record["cell_id"]))
        took.setdefault(key, []).append(cell_seconds(record))
        if key not in highest or highest[key][0] < found:
            highest[key] = (found, record["spec"])
    return {
        key: Latest(found, statistics.fmean(took[key]), spec)
        for key, (found, spec) in highest.items()
    }


def configurations_of(study: str, cell_ids: Iterable[str]) -> set[Configuration]:
    return {(study, configuration_of(cell)) for cell in cell_ids}


def claim_configurations(verdict: Verdict) -> set[Configuration]:
    return configurations_of(verdict.claim.study, verdict.cell_ids)


def open_configurations(verdict: Verdict) -> set[Configuration]:
    """The configurations a look's rounds go to for a claim: those of its configurations
    that have not held (one that held keeps its verdict, `with_held_configurations`); every
    one of an error rate, whose configurations are judged together."""
    if verdict.claim.kind != "ratio":
        return claim_configurations(verdict)
    pairs = [pair for pair in verdict.pairs if pair.verdict != HOLDS] or list(verdict.pairs)
    return configurations_of(verdict.claim.study, (cell for p in pairs for cell in p.cell_ids))


def settles_within(
    verdict: Verdict,
    rounds: int,
    margin: float | None = None,
    coverage: float = DECIDING_COVERAGE,
) -> bool:
    """Whether `rounds` rounds decide a claim with TARGET_POWER chance were the effect its
    deciding configuration measured the truth, at the spread it measured (the power the
    index states, at the deciding coverage: an ordering of the look's minutes, not a
    verdict), judged with `margin` (the one its A/A copies would set over those rounds,
    `MarginAt`; None: the margin it was judged with), its intervals at `coverage`. A claim
    whose power cannot be computed (not paired, an error rate) counts as settling:
    nothing says it will not."""
    pair = verdict.deciding
    if verdict.claim.kind != "ratio" or pair is None or pair.spread is None:
        return True
    if margin is None:
        margin = margin_for(verdict.claim, verdict.judging)
    needed = rounds_to_decide(
        verdict.claim.bound, pair.effect, pair.spread, margin, coverage=coverage
    )
    return needed is not None and needed <= rounds


def settling(
    rounds: Mapping[str, int],
    margin_at: MarginAt | None = None,
    coverage: float = DECIDING_COVERAGE,
) -> Callable[[Verdict], bool]:
    """Whether a look that brings each study to `rounds` settles a claim (`settles_within`),
    at the margin its A/A copies would set over those rounds where `margin_at` predicts
    one (never wider than the margin it has now: the prediction rests on the same A/A
    rounds), its intervals at `coverage` (the base look's by default)."""

    def settles(verdict: Verdict) -> bool:
        n = rounds.get(verdict.claim.study, 0)
        now = margin_for(verdict.claim, verdict.judging)
        if verdict.claim.kind != "ratio":
            return settles_within(verdict, n, now, coverage)
        margin = margin_by_rounds(margin_at, verdict.claim.id, now)(n)
        return settles_within(verdict, n, margin, coverage)

    return settles


def margin_by_rounds(
    margin_at: MarginAt | None, claim_id: str, now: float
) -> Callable[[int], float]:
    """The margin a claim would be judged with over a number of rounds: the one its A/A
    copies would set (`margin_at`), never wider than the margin `now` it has (the
    prediction rests on the same A/A rounds); `now` where none is predicted."""

    def at(rounds: int) -> float:
        predicted = margin_at(claim_id, rounds) if margin_at else None
        return now if predicted is None else min(predicted, now)

    return at


def beyond_any_design(verdicts: list[Verdict], margin_at: MarginAt | None) -> list[Verdict]:
    """The undecided readings with a paired spread that no design up to MOST_ROUNDS rounds
    would decide with TARGET_POWER chance were the effect measured the truth, even at the
    margin their A/A copies would set over as many rounds: their effect sits in the noise
    zone around the threshold, where more rounds narrow the interval but never move it
    clear (the rest a plan can buy, perflab.analysis.planner)."""
    undecided = [v for v in verdicts if v.verdict in (INCONCLUSIVE, AT_THRESHOLD)]
    paired = [v for v in undecided if with_spread(v)]
    settles = settling({v.claim.study: MOST_ROUNDS for v in paired}, margin_at)
    return [v for v in paired if not settles(v)]


def with_spread(verdict: Verdict) -> bool:
    """Whether a reading's power can be computed: a ratio with a paired spread."""
    pair = verdict.deciding
    return verdict.claim.kind == "ratio" and pair is not None and pair.spread is not None


def choose(
    open_verdicts: list[Verdict],
    cost: dict[Configuration, float],
    budget_s: float,
    settles: Callable[[Verdict], bool] | None = None,
    needs: Callable[[Verdict], set[Configuration]] = open_configurations,
) -> tuple[list[Verdict], set[Configuration]]:
    """The open claims that get more rounds, those `settles` says the look decides first,
    cheapest first within each (`cost`: the seconds a configuration's missing rounds take;
    one two claims share is paid once), while the seconds they add fit in `budget_s`.
    `needs`: the configurations a claim's rounds take (its own; with its A/A copies)."""
    chosen: list[Verdict] = []
    configurations: set[Configuration] = set()
    spent = 0.0

    def added(verdict: Verdict) -> float:
        return sum(cost.get(key, 0.0) for key in needs(verdict) - configurations)

    first = {v.claim.id for v in open_verdicts if settles is None or settles(v)}

    def order(verdict: Verdict) -> tuple[bool, float, str]:
        return verdict.claim.id not in first, added(verdict), verdict.claim.id

    for verdict in sorted(open_verdicts, key=order):
        extra = added(verdict)
        if not claim_configurations(verdict) or spent + extra > budget_s:
            continue
        chosen.append(verdict)
        configurations |= needs(verdict)
        spent += extra
    return chosen, configurations


def spent_seconds(records: list[dict[str, Any]], rounds: dict[str, int], gap_s: float) -> float:
    """Seconds the adaptive rounds have taken so far (cells past their study's base rounds),
    each with the run's gap between cells (`gap_s`)."""
    return sum(
        cell_seconds(record) + gap_s
        for record in records
        if record["study"] in rounds
        and (round_of(record["cell_id"]) or 0) > rounds[record["study"]]
    )


@dataclass(frozen=True)
class Plan:
    """What a look runs: its cells in run order, and the progress line that says why."""

    ledger: Ledger
    cells: list[CellSpec]
    progress: str


def plan_look(
    run: Run,
    claims: list[Claim],
    adaptive: Adaptive,
    index: int,
    judging: Judging,
    by_study: dict[str | tuple[str, str], Judging] | None = None,
    aa_of: Mapping[str, set[Configuration]] | None = None,
    by_look: Mapping[int, dict[str | tuple[str, str], Judging]] | None = None,
    margin_at: MarginAt | None = None,
) -> Plan:
    """Look `index`'s rounds (1 for the first look after the base rounds), recorded in the
    run's ledger; a look already recorded is planned again as recorded (a resume). A claim
    given rounds gives them to its A/A copies too (`aa_of`, claim id -> their keys,
    perflab.analysis.noise), paid once per look like any shared configuration: its margin
    then rests on as many rounds as its effect (the far end of a t interval over 5 rounds
    is 2.13 s / sqrt(5) from the drift, over 10 rounds 1.83 s / sqrt(10)). `margin_at`
    predicts that margin, so a claim is priced at the margin the look's A/A rounds will
    give it, and a claim at its threshold is open where that margin would settle it."""
    ledger = run.ledger or Ledger(adaptive, judging.coverage, base_rounds(run))
    if ledger.adaptive != adaptive:
        raise ValueError(
            f"{run.folder / LEDGER_FILE} was planned with {asdict(ledger.adaptive)}, not "
            f"{asdict(adaptive)}: resume a run with the knobs it started with"
        )
    recorded = next((look for look in ledger.taken if look.index == index), None)
    if recorded is not None:
        return Plan(ledger, resumed_cells(run, recorded), f"look {index}: resumed as planned")
    stop = why_no_look(ledger, index)
    if stop:
        return Plan(ledger, [], f"look {index}: none, {stop}")
    frame = run.judged_frame(claims)
    verdicts = judge_looks(
        frame, claims, ledger.looks(), ledger.base_rounds, run.topology, judging, by_study, by_look
    )
    look = looks(adaptive, ledger.base_coverage)[index]
    rounds = {study: n + look.extra_rounds for study, n in ledger.base_rounds.items()}
    settles = settling(rounds, margin_at)
    still_open = open_for_look(verdicts, settles)
    records = round_records(run)
    gap_s = cell_gap_seconds(run, records)
    left_s = adaptive.max_minutes * 60 - spent_seconds(records, ledger.base_rounds, gap_s)
    chosen, cells, estimate = look_cells(
        latest_rounds(records), ledger, look, still_open, left_s, gap_s, aa_of or {}, settles
    )
    cells = round_order(cells, round_seed(cells[0].run_id if cells else "", f"adaptive/{index}"))
    most_rounds = max(ledger.base_rounds.values(), default=0) + look.extra_rounds
    record = LookRecord(
        index,
        look.extra_rounds,
        look.coverage,
        sorted(v.claim.id for v in still_open),
        sorted(v.claim.id for v in chosen),
        [f"{cell.study}/{cell.cell_id}" for cell in cells],
        round(estimate, 1),
        look_note(still_open, chosen, most_rounds, estimate, left_s),
    )
    ledger.taken.append(record)
    ledger.write(run.folder)
    return Plan(ledger, cells, f"look {index} of {adaptive.max_looks}: {record.note}")


def open_for_look(verdicts: list[Verdict], settles: Callable[[Verdict], bool]) -> list[Verdict]:
    """The claims a look may give rounds to: every inconclusive one, and one at its
    threshold where the look would settle it (its A/A rounds narrowing the margin whose
    zone holds its interval); one at its threshold that the look cannot move stays put."""
    return [
        verdict
        for verdict in verdicts
        if verdict.verdict == INCONCLUSIVE or (verdict.verdict == AT_THRESHOLD and settles(verdict))
    ]


def look_cells(
    latest: dict[Configuration, Latest],
    ledger: Ledger,
    look: Look,
    still_open: list[Verdict],
    left_s: float,
    gap_s: float,
    aa_of: Mapping[str, set[Configuration]] | None = None,
    settles: Callable[[Verdict], bool] | None = None,
) -> tuple[list[Verdict], list[CellSpec], float]:
    """The open claims the look's rounds go to, their cells and the seconds they should take
    (each cell its configuration's mean seconds so far and `gap_s`, the run's gap between
    cells).
    Each configuration catches up to the look's rounds: one first chosen at a later look gets
    every round it missed, or the look could not reach its coverage on it."""
    aa_of = aa_of or {}

    def needs(verdict: Verdict) -> set[Configuration]:
        own = open_configurations(verdict)
        return own | {key for key in aa_of.get(verdict.claim.id, set()) if key in latest}

    missing = {
        key: range(last.round + 1, ledger.base_rounds.get(key[0], 0) + look.extra_rounds + 1)
        for key, last in latest.items()
    }
    cost = {key: len(missing[key]) * (last.seconds + gap_s) for key, last in latest.items()}
    rounds = {study: n + look.extra_rounds for study, n in ledger.base_rounds.items()}
    chosen, configurations = choose(still_open, cost, left_s, settles or settling(rounds), needs)
    cells = [
        in_round(CellSpec.from_dict(latest[key].spec), repeat)
        for key in sorted(configurations)
        for repeat in missing[key]
    ]
    return chosen, cells, sum(cost[key] for key in configurations)


def why_no_look(ledger: Ledger, index: int) -> str:
    """Why look `index` takes no rounds ('' if it may); looks run in order."""
    if index > ledger.adaptive.max_looks:
        return f"the cap is {ledger.adaptive.max_looks} look(s)"
    if index != len(ledger.taken) + 1:
        raise ValueError(
            f"look {index} planned after {len(ledger.taken)} look(s): looks run in order"
        )
    if ledger.taken and not ledger.taken[-1].cells:
        return "the look before it ran no rounds"
    return ""


def look_note(
    still_open: list[Verdict], chosen: list[Verdict], rounds: int, estimate: float, left_s: float
) -> str:
    """What a look does, for the progress log: the open claims, those that get rounds (up
    to `rounds` a side) and those the minutes left leave as they are."""
    if not still_open:
        return "no claim is open"
    names = ", ".join(verdict.claim.id for verdict in chosen) or "none"
    given = {verdict.claim.id for verdict in chosen}
    left_out = [v.claim.id for v in still_open if v.claim.id not in given]
    return (
        f"{len(still_open)} claim(s) open; {len(chosen)} get more rounds, up to {rounds} a "
        f"side, about {estimate / 60:.1f} of the {max(left_s, 0) / 60:.1f} minutes left: "
        f"{names}" + (f"; left as they are: {', '.join(left_out)}" if left_out else "")
    )


def resumed_cells(run: Run, recorded: LookRecord) -> list[CellSpec]:
    """A recorded look's cells, rebuilt from the configurations' templates (a complete cell
    is skipped by the runner, so a resume runs only what is missing)."""
    wanted: dict[Configuration, list[int]] = {}
    for name in recorded.cells:
        study, cell_id = name.split("/", 1)
        wanted.setdefault((study, configuration_of(cell_id)), []).append(round_of(cell_id) or 0)
    latest = latest_rounds(round_records(run))
    by_name = {
        f"{study}/{configuration}-r{repeat}": in_round(
            CellSpec.from_dict(latest[(study, configuration)].spec), repeat
        )
        for (study, configuration), repeats in wanted.items()
        if (study, configuration) in latest
        for repeat in repeats
    }
    return [by_name[name] for name in recorded.cells if name in by_name]
