"""AWS topology. Real AWS is never contacted: the plan tests run only local tasks, and the
lifecycle tests run the user's playbooks and inventory, unchanged, against moto's EC2 emulator
served on loopback, reached through the standard AWS_ENDPOINT_URL (botocore reads it, so the
amazon.aws modules and the aws_ec2 inventory plugin do too) with fake credentials.

The plan (`--tags plan`) opens ssh to the controller's address alone, tags everything for the
inventory and teardown, and deletes volumes with the instances; a missing or bad controller
address is refused. The lifecycle: aws_up.yml makes the key pair, the security group and two
tagged instances; the inventory lists exactly those two in servers and clients; a second
aws_up.yml changes nothing; aws_down.yml leaves nothing (checked by describe calls); an
aws_up.yml that fails halfway (an AMI the emulator refuses) leaves only what aws_down.yml
cleans."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from perflab.net import free_port
from tests.background import listening
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


# --- the lifecycle against the EC2 emulator on loopback -----------------------------------
REGION = "eu-west-1"  # the playbooks' and the inventory's default region
CONTROLLER_IP = "203.0.113.7"  # a documentation address: the /32 ssh is opened to
TAGS = {"project": "grpc-perflab"}
REFUSED_AMI = "ami-0123456789abcdef0"  # well formed, unknown to the emulator


@dataclass
class Emulator:
    """moto's server on a loopback port, and the environment every AWS client here gets."""

    endpoint: str
    env: dict[str, str]
    home: Path

    def ec2(self):  # noqa: ANN201 - a boto3 EC2 client
        import boto3

        # Everything explicit: this process's own environment and ~/.aws play no part.
        return boto3.session.Session(
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            aws_session_token="testing",
            region_name=REGION,
        ).client("ec2", endpoint_url=self.endpoint)

    def run(self, *argv: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
        assert_loopback(self.env["AWS_ENDPOINT_URL"])
        return subprocess.run(
            [str(Path(sys.executable).parent / argv[0]), *argv[1:]],
            cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout, check=False,
        )


def assert_loopback(endpoint: str) -> None:
    """Refuses to run anything unless the AWS endpoint is this machine's loopback."""
    host = urlsplit(endpoint).hostname or ""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: it could resolve anywhere, so it is refused too
        loopback = False
    assert loopback, f"AWS_ENDPOINT_URL {endpoint} is not loopback"


def fake_aws_env(endpoint: str, home: Path) -> dict[str, str]:
    """This environment less every AWS/boto setting, plus fake credentials and the emulator:
    no profile, config file, metadata service or other endpoint to fall back to."""
    env = {key: value for key, value in os.environ.items()
           if not key.upper().startswith(("AWS_", "BOTO", "EC2_", "S3_"))
           and key.upper() not in {"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"}}
    dead_proxy = f"http://127.0.0.1:{free_port('127.0.0.1')}"  # nothing listens there
    env.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_SESSION_TOKEN="testing",
        AWS_DEFAULT_REGION=REGION,
        AWS_REGION=REGION,
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=str(home / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(home / "no-aws-credentials"),
        # Belt and braces: a call that ignored the endpoint would go through this proxy,
        # where nothing listens, and fail; only loopback is reached directly.
        HTTPS_PROXY=dead_proxy,
        HTTP_PROXY=dead_proxy,
        NO_PROXY="127.0.0.1",
        # The playbooks' key folder and the inventory's key path are under ~: a fresh home.
        HOME=str(home),
        ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
        ANSIBLE_NOCOLOR="1",
    )
    assert_loopback(env["AWS_ENDPOINT_URL"])
    return env


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    port = free_port("127.0.0.1")
    endpoint = f"http://127.0.0.1:{port}"
    home = tmp_path / "home"
    home.mkdir()
    env = fake_aws_env(endpoint, home)
    # Like EC2, refuse an AMI id it does not know (the half-failed aws_up below needs that).
    server_env = {**env, "MOTO_ENABLE_AMI_VALIDATION": "true"}
    argv = [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)]
    with listening(argv, server_env, tmp_path / "moto.log", port):
        yield Emulator(endpoint, env, home)


