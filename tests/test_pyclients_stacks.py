"""pyclients on two library stacks (current, and seed001: the versions seed 001 measured):
the matrix knob, old runs without a `stack` parameter, claims judged per stack, and the
sentence that attributes a result to the library versions or to the machine."""

from __future__ import annotations

import pandas as pd
import pytest

from perflab.analysis.claims import ClaimsError, on_stacks, parse_claim, read_claims
from perflab.analysis.verdicts import (
    AT_THRESHOLD,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_MEASURED,
    Verdict,
    judge,
)
from perflab.contract.matrix import expand
from perflab.studies import get_study
from perflab.studies.pyclients import analysis as pyclients
from tests.conftest import REPO, matrix_only, study_vars
from tests.test_pyclients import KNOWN, cells

SEED_IMPLS = {
    "grpc_aio": "python/pyclient_grpc_aio_seed001",
    "betterproto_grpclib": "python/pyclient_betterproto_seed001",
}


def test_quick_runs_the_seed_stack_for_the_seeds_two_clients_on_asyncio_only():
    seed = [c for c in cells("quick") if c.params["stack"] == "seed001"]
    # The claims' configurations: both clients, asyncio, seed on 2 scenarios, steady on 3.
    assert len(seed) == 2 * (2 + 3) * 3
    assert {(c.client, c.params["loop"], c.load.client_impl) for c in seed} == {
        (client, "asyncio", impl) for client, impl in SEED_IMPLS.items()
    }
    ids = {c.cell_id for c in cells("quick")}
    assert "grpc_aio-seed001-asyncio-request_reply-seed-r1" in ids
    # The current stack's cell ids are those of the runs before the stacks.
    assert "grpc_aio-asyncio-request_reply-seed-r1" in ids


def test_without_the_stacks_key_only_the_current_stack_runs():
    matrix, profiles = study_vars("pyclients")
    matrix.pop("stacks")
    found = matrix_only(expand("run1", get_study("pyclients"), matrix, profiles, "quick", KNOWN))
    assert len(found) == 7 * 5 * 3
    assert {c.params["stack"] for c in found} == {"current"}
    assert not any("seed001" in c.load.client_impl for c in found)


# --- claims judged per stack ------------------------------------------------------------------

RAW = {
    "id": "aio-slower",
    "seed": "001_x.txt",
    "study": "pyclients",
    "says": "grpclib is faster",
    "source": "prose",
    "metric": "time_per_call",
    "numerator": {"client": "grpc_aio", "params": {"method": "seed"}},
    "denominator": {"client": "betterproto_grpclib", "params": {"method": "seed"}},
    "direction": "greater",
    "threshold": 1.0,
    "stacks": ["current", "seed001"],
}


def stack_claims():
    return on_stacks("claims[0]", parse_claim(0, RAW), RAW["stacks"])


def time_rows(stack: str | None, aio: list[float], grpclib: list[float]) -> list[dict]:
    found = []
    for client, values in (("grpc_aio", aio), ("betterproto_grpclib", grpclib)):
        for repeat, value in enumerate(values, 1):
            row = {
                "study": "pyclients",
                "scenario": "request_reply",
                "implementation": "cpp_numbers",
                "client": client,
                "method": "seed",
                "loop": "asyncio",
                "repeat": repeat,
                "cell_id": f"{client}-{stack}-r{repeat}",
                "status": "ok",
                "metric": "time_per_call",
                "value": value,
                "unit": "ms",
            }
            found.append(row if stack is None else row | {"stack": stack})
    return found


def test_a_claim_naming_stacks_is_one_claim_per_stack_selecting_its_cells():
    current, seed = stack_claims()
    assert (current.id, seed.id) == ("aio-slower", "aio-slower-seed-stack")
    assert current.numerator.params["stack"] == "current" and current.stack_of == ""
    assert seed.denominator.params["stack"] == "seed001" and seed.stack_of == "aio-slower"


