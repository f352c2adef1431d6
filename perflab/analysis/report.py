"""Render a run: papermill executes each study's notebook, nbconvert writes HTML.

The HTML pages and their figures are the report, and they are committed: re-rendering the
same data must change no byte of them. So the executed notebooks (which carry papermill's
timings) stay in a scratch folder, the kernel is given paths relative to the report folder
(its working directory) so no absolute path of this machine reaches a page, and the one
cell papermill adds gets a fixed id instead of a random one.
"""

from __future__ import annotations

import os
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode
    from traitlets.config import Config

    from perflab.analysis.run import StudyHooks

OVERVIEW = "overview"
# Where perflab.analysis.plots.save writes a page's figures, below the report folder.
FIGURES = "figures"
# The tag papermill gives the cell it inserts with the parameters.
INJECTED = "injected-parameters"


class ReportError(RuntimeError):
    pass


def studies_in(run_dir: Path, notebooks: Path) -> list[str]:
    """Studies that have both data in the run and a notebook to show them."""
    return sorted(
        p.name
        for p in run_dir.iterdir()
        if p.is_dir() and (notebooks / f"{p.name}.ipynb").is_file()
    )


def repeatable(nb: NotebookNode) -> NotebookNode:
    """Drop what differs between two executions of the same notebook on the same data:
    papermill's timings, start/end stamps and exception fields, and the random id of the
    parameters cell it inserted."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if INJECTED in cell.metadata.get("tags", []):
            cell.id = INJECTED
    return nb


def kernel_sockets(scratch: Path) -> Config:
    """Kernel configuration that puts its sockets in `scratch`, one render's own folder.

    Over TCP, jupyter_client picks a free port by binding it and letting it go, and the
    kernel binds it again later: two kernels started side by side can pick the same port,
    and one dies with "Address already in use" (a reference run's report was lost so). Unix
    sockets named inside a folder no other render uses cannot collide."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "ip": str(scratch / "kernel")}})


def render(notebook: Path, out_dir: Path, parameters: dict[str, str], name: str) -> Path:
    """Execute `notebook` with `parameters` (the kernel runs in `out_dir`, where figures go)
    and write `out_dir/<name>.html`; the executed notebook is not kept."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="perflab-render-") as scratch:
        executed = Path(scratch) / f"{name}.ipynb"
        papermill.execute_notebook(
            str(notebook),
            str(executed),
            parameters=parameters,
            cwd=str(out_dir),
            progress_bar=False,
            kernel_name="python3",
            config=kernel_sockets(Path(scratch)),
        )
        nb = repeatable(nbformat.read(executed, as_version=4))
    # The browser tab and bookmarks name the page, not nbconvert's default "Notebook".
    run = Path(parameters.get("run_dir", "")).name
    nb.metadata["title"] = f"{name}: {run}" if run else name
    exporter = HTMLExporter(
        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
    )
    body, _ = exporter.from_notebook_node(nb)
    html = out_dir / f"{name}.html"
    html.write_text(body)
    return html


def render_side_by_side(jobs: list[tuple[Path, Path, dict[str, str], str]]) -> list[Path]:
    """`render` each job, as many at once as this machine has cores (each kernel and each
    HTML export is one busy process), in the jobs' order; the first error raised stops the
    report. Each page is its own process already (its kernel), so two cores take two."""
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        return [render(*job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(render, *zip(*jobs, strict=True)))


def machine_paths(*folders: Path) -> list[str]:
    """Absolute paths of this machine a page must not show: the run's folders, the home
    folder and the Python environment (tracebacks and warnings name files under it)."""
    paths = {str(f.resolve()) for f in folders} | {str(Path.home()), sys.prefix}
    # Longest first, so the report names the most specific one it found.
    return sorted((p for p in paths if p != "/"), key=len, reverse=True)


def refuse_machine_paths(page: Path, paths: list[str]) -> None:
    text = page.read_text()
    found = next((p for p in paths if p in text), None)
    if found is not None:
        raise ReportError(
            f"{page} shows the absolute path {found} of this machine (a cell printed it): "
            "a committed report must render the same bytes anywhere"
        )


def clear_figures(out_dir: Path) -> None:
    """The figures folder is one render's alone: a figure an older analysis drew, and this
    one no longer does, must not linger beside the pages as if it were current."""
    for stale in (out_dir / FIGURES).glob("*.png"):
        stale.unlink()


def render_run(
    run_dir: Path,
    reference_dir: Path,
    out_dir: Path,
    notebooks: Path,
    hooks: StudyHooks,
) -> list[Path]:
    """Every study page, then the overview as index.html; returns the pages written. The
    run is read and judged once, here, and every notebook loads that (perflab.analysis.judged)."""
    from perflab.analysis.judged import judge, write_cache

    run_dir, reference_dir, out_dir = run_dir.resolve(), reference_dir.resolve(), out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    clear_figures(out_dir)
    judged = judge(run_dir, reference_dir, hooks, side_by_side=True)
    cache = write_cache(judged, reference_dir, out_dir)
    try:
        return render_pages(run_dir, reference_dir, out_dir, notebooks)
    finally:
        cache.unlink()


def render_pages(run_dir: Path, reference_dir: Path, out_dir: Path, notebooks: Path) -> list[Path]:
    """Every study page, and the overview as index.html, each checked for this machine's
    paths."""
    # Relative to the kernel's working directory (out_dir): the notebooks never see where
    # this checkout lives, so no page can show it.
    params = {
        "run_dir": os.path.relpath(run_dir, out_dir),
        "reference_dir": os.path.relpath(reference_dir, out_dir),
        "out_dir": ".",
    }
    studies = [study for study in studies_in(run_dir, notebooks) if study != OVERVIEW]
    # The overview is told which pages it links rather than finding them written: it then
    # renders beside them, not alone after them (a sixth of a report's time before).
    overview = {**params, "pages": ",".join(studies)}
    jobs = [(notebooks / f"{OVERVIEW}.ipynb", out_dir, overview, OVERVIEW)] + [
        (notebooks / f"{study}.ipynb", out_dir, params, study)
        for study in largest_first(run_dir, studies)
    ]
    rendered = {page.stem: page for page in render_side_by_side(jobs)}
    index = out_dir / "index.html"
    rendered.pop(OVERVIEW).replace(index)
    pages = [rendered[study] for study in studies] + [index]
    forbidden = machine_paths(run_dir, reference_dir, out_dir, notebooks.resolve().parent)
    for page in pages:
        refuse_machine_paths(page, forbidden)
    return pages


def largest_first(run_dir: Path, studies: list[str]) -> list[str]:
    """The studies with most cells first: two at a time, the longest pages are best begun
    early, and a page's time grows with its cells."""
    return sorted(studies, key=lambda study: -sum(1 for _ in (run_dir / study).iterdir()))


def measuring_words(manifest: dict) -> str:
    """The measuring time and the share of it inside measured windows, when the manifest
    has the split (runs collected before it do not)."""
    measuring = manifest.get("measuring")
    if not measuring or not measuring.get("wall_s"):
        return ""
    return (
        f": {measuring['wall_s'] / 60:.1f} min measuring, {measuring['efficiency']:.0%} of it "
        f"inside measured windows ({measuring['window_s'] / 60:.1f} min)"
    )


def manifest_markdown(manifest: dict) -> str:
    """The run in a few lines: id, profile, topology, sha, when, load generator."""
    cal = manifest.get("calibration") or {}
    lines = [
        f"- run **{manifest['run_id']}**, profile **{manifest['profile']}**, "
        f"topology **{manifest['topology']}**",
        f"- git `{manifest['git_sha']}`",
        f"- from {manifest['start']} to {manifest['end']} (UTC){measuring_words(manifest)}",
    ]
    if cal:
        lines.append(
            f"- load generator ghz {cal['ghz_version']}, ceiling {cal['ceiling_rps']:,.0f} req/s "
            f"against {cal['server']}: {cal['reason']}"
        )
    return "\n".join(lines)


def study_pages(out_dir: str | Path, planned: str = "") -> dict[str, str]:
    """Each study page rendered beside the index: study id -> file name. `planned`: the
    studies whose pages the renderer is writing, comma-separated; empty (JupyterLab on a
    run), the pages found in `out_dir`."""
    if planned:
        return {study: f"{study}.html" for study in sorted(planned.split(","))}
    pages = sorted(Path(out_dir).glob("*.html"))
    return {p.stem: p.name for p in pages if p.stem not in (OVERVIEW, "index")}


# Run folders that get no page of their own, and where a reader finds what they measured.
PAGELESS = {"calibration": "the load generator's ceiling, in the run summary above"}


def study_links(run_dir: str | Path, out_dir: str | Path, planned: str = "") -> str:
    """An HTML list linking each study page rendered beside the index (`study_pages`), and
    naming the run's folders that have none (`PAGELESS`), so the list matches the status
    table's studies."""
    studies = {p.name for p in Path(run_dir).iterdir() if p.is_dir()}
    linked = "".join(
        f'<li><a href="{page}">{study}</a></li>'
        for study, page in study_pages(out_dir, planned).items()
        if study in studies
    )
    pageless = "".join(
        f"<li>{study}: {where} (no page)</li>"
        for study, where in PAGELESS.items()
        if study in studies
    )
    if not linked:
        return "<p>No study page was rendered for this run.</p>" + (
            f"<ul>{pageless}</ul>" if pageless else ""
        )
    return f"<ul>{linked}{pageless}</ul>"


def hosts_note(manifest: dict) -> str:
    """Markdown: hosts that share one boot of one machine (the netns topology's two
    namespaces) are said to be one machine, not two: their CPUs and memory are shared."""
    by_boot: dict[str, list[str]] = {}
    for name, facts in manifest.get("hosts", {}).items():
        if facts.get("boot_id"):
            by_boot.setdefault(str(facts["boot_id"]), []).append(name)
    return " ".join(
        f"{' and '.join(f'`{n}`' for n in names)} are one machine (boot {boot[:8]}): network "
        "namespaces, not separate hosts, so the CPUs and memory each row shows are the same "
        "ones."
        for boot, names in by_boot.items()
        if len(names) > 1
    )


def hosts_table(manifest: dict):  # -> pd.DataFrame
    import pandas as pd

    rows = []
    for name, facts in manifest.get("hosts", {}).items():
        versions = facts.get("versions", {})
        packages = versions.get("python_packages", {})
        rows.append(
            {
                "host": name,
                "cpu": facts.get("cpu_model"),
                "cpus": facts.get("cpus"),
                "memory (GiB)": round(facts.get("memory_bytes", 0) / 2**30, 1),
                "kernel": facts.get("kernel"),
                "load at start (1/5/15 min)": " / ".join(
                    f"{x:.2f}" for x in facts.get("loadavg_1_5_15", [])
                ),
                "python": versions.get("python"),
                "go": versions.get("go"),
                "node": versions.get("node"),
                "gcc": versions.get("gcc"),
                "ghz installed": ", ".join(versions.get("ghz_installed", [])),
                "grpcio": packages.get("grpcio"),
                "grpclib": packages.get("grpclib"),
                "betterproto": packages.get("betterproto"),
                "libgrpc++": versions.get("debian_packages", {}).get("libgrpc++-dev"),
            }
        )
    return pd.DataFrame(rows).set_index("host") if rows else pd.DataFrame(rows)
