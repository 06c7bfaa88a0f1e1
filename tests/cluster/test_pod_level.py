"""Pod-level ``spec.resources`` (issue 33) on the control plane: for a generated family of runtimes
with pod-level resources and TrainJobs overriding their containers, the function refuses exactly
the TrainJobs whose Pods the API server refuses.

Upstream's verdict: Trainer v2.3.0's ContainerPatch has no ``resources`` (the API server refuses
the TrainJob as written: "field not declared in schema"), so the native merge is applied instead: the
runtime with the overrides merged into its containers (each a key added to requests or limits, as a
strategic merge does) and the TrainJob with resourcesPerNode alone. Trainer's controller builds its
JobSet, and a Pod made from the JobSet's ``node`` template is created with ``--dry-run=server`` (no
JobSet controller runs here: the Pod create is what refuses). Where the
function accepts, its own output (derived runtime and rewritten TrainJob) is applied too, and the
Pod of that JobSet must be admitted."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_upstream_parity import NS, _admit, _dump
from tests.kit import build
from tests.support import container_patch, render, trainer_runtime

pytestmark = pytest.mark.cluster

# The runtime's pod-level resources, one variant per defaulting path of pkg/apis/core/v1/defaults.go.
POD_LEVEL: dict[str, dict[str, Any]] = {
    "both": {"requests": {"cpu": "6", "memory": "28Gi"}, "limits": {"cpu": "8", "memory": "32Gi"}},
    "limits": {"limits": {"cpu": "8", "memory": "32Gi"}},
    "requests": {"requests": {"cpu": "6", "memory": "28Gi"}},
}
# Overrides: the sidecar's request, the regular sidecar container's limit, resourcesPerNode, and the
# request of the init container that starts after the sidecar (its phase is the two together).
SIDECAR = [None, "6Gi", "9Gi"]
INIT = [None, "24Gi", "25Gi"]
METRICS_LIMIT = [None, "30Gi", "33Gi"]
PER_NODE: list[dict[str, Any] | None] = [
    None,
    {"requests": {"memory": "20Gi"}},
    {"requests": {"memory": "26Gi"}, "limits": {"memory": "26Gi"}},
]


def _runtime(name: str, pod_level: dict[str, Any]) -> dict[str, Any]:
    sidecar = {
        "name": "data-loader",
        "image": "busybox:1.36",
        "restartPolicy": "Always",
        "resources": {"requests": {"cpu": "1", "memory": "4Gi"}},
    }
    containers = [
        {
            "name": "node",
            "image": "pytorch/pytorch:2.13.0",
            "resources": {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"memory": "24Gi"}},
        },
        {"name": "metrics", "image": "busybox:1.36", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}},
    ]
    init = {"name": "prepare", "image": "busybox:1.36", "resources": {"requests": {"memory": "1Gi"}}}
    pod = {"resources": copy.deepcopy(pod_level), "containers": containers}
    return trainer_runtime(name, [sidecar, init], pod=pod)


Overrides = tuple[str | None, str | None, dict[str, Any] | None, str | None]


def _trainjob(name: str, runtime: str, overrides: Overrides) -> dict[str, Any]:
    sidecar, metrics, per_node, init = overrides
    patches = []
    if sidecar:
        patches.append(
            container_patch(
                "node", "initContainers", {"name": "data-loader", "resources": {"requests": {"memory": sidecar}}}
            )
        )
    if metrics:
        patches.append(
            container_patch(
                "node",
                "containers",
                {"name": "metrics", "resources": {"limits": {"memory": metrics}}},
                "other.example.com/m",
            )
        )
    if init:
        resources = {"requests": {"memory": init}}
        patches.append(
            container_patch("node", "initContainers", {"name": "prepare", "resources": resources}, "init.example.com/i")
        )
    trainer = {"trainer": {"resourcesPerNode": per_node}} if per_node else {}
    return build.trainjob(name, runtime, patches or None, namespace=NS, **trainer)


def _family() -> list[tuple[str, dict[str, Any], Overrides]]:
    """A small cross-section of every variant (not the full product), boundary values on both sides."""
    out = []
    for i, (variant, overrides) in enumerate(
        itertools.product(POD_LEVEL, itertools.product(SIDECAR, METRICS_LIMIT, PER_NODE, INIT))
    ):
        if i % 7 == 0 or overrides.count(None) == 3:
            out.append((variant, POD_LEVEL[variant], overrides))
    return out


def _native(runtime: dict[str, Any], tj: dict[str, Any], overrides: Overrides) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runtime with the patches merged in (under another name), and the TrainJob without them."""
    merged = copy.deepcopy(runtime)
    merged["metadata"]["name"] += "-native"
    pod = merged["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    sidecar, metrics, _, init = overrides
    if sidecar:
        pod["initContainers"][0]["resources"]["requests"]["memory"] = sidecar
    if init:
        pod["initContainers"][1]["resources"]["requests"]["memory"] = init
    if metrics:
        pod["containers"][1]["resources"]["limits"] = {"memory": metrics}
    native = copy.deepcopy(tj)
    native["metadata"]["name"] += "-native"
    native["spec"]["runtimeRef"]["name"] = merged["metadata"]["name"]
    native["spec"].pop("runtimePatches", None)
    return merged, native


def _pod_verdict(cp: ControlPlane, name: str) -> tuple[bool, str]:
    """Whether the API server admits a Pod made from the ``node`` template of the TrainJob's JobSet."""
    jobset = cp.wait_for_jobset(name, NS)
    template = next(j for j in jobset["spec"]["replicatedJobs"] if j["name"] == "node")["template"]["spec"]["template"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{name}-pod", "namespace": NS, "labels": template.get("metadata", {}).get("labels", {})},
        "spec": template["spec"],
    }
    done = cp.create(yaml.safe_dump(pod), dry_run=True, check=False)
    return done.returncode == 0, done.stderr


def test_the_function_refuses_exactly_the_pods_the_api_server_refuses(control_plane: ControlPlane) -> None:
    cp = control_plane
    cp.apply_server_side(
        _dump({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    )
    family = _family()
    assert len(family) >= 12
    seen = {True: 0, False: 0}
    for i, (variant, pod_level, overrides) in enumerate(family):
        runtime = _runtime(f"pl-rt-{i}", pod_level)
        tj = _trainjob(f"pl-{i}", runtime["metadata"]["name"], overrides)
        rendered = render([copy.deepcopy(runtime), copy.deepcopy(tj)])
        errors = rendered.errors()
        assert all("pod-level" in e["message"] for e in errors), errors
        merged, native = _native(runtime, tj, overrides)
        cp.apply_server_side(_dump(merged))
        _admit(cp, _dump(native))
        admitted, stderr = _pod_verdict(cp, native["metadata"]["name"])
        sidecar, metrics, per_node, init = overrides
        case = f"case {i}: pod-level {variant}, sidecar {sidecar}, metrics limit {metrics}, "
        case += f"resourcesPerNode {per_node}, init {init}"
        assert admitted == (not errors), (
            f"{case}: API server {'admits' if admitted else 'refuses: ' + stderr}; function: {errors}"
        )
        seen[admitted] += 1
        if not admitted:
            assert "spec.resources" in stderr, stderr
            continue
        # The function's own output reaches the same verdict.
        out = [o for o in rendered.items if o["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime", "TrainJob")]
        derived = next((o for o in out if o["kind"] == "TrainJob"), None)
        assert derived is not None
        renamed = copy.deepcopy(derived)
        renamed["metadata"]["name"] = f"pl-fn-{i}"
        renamed["metadata"]["namespace"] = NS
        cp.apply_server_side(_dump(*[o for o in out if o["kind"] != "TrainJob"]))
        _admit(cp, _dump(renamed))
        admitted, stderr = _pod_verdict(cp, f"pl-fn-{i}")
        assert admitted, f"{case}: the function's output is refused: {stderr}"
    assert seen[True] and seen[False], seen


# (the regular container metrics' hugepages-2Mi, node's) against a pod-level limit of 1Gi.
HUGEPAGES = [("600Mi", "400Mi"), ("600Mi", "600Mi"), ("1Gi", None), ("1100Mi", None)]


def test_hugepages_aggregate_limits_against_the_pod_level_limit(control_plane: ControlPlane) -> None:
    """The aggregate hugepages limit (validatePodResourceConsistency: not overcommittable) and a
    single container's limit, each refused where the API server refuses the Pod."""
    cp = control_plane
    cp.apply_server_side(
        _dump({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    )
    verdicts = []
    for i, (metrics, node) in enumerate(HUGEPAGES):
        runtime = _runtime(f"pl-hp-{i}", {"limits": {"memory": "32Gi", "hugepages-2Mi": "1Gi"}})
        pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        if node:
            for section in ("requests", "limits"):
                pod["containers"][0]["resources"][section]["hugepages-2Mi"] = node
        resources = {"requests": {"hugepages-2Mi": metrics}, "limits": {"hugepages-2Mi": metrics, "memory": "2Gi"}}
        tj = _trainjob(f"pl-hp-{i}", f"pl-hp-{i}", (None, None, None, None))
        tj["spec"]["runtimePatches"] = [
            container_patch("node", "containers", {"name": "metrics", "resources": resources})
        ]
        errors = render([copy.deepcopy(runtime), copy.deepcopy(tj)]).errors()
        assert all("pod-level" in e["message"] for e in errors), errors
        merged = copy.deepcopy(runtime)
        merged["metadata"]["name"] += "-native"
        merged_pod = merged["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        merged_pod["containers"][1]["resources"] = {
            "requests": {**merged_pod["containers"][1]["resources"]["requests"], **resources["requests"]},
            "limits": resources["limits"],
        }
        native = _trainjob(f"pl-hp-{i}-native", merged["metadata"]["name"], (None, None, None, None))
        cp.apply_server_side(_dump(merged))
        _admit(cp, _dump(native))
        admitted, stderr = _pod_verdict(cp, native["metadata"]["name"])
        assert admitted == (not errors), (
            f"hugepages {metrics}/{node}: API server {stderr or 'admits'}; function {errors}"
        )
        verdicts.append(admitted)
    assert verdicts == [True, False, True, False]