@pytest.mark.parametrize("stacks", [["seed001"], ["current", "seed002"], "current", []])
def test_bad_stacks_are_refused(stacks):
    with pytest.raises(ClaimsError, match=r"claims\[0\]\.stacks"):
        on_stacks("claims[0]", parse_claim(0, RAW), stacks)


def test_the_claims_file_judges_every_pyclients_claim_on_both_stacks():
    claims = read_claims(REPO / "data" / "reference" / "claims.yml")
    by_id = {claim.id: claim for claim in claims}
    seed = [claim for claim in claims if claim.stack == "seed001"]
    current = [c for c in claims if c.study == "pyclients" and c.stack == "current"]
    assert len(seed) == len(current) > 0
    for claim in seed:
        assert by_id[claim.stack_of].stack == "current", claim.id
        assert claim.id == claim.stack_of + "-seed-stack"


def test_an_old_run_without_the_stack_parameter_is_the_current_stack():
    current, seed = stack_claims()
    old = pd.DataFrame(time_rows(None, [3.0, 3.1, 3.2], [1.4, 1.5, 1.6]))
    assert judge(current, old).verdict == HOLDS
    assert judge(seed, old).verdict == NOT_MEASURED


def test_each_stack_is_judged_on_its_own_cells():
    current, seed = stack_claims()
    run = pd.DataFrame(
        time_rows("current", [1.4, 1.5, 1.6], [3.0, 3.1, 3.2])
        + time_rows("seed001", [3.0, 3.1, 3.2], [1.4, 1.5, 1.6])
    )
    assert judge(current, run).verdict == FAILS
    assert judge(seed, run).verdict == HOLDS


def test_the_tables_show_the_current_stack_and_an_old_run_whole():
    both = pd.DataFrame(
        time_rows("current", [1.0, 1.0, 1.0], [2.0, 2.0, 2.0])
        + time_rows("seed001", [9.0, 9.0, 9.0], [9.0, 9.0, 9.0])
    )
    assert set(pyclients.study_rows(both)["value"]) == {1.0, 2.0}
    old = pd.DataFrame(time_rows(None, [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]))
    assert len(pyclients.study_rows(old)) == len(old)


# --- the attribution sentence -----------------------------------------------------------------


def verdicts(current: str, seed: str) -> list[Verdict]:
    on_current, on_seed = stack_claims()
    return [Verdict(on_current, current, ""), Verdict(on_seed, seed, "")]


def test_verdicts_that_differ_by_stack_follow_the_library_versions():
    text = pyclients.stack_attribution(verdicts(FAILS, HOLDS))
    assert "`aio-slower` does not hold on the current library stack and holds" in text
    assert "follows the library versions" in text and "machine" not in text


def test_the_same_non_replication_on_both_stacks_follows_the_machine():
    text = pyclients.stack_attribution(verdicts(FAILS, FAILS))
    assert "`aio-slower` holds on neither library stack" in text
    assert "follows the machine" in text and "follows the library versions" not in text


def test_holding_or_undecided_on_both_stacks_attributes_no_non_replication():
    assert "replicates whatever the versions" in pyclients.stack_attribution(verdicts(HOLDS, HOLDS))
    undecided = pyclients.stack_attribution(verdicts(INCONCLUSIVE, INCONCLUSIVE))
    assert "attributes nothing" in undecided and "follows" not in undecided
    # At its threshold on both stacks is no non-replication either (it once read as one).
    at_threshold = pyclients.stack_attribution(verdicts(AT_THRESHOLD, AT_THRESHOLD))
    assert "is at its threshold on both library stacks: this run attributes nothing" in (
        at_threshold
    )
    assert "follows" not in at_threshold


def test_a_run_without_the_seed_stack_says_no_claim_was_measured_on_both():
    text = pyclients.stack_attribution(verdicts(FAILS, NOT_MEASURED))
    assert text == "No claim was measured on both library stacks (current and seed001)."
