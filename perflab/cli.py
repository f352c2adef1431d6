"""`python -m perflab <command>`: the entry points Ansible and make call."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from perflab.contract.cell import CellRecord, CellSpec, is_complete
from perflab.contract.runid import validate_run_id
from perflab.host.impls import HostPaths, discover
from perflab.host.runner import now_iso, say

if TYPE_CHECKING:
    from collections.abc import Callable

    from perflab.analysis.run import Hooks
    from perflab.host.runner import CellRunner


def host_paths(args: argparse.Namespace) -> HostPaths:
    return HostPaths(home=Path(args.home).expanduser(), src=Path(args.src).expanduser())


def log_progress(path: Path, line: str) -> None:
    with path.open("a") as handle:
        handle.write(f"{now_iso()} {line}\n")


def read_spec(raw: object) -> CellSpec:
    """A cell spec from its JSON object; its run id names a folder under --runs."""
    spec = CellSpec.from_dict(raw)  # type: ignore[arg-type]
    validate_run_id(spec.run_id)
    return spec


def make_runner(args: argparse.Namespace) -> CellRunner | None:
    """The runner the cell options ask for; None (said on stderr) when they disagree."""
    from perflab.host.runner import CellRunner

    if not (bool(args.server_agent) == bool(args.server_host) == bool(args.agent_token_file)):
        print(
            f"perflab {args.command}: --server-agent, --server-host and --agent-token-file "
            "go together",
            file=sys.stderr,
        )
        return None
    return CellRunner(
        host_paths(args),
        Path(args.runs).expanduser(),
        args.server_agent,
        args.server_host,
        Path(args.agent_token_file).expanduser() if args.agent_token_file else None,
    )


def run_logged(
    runner: CellRunner, spec: CellSpec, progress_label: str, keep_server: bool = False
) -> None:
    """Runs one cell (skipped when complete), its start and end in the run's progress.log
    (Ansible prints a loop item only when it ends: this file says what runs now). The cell's
    teardown may still run when this returns (CellRunner.begin): its end is logged when its
    folder is complete, after the next cell's start."""
    label = f"{progress_label} {spec.study}/{spec.cell_id}".strip()
    progress = runner.runs_root / spec.run_id / "progress.log"
    progress.parent.mkdir(parents=True, exist_ok=True)
    log_progress(progress, f"start {label}")

    def end(line: str) -> None:
        log_progress(progress, f"end   {line}")
        say(line)

    def ended(record: CellRecord) -> None:
        first_error = record.error.splitlines()[0] if record.error else ""
        end(f"{label}: {record.status}" + (f": {first_error}" if first_error else ""))

    if not runner.begin(spec, keep_server, ended):
        end(f"{label}: complete already, skipped")


def specs_and_runner(
    args: argparse.Namespace, raw: str
) -> tuple[list[CellSpec], CellRunner] | None:
    """The cell specs in raw (one JSON object, or a list of them) and the runner; None when
    either is refused (said on stderr, naming the command)."""
    try:
        loaded = json.loads(raw)
        specs = [read_spec(item) for item in (loaded if isinstance(loaded, list) else [loaded])]
    except (json.JSONDecodeError, TypeError, KeyError, ValueError) as exc:
        print(f"perflab {args.command}: bad cell spec: {exc}", file=sys.stderr)
        return None
    runner = make_runner(args)
    return (specs, runner) if runner is not None else None


def cmd_cell(args: argparse.Namespace) -> int:
    found = specs_and_runner(args, sys.stdin.read() if args.spec == "-" else args.spec)
    if found is None:
        return 2
    specs, runner = found
    if len(specs) != 1:
        print("perflab cell: one cell spec, not a list (perflab cells runs lists)", file=sys.stderr)
        return 2
    try:
        run_logged(runner, specs[0], args.progress)
    finally:
        runner.settle()
    return 0


