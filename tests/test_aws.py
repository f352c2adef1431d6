"""AWS topology, checked without AWS (it cannot be reached here and is never contacted):
the playbooks parse, and the plan they build (`--tags plan` runs only local tasks) opens
ssh to the controller's address alone, tags everything for the inventory and teardown,
and deletes volumes with the instances. A missing or bad controller address is refused."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import REPO
from tests.test_ansible import ansible

# Every test here runs ansible-playbook.
pytestmark = pytest.mark.live


@pytest.mark.parametrize("playbook", ["aws_up.yml", "aws_down.yml"])
def test_playbooks_parse(playbook):
    done = ansible("--syntax-check", "-i", "inventory/localhost.yml", f"playbooks/{playbook}")
    assert done.returncode == 0, done.stdout + done.stderr


def plan(playbook: str, tmp_path, *extra: str):
    out = tmp_path / "plan.json"
    done = ansible(
        "-i",
        "inventory/localhost.yml",
        f"playbooks/{playbook}",
        "--tags",
        "plan",
        "-e",
        f"aws_plan_file={out}",
        *extra,
    )
    return done, (json.loads(out.read_text()) if out.is_file() else None)


def test_up_plan_opens_ssh_to_the_controller_only(tmp_path):
    done, up = plan(
        "aws_up.yml",
        tmp_path,
        "-e",
        "aws_controller_ip=203.0.113.7",
        "-e",
        "aws_ami_id=ami-0abc123",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    cidrs = [rule["cidr_ip"] for rule in up["rules"] if "cidr_ip" in rule]
    assert cidrs == ["203.0.113.7/32"]
    assert [rule["ports"] for rule in up["rules"] if "cidr_ip" in rule] == [[22]]
    # The other rule lets the two instances talk to each other, by group, not by address.
    assert [rule["group_name"] for rule in up["rules"] if "group_name" in rule] == [
        up["security_group"]
    ]
    assert [(i["name"], i["role"]) for i in up["instances"]] == [
        ("perflab-server", "servers"),
        ("perflab-client", "clients"),
    ]
    assert up["tags"] == {"project": "grpc-perflab"}
    assert all(v["ebs"]["delete_on_termination"] is True for v in up["volumes"])
    assert up["image_id"] == "ami-0abc123" and up["key_name"] == "perflab-key"
    # Nothing past the plan ran: no key was generated.
    assert "Generate the key pair" not in done.stdout


@pytest.mark.parametrize("address", ["", "0.0.0.0", "example.com", "300.1.1.1"])
def test_up_refuses_a_missing_or_bad_controller_address(tmp_path, address):
    done, up = plan(
        "aws_up.yml", tmp_path, "-e", f"aws_controller_ip={address}", "-e", "aws_ami_id=ami-0abc123"
    )
    assert done.returncode != 0 and up is None
    assert "aws_controller_ip must be this machine's public IPv4" in done.stdout


def test_down_plan_finds_what_up_tagged(tmp_path):
    done, down = plan("aws_down.yml", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert down["instance_filters"]["tag:project"] == "grpc-perflab"
    assert "stopped" in down["instance_filters"]["instance-state-name"]
    assert down["security_group"] == "perflab-sg" and down["key_name"] == "perflab-key"


def test_inventory_lists_only_the_tagged_instances_into_the_two_groups():
    inventory = yaml.safe_load((REPO / "inventory" / "aws_ec2.yml").read_text())
    assert inventory["plugin"] == "amazon.aws.aws_ec2"
    assert inventory["filters"]["tag:project"] == "grpc-perflab"
    assert set(inventory["groups"]) == {"servers", "clients"}