def known_ami(ec2) -> str:  # noqa: ANN001
    return sorted(image["ImageId"] for image in ec2.describe_images()["Images"])[0]


def up(emu: Emulator, ami: str) -> subprocess.CompletedProcess[str]:
    return emu.run("ansible-playbook", "playbooks/aws_up.yml",
                   "-e", f"aws_controller_ip={CONTROLLER_IP}", "-e", f"aws_ami_id={ami}")


def changed_count(done: subprocess.CompletedProcess[str]) -> int:
    recap = re.search(r"localhost\s+: ok=\d+\s+changed=(\d+)", done.stdout)
    assert recap, done.stdout[-3000:]
    return int(recap.group(1))


def ours(ec2) -> dict[str, list]:  # noqa: ANN001
    """Everything of the project's still in the emulator (terminated instances are gone)."""
    tag_filters = [{"Name": f"tag:{key}", "Values": [value]} for key, value in TAGS.items()]
    instances = [
        instance
        for reservation in ec2.describe_instances(Filters=tag_filters)["Reservations"]
        for instance in reservation["Instances"]
        if instance["State"]["Name"] != "terminated"
    ]
    groups = ec2.describe_security_groups(
        Filters=[{"Name": "group-name", "Values": ["perflab-sg"]}])["SecurityGroups"]
    keys = ec2.describe_key_pairs(Filters=[{"Name": "key-name", "Values": ["perflab-key"]}])
    return {"instances": instances, "groups": groups, "keys": keys["KeyPairs"]}