def cmd_cells(args: argparse.Namespace) -> int:
    """Runs a list of cells in one process, in order, each as `cell` would (complete cells
    skipped). SIGTERM or SIGINT lets the running cell finish and stops before the next:
    a rerun of the same list goes on from there, no cell lost or run twice. So does the end
    of the process that started it: Ansible's Ctrl-C ends the task's process but not this
    one (its own session), which would otherwise run on beside the rerun."""
    import signal

    found = specs_and_runner(
        args, sys.stdin.read() if args.specs == "-" else Path(args.specs).read_text()
    )
    if found is None:
        return 2
    specs, runner = found
    # Noted, and the signals caught, before any wait for the lock: a runner that waited
    # while its Ansible was stopped must not go on to run the round unattended.
    parent = os.getppid()
    stop: list[int] = []
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda signum, _frame: stop.append(signum))

    def stopped(run_id: str, where: str) -> int:
        """Says why and where the runner stops (progress.log's pause mark); its exit code."""
        runner.settle()  # the cell before is complete, and said so, before the stop is
        why = f"by signal {stop[0]}" if stop else f"(its parent, pid {parent}, ended)"
        line = f"stopped {why} {where}"
        log_progress(runner.runs_root / run_id / "progress.log", line)
        say(f"perflab cells: {line}")
        return 128 + (stop[0] if stop else signal.SIGHUP)

    if specs and not one_runner_at_a_time(
        runner.runs_root / specs[0].run_id, lambda: not stop and os.getppid() == parent
    ):
        return stopped(specs[0].run_id, "while waiting for the run's other runner")
    total = args.of or len(specs) + args.first - 1
    complete = [spec for spec in specs if is_complete(runner.cell_dir(spec))]
    if complete:
        # The mark perflab.contract.phases reads: the time since the last cell is a pause.
        log_progress(
            runner.runs_root / specs[0].run_id / "progress.log",
            f"resumed: {len(complete)} of these {len(specs)} cells complete already",
        )
    done = {id(spec) for spec in complete}
    to_run = [spec for spec in specs if id(spec) not in done]
    # A cell keeps its server for the next cell to run when that one shares it.
    pairs = zip(to_run, to_run[1:], strict=False)
    keeps = {id(spec): spec.hands_server_to(after) for spec, after in pairs}
    try:
        for index, spec in enumerate(specs, start=args.first):
            if stop or os.getppid() != parent:
                return stopped(spec.run_id, f"before {spec.study}/{spec.cell_id}")
            label = " ".join(filter(None, [args.progress, f"[{index}/{total}]"]))
            run_logged(runner, spec, label, keeps.get(id(spec), False))
    finally:
        runner.release()
    return 0


# Held by the runner of a run for its lifetime (perflab cells); released when it exits.
RUNNER_LOCK = ".runner.lock"


# How often a waiting runner tries the lock again (and checks it is still wanted).
LOCK_POLL_S = 0.5


def one_runner_at_a_time(run_dir: Path, still_wanted: Callable[[], bool]) -> bool:
    """Waits until no other runner of this run is running, then holds the run's lock: a
    rerun right after Ctrl-C finds the stopped runner still finishing its cell (minutes for
    a far-S3 or 10 GiB cell), and two at once would share the cores and a cell's folder.
    False, without the lock, where the wait stopped being wanted (a signal, its parent gone)."""
    import fcntl

    run_dir.mkdir(parents=True, exist_ok=True)
    handle = (run_dir / RUNNER_LOCK).open("a")
    said = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if not still_wanted():
                handle.close()
                return False
            if not said:
                line = "waiting for the run's other runner to finish its cell and stop"
                log_progress(run_dir / "progress.log", line)
                say(f"perflab cells: {line}")
                said = True
            time.sleep(LOCK_POLL_S)
    # Kept open (and locked) until the process ends: the lock is the open file's.
    _held_locks.append(handle)
    return True


_held_locks: list[object] = []


class AbRefused(Exception):
    """What `perflab ab` refuses before any cell runs, said in one line."""


