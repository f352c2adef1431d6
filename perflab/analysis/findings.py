"""What a replication reader needs beside each verdict, and what each seed's verdicts add up to.

Per claim: the test in words (the metric, which group is the numerator), the regime its
cells ran in (a simulated far S3, a proxy standing in for a network, a scaled folder, the
method), the library versions of the run and of the seed, and whether the verdict depends
on the library stack. Per seed: one paragraph saying which of its conclusions replicate on
this machine, which do not, and which this design cannot decide, each with its figure. The
regimes and versions are data (data/reference/readers.yml); no study is named here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.analysis.claims import CURRENT_STACK, DIRECTION, Claim, Selector
from perflab.analysis.verdicts import (
    AT_THRESHOLD,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    Verdict,
    format_effect,
)

READERS_FILE = "readers.yml"


@dataclass(frozen=True)
class Readers:
    """data/reference/readers.yml: regimes by parameter value, libraries per study, the
    versions each seed measured and those of each library stack."""

    regimes: dict[str, dict[str, Any]] = field(default_factory=dict)
    libraries: dict[str, list[str]] = field(default_factory=dict)
    seed_versions: dict[str, dict[str, Any]] = field(default_factory=dict)
    stacks: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, reference_dir: str | Path) -> Readers:
        import yaml

        path = Path(reference_dir) / READERS_FILE
        if not path.is_file():
            return cls()
        raw = yaml.safe_load(path.read_text()) or {}
        unknown = set(raw) - {"regimes", "libraries", "seed_versions", "stacks"}
        if unknown:
            raise ValueError(f"{path}: unknown key(s) {sorted(unknown)}")
        return cls(
            regimes=raw.get("regimes") or {},
            libraries=raw.get("libraries") or {},
            seed_versions=raw.get("seed_versions") or {},
            stacks={
                name: " ".join(str(text).split())
                for name, text in (raw.get("stacks") or {}).items()
            },
        )


def stated_test(claim: Claim) -> str:
    """The test with its metric and its sides: 'rps, grpcio_sync_w1 (numerator) over
    grpclib_asyncio (denominator), per concurrency: ratio > 1'."""
    if claim.kind == "error_rate":
        return f"{claim.metric} per call of {claim.numerator.describe()}: {claim.expectation()}"
    assert claim.denominator is not None
    ours, theirs = apart(claim.numerator, claim.denominator)
    per = f", per {', '.join(claim.pair_by)}" if claim.pair_by else ""
    return (
        f"{claim.metric}, {ours} (numerator) over {theirs} (denominator){per}: "
        f"{claim.expectation()}"
    )


def apart(numerator: Selector, denominator: Selector) -> tuple[str, str]:
    """What tells the two groups apart (what both share is the regime's business)."""
    num, den = numerator.terms(), denominator.terms()
    ours = [term for term in num if term not in den]
    theirs = [term for term in den if term not in num]
    return ", ".join(ours) or "all", ", ".join(theirs) or "all"


def regime_lines(claim: Claim, readers: Readers, topology: str) -> list[str]:
    """One line per regime the claim's cells ran in: each parameter value of both groups
    that readers.yml describes, then what the profile scaled down (`scaled`)."""
    values: dict[str, set[str]] = {}
    sides = [claim.numerator] + ([claim.denominator] if claim.denominator else [])
    for side in sides:
        for name, value in side.params.items():
            for one in value if isinstance(value, list) else [value]:
                values.setdefault(name, set()).add(str(one))
    if claim.method:
        values.setdefault("method", set()).add(claim.method)
    lines = []
    for name, described in readers.regimes.items():
        for value in sorted(values.get(name, ())):
            text = described.get(value)
            if isinstance(text, dict):
                text = text.get(topology)
            if text:
                lines.append(" ".join(str(text).split()))
    if claim.scaled:
        lines.append("Scaled folder: " + " ".join(claim.scaled.split()))
    return lines


