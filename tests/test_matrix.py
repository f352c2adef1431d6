import pytest

from perflab.contract.matrix import MatrixError, expand
from perflab.host.impls import discover
from perflab.studies import UnknownStudy, get_study
from tests.conftest import REPO, matrix_only, study_vars

KNOWN = {
    "python/grpcio_sync",
    "python/grpcio_sync_seed000",
    "python/grpc_aio",
    "python/grpclib",
    "cpp/hello",
    "go/hello",
}

AWS_IO_KNOWN = {"python/aws_io_grpcio", "python/aws_io_grpcio_seed000", "python/aws_io_grpclib"}


def hello_cells(profile: str, **changes):
    matrix, profiles = study_vars("hello")
    matrix.update(changes)
    return matrix_only(expand("run1", get_study("hello"), matrix, profiles, profile, KNOWN))


def test_hello_matrix_names_only_existing_servers():
    matrix, _ = study_vars("hello")
    known = set(discover(REPO / "servers"))
    missing = {e["impl"] for e in matrix["implementations"].values()} - known
    assert not missing, f"matrix names servers without an impl.toml: {missing}"


def test_quick_profile_expands_every_server_shape_concurrency_and_repeat():
    cells = hello_cells("quick")
    repeats = study_vars("hello")[0]["repeats"]
    # Seven servers in both scenarios, and the two grpcio sync ones again on seed 000's
    # grpcio 1.28.1 in the seed's own scenario.
    assert len(cells) == 7 * 2 * 4 * repeats + 2 * 1 * 4 * repeats
    assert len({c.cell_id for c in cells}) == len(cells)
    # Repeats interleave: every repeat-1 cell runs before any repeat-2 cell.
    repeats = [c.repeat for c in cells]
    assert repeats == sorted(repeats)


def test_reused_servers_are_off_by_default_and_on_spare_the_aa_pairs_fresh_copy():
    from perflab.contract.cell import AA_PARAM

    matrix, profiles = study_vars("hello")
    every = expand("run1", get_study("hello"), matrix, profiles, "quick", KNOWN)
    assert not any(c.reuse_server for c in every)
    matrix["reuse_servers"] = True
    shared = expand("run1", get_study("hello"), matrix, profiles, "quick", KNOWN)
    aa = [c for c in shared if AA_PARAM in c.params]
    assert aa and {c.params[AA_PARAM] for c in aa if not c.reuse_server} == {"a"}
    assert all(c.reuse_server for c in shared if c.params.get(AA_PARAM) != "a")
    # One server per implementation (and stack) and round: its cells run one after another.
    first = [c.server_key() for c in shared if c.repeat == 1 and c.reuse_server]
    blocks = [k for i, k in enumerate(first) if i == 0 or first[i - 1] != k]
    assert len(blocks) == len(set(first)) == 9
    # Copy b always measures a server an earlier cell of its block started, in every round
    # and whichever run id shuffles them.
    for run_id in ("run1", "run2", "run3"):
        ordered = expand(run_id, get_study("hello"), matrix, profiles, "quick", KNOWN)
        for before, cell in zip([None, *ordered], ordered, strict=False):
            if cell.params.get(AA_PARAM) == "b":
                assert before is not None and before.reuse_server
                assert before.server_key() == cell.server_key()


def test_seed_stack_cells_run_seed_000s_grpcio_in_the_seed_scenario_only():
    cells = hello_cells("quick")
    seed = [c for c in cells if c.params.get("stack") == "seed000"]
    assert {c.implementation for c in seed} == {"grpcio_sync_w1", "grpcio_sync_w10"}
    assert {c.scenario for c in seed} == {"seed_n200"}
    assert {c.server.impl for c in seed} == {"python/grpcio_sync_seed000"}
    assert all("-seed000-" in c.cell_id for c in seed)
    # The current stack's cells keep their ids and params: no `stack` (it reads as current).
    current = [c for c in cells if c not in seed]
    assert all("stack" not in c.params and "seed000" not in c.cell_id for c in current)
    # The other way: a run of the current stack only has none.
    assert not any("stack" in c.params for c in hello_cells("quick", stacks=["current"]))
    # Nor a stack scenario the servers do not run in.
    steady_only = hello_cells("quick", stack_scenarios=["steady"])
    assert {c.scenario for c in steady_only if c.params.get("stack")} == {"steady"}


def test_smoke_profile_is_one_short_cell_per_server():
    cells = hello_cells("smoke")
    assert len(cells) == 7
    assert {c.load.concurrency for c in cells} == {10}
    assert all(c.load.duration_s == 1 for c in cells)


