"""Seed 003's two readings: the claims file's `client_orders` copies a claim per client order
(parallel: the prose, sequential: the log), and the orders page says which reading the
seed's own per-1 000 figures sit closer to, from both readings' measured figures."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from perflab.analysis.claims import ClaimsError, read_claims
from perflab.analysis.frames import read_reference
from perflab.studies.orders import analysis as orders
from tests.conftest import REPO

REFERENCE = REPO / "data" / "reference"

CLAIM = """
claims:
  - id: per-order
    seed: 003_x.txt
    study: orders
    says: "x"
    source: prose
    metric: elapsed_per_1000_orders
    numerator: {params: {orders: 10000, clients: 1000, latency_profile: none}}
    denominator: {params: {orders: 1000, clients: 1000, latency_profile: none}}
    pair_by: [clients, workers]
    bound: {within: 0.1}
    note: The parallel note.
    client_orders:
      parallel: {}
      sequential:
        numerator: {orders: 5000, clients: 5}
        denominator: {orders: 1000, clients: null}
        pair_by: [workers]
        note: The sequential sentence.
"""


def test_client_orders_copy_a_claim_per_reading(tmp_path):
    path = tmp_path / "claims.yml"
    path.write_text(CLAIM)
    parallel, sequential = read_claims(path)
    assert (parallel.id, parallel.reading, parallel.client_order) == (
        "per-order",
        "prose",
        "parallel",
    )
    assert parallel.numerator.params["client_order"] == "parallel"
    assert parallel.pair_by == ("clients", "workers") and parallel.client_order_of == ""
    assert (sequential.id, sequential.reading) == ("per-order-sequential", "log")
    assert sequential.client_order_of == "per-order"
    assert sequential.numerator.params == {
        "orders": 5000,
        "clients": 5,
        "latency_profile": "none",
        "client_order": "sequential",
    }
    # null drops a parameter: the denominator takes any client count.
    assert "clients" not in sequential.denominator.params
    assert sequential.pair_by == ("workers",)
    assert sequential.note == "The parallel note. The sequential sentence."


@pytest.mark.parametrize(
    "orders_block",
    [
        "    client_orders:\n      sequential: {}\n",
        "    client_orders:\n      parallel: {}\n      shuffled: {}\n",
        "    client_orders:\n      parallel: {}\n      sequential: {colour: red}\n",
    ],
)
def test_a_bad_client_orders_entry_is_refused(tmp_path, orders_block):
    text = CLAIM.split("    client_orders:")[0] + orders_block
    path = tmp_path / "claims.yml"
    path.write_text(text)
    with pytest.raises(ClaimsError, match="client_orders"):
        read_claims(path)


def test_every_orders_claim_is_judged_on_both_readings_but_the_tls_expectation():
    claims = [c for c in read_claims(REFERENCE / "claims.yml") if c.study == "orders"]
    by_id = {c.id: c for c in claims}
    for claim in claims:
        sides = [claim.numerator] + ([claim.denominator] if claim.denominator else [])
        if claim.client_order == "sequential":
            assert by_id[claim.client_order_of].client_order == "parallel"
            assert all(s.params["client_order"] == "sequential" for s in sides), claim.id
        elif claim.reading != "expectation":
            assert claim.id + "-sequential" in by_id, claim.id
            assert all(s.params["client_order"] == "parallel" for s in sides), claim.id


def frame(figures: dict[tuple[str, str], float]) -> pd.DataFrame:
    """read_run()-shaped rows: (client order, latency profile) -> seconds per 1 000 orders,
    unary plaintext on 10 workers, 1 and 5 clients, three repeats."""
    out = []
    for (order, profile), value in figures.items():
        for clients in (1, 5):
            for repeat in (1, 2, 3):
                out.append(
                    {
                        "run_id": "r",
                        "study": "orders",
                        "scenario": "localhost_unary",
                        "implementation": "grpcio_python",
                        "client": "grpcio_python",
                        "mode": "unary",
                        "security": "plaintext",
                        "clients": clients,
                        "orders": 1000 * clients,
                        "workers": 10,
                        "topology": "localhost",
                        "latency_profile": profile,
                        "client_order": order,
                        "repeat": repeat,
                        "metric": "elapsed_per_1000_orders",
                        "value": value * (1 + 0.01 * repeat),
                        "unit": "s",
                        "cell_id": f"{order}-{profile}-{clients}-{repeat}",
                        "status": "ok",
                    }
                )
    return pd.DataFrame(out)


def fit_of(figures: dict[tuple[str, str], float]) -> orders.ReadingFit:
    rows = frame(figures)
    summaries = {order: orders.summarize(rows, order) for order in orders.READING_WORDS}
    return orders.reading_fit(summaries, read_reference(REFERENCE, orders.STUDY))


def seed_only() -> orders.ReadingFit:
    return orders.reading_fit({}, read_reference(REFERENCE, orders.STUDY))


def test_the_seed_figures_come_from_the_reference_table():
    fit = seed_only()
    runs = orders.published_runs(read_reference(REFERENCE, orders.STUDY))
    lan = runs[(runs["scenario"] == "server_to_server_unary") & (runs["clients"] == 1000)]
    assert fit.seed["lan"] == lan.loc[lan["orders"] == 1000, "per_1000_orders_s"].iloc[0]
    assert fit.seed["none"] < fit.seed["lan"]


@pytest.mark.parametrize("closer", ["sequential", "parallel"])
def test_the_page_names_the_reading_the_seed_figures_sit_closer_to(closer):
    seed = seed_only().seed
    other = "parallel" if closer == "sequential" else "sequential"
    # The closer reading measures the seed's figures give or take 10%, the other a fifth.
    figures = {(closer, p): seed[p] * 1.1 for p in seed} | {(other, p): seed[p] / 5 for p in seed}
    fit = fit_of(figures)
    assert fit.closer() == closer
    sentence = orders.reading_sentence(fit)
    assert f"sit closer to {orders.READING_WORDS[closer]}" in sentence
    assert f"with {orders.READING_WORDS[other]}" in sentence
    assert f"{fit.seed['none']:.2f} s localhost" in sentence
    assert fit.distance(other) == pytest.approx(2 * math.log(5), rel=0.05)


def test_the_page_says_when_a_reading_was_not_measured():
    seed = seed_only().seed
    fit = fit_of({("parallel", p): seed[p] for p in seed})
    assert fit.closer() is None
    assert "cannot be set beside both readings" in orders.reading_sentence(fit)
    assert "no sequential unary cells" in orders.reading_sentence(fit)