def versions_line(claim: Claim, readers: Readers, manifest: dict[str, Any]) -> str:
    """'Libraries: this run grpcio 1.85.1, ...; the seed grpcio 1.28.1 (...)' for a claim on
    a study whose libraries readers.yml lists; '' for any other."""
    packages = readers.libraries.get(claim.study)
    if not packages:
        return ""
    if claim.stack and claim.stack != CURRENT_STACK:
        # What the stack's venv held where its role recorded it, else what readers.yml pins.
        held = (run_stack(manifest, claim.stack) or {}).get("python_packages") or {}
        said = ", ".join(f"{p} {held[p]}" for p in packages if p in held)
        ours = (said or readers.stacks.get(claim.stack, claim.stack)) + ", the seed's stack"
    else:
        installed = run_packages(manifest)
        ours = (
            ", ".join(f"{p} {installed[p]}" for p in packages if p in installed) or "not recorded"
        )
    seed = readers.seed_versions.get(claim.seed, {})
    line = f"Libraries: this run {ours}"
    if seed.get("versions"):
        line += f"; the seed {seed['versions']}"
        stack = run_stack(manifest, str(seed.get("stack") or ""))
        why = why_not_run(seed.get("wheels") or {}, run_python(manifest), stack)
        if why:
            line += f" ({why})"
    return line + "."


def why_not_run(
    wheels: dict[str, list[str]], python: str, stack: dict[str, Any] | None = None
) -> str:
    """Why the run has no cells on the seed's pinned versions, from the Python versions each
    has wheels for (readers.yml `wheels`), the run's Python (its manifest) and what the
    seed's stack role found on the hosts (`stack`, run_stack; None: the run predates it):
    'not run here: grpcio 1.28.1 has wheels for Python 2.7, ..., 3.8 only; this run's
    Python is 3.11.7, and the host has none of them (looked for python3.8, ...)'. Where the
    role installed the pins, what they ran on instead."""
    if not wheels:
        return ""
    if stack and stack.get("installed"):
        pins = ", ".join(wheels)
        return (
            f"{pins} installed here in a venv of its own on Python {stack.get('python')}: "
            "the -seed-stack readings"
        )
    none_here = ""
    if stack is not None:
        looked = ", ".join(map(str, stack.get("looked_for") or [])) or "nothing"
        none_here = f", and the host has none of them (looked for {looked})"
    if not python:
        return "not run here; this run's manifest records no Python version to check against"
    minor = ".".join(python.split(".")[:2])
    missing = [(pin, pythons) for pin, pythons in wheels.items() if minor not in map(str, pythons)]
    if not missing:
        pins = ", ".join(wheels)
        return f"{pins} has wheels for this run's Python {python}, but no cell of this run ran it"
    said = "; ".join(
        f"{pin} has wheels for Python {', '.join(map(str, pythons))} only"
        for pin, pythons in missing
    )
    return f"not run here: {said}; this run's Python is {python}{none_here}"


def run_stack(manifest: dict[str, Any], name: str) -> dict[str, Any] | None:
    """What the role of library stack `name` recorded over the run's hosts (the manifest's
    `versions.stacks`): installed only where every host that recorded it installed it;
    None where no host recorded it (a run before the role, or no stack named)."""
    records = (
        [
            ((host or {}).get("versions") or {}).get("stacks", {}).get(name)
            for host in (manifest.get("hosts") or {}).values()
        ]
        if name
        else []
    )
    found = [record for record in records if record]
    if not found:
        return None
    missing = [record for record in found if not record.get("installed")]
    return missing[0] if missing else found[0]


def run_python(manifest: dict[str, Any]) -> str:
    """The Python version the run's hosts recorded ('3.11.7'); several joined; '' if none."""
    found = {
        str(((host or {}).get("versions") or {}).get("python") or "")
        for host in (manifest.get("hosts") or {}).values()
    } - {""}
    return " and ".join(sorted(found))


def run_packages(manifest: dict[str, Any]) -> dict[str, str]:
    """Python package -> version over the run's hosts (the manifest's `versions`)."""
    found: dict[str, str] = {}
    for host in (manifest.get("hosts") or {}).values():
        found.update(((host or {}).get("versions") or {}).get("python_packages") or {})
    return found