def unwrap(value):  # noqa: ANN001, ANN201 - JSON from ansible-inventory
    """ansible-inventory marks values from outside as {"__ansible_unsafe": value}."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {key: unwrap(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap(item) for item in value]
    return value


def test_lifecycle_up_inventory_up_again_down(emulator: Emulator) -> None:
    ec2 = emulator.ec2()
    ami = known_ami(ec2)
    # Someone else's instance in the same account: never listed, never terminated.
    other = ec2.run_instances(ImageId=ami, MinCount=1, MaxCount=1, InstanceType="t3.micro")
    other_id = other["Instances"][0]["InstanceId"]

    done = up(emulator, ami)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    made = ours(ec2)

    # The key pair, and the private half on the controller only, mode 0600.
    assert [key["KeyName"] for key in made["keys"]] == ["perflab-key"]
    key_file = emulator.home / ".perflab" / "aws" / "id_ed25519"
    assert key_file.is_file() and key_file.stat().st_mode & 0o777 == 0o600
    assert made["keys"][0]["KeyFingerprint"]

    # The group: ssh from the controller's /32 only, anything from members of the group.
    [group] = made["groups"]
    inbound = group["IpPermissions"]
    cidrs = [(rule["IpProtocol"], rule.get("FromPort"), rule.get("ToPort"), ip["CidrIp"])
             for rule in inbound for ip in rule.get("IpRanges", [])]
    assert cidrs == [("tcp", 22, 22, f"{CONTROLLER_IP}/32")]
    by_group = [(rule["IpProtocol"], pair["GroupId"])
                for rule in inbound for pair in rule.get("UserIdGroupPairs", [])]
    assert by_group == [("-1", group["GroupId"])]
    assert not [rule for rule in inbound if rule.get("Ipv6Ranges")]
    assert {tag["Key"]: tag["Value"] for tag in group.get("Tags", [])}.items() >= TAGS.items()

    # Two running instances, tagged with their role, in that group, with that key.
    instances = {
        {tag["Key"]: tag["Value"] for tag in instance["Tags"]}["Name"]: instance
        for instance in made["instances"]
    }
    assert sorted(instances) == ["perflab-client", "perflab-server"]
    for name, role in [("perflab-server", "servers"), ("perflab-client", "clients")]:
        instance = instances[name]
        tags = {tag["Key"]: tag["Value"] for tag in instance["Tags"]}
        assert tags["perflab_role"] == role and tags["project"] == "grpc-perflab"
        assert instance["State"]["Name"] == "running"
        assert instance["ImageId"] == ami and instance["KeyName"] == "perflab-key"
        assert [g["GroupName"] for g in instance["SecurityGroups"]] == ["perflab-sg"]
    volumes = [mapping["Ebs"]["VolumeId"]
               for instance in made["instances"] for mapping in instance["BlockDeviceMappings"]]
    assert len(volumes) == 2

    # The inventory the user runs lists exactly those two, grouped, with the composed vars.
    listed = emulator.run("ansible-inventory", "-i", "inventory/aws_ec2.yml", "--list")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "reserved name" not in listed.stderr, listed.stderr[-3000:]
    inventory = unwrap(json.loads(listed.stdout))
    hostvars = inventory["_meta"]["hostvars"]
    assert sorted(hostvars) == ["perflab-client", "perflab-server"]
    assert inventory["servers"]["hosts"] == ["perflab-server"]
    assert inventory["clients"]["hosts"] == ["perflab-client"]
    for name, instance in instances.items():
        host = hostvars[name]
        assert host["ec2_instance_id"] == instance["InstanceId"] != other_id
        assert host["ansible_host"] == instance["PublicIpAddress"]
        assert host["perflab_data_address"] == instance["PrivateIpAddress"]
        assert host["ansible_user"] == "admin" and host["perflab_topology"] == "aws"
        assert host["perflab_remote_servers"] is True
        # The key the inventory connects with is the one aws_up.yml wrote.
        assert Path(host["ansible_ssh_private_key_file"].replace("~", str(emulator.home), 1)) \
            == key_file

    # A second aws_up.yml finds everything in place.
    again = up(emulator, ami)
    assert again.returncode == 0, again.stdout[-4000:]
    assert changed_count(again) == 0, again.stdout[-4000:]
    assert len(ours(ec2)["instances"]) == 2

    done = emulator.run("ansible-playbook", "playbooks/aws_down.yml")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert ours(ec2) == {"instances": [], "groups": [], "keys": []}
    left = [v["VolumeId"] for v in ec2.describe_volumes()["Volumes"] if v["VolumeId"] in volumes]
    assert left == [], "volumes outlived their instances"
    assert not key_file.parent.exists()
    # The other instance is untouched.
    [[survivor]] = [r["Instances"] for r in
                    ec2.describe_instances(InstanceIds=[other_id])["Reservations"]]
    assert survivor["State"]["Name"] == "running"


def test_up_failing_halfway_leaves_only_what_down_cleans(emulator: Emulator) -> None:
    ec2 = emulator.ec2()
    done = up(emulator, REFUSED_AMI)
    assert done.returncode != 0
    assert "InvalidAMIID" in done.stdout + done.stderr
    # It got as far as the key pair and the group, and started no instance.
    made = ours(ec2)
    assert [key["KeyName"] for key in made["keys"]] == ["perflab-key"]
    assert [group["GroupName"] for group in made["groups"]] == ["perflab-sg"]
    assert made["instances"] == []

    down = emulator.run("ansible-playbook", "playbooks/aws_down.yml")
    assert down.returncode == 0, down.stdout[-4000:] + down.stderr[-2000:]
    assert ours(ec2) == {"instances": [], "groups": [], "keys": []}
    assert not (emulator.home / ".perflab" / "aws").exists()


def test_the_emulator_guard_refuses_anything_but_loopback(tmp_path: Path) -> None:
    for endpoint in ["https://ec2.eu-west-1.amazonaws.com", "http://10.0.0.1:5000", ""]:
        with pytest.raises(AssertionError, match="is not loopback"):
            fake_aws_env(endpoint, tmp_path)