def test_seed_shape_cells_use_the_seed_total():
    seed = [c for c in hello_cells("quick") if c.scenario == "seed_n200"]
    assert {c.load.total for c in seed} == {200}
    assert all(c.load.duration_s is None for c in seed)


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"concurrency": [10, 0]}, "perflab_matrix_hello.concurrency"),
        ({"concurrency": [2.5]}, "perflab_matrix_hello.concurrency"),
        ({"concurrency": [20_000]}, "perflab_matrix_hello.concurrency"),
        ({"concurency": [10]}, "perflab_matrix_hello: unknown key(s) ['concurency']"),
        ({"scenarios": ["sometimes"]}, "perflab_matrix_hello.scenarios"),
        (
            {"implementations": {"x": {"impl": "rust/nope"}}},
            "perflab_matrix_hello.implementations.x.impl",
        ),
        ({"run_implementations": ["nope"]}, "perflab_matrix_hello.run_implementations"),
        ({"repeats": 0}, "perflab_matrix_hello.repeats"),
        ({"steady_duration_s": -1}, "perflab_matrix_hello.steady_duration_s"),
    ],
)
def test_bad_values_are_refused_naming_the_key(changes, key):
    with pytest.raises(MatrixError) as err:
        hello_cells("quick", **changes)
    assert key in str(err.value)


def test_unknown_profile_is_refused():
    with pytest.raises(MatrixError, match="perflab_profile: unknown profile 'fastest'"):
        hello_cells("fastest")


def test_profile_override_of_unknown_key_is_refused():
    matrix, profiles = study_vars("hello")
    profiles["smoke"]["concurency"] = [1]
    with pytest.raises(MatrixError, match=r"perflab_profiles_hello.smoke.*concurency"):
        expand("run1", get_study("hello"), matrix, profiles, "smoke", KNOWN)


def test_unknown_study_is_refused_listing_the_known_ones():
    with pytest.raises(UnknownStudy, match="no study 'nosuch'") as err:
        get_study("nosuch")
    for known in ("hello", "aws_io", "calibration"):
        assert known in str(err.value)


def test_an_import_error_inside_a_study_is_not_called_a_missing_study(tmp_path, monkeypatch):
    import perflab.studies

    broken = tmp_path / "broken_study"
    broken.mkdir()
    (broken / "__init__.py").write_text("import perflab.no_such_shared_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(perflab.studies, "__path__", [*perflab.studies.__path__, str(tmp_path)])
    with pytest.raises(ModuleNotFoundError, match="perflab.no_such_shared_module"):
        get_study("broken_study")


def test_connections_default_to_one_recorded_in_every_ghz_cell():
    cells = hello_cells("quick")
    assert {c.load.connections for c in cells} == {1}
    assert {c.params["connections"] for c in cells} == {1}
    # Cell ids are what they were before connections was a key (resume, old runs).
    assert "grpc_aio-steady-c10-r1" in {c.cell_id for c in cells}


def test_each_connection_count_is_a_cell_of_its_own():
    one = hello_cells("quick")
    two = hello_cells("quick", connections=[1, 2])
    assert len(two) == 2 * len(one)
    by_id = {c.cell_id: c for c in two}
    cell = by_id["grpc_aio-steady-c10-k2-r1"]
    assert (cell.load.connections, cell.params["connections"]) == (2, 2)
    assert by_id["grpc_aio-steady-c10-r1"].load.connections == 1


@pytest.mark.parametrize("study", ["hello", "aws_io", "calibration"])
@pytest.mark.parametrize("value", [[0], [1.5], [], "1", [1000]])
def test_bad_connections_are_refused_naming_the_key(study, value):
    matrix, profiles = study_vars(study)
    if study == "calibration":
        matrix["ghz_versions"] = ["0.93.0"]
    matrix["connections"] = value
    with pytest.raises(MatrixError, match=f"perflab_matrix_{study}.connections"):
        expand(
            "run1",
            get_study(study),
            matrix,
            profiles,
            "quick",
            KNOWN | AWS_IO_KNOWN,
        )


def test_calibration_measures_every_pinned_ghz():
    matrix, profiles = study_vars("calibration")
    cells = expand("run1", get_study("calibration"), matrix, profiles, "quick", KNOWN)
    assert {c.load.ghz_version for c in cells} == set(matrix["ghz_versions"])
    assert not any(c.bound_check for c in cells)
