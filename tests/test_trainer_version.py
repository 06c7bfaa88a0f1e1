"""``trainerVersion``: what differs on Kubeflow Trainer v2.2 (trainer/releases.py), each case against
the release's code; tests/cluster/test_trainer_releases.py runs the same on both control planes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import render
from tests.test_upstream_semantics import (
    PODSPEC,
    config,
    container,
    deepspeed,
    explain,
    patch,
    rjob,
    runtime,
    torch_runtime,
    trainjob,
)

V2_2 = {"trainerVersion": "v2.2.1"}


def sized_runtime() -> dict[str, Any]:
    node = container("node", {"requests": {"cpu": "4", "memory": "8Gi"}})
    labels = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
    return runtime([rjob("node", [node], labels)], {"numNodes": 1, "torch": {}})


def node_container(view: dict[str, Any]) -> dict[str, Any]:
    (job,) = view["replicatedJobs"]
    (node,) = [c for c in job["containers"] if c["name"] == "node"]
    return node


@pytest.mark.parametrize(
    ("version", "requests", "limits"),
    [
        # v2.3.0 newRuntimeInfo: merged per resource name
        ("v2.3.0", {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}),
        # v2.2.1 builder.go WithResources: replaced; the API server then defaults requests from limits
        ("v2.2.1", {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}),
        ("v2.2", {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"}),
    ],
)
def test_resources_per_node_is_merged_on_v2_3_and_replaces_on_v2_2(
    version: str, requests: dict[str, str], limits: dict[str, str]
) -> None:
    tj = trainjob([], {"resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}})
    view = explain([sized_runtime(), tj], config(trainerVersion=version))
    (job,) = view["replicatedJobs"]
    assert job["podRequests"] == requests
    assert job["podLimits"] == limits


def test_an_empty_resources_per_node_changes_nothing_on_v2_2() -> None:
    """builder.go at v2.2.1 applies resourcesPerNode only when it has limits or requests."""
    tj = trainjob([], {"resourcesPerNode": {}})
    (job,) = explain([sized_runtime(), tj], config(**V2_2))["replicatedJobs"]
    assert job["podRequests"] == {"cpu": "4", "memory": "8Gi"}


def test_mpi_launcher_as_node_on_v2_2_gets_resources_per_node_alone() -> None:
    tj = trainjob([], {"numNodes": 4, "resourcesPerNode": {"limits": {"cpu": "4", "memory": "16Gi"}}})
    jobs = {j["name"]: j for j in explain([deepspeed(), tj], config(**V2_2))["replicatedJobs"]}
    # node's own 2 GPUs and requests are gone: the pods request what they limit.
    assert jobs["node"]["podRequests"] == {"cpu": "4", "memory": "16Gi"}
    assert jobs["launcher"]["podRequests"] == {"cpu": "4", "memory": "16Gi"}


def test_the_move_on_v2_2_carries_every_runtime_value_the_pods_keep() -> None:
    trainer_patch = {"name": "node", "resources": {"limits": {"nvidia.com/gpu": 2}}}
    tj = trainjob([patch("node", containers=[trainer_patch])], {})
    moved = {}
    for version in ("v2.3.0", "v2.2.1"):
        out = render([sized_runtime(), tj], config(trainerResources="moveToResourcesPerNode", trainerVersion=version))
        assert out.code == 0, out.errors()
        moved[version] = out.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"]
    # v2.3.0 merges: only what the plugins read (cpu) is carried, memory stays the runtime's.
    assert moved["v2.3.0"] == {"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "4"}}
    assert moved["v2.2.1"] == {"limits": {"nvidia.com/gpu": "2"}, "requests": {"cpu": "4", "memory": "8Gi"}}
    pods = explain([sized_runtime(), trainjob([], {"resourcesPerNode": moved["v2.2.1"]})], config(**V2_2))
    assert pods["replicatedJobs"][0]["podRequests"] == {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2"}


def test_the_move_on_v2_2_refuses_to_add_what_the_plugins_would_count() -> None:
    trainer_patch = {"name": "node", "resources": {"limits": {"memory": "16Gi"}}}
    tj = trainjob([patch("node", containers=[trainer_patch])], {"resourcesPerNode": {"limits": {"memory": "12Gi"}}})
    out = render([sized_runtime(), tj], config(trainerResources="moveToResourcesPerNode", **V2_2))
    assert out.code == 1
    (error,) = [r for r in out.errors() if "v2.2" in r["message"]]
    assert "requests.cpu" in error["message"] and "builder.go" in error["message"]


def test_every_trainer_patch_value_is_shadowed_on_v2_2() -> None:
    trainer_patch = {"name": "node", "resources": {"limits": {"memory": "64Gi", "cpu": "8"}}}
    per_node = {"limits": {"cpu": "8000m"}}
    tj = trainjob([patch("node", containers=[trainer_patch])], {"resourcesPerNode": per_node})
    paths = {}
    for version in ("v2.3.0", "v2.2.1"):
        out = render([torch_runtime({"torch": {}}), tj], config(trainerResources="error", trainerVersion=version))
        paths[version] = [
            r["field"]["path"]
            for r in out.results
            if r["severity"] == "warning" and "never reaches a pod" in r["message"]
        ]
    assert paths["v2.3.0"] == [], "v2.3.0 merges: memory is the patch's, cpu the same value"
    assert paths["v2.2.1"] == [f"{PODSPEC}.containers[0].resources.limits.memory"], "replaced: only cpu survives"


GRACE = {"terminationGracePeriodSeconds": 30, "containers": [{"name": "loader"}]}


@pytest.mark.parametrize(("version", "refused"), [("v2.3.0", False), ("v2.2.1", True), ("v2.2.0", True)])
def test_termination_grace_period_in_a_pod_spec_patch_exists_from_v2_3(version: str, refused: bool) -> None:
    tj = trainjob([patch("node", **GRACE)])
    out = render([torch_runtime({"torch": {}}), tj], config(trainerVersion=version))
    found = [r for r in out.errors() if r["field"]["path"].endswith("terminationGracePeriodSeconds")]
    assert bool(found) == refused, out.errors()
    if refused:
        assert f'unknown field "{found[0]["field"]["path"]}"' in found[0]["message"]
        assert f"Kubeflow Trainer {version}'s TrainJob CRD does not declare it" in found[0]["message"]


@pytest.mark.parametrize(("version", "refused"), [("v2.3.0", True), ("v2.2.1", False)])
def test_the_storage_uri_rule_exists_from_v2_3(version: str, refused: bool) -> None:
    tj = trainjob([])
    tj["spec"]["initializer"] = {"model": {"storageUri": "not-a-uri"}}
    out = render([torch_runtime({"torch": {}}), tj], config(trainerVersion=version))
    assert any(r["field"]["path"].endswith("storageUri") for r in out.errors()) == refused


def test_an_unsupported_trainer_version_is_an_error_naming_the_supported_ones() -> None:
    out = render([torch_runtime({"torch": {}}), trainjob([])], config(trainerVersion="v2.1.0"))
    assert out.code == 1
    (error,) = out.errors()
    assert error["field"]["path"] == "spec.trainerVersion"
    assert "v2.2.1" in error["message"] and "v2.3.0" in error["message"]