def ab_overrides(args: argparse.Namespace) -> dict[str, dict]:
    """Each arm's YAML mapping, laid over the profile by perflab.host.ab."""
    import yaml

    from perflab.host.ab import ARMS

    if args.pairs < 2:
        raise AbRefused("--pairs: a paired interval needs at least 2")
    overrides = {}
    for arm in ARMS:
        try:
            overrides[arm] = yaml.safe_load(getattr(args, arm)) or {}
        except yaml.YAMLError as exc:
            raise AbRefused(f"--{arm}: not YAML: {exc}") from exc
        if not isinstance(overrides[arm], dict):
            raise AbRefused(f"--{arm}: expected a mapping of the profile's keys")
    return overrides


def ab_cells(args: argparse.Namespace, overrides: dict[str, dict], run_id: str) -> dict:
    """Each arm's configurations, every --cell among them in both, else AbRefused."""
    from perflab.contract.group_vars import study_vars
    from perflab.contract.matrix import MatrixError
    from perflab.host.ab import ARMS, arm_cells, check_configurations
    from perflab.studies import UnknownStudy, get_study

    try:
        study = get_study(args.study)
        config, profiles = study_vars(args.study, Path(args.group_vars))
        known = set(discover(Path(args.src) / "servers"))
        cells = {
            arm: arm_cells(study, config, profiles, args.profile, overrides[arm], known, run_id)
            for arm in ARMS
        }
        check_configurations(cells, args.cell)
    except (UnknownStudy, KeyError, MatrixError) as exc:
        raise AbRefused(str(exc)) from exc
    return cells


def ab_run_folder(args: argparse.Namespace, run_id: str) -> Path:
    """The A/B's run folder, with the calibration (which ghz, its ceiling) its cells read:
    --calibration's, else the localhost reference run's."""
    from perflab.analysis.estimate import reference_for

    runs = Path(args.runs).expanduser()
    (runs / run_id).mkdir(parents=True, exist_ok=True)
    calibration = Path(args.calibration) if args.calibration else None
    if calibration is None:
        reference = reference_for("localhost", Path("data/reference"))
        calibration = reference / "calibration.json" if reference else None
    if calibration is not None and calibration.is_file():
        (runs / run_id / "calibration.json").write_text(calibration.read_text())
    return runs


def cmd_ab(args: argparse.Namespace) -> int:
    """Runs an A/B of two knob values and prints its table (perflab.host.ab, .analysis.ab)."""
    from perflab.analysis.ab import ab_summary
    from perflab.host.ab import run_pairs
    from perflab.host.manifest import git_sha
    from perflab.host.runner import CellRunner

    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-ab"
    try:
        overrides = ab_overrides(args)
        cells = ab_cells(args, overrides, run_id)
    except AbRefused as exc:
        print(f"perflab ab refused: {exc}", file=sys.stderr)
        return 2
    runner = CellRunner(host_paths(args), ab_run_folder(args, run_id))
    began = now_iso()
    try:
        folders = run_pairs(runner, cells, args.cell, args.pairs, say)
    finally:
        runner.release()
    summary = ab_summary(folders, args.metric, args.pairs)
    result = {
        "study": args.study,
        "profile": args.profile,
        "run_id": run_id,
        "date": began,
        # What the cells ran (each cell.json's code_revision): the commit an A/B rests on.
        "code_revisions": summary.revisions or [git_sha(Path(args.src))],
        "metric": args.metric,
        "unit": summary.unit,
        "arms": overrides,
        "pairs": args.pairs,
        "configurations": summary.configurations,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"A/B {run_id}: {args.study} ({args.profile}), {args.metric}; a: {overrides['a']}, "
        f"b: {overrides['b']}"
    )
    print(summary.text())
    return 0 if summary.complete() else 1


def cmd_agent(args: argparse.Namespace) -> int:
    from perflab.host.agent import serve

    services_home = Path(args.services_home).expanduser() if args.services_home else None
    serve(
        host_paths(args), args.listen, args.port, Path(args.token_file).expanduser(), services_home
    )
    return 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from perflab.contract.matrix import MatrixError, expand
    from perflab.studies import UnknownStudy, get_study

    config = json.loads(Path(args.matrix).read_text()) if args.matrix else json.load(sys.stdin)
    known = set(discover(Path(args.src) / "servers"))
    try:
        cells = expand(
            args.run_id,
            get_study(args.study),
            config.get("matrix"),
            config.get("profiles") or {},
            args.profile,
            known,
        )
    except UnknownStudy as exc:
        print(f"matrix refused: perflab_studies: {exc}", file=sys.stderr)
        return 2
    except MatrixError as exc:
        print(f"matrix refused: {exc}", file=sys.stderr)
        return 2
    json.dump([asdict(cell) for cell in cells], sys.stdout)
    return 0


