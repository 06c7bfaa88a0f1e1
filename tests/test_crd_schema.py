"""The upstream-API check the other tests rely on (tests/crd_schema.py) finds what an API server
drops or rejects, and the runtime fixtures of tests/testdata/runtimes fit the upstream API and come
back unchanged from a render that has nothing to materialize."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.crd_schema import problems
from tests.support import RUNTIMES, container_patch, load_fixture, render, trainjob

FIXTURES = sorted(p.stem for p in RUNTIMES.glob("*.yaml"))
RUNTIME_FIXTURES = [name for name in FIXTURES if load_fixture(name)["kind"] == "ClusterTrainingRuntime"]


def test_the_fixtures_cover_the_shapes_upstream_ships() -> None:
    shapes = {name: load_fixture(name) for name in RUNTIME_FIXTURES}
    jobs = {name: [j["name"] for j in r["spec"]["template"]["spec"]["replicatedJobs"]] for name, r in shapes.items()}
    assert jobs == {
        "mpi-launcher-as-node": ["node", "launcher"],
        "torch-data-cache": ["dataset-initializer", "node"],
        "torch-initializers": ["dataset-initializer", "model-initializer", "node"],
        "torch-plain": ["node"],
        "torchtune": ["dataset-initializer", "model-initializer", "node"],
    }
    assert shapes["mpi-launcher-as-node"]["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] is True


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fixture_fits_the_upstream_api(name: str) -> None:
    assert problems(load_fixture(name)) == []


@pytest.mark.parametrize("name", RUNTIME_FIXTURES)
def test_a_render_without_resources_returns_every_runtime_as_it_came(name: str) -> None:
    runtime = load_fixture(name)
    job = load_fixture("trainjob-runtime-patches")
    job["spec"]["runtimeRef"]["name"] = runtime["metadata"]["name"]
    out = render([runtime, job])
    assert out.code == 0, out.results
    assert out.items == [runtime, job]


def _patch(resources: dict[str, Any]) -> dict[str, Any]:
    return container_patch("node", "initContainers", {"name": "loader", "resources": resources})


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            lambda j: j["spec"]["runtimePatches"].append(_patch({"limits": {"memory": "1Gi"}})),
            "spec.runtimePatches[1].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
            ".initContainers[0].resources: field not declared by the upstream API (the API server drops it)",
            id="a ContainerPatch resources",
        ),
        pytest.param(
            lambda j: j["spec"].update(runtimeReff={"name": "x"}),
            "spec.runtimeReff: field not declared by the upstream API (the API server drops it)",
            id="a misspelt key",
        ),
        pytest.param(lambda j: j["spec"]["trainer"].update(numNodes="two"), "numNodes", id="a string for an integer"),
        pytest.param(lambda j: j["spec"]["runtimeRef"].pop("name"), "name: ", id="a required field missing"),
        pytest.param(
            lambda j: j["spec"].update(runtimePatches={"manager": "m"}),
            "TrainerV1alpha1RuntimePatch",
            id="a map for a list",
        ),
    ],
)
def test_what_the_api_server_drops_or_rejects_is_a_problem(change: Any, expected: str) -> None:
    job = copy.deepcopy(load_fixture("trainjob-runtime-patches"))
    change(job)
    found = problems(job)
    assert any(expected in p for p in found), found


def test_a_null_the_api_server_prunes_is_not_a_problem() -> None:
    job = trainjob("tj", "torch-distributed", [])
    job["spec"]["suspend"] = None
    assert problems(job) == []
