"""The agent's HTTP messages (perflab.contract.agent_messages): every record survives a
trip through JSON, and a message of the wrong shape is refused naming the message and the
key, on the agent's side (a /start request) and the runner's (an answer)."""

from __future__ import annotations

import json

import pytest

from perflab.contract.agent_messages import (
    ErrorReply,
    MessageError,
    StartReply,
    StartRequest,
    StatusReply,
    StopReply,
    from_dict,
    to_dict,
)
from perflab.host.agent_client import AgentError, answer

MESSAGES = [
    StartRequest(
        spec={"run_id": "run1", "server": {"impl": "cpp/hello"}}, server_cpus=[0], pin=True
    ),
    StartReply(port=50051, pid=1234, argv=["/bin/server", "--port", "50051"]),
    StatusReply(running=True, exit_code=None),
    StatusReply(running=False, exit_code=3),
    StopReply(
        exit_code=None,
        note="",
        notes=["s3 was down and was started"],
        dependencies_died=[],
        server_log="READY\n",
        resources_csv="t,pid,role\n",
        files={"proxies.json": "{}"},
        started_wall=1764000000.5,
        argv=["/bin/server"],
    ),
    ErrorReply(error="wrong token"),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_message_survives_a_trip_through_json(message):
    wire = json.loads(json.dumps(to_dict(message)))
    assert from_dict(type(message), wire) == message


def test_defaults_fill_what_a_request_leaves_out():
    assert from_dict(StartRequest, {"spec": {}}) == StartRequest(spec={}, server_cpus=[], pin=False)


@pytest.mark.parametrize(
    ("kind", "raw", "said"),
    [
        (StartRequest, ["spec"], "StartRequest: expected a JSON object, got list"),
        (StartRequest, {"server_cpus": [0]}, r"StartRequest: holds .*missing \['spec'\]"),
        (StartRequest, {"spec": {}, "argv": ["/bin/sh"]}, r"unknown \['argv'\]"),
        (StartRequest, {"spec": {}, "pin": "yes"}, "StartRequest.pin: 'yes' is not bool"),
        (
            StartRequest,
            {"spec": {}, "server_cpus": [0, "1"]},
            r"StartRequest.server_cpus: \[0, '1'\]",
        ),
        (StartReply, {"port": True, "pid": 1, "argv": []}, "StartReply.port: True is not int"),
        (StatusReply, {"running": True, "exit_code": "0"}, "StatusReply.exit_code: '0' is not"),
        (ErrorReply, {"error": None}, "ErrorReply.error: None is not str"),
    ],
)
def test_a_message_of_the_wrong_shape_is_refused_naming_the_key(kind, raw, said):
    with pytest.raises(MessageError, match=said):
        from_dict(kind, raw)


def test_a_malformed_answer_is_an_agent_error_naming_the_request():
    with pytest.raises(AgentError, match=r"answered /start with a malformed StartReply.port"):
        answer(StartReply, "http://10.77.0.1:7070", "/start", {"port": "x", "pid": 1, "argv": []})