def cmd_facts(args: argparse.Namespace) -> int:
    from perflab.host.manifest import host_facts

    facts = host_facts(host_paths(args))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(facts, indent=2, sort_keys=True))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from perflab.studies.calibration.ceiling import write_calibration

    result = write_calibration(Path(args.run_dir))
    print(result.reason)
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    from perflab.host.manifest import write_manifest

    write_manifest(Path(args.run_dir), args.profile, args.topology, Path(args.repo), args.start)
    return 0


def refused_run_dir(command: str, run_dir: str) -> bool:
    """Says in one line why a run folder cannot be read, before any work starts."""
    from perflab.runargs import check_run_dir

    try:
        check_run_dir(run_dir)
    except ValueError as exc:
        print(f"perflab {command}: {exc}", file=sys.stderr)
        return True
    return False


def claim_frame_hooks() -> dict[str, Hooks]:
    """Each study's hooks (the derived metrics its claims are judged on, from the run's frame
    and from its rows of the seeds' tables), from the registry's records, handed to the
    analysis, which names no study."""
    from perflab.analysis.run import Hooks
    from perflab.studies import registry

    return {
        study_id: Hooks(study.claim_frame, study.seed_rows)
        for study_id, study in registry().items()
        if study.claim_frame is not None or study.seed_rows is not None
    }


def cmd_report(args: argparse.Namespace) -> int:
    if refused_run_dir("report", args.run_dir):
        return 2
    from perflab.analysis.report import render_run

    pages = render_run(
        Path(args.run_dir),
        Path(args.reference),
        Path(args.out),
        Path(args.notebooks),
        claim_frame_hooks(),
    )
    for page in pages:
        print(page)
    return 0


def cmd_verdicts(args: argparse.Namespace) -> int:
    """The README's summary of a run's verdicts (a paragraph per seed and a link to the
    index), beside a second run's verdicts (--against) with what changed, or pooled over
    many runs (--runs: the pooled index under --out)."""
    if args.runs:
        return pooled_verdicts(args)
    if args.run_dir is None:
        print("perflab verdicts: give --run-dir <run> or --runs <run> <run> ...", file=sys.stderr)
        return 2
    if refused_run_dir("verdicts", args.run_dir):
        return 2
    if args.against is not None and refused_run_dir("verdicts", args.against):
        return 2
    from perflab.analysis.drift_history import READINGS_HISTORY
    from perflab.analysis.replication import comparison_table, readme_summary, replicate
    from perflab.analysis.run import read

    hooks = claim_frame_hooks()
    run = read(args.run_dir, hooks, READINGS_HISTORY)
    if args.against is None:
        print(readme_summary(replicate(run, Path(args.reference))))
    else:
        against = read(args.against, hooks, READINGS_HISTORY)
        print(comparison_table(replicate(run, Path(args.reference), against=against)))
    return 0


def pooled_verdicts(args: argparse.Namespace) -> int:
    from perflab.analysis.claims import read_claims
    from perflab.analysis.fixes import FixesError, measured_with_fixes, read_fixes
    from perflab.analysis.pooled import pool_claims
    from perflab.analysis.pooled_page import render_pooled
    from perflab.analysis.published import CLAIMS_FILE
    from perflab.analysis.sites import ReadingsError, collect_runs

    # The claims alone for pooling; a run folder among the sources is judged as its index
    # judges it (sites.read_run_readings).
    reference = Path(args.reference)
    claims = read_claims(reference / CLAIMS_FILE)
    try:
        runs = collect_runs([Path(source) for source in args.runs], reference, claim_frame_hooks())
        fixes = read_fixes(reference, [claim.id for claim in claims])
    except (ReadingsError, FixesError) as exc:
        print(f"perflab verdicts: {exc}", file=sys.stderr)
        return 2
    # A reading measured without a later fix to its figure is left out of the pool.
    runs, left_out = measured_with_fixes(runs, fixes)
    readings = pool_claims(claims, runs)
    print(render_pooled(readings, runs, Path(args.out), left_out.sentence(fixes)))
    return 0


