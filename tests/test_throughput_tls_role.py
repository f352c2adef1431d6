"""roles/tls_certs: one CA, a server certificate for the loopback and every listed address,
a client certificate, all chaining to the CA; a second run changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

# Runs ansible-playbook and openssl.
pytestmark = [pytest.mark.live, pytest.mark.slow]


def run_role(tmp_path: Path, extra: dict) -> str:
    playbook = tmp_path / "certs.yml"
    playbook.write_text(
        "- name: Certificates\n  hosts: servers:clients\n  gather_facts: false\n"
        "  roles:\n    - tls_certs\n"
    )
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_ROLES_PATH": str(REPO / "roles"),
        "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        [
            str(REPO / ".venv" / "bin" / "ansible-playbook"),
            "-i",
            str(REPO / "inventory" / "localhost.yml"),
            str(playbook),
            "-e",
            json.dumps(extra),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done.stdout


def openssl(*args: str) -> str:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, check=True).stdout


def test_role_issues_certificates_for_every_address_and_reruns_quietly(tmp_path):
    home = tmp_path / "home"
    extra = {
        "perflab_home": str(home),
        "tls_certs_controller_dir": str(tmp_path / "controller"),
        "tls_certs_server_addresses": ["10.77.0.1", "bench.internal"],
    }
    run_role(tmp_path, extra)
    tls = home / "tls"
    assert sorted(p.name for p in tls.iterdir()) == [
        "ca.pem",
        "client.key",
        "client.pem",
        "server.key",
        "server.pem",
    ]
    names = openssl("x509", "-in", str(tls / "server.pem"), "-noout", "-ext", "subjectAltName")
    for name in (
        "IP Address:127.0.0.1",
        "DNS:localhost",
        "IP Address:10.77.0.1",
        "DNS:bench.internal",
    ):
        assert name in names
    usage = openssl("x509", "-in", str(tls / "client.pem"), "-noout", "-ext", "extendedKeyUsage")
    assert "TLS Web Client Authentication" in usage
    verified = openssl(
        "verify", "-CAfile", str(tls / "ca.pem"), str(tls / "server.pem"), str(tls / "client.pem")
    )
    assert verified.count(": OK") == 2
    assert oct((tls / "client.key").stat().st_mode)[-3:] == "600"
    again = run_role(tmp_path, extra)
    assert "changed=0" in again
