"""Secrets never reach the record: aws_io cells run with (fake) AWS and MongoDB credentials
in the environment, as a user with real S3 and MongoDB would give them (inventory
group_vars aws_io.yml), then the run's manifest and report are made the way a run makes them;
no credential value appears in any file under the run's data folder or its rendered report."""

from __future__ import annotations

import gzip
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from perflab import services
from perflab.impls import HostPaths
from tests.conftest import REPO, study_vars

pytestmark = [pytest.mark.live, pytest.mark.slow]

RUN_ID = "secrets-smoke"


def fake_credentials(which: str) -> dict[str, str]:
    """Fresh values each run, so a match can only come from this run. "aws": AWS credentials
    in the environment win over the local S3's env file (the servers' rule), so S3 refuses
    every call; "mongo": S3 keeps its own keys and MongoDB gets a URI with a password."""
    if which == "aws":
        return {
            "AWS_ACCESS_KEY_ID": f"AKIALEAK{secrets.token_hex(6).upper()}",
            "AWS_SECRET_ACCESS_KEY": f"leaksecret{secrets.token_hex(16)}",
            "AWS_SESSION_TOKEN": f"leaktoken{secrets.token_hex(16)}",
        }
    password = f"leakmongo{secrets.token_hex(8)}"
    return {"PERFLAB_MONGO_URI": f"mongodb://perflab:{password}@127.0.0.1:27117/",
            "PERFLAB_TEST_MONGO_PASSWORD": password}


def env_file_secrets(home: Path) -> dict[str, str]:
    """The local S3's own keys (the role's 0600 env file): secrets as much as a user's."""
    values = services.read_env_file(str(home / "aws_io" / "client.env"))
    return {f"client.env {key}": value for key, value in values.items() if len(value) >= 8}


def perflab(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "perflab", *args], cwd=REPO, env=env,
                          input=stdin, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def every_text(root: Path) -> dict[Path, str]:
    """Every file under root as text, gzip-compressed ones (ghz.json.gz) uncompressed."""
    texts = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        texts[path] = raw.decode("utf-8", errors="replace")
    return texts


@pytest.mark.parametrize("which", ["aws", "mongo"])
def test_credentials_in_the_environment_never_reach_data_or_reports(
    which: str, host_paths: HostPaths, tmp_path: Path
) -> None:
    for name in ("s3", "mongo"):
        services.ensure(host_paths.home, name)
    credentials = fake_credentials(which)
    secret_values = {**credentials, **env_file_secrets(host_paths.home)}
    env = {key: value for key, value in os.environ.items()
           if key not in {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "PERFLAB_MONGO_URI"}}
    env.update(credentials)
    runs, reports = tmp_path / "runs", tmp_path / "reports"
    host = [f"--home={host_paths.home}", f"--src={REPO}"]

    # The smoke profile's aws_io cells, as run_start.yml expands them; one per scenario.
    matrix, profiles = study_vars("aws_io")
    ghz_version = study_vars("calibration")[0]["ghz_versions"][0]
    expanded = perflab(env, "matrix", "--study=aws_io", "--profile=smoke", f"--run-id={RUN_ID}",
                       f"--src={REPO}", stdin=json.dumps({"matrix": matrix, "profiles": profiles}))
    cells, scenarios = [], set()
    for cell in json.loads(expanded.stdout):
        if cell["scenario"] not in scenarios and cell["load"]["kind"] == "ghz":
            scenarios.add(cell["scenario"])
            cell["load"]["ghz_version"] = ghz_version  # what calibration would have chosen
            cells.append(cell)
    assert {"list_unary", "list_save"} <= scenarios

    for cell in cells:
        perflab(env, "cell", *host, "--spec=-", f"--runs={runs}", stdin=json.dumps(cell))
    run_dir = runs / RUN_ID
    perflab(env, "facts", *host, f"--out={run_dir / 'hosts' / 'localhost.json'}")
    perflab(env, "manifest", f"--run-dir={run_dir}", "--profile=smoke", "--topology=localhost",
            "--start=2026-01-01T00:00:00Z", f"--repo={REPO}")
    perflab(env, "report", f"--run-dir={run_dir}", f"--out={reports / RUN_ID}",
            f"--reference={REPO / 'data' / 'reference'}", f"--notebooks={REPO / 'notebooks'}")

    recorded = {**every_text(run_dir), **every_text(reports / RUN_ID)}
    assert len(secret_values) > len(credentials)  # the env file's keys are checked too
    # The record is really there: every cell, the manifest, the report pages.
    written = {json.loads(p.read_text())["cell_id"] for p in run_dir.glob("aws_io/*/cell.json")}
    assert written == {cell["cell_id"] for cell in cells}
    assert (run_dir / "manifest.json").is_file() and (reports / RUN_ID / "index.html").is_file()
    # The servers really ran with these credentials: what they met is in the record.
    records = {json.loads(p.read_text())["scenario"]: json.loads(p.read_text())
               for p in run_dir.glob("aws_io/*/cell.json")}
    if which == "aws":
        # The local S3 refuses keys it never issued, naming the refusal, not the key.
        assert all(r["status"] == "failed" and "S3: ClientError" in r["error"]
                   for r in records.values()), records
    else:
        # S3 kept its own keys and answered; the MongoDB call met the URI with the password.
        assert records["list_unary"]["status"] in {"ok", "bound"}, records["list_unary"]
        saved = records["list_save"]
        assert saved["status"] in {"ok", "bound"} or "MongoDB: " in saved["error"], saved
    leaks = [
        f"{path.relative_to(tmp_path)}: {key}"
        for path, text in recorded.items()
        for key, value in secret_values.items()
        if value in text
    ]
    assert leaks == [], f"credentials written into the record: {leaks}"