def cmd_readings(args: argparse.Namespace) -> int:
    """A run's readings file (data/readings/<run_id>.json), from a run folder or from the
    folder a commit held (--commit: `git archive`, unpacked under tmp/ and removed)."""
    import shutil
    import tempfile

    from perflab.analysis.drift_history import READINGS_HISTORY
    from perflab.analysis.fixes import FixesError, fixes_held_by
    from perflab.analysis.run import read
    from perflab.analysis.sites import ReadingsError, read_run_readings, recover_run, write_readings

    reference, out = Path(args.reference), Path(args.out)
    try:
        # A malformed fixes file is refused before any run is judged.
        held = fixes_held_by(reference, Path("."))
    except FixesError as exc:
        print(f"perflab readings: {exc}", file=sys.stderr)
        return 2
    if args.commit is None:
        if refused_run_dir("readings", args.run):
            return 2
        # Judged as its index judges it: with the machine's history in data/readings/.
        run = read(Path(args.run), claim_frame_hooks(), READINGS_HISTORY)
        print(write_readings(read_run_readings(run, reference, fixes_held=held), out))
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="readings-", dir=Path("tmp").resolve()))
    try:
        folder = recover_run(Path("."), args.commit, Path(args.run).name, scratch)
        run = read(folder, claim_frame_hooks(), READINGS_HISTORY)
        print(write_readings(read_run_readings(run, reference, args.commit, held), out))
    except ReadingsError as exc:
        print(f"perflab readings: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def cmd_adapt(args: argparse.Namespace) -> int:
    """Validate the adaptive rounds' knobs (--look 0), or plan look N's rounds: JSON with
    the progress line and the cells to run, grouped by study."""
    from perflab.contract.adaptive import read
    from perflab.contract.knobs import MatrixError

    config = json.load(sys.stdin)
    try:
        adaptive = read(config.get("adaptive"), config.get("profiles"), args.profile)
    except MatrixError as exc:
        print(f"adaptive rounds refused: {exc}", file=sys.stderr)
        return 2
    if args.look == 0:
        print(json.dumps(asdict(adaptive)))
        return 0
    if refused_run_dir("adapt", args.run_dir):
        return 2
    from perflab.analysis.drift_history import READINGS_HISTORY
    from perflab.analysis.replication import plan_next_look
    from perflab.analysis.run import read

    run_dir = Path(args.run_dir)
    run = read(run_dir, claim_frame_hooks(), READINGS_HISTORY)
    # No manifest while the run measures: the machine's history is matched on its hosts'
    # facts and the topology the playbook names, as the report will match it.
    run.measuring_topology = args.topology
    plan = plan_next_look(
        run,
        Path(args.reference),
        adaptive,
        args.look,
    )
    log_progress(run_dir / "progress.log", plan.progress)
    cells: dict[str, list[dict]] = {}
    for cell in plan.cells:
        cells.setdefault(cell.study, []).append(asdict(cell))
    json.dump({"progress": plan.progress, "cells": cells}, sys.stdout)
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    """One line: how long the cells on stdin (study -> specs) should measure."""
    from perflab.analysis.estimate import estimate, reference_for

    cells = json.load(sys.stdin)
    reference = reference_for(args.topology, Path(args.reference))
    if reference is None:
        print(f"no {args.topology} reference run to estimate the measuring time from")
        return 0
    done, pace, progress = 0, None, None
    if args.run_dir:
        from perflab.analysis.estimate import left_to_run, pace_of

        cells, done = left_to_run(cells, Path(args.run_dir))
        progress = Path(args.run_dir) / "progress.log"
        if done and progress.is_file() and not args.after_calibration:
            # The pause mark (perflab.contract.phases) at the run's start, where no runner
            # list may hold a complete cell (a stop between two rounds or studies).
            log_progress(progress, f"resumed: {done} cells complete already (run start)")
        # A resumed run, and every run once calibrated, knows this host's pace.
        pace = pace_of(Path(args.run_dir), reference)
    if args.after_calibration:
        lead = f"after calibration, {pace.sentence() if pace else 'at the reference pace'}: "
    else:
        lead = f"resuming: {done} cells complete already, the rest: " if done else ""
    # Only localhost's servers are the runner's own to keep (elsewhere the agent's).
    found = estimate(
        cells,
        reference,
        args.adaptive_minutes,
        args.topology == "localhost",
        pace.factor if pace else 1.0,
    )
    print(lead + found.sentence())
    if args.after_calibration and progress is not None and progress.is_file():
        # Where a long run is watched: how long the rest should take, at the pace measured.
        log_progress(progress, f"estimate: {lead}{found.sentence()}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Per study, the rounds the run's open claims ask for, their minutes, and what the
    full profile's rounds would decide."""
    if refused_run_dir("plan", args.run):
        return 2
    from perflab.analysis.drift_history import READINGS_HISTORY
    from perflab.analysis.planner import full_looks_from, full_rounds_from, plan, plan_text
    from perflab.analysis.replication import replicate
    from perflab.analysis.run import read

    run = read(args.run, claim_frame_hooks(), READINGS_HISTORY)
    replication = replicate(run, Path(args.reference))
    verdicts = replication.listed()
    studies = sorted({v.claim.study for v in verdicts})
    full_rounds = full_rounds_from(Path(args.group_vars), studies)
    full_looks = full_looks_from(Path(args.group_vars))
    plans = plan(verdicts, Path(args.run), full_rounds, replication.noise.margin_at, full_looks)
    print(plan_text(plans, run.run_id, full_looks))
    return 0


def cmd_look_budget(args: argparse.Namespace) -> int:
    """What each look cap would have decided on runs that took a look (table; --out: JSON)."""
    for run_dir in args.runs:
        if refused_run_dir("look-budget", run_dir):
            return 2
    from perflab.analysis.look_budget import as_json, replay_on_reference_claims, table

    runs = []
    for run_dir in args.runs:
        try:
            runs.append(
                replay_on_reference_claims(
                    run_dir, args.reference, claim_frame_hooks(), args.minutes
                )
            )
        except ValueError as exc:
            print(f"look-budget: {exc}", file=sys.stderr)
            return 2
        print(f"replayed {len(args.minutes)} caps on {Path(run_dir).name}", file=sys.stderr)
    print(table(runs))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(as_json(runs), indent=1) + "\n")
    return 0


def cmd_phases(args: argparse.Namespace) -> int:
    """Where a run's measuring time went: the parts as a table, then per study (JSON)."""
    if refused_run_dir("phases", args.run_dir):
        return 2
    from perflab.contract.phases import dumps, run_split, split_table

    split = run_split(Path(args.run_dir))
    print(
        f"{split.efficiency:.0%} of {split.wall / 60:.1f} min measuring inside measured "
        f"windows ({split.gap_count} gaps between cells, {split.handover_count} handovers"
        + (f", {split.paused / 60:.1f} min paused left out" if split.pause_count else "")
        + ")"
    )
    print(split_table(split))
    if args.top:
        from perflab.contract.phases import overheads_table, run_overheads

        print(f"\nThe {args.top} configurations with the most time outside their windows:")
        print(overheads_table(run_overheads(Path(args.run_dir), args.top)))
    if args.json:
        print(dumps(split))
    return 0


def run_id_arg(value: str) -> str:
    """argparse's type for a run id: its refusal is perflab.contract.runid's one line."""
    try:
        return validate_run_id(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="perflab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)

    def host_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--home", default="~/.perflab", help="the host prefix (venv/, bin/, gen/)")
        p.add_argument("--src", default=".", help="a tree holding servers/ and proto/")

    def agent_args(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--server-agent", default="", help="URL of the agent on the servers' host (multi-host)"
        )
        p.add_argument("--server-host", default="", help="address the server listens on there")
        p.add_argument(
            "--agent-token-file", default="", help="file holding the run's agent token (multi-host)"
        )

    cell = sub.add_parser("cell", help="run one cell (skipped when complete)")
    host_args(cell)
    cell.add_argument("--spec", required=True, help="the cell spec as JSON, or - for stdin")
    cell.add_argument("--runs", required=True, help="folder holding <run_id>/ folders")
    cell.add_argument("--progress", default="", help="label such as [3/28] for the log line")
    agent_args(cell)
    cell.set_defaults(func=cmd_cell)

    cells = sub.add_parser("cells", help="run a list of cells in one process (resumable)")
    host_args(cells)
    agent_args(cells)
    cells.add_argument("--specs", required=True, help="a JSON list of cell specs, or - for stdin")
    cells.add_argument("--runs", required=True, help="folder holding <run_id>/ folders")
    cells.add_argument("--progress", default="", help="a label before each [i/n], e.g. a study")
    cells.add_argument("--first", type=int, default=1, help="the number of the list's first cell")
    cells.add_argument("--of", type=int, default=0, help="the n of [i/n] (default: the list's)")
    cells.set_defaults(func=cmd_cells)

    ab = sub.add_parser("ab", help="A/B two knob values: paired cells, the ratio and its interval")
    host_args(ab)
    ab.add_argument("--study", required=True)
    ab.add_argument("--profile", default="quick", help="the profile the arms' overrides go over")
    ab.add_argument("--a", default="{}", help="arm a: YAML mapping laid over the profile")
    ab.add_argument("--b", required=True, help="arm b: YAML mapping laid over the profile")
    ab.add_argument(
        "--cell", action="append", required=True, help="a configuration (cell id without -rN)"
    )
    ab.add_argument("--pairs", type=int, default=8)
    ab.add_argument("--metric", required=True, help="the metric compared, e.g. rps, throughput")
    ab.add_argument("--runs", default="/tmp/perflab-ab", help="folder the A/B's cells go under")
    ab.add_argument("--out", default="", help="write every value and status as JSON here")
    ab.add_argument("--group-vars", default="inventory/group_vars/all")
    ab.add_argument(
        "--calibration", default="", help="calibration.json (default: the localhost reference's)"
    )
    ab.set_defaults(func=cmd_ab)

    agent = sub.add_parser("agent", help="start servers for runners on other hosts (multi-host)")
    host_args(agent)
    agent.add_argument("--listen", required=True, help="address to serve on (the servers' net)")
    agent.add_argument("--port", type=int, required=True)
    agent.add_argument(
        "--token-file",
        required=True,
        help="file (mode 0600) holding the run's token; every request must carry it",
    )
    agent.add_argument(
        "--services-home",
        default="",
        help="home of this host's perflab.host.services definitions (default: --home)",
    )
    agent.set_defaults(func=cmd_agent)

    matrix = sub.add_parser("matrix", help="validate and expand a study's matrix into cells")
    matrix.add_argument("--study", required=True)
    matrix.add_argument("--profile", required=True)
    matrix.add_argument("--run-id", required=True, type=run_id_arg)
    matrix.add_argument("--src", default=".")
    matrix.add_argument(
        "--matrix", help="JSON file {matrix, profiles} of this study; stdin when absent"
    )
    matrix.set_defaults(func=cmd_matrix)

    facts = sub.add_parser("facts", help="write this host's facts and tool versions")
    host_args(facts)
    facts.add_argument("--out", required=True)
    facts.set_defaults(func=cmd_facts)

    calibrate = sub.add_parser("calibrate", help="pick ghz and the ceiling from calibration cells")
    calibrate.add_argument("--run-dir", required=True)
    calibrate.set_defaults(func=cmd_calibrate)

    manifest = sub.add_parser("manifest", help="merge run and host facts into manifest.json")
    manifest.add_argument("--run-dir", required=True)
    manifest.add_argument("--profile", required=True)
    manifest.add_argument("--topology", required=True)
    manifest.add_argument("--start", required=True)
    manifest.add_argument("--repo", default=".")
    manifest.set_defaults(func=cmd_manifest)

    report = sub.add_parser("report", help="render every study's notebook of a run to HTML")
    report.add_argument("--run-dir", required=True)
    report.add_argument("--out", required=True)
    report.add_argument("--reference", default="data/reference")
    report.add_argument("--notebooks", default="notebooks")
    report.set_defaults(func=cmd_report)

    adapt = sub.add_parser("adapt", help="plan a look's extra rounds for the undecided claims")
    adapt.add_argument("--run-dir", help="the run so far, on the controller")
    adapt.add_argument("--reference", default="data/reference", help="claims and seed tables")
    adapt.add_argument("--profile", required=True, help="the run's profile (its knobs)")
    adapt.add_argument("--look", type=int, required=True, help="1, 2, ...; 0 checks the knobs")
    adapt.add_argument("--topology", default="localhost", help="the run's (it has no manifest yet)")
    adapt.set_defaults(func=cmd_adapt)

    estimate = sub.add_parser("estimate", help="how long a run's cells (stdin) should measure")
    estimate.add_argument("--reference", default="data/reference", help="reference_runs.yml")
    estimate.add_argument("--topology", default="localhost", help="whose reference run")
    estimate.add_argument("--adaptive-minutes", type=float, default=0.0, help="the stage's cap")
    estimate.add_argument(
        "--run-dir", default="", help="the run's folder: a resume prices only the cells left"
    )
    estimate.add_argument(
        "--after-calibration",
        action="store_true",
        help="the run's own second estimate: the cells left, at the pace its calibration found",
    )
    estimate.set_defaults(func=cmd_estimate)

    planner = sub.add_parser("plan", help="rounds and minutes the open claims of a run ask for")
    planner.add_argument("--run", required=True, help="the run's folder, data/<run_id>")
    planner.add_argument("--reference", default="data/reference", help="claims and seed tables")
    planner.add_argument(
        "--group-vars", default="inventory/group_vars/all", help="the full profile's rounds"
    )
    planner.set_defaults(func=cmd_plan)

    budget = sub.add_parser(
        "look-budget", help="what a look of each cap would have decided on runs that took one"
    )
    budget.add_argument("runs", nargs="+", help="run folders with an adaptive.json")
    budget.add_argument(
        "--minutes", type=float, nargs="+", default=[2, 4, 6, 8, 10, 12], help="the caps"
    )
    budget.add_argument("--reference", default="data/reference", help="claims and seed tables")
    budget.add_argument("--out", default="", help="also write every replay here, as JSON")
    budget.set_defaults(func=cmd_look_budget)

    phases = sub.add_parser("phases", help="where a run's measuring time went (table)")
    phases.add_argument("--run-dir", required=True)
    phases.add_argument("--json", action="store_true", help="also the sums per study, as JSON")
    phases.add_argument(
        "--top",
        type=int,
        default=0,
        help="also the N configurations with most time outside windows",
    )
    phases.set_defaults(func=cmd_phases)

    verdicts = sub.add_parser("verdicts", help="each published claim's verdict on a run (markdown)")
    verdicts.add_argument("--run-dir")
    verdicts.add_argument("--reference", default="data/reference")
    verdicts.add_argument(
        "--against", help="a second run's folder: both verdicts per claim and what changed"
    )
    verdicts.add_argument(
        "--runs",
        nargs="+",
        help="runs to pool, each a run folder or its readings file (data/readings/<run>.json)",
    )
    verdicts.add_argument("--out", default="reports/pooled", help="where --runs writes its index")
    verdicts.set_defaults(func=cmd_verdicts)
    readings = sub.add_parser("readings", help="a run's readings file, for pooling runs")
    readings.add_argument(
        "--run", required=True, help="a run folder, or data/<run_id> with --commit"
    )
    readings.add_argument("--commit", help="recover the run folder as this commit held it")
    readings.add_argument("--reference", default="data/reference")
    readings.add_argument("--out", default="data/readings")
    readings.set_defaults(func=cmd_readings)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)