def stack_sentence(verdict: Verdict, verdicts: list[Verdict]) -> str:
    """'Depends on the stack: holds on today's libraries, does not hold on the seed's.' where
    the same claim on the other library stack has another verdict; '' otherwise."""
    claim = verdict.claim
    if not claim.stack:
        return ""
    current_id = claim.stack_of or claim.id
    copies = {v.claim.stack: v for v in verdicts if (v.claim.stack_of or v.claim.id) == current_id}
    if len(copies) < 2 or len({v.verdict for v in copies.values()}) < 2:
        return ""
    said = ", ".join(
        f"{v.verdict} on {'today' if stack == CURRENT_STACK else 'the seed'}'s libraries"
        for stack, v in sorted(copies.items(), key=lambda item: item[0] != CURRENT_STACK)
    )
    return f"Depends on the stack: {said}."


# A seed's verdicts, grouped as its paragraph says them.
REPLICATE = (HOLDS,)
DO_NOT = (FAILS,)
UNDECIDED = (INCONCLUSIVE, AT_THRESHOLD)


def seed_paragraph(seed: str, verdicts: list[Verdict]) -> str:
    """One paragraph on one seed's claims: what replicates on this machine, what does not,
    what this design cannot decide and what the run did not measure, each with its figure."""
    mine = [v for v in verdicts if v.claim.seed == seed]
    studies = ", ".join(dict.fromkeys(v.claim.study for v in mine))
    sentences = [f"Seed {seed.split('_')[0]} ({studies}; {len(mine)} claims)."]
    groups = [
        (REPLICATE, "Replicate on this machine"),
        (DO_NOT, "Do not replicate"),
        (UNDECIDED, "This design cannot decide (inconclusive or at the threshold)"),
        ((NOT_MEASURED,), "Not measured by this run"),
    ]
    for kinds, lead in groups:
        chosen = [v for v in mine if v.verdict in kinds]
        listed = "; ".join(figure(v) for v in chosen) if chosen else "none"
        sentences.append(f"{lead} ({len(chosen)}): {listed}.")
    if any(size_differs(v) for v in mine):
        sentences.append(
            "A direction claim replicates on its direction: where the published figure lies "
            "outside the run's interval, the size does not."
        )
    return " ".join(sentences)


def figure(verdict: Verdict) -> str:
    """'hello-x 1.51x (published 1.10x)': a claim with its measured and published figure."""
    claim = verdict.claim
    parts = [claim.id]
    if verdict.effect is not None:
        parts.append(format_effect(claim, verdict.effect))
    if claim.published is not None:
        apart = ", outside its interval" if size_differs(verdict) else ""
        parts.append(f"(published {published_text(claim)}{apart})")
    if verdict.verdict == NOT_MEASURED and claim.needs:
        parts.append(f"(its cells need {claim.needs})")
    return " ".join(parts)


def size_differs(verdict: Verdict) -> bool:
    """Whether a decided direction claim's published figure lies outside the run's
    interval: the direction replicates (or not), the size does not, which a reader of
    '0.000951x (published 0.31x)' under 'replicate' must be told."""
    claim, interval = verdict.claim, verdict.interval
    if claim.published is None or interval is None or claim.bound.test != DIRECTION:
        return False
    decided = verdict.verdict in (HOLDS, FAILS)
    return decided and not interval.low <= claim.published <= interval.high


def published_text(claim: Claim) -> str:
    """The seed's figure as claims.yml writes it ('0.31x', not '0.310x': no digits the seed
    did not give); an error rate as a percentage. '' without a figure."""
    if claim.published is None:
        return ""
    if claim.kind == "error_rate":
        return format_effect(claim, claim.published)
    return f"{claim.published:g}x"


def seed_paragraphs(verdicts: list[Verdict]) -> list[str]:
    """One paragraph per seed, in seed order."""
    return [seed_paragraph(seed, verdicts) for seed in sorted({v.claim.seed for v in verdicts})]
