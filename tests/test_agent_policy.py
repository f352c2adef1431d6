"""What the server agent accepts (perflab.host.agent_policy), without starting it: every cell the
matrices make passes, each kind of hostile value is refused naming what is wrong, and a
request without this run's token is turned away before anything else is looked at."""

from __future__ import annotations

import json

import pytest

from perflab.contract.matrix import expand
from perflab.contract.runid import RUN_PROFILES
from perflab.host.agent import Agent, Unauthorized
from perflab.host.agent_policy import ALLOWED_SERVER_ENV, Refused, check_request
from perflab.host.impls import HostPaths, discover
from perflab.studies import get_study, study_ids
from tests.conftest import REPO, study_vars

IMPLS = discover(REPO / "servers")
STUDIES = study_ids()
LISTEN = "10.77.0.1"
SERVICES = {"s3", "mongo"}


def request_for(spec_json: str) -> dict:
    spec = json.loads(spec_json)
    spec["server"]["host"] = LISTEN  # as the runner sends it (its --server-host)
    return {"spec": spec, "server_cpus": [], "pin": False}


@pytest.mark.parametrize("profile", RUN_PROFILES)
@pytest.mark.parametrize("study", STUDIES)
def test_every_cell_the_matrices_make_is_accepted(study, profile):
    matrix, profiles = study_vars(study)
    cells = expand("run1", get_study(study), matrix, profiles, profile, set(IMPLS))
    assert cells
    for cell in cells:
        spec, _, _ = check_request(request_for(cell.to_json()), IMPLS, LISTEN, SERVICES)
        assert spec.server.impl == cell.server.impl


def hello_request(**server: object) -> dict:
    matrix, profiles = study_vars("hello")
    cell = expand("run1", get_study("hello"), matrix, profiles, "smoke", set(IMPLS))[0]
    request = request_for(cell.to_json())
    request["spec"]["server"].update({"options": {}, **server})
    return request


@pytest.mark.parametrize(
    ("server", "reason"),
    [
        ({"impl": "../../bin/sh"}, "unknown implementation"),
        ({"impl": "cpp/hello", "options": {"exec": "sh"}}, "undeclared option 'exec'"),
        ({"impl": "python/grpclib", "options": {"loop": "uvloop`id`"}}, "not accepted: ['`']"),
        ({"impl": "python/grpclib", "options": {"loop": "a b"}}, "not accepted: [' ']"),
        ({"impl": "python/grpclib", "options": {"loop": "$(id)"}}, "not accepted"),
        ({"impl": "python/orders_server", "options": {"tls_dir": "../tls"}}, "'..'"),
        ({"impl": "floor/iperf3_server", "options": {"iperf3": "/tmp/x"}}, "plain word"),
        ({"impl": "python/grpcio_sync", "options": {"workers": True}}, "expected int"),
        ({"impl": "python/grpcio_sync", "options": {"workers": 2.5}}, "expected int"),
        ({"impl": "cpp/hello", "env": {"LD_PRELOAD": "/tmp/x.so"}}, "LD_PRELOAD"),
        ({"impl": "cpp/hello", "env": {"PYTHONPATH": "/tmp"}}, "PYTHONPATH"),
        ({"impl": "cpp/hello", "host": "0.0.0.0"}, "listen on 10.77.0.1 only"),
        ({"impl": "cpp/hello", "port": 22}, "server port 22"),
        ({"impl": "cpp/hello", "ready_timeout_s": 1e9}, "ready_timeout_s"),
    ],
)
def test_a_hostile_server_spec_is_refused_naming_the_value(server, reason):
    with pytest.raises(Refused) as refused:
        check_request(hello_request(**server), IMPLS, LISTEN, SERVICES)
    assert reason in str(refused.value)


def test_hostile_run_ids_dependencies_proxies_and_fields_are_refused():
    request = hello_request()
    request["spec"]["run_id"] = "../evil"
    with pytest.raises(Refused, match="run id"):
        check_request(request, IMPLS, LISTEN, SERVICES)
    request = hello_request()
    request["spec"]["dependencies"] = ["s3", "../../etc/passwd"]
    with pytest.raises(Refused, match="not a service of this host"):
        check_request(request, IMPLS, LISTEN, SERVICES)
    request = hello_request(impl="python/aws_io_grpcio")
    request["spec"]["latency_proxies"] = [
        {"option": "s3_endpoint", "upstream": "127.0.0.1:1", "one_way_ms": 1, "url": "x;{listen}"}
    ]
    with pytest.raises(Refused, match="not accepted"):
        check_request(request, IMPLS, LISTEN, SERVICES)
    # The load's proxy is the runner's: its entry holds a delay and nothing the agent acts on.
    request = hello_request()
    request["spec"]["latency_proxies"] = [{"caller": "load", "one_way_ms": 1, "upstream": "x:1"}]
    with pytest.raises(Refused, match="load entries take"):
        check_request(request, IMPLS, LISTEN, SERVICES)
    request["spec"]["latency_proxies"] = [{"caller": "load", "one_way_ms": -1}]
    with pytest.raises(Refused, match="one_way_ms -1"):
        check_request(request, IMPLS, LISTEN, SERVICES)
    request = hello_request()
    request["argv"] = ["/bin/sh", "-c", "id"]
    with pytest.raises(Refused, match="StartRequest: holds"):
        check_request(request, IMPLS, LISTEN, SERVICES)
    request = hello_request()
    request["spec"]["server"]["command"] = ["/bin/sh"]
    with pytest.raises(Refused, match="malformed cell spec"):
        check_request(request, IMPLS, LISTEN, SERVICES)


def test_no_environment_is_allowed_through_a_request():
    # Widening this needs a reason in agent_policy (see ALLOWED_SERVER_ENV's comment).
    assert frozenset() == ALLOWED_SERVER_ENV


def test_only_this_runs_token_is_authorized(tmp_path):
    token_file = tmp_path / "token"
    agent = Agent(HostPaths(home=tmp_path, src=REPO), LISTEN, token_file)
    with pytest.raises(Unauthorized, match="no token"):
        agent.authorize("Bearer anything")  # no token file yet: everything is refused
    token_file.write_text("s3cret-run-token\n")
    agent.authorize("Bearer s3cret-run-token")
    for header in (None, "", "Bearer", "Basic s3cret-run-token", "Bearer s3cret-run-toke"):
        with pytest.raises(Unauthorized):
            agent.authorize(header)
    token_file.write_text("next-run-token\n")  # a new run's token takes effect at once
    with pytest.raises(Unauthorized, match="wrong token"):
        agent.authorize("Bearer s3cret-run-token")
    agent.authorize("Bearer next-run-token")
