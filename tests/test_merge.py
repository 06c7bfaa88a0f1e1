"""Resource merging: upstream's rules in a table, and `kubectl patch --type strategic` as the oracle.

A runtime patch is a strategic merge patch on the JobSet spec (kubeflow/trainer
``pkg/runtime/core/trainingruntime.go`` ``mergeRuntimePatches``): the same merge ``kubectl patch`` does
on a Pod's container. resourcesPerNode goes through ``pkg/util/trainingruntime/trainingruntime.go``
``MergeResourceRequirements`` (claims by name, nulls pruned by the API server before).
"""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.kube.merge import compose_patches, merge_requirements, without_nulls

from tests.support import kubectl_patch

CASES: list[tuple[str, dict[str, Any] | None, list[dict[str, Any]], dict[str, Any]]] = [
    (
        "patch adds a key",
        {"limits": {"memory": "8Gi"}},
        [{"limits": {"cpu": "1"}}],
        {"limits": {"memory": "8Gi", "cpu": "1"}},
    ),
    (
        "patch replaces a key",
        {"limits": {"memory": "8Gi"}},
        [{"limits": {"memory": "64Gi"}}],
        {"limits": {"memory": "64Gi"}},
    ),
    (
        "later manager wins per key",
        {"limits": {"memory": "8Gi", "cpu": "1"}},
        [{"limits": {"memory": "16Gi"}}, {"limits": {"memory": "24Gi"}}],
        {"limits": {"memory": "24Gi", "cpu": "1"}},
    ),
    (
        "null removes a key",
        {"requests": {"cpu": "1", "memory": "1Gi"}},
        [{"requests": {"cpu": None}}],
        {"requests": {"memory": "1Gi"}},
    ),
    (
        "null removes a whole map",
        {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
        [{"requests": None}],
        {"limits": {"cpu": "2"}},
    ),
    ("removing the last key drops the map", {"requests": {"cpu": "1"}}, [{"requests": {"cpu": None}}], {}),
    (
        "$patch: replace replaces the map",
        {"limits": {"memory": "8Gi", "cpu": "2"}},
        [{"limits": {"$patch": "replace", "memory": "16Gi"}}],
        {"limits": {"memory": "16Gi"}},
    ),
    ("no runtime resources", None, [{"limits": {"memory": "1Gi"}}], {"limits": {"memory": "1Gi"}}),
    (
        # ResourceRequirements.claims has no patchStrategy (k8s.io/api/core/v1): the list is replaced.
        "claims in a runtime patch replace the list",
        {"claims": [{"name": "gpu"}, {"name": "nic", "request": "a"}]},
        [{"claims": [{"name": "nic", "request": "b"}, {"name": "fpga"}]}],
        {"claims": [{"name": "nic", "request": "b"}, {"name": "fpga"}]},
    ),
    (
        "a later patch's claims replace an earlier patch's",
        {"claims": [{"name": "gpu"}]},
        [{"claims": [{"name": "nic"}]}, {"limits": {"cpu": "1"}}, {"claims": [{"name": "fpga"}]}],
        {"claims": [{"name": "fpga"}], "limits": {"cpu": "1"}},
    ),
]

# resourcesPerNode: MergeResourceRequirements (pkg/util/trainingruntime/trainingruntime.go), claims by name.
PER_NODE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "claims merge by name",
        {"claims": [{"name": "gpu"}, {"name": "nic", "request": "a"}]},
        {"claims": [{"name": "nic", "request": "b"}, {"name": "fpga"}]},
        {"claims": [{"name": "gpu"}, {"name": "nic", "request": "b"}, {"name": "fpga"}]},
    ),
    (
        "limits and requests merge per key",
        {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1"}},
        {"limits": {"memory": "2Gi"}},
        {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1"}},
    ),
    (
        # A typed field: the API server prunes the null before the controller reads it.
        "a null deletes nothing",
        {"limits": {"cpu": "1", "memory": "1Gi"}},
        {"limits": {"cpu": None, "memory": "2Gi"}, "requests": None},
        {"limits": {"cpu": "1", "memory": "2Gi"}},
    ),
]


@pytest.mark.parametrize(
    ("base", "per_node", "expected"), [c[1:] for c in PER_NODE_CASES], ids=[c[0] for c in PER_NODE_CASES]
)
def test_resources_per_node_merge(base: dict[str, Any], per_node: dict[str, Any], expected: dict[str, Any]) -> None:
    assert merge_requirements(base, without_nulls(per_node), claims_by_name=True) == expected


@pytest.mark.parametrize(("runtime", "patches", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_merge_table(runtime: dict[str, Any] | None, patches: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    merged: dict[str, Any] = dict(runtime or {})
    for patch in patches:
        merged = merge_requirements(merged, patch)
    assert merged == expected


@pytest.mark.parametrize(("runtime", "patches", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_composed_patches_apply_like_the_sequence(
    runtime: dict[str, Any] | None, patches: list[dict[str, Any]], expected: dict[str, Any]
) -> None:
    composed: dict[str, Any] = {}
    for patch in patches:
        composed = compose_patches(composed, patch)
    assert merge_requirements(runtime, composed) == expected


def test_merge_does_not_modify_its_inputs() -> None:
    base = {"limits": {"memory": "8Gi"}}
    patch = {"limits": {"memory": None}}
    merge_requirements(base, patch)
    assert base == {"limits": {"memory": "8Gi"}} and patch == {"limits": {"memory": None}}


def kubectl_merge(kubectl: str, runtime: dict[str, Any] | None, patches: list[dict[str, Any]], tmp_path: Any) -> Any:
    """Real Kubernetes strategic merge: a Pod with the runtime's container, patched in order."""
    container: dict[str, Any] = {"name": "sidecar", "image": "busybox"}
    if runtime:
        container["resources"] = runtime
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [container]}}
    path = tmp_path / "pod.yaml"
    for patch in patches:
        pod = kubectl_patch(kubectl, pod, {"spec": {"containers": [{"name": "sidecar", "resources": patch}]}}, path)
    return pod["spec"]["containers"][0].get("resources", {})


@pytest.mark.kubectl
@pytest.mark.parametrize(("runtime", "patches"), [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_merge_matches_kubectl_patch(
    kubectl: str, runtime: dict[str, Any] | None, patches: list[dict[str, Any]], tmp_path: Any
) -> None:
    merged: dict[str, Any] = dict(runtime or {})
    for patch in patches:
        merged = merge_requirements(merged, patch)
    assert merged == without_empty_maps(kubectl_merge(kubectl, runtime, patches, tmp_path))


def without_empty_maps(resources: dict[str, Any]) -> dict[str, Any]:
    """kubectl keeps ``requests: {}``; Go's ``omitempty`` drops it when the object is stored, so both mean the same."""
    return {k: v for k, v in resources.items() if v != {}}
