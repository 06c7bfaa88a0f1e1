"""Issue 22's divergences, against upstream Trainer v2.3.0 running (tests/cluster/): what the
function models or refuses, the live webhooks, CRD rules and controller do or refuse."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import TRAINJOB, ControlPlane
from tests.kit import build
from tests.support import load_fixture, render

pytestmark = pytest.mark.cluster

NS = "default"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"


def _dump(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(list(docs))


def _trainjob(name: str, runtime: str, **spec: Any) -> dict[str, Any]:
    return build.trainjob(name, runtime, namespace=NS, **spec)


def _admit(cp: ControlPlane, text: str, tries: int = 100) -> None:
    """Apply until the webhook's cache holds the runtime (README, Apply order)."""
    for _ in range(tries):
        done = cp.apply_server_side(text, check=False)
        if done.returncode == 0:
            return
        assert "must be created before" in done.stderr, done.stderr
        time.sleep(0.1)
    raise AssertionError(done.stderr)


def _pod(runtime: dict[str, Any], job: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = runtime["spec"]["template"]["spec"]["replicatedJobs"][job]["template"]["spec"]["template"][
        "spec"
    ]
    return spec


def _jobset_container(jobset: dict[str, Any], job: str, name: str = "node") -> dict[str, Any]:
    for rjob in jobset["spec"]["replicatedJobs"]:
        if rjob["name"] == job:
            for c in rjob["template"]["spec"]["template"]["spec"]["containers"]:
                if c["name"] == name:
                    out: dict[str, Any] = c
                    return out
    raise AssertionError(f"no {job}/{name}")


def _function_trainjob(rt: dict[str, Any], tj: dict[str, Any]) -> dict[str, Any]:
    fn = copy.deepcopy(tj)
    fn["metadata"]["namespace"] = NS
    return fn


def test_resources_per_node_drops_the_trainer_container_s_claims(control_plane: ControlPlane) -> None:
    rt = load_fixture("torch-plain")
    rt["metadata"]["name"] = "parity-claims"
    pod = _pod(rt)
    pod["resourceClaims"] = [{"name": "nic", "resourceClaimTemplateName": "rdma-nic"}]
    pod["containers"][0]["resources"] = {"limits": {"cpu": "2"}, "claims": [{"name": "nic"}]}
    per_node = {"limits": {"memory": "8Gi"}, "claims": [{"name": "nic"}]}
    tj = _trainjob("parity-claims", "parity-claims", trainer={"resourcesPerNode": per_node})
    control_plane.apply_server_side(_dump(rt))
    _admit(control_plane, _dump(tj))
    node = _jobset_container(control_plane.wait_for_jobset("parity-claims"), "node")
    assert "claims" not in node.get("resources", {}), node
    assert node["resources"]["limits"] == {"cpu": "2", "memory": "8Gi"}
    out = render([rt, copy.deepcopy(tj)])
    assert out.code == 0, out.errors()
    said = [r for r in out.results if r["severity"] == "warning" and "claims" in r["message"]]
    assert len(said) == 2, "the function warns about both: the runtime's claim and resourcesPerNode's"


def _mpi(name: str) -> dict[str, Any]:
    golden = Path(__file__).resolve().parents[1] / "testdata" / "error" / "mpi-launcher-move-refused" / "input.yaml"
    docs = yaml.safe_load(golden.read_text())
    rt: dict[str, Any] = copy.deepcopy(docs["items"][0])
    rt["metadata"] = {"name": name}
    return rt


def test_mpi_without_run_launcher_as_node_merges_resources_per_node_into_the_launcher(
    control_plane: ControlPlane,
) -> None:
    """newRuntimeInfo sizes the labelled launcher; the workers' job named node keeps the runtime's."""
    rt = _mpi("parity-mpi")
    tj = _trainjob("parity-mpi", "parity-mpi", trainer={"resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}})
    control_plane.apply_server_side(_dump(rt))
    _admit(control_plane, _dump(tj))
    jobset = control_plane.wait_for_jobset("parity-mpi")
    launcher = _jobset_container(jobset, "launcher")
    assert launcher["resources"]["limits"] == {"nvidia.com/gpu": "8"}, "every launcher pod gets the GPUs"
    assert _jobset_container(jobset, "node")["resources"]["limits"] == {"nvidia.com/gpu": "8"}
    patch = {"name": "node", "resources": {"requests": {"memory": "4Gi"}}}
    moved = build.function_config("c", trainerResources="moveToResourcesPerNode")
    job = _trainjob(
        "x",
        "parity-mpi",
        runtimePatches=[build.container_patch("launcher", "containers", patch, manager="a.example.com/m")],
    )
    out = render([rt, job], moved)
    assert out.code == 1 and any("ExtractResourcePerNodeFromRuntime" in r["message"] for r in out.errors())


CRD_CASES = [
    ({"managedBy": "example.com/mine"}, "ManagedBy must be"),
    ({"activeDeadlineSeconds": 0}, "activeDeadlineSeconds"),
    ({"initializer": {"model": {"storageUri": "hf//x"}}}, "storageUri may be empty"),
]


@pytest.mark.parametrize(("spec", "said"), CRD_CASES, ids=["managedBy", "activeDeadlineSeconds", "storageUri"])
def test_the_crd_refuses_what_the_function_refuses(
    control_plane: ControlPlane, spec: dict[str, Any], said: str
) -> None:
    rt = load_fixture("torchtune")
    control_plane.apply_server_side(_dump(rt))
    tj = _trainjob("parity-crd", rt["metadata"]["name"], **copy.deepcopy(spec))
    done = control_plane.create(_dump(tj), dry_run=True, check=False)
    assert done.returncode != 0 and said in done.stderr, done.stderr
    assert render([rt, copy.deepcopy(tj)]).code == 1


def test_jobset_validate_refuses_an_initializer_the_runtime_lacks(control_plane: ControlPlane) -> None:
    rt = load_fixture("torch-plain")
    rt["metadata"]["name"] = "parity-init"
    control_plane.apply_server_side(_dump(rt))
    tj = _trainjob("parity-init", "parity-init", initializer={"dataset": {"storageUri": "hf://a/b"}})
    for _ in range(100):
        done = control_plane.create(_dump(tj), dry_run=True, check=False)
        if "must be created before" not in done.stderr:
            break
    assert done.returncode != 0 and "must have dataset-initializer job" in done.stderr, done.stderr
    out = render([rt, copy.deepcopy(tj)])
    assert any("must have dataset-initializer job" in r["message"] for r in out.errors())


def test_the_runtime_webhook_refuses_what_the_function_will_not_derive(control_plane: ControlPlane) -> None:
    rt = load_fixture("torch-plain")
    rt["metadata"]["name"] = "parity-replicas"
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    done = control_plane.create(_dump(rt), dry_run=True, check=False)
    assert done.returncode != 0 and "always must be 1" in done.stderr, done.stderr
    # Upstream's shipped webhook configuration skips runtimes labelled webhook-validation: disabled
    # (manifests/base/webhook/patch_validating.yaml objectSelector, which make cluster builds in): the
    # same runtime with the label is admitted, and a runtime derived from it (never labelled) is not.
    rt["metadata"]["labels"]["trainer.kubeflow.org/webhook-validation"] = "disabled"
    done = control_plane.create(_dump(rt), dry_run=True, check=False)
    assert done.returncode == 0, done.stderr
    _pod(rt)["initContainers"] = [{"name": "loader", "image": "x/y", "restartPolicy": "Always"}]
    loader = {"name": "loader", "resources": {"limits": {"memory": "2Gi"}}}
    patches = [build.container_patch("node", "initContainers", loader, manager="a.example.com/m")]
    out = render([rt, _trainjob("parity-replicas", "parity-replicas", runtimePatches=patches)])
    assert out.code == 1 and any("validateReplicatedJobs" in r["message"] for r in out.errors())


def test_upstream_admits_a_misspelt_container_the_function_refuses(control_plane: ControlPlane) -> None:
    """jobset.go Validate checks names against the merged spec (docs/merge.md: where the function differs)."""
    rt = load_fixture("torch-plain")
    rt["metadata"]["name"] = "parity-typo"
    control_plane.apply_server_side(_dump(rt))
    typo = {"name": "nodee", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    patches = [build.container_patch("node", "containers", typo, manager="a.example.com/m")]
    tj = _trainjob("parity-typo", "parity-typo", runtimePatches=patches)
    for _ in range(100):
        done = control_plane.create(_dump(tj), dry_run=True, check=False)
        if "must be created before" not in done.stderr:
            break
    assert done.returncode == 0, done.stderr
    out = render([rt, copy.deepcopy(tj)])
    assert out.code == 1 and any("no container 'nodee'" in r["message"] for r in out.errors())


def test_spec_trainer_is_immutable_even_while_suspended(control_plane: ControlPlane) -> None:
    rt = load_fixture("torch-plain")
    rt["metadata"]["name"] = "parity-immutable"
    control_plane.apply_server_side(_dump(rt))
    tj = _trainjob(
        "parity-immutable", "parity-immutable", suspend=True, trainer={"resourcesPerNode": {"limits": {"cpu": "1"}}}
    )
    _admit(control_plane, _dump(tj))
    tj["spec"]["trainer"]["resourcesPerNode"]["limits"]["cpu"] = "2"
    done = control_plane.apply_server_side(_dump(tj), check=False)
    assert done.returncode != 0 and "field is immutable" in done.stderr, done.stderr
    got = control_plane.get(TRAINJOB, "parity-immutable", NS)
    assert got is not None and json.dumps(got["spec"]["trainer"]["resourcesPerNode"]) == '{"limits": {"cpu": "1"}}'


def test_a_container_claim_must_name_a_pod_resource_claim(control_plane: ControlPlane) -> None:
    """Kubernetes' pod validation, which the JobSet's pods meet (no JobSet controller runs here, so
    a Pod stands in for them)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "parity-claim", "namespace": NS},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "g"}],
            "containers": [{"name": "node", "image": "x/y", "resources": {"claims": [{"name": "fpga"}]}}],
        },
    }
    done = control_plane.create(_dump(pod), dry_run=True, check=False)
    assert done.returncode != 0 and "fpga" in done.stderr, done.stderr
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    control_plane.create(_dump(pod), dry_run=True)
