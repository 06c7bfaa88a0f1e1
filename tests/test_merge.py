"""Resource merging: upstream's rules in a table, and `kubectl patch --type strategic` as the oracle."""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.merge import compose_patches, merge_requirements

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
        "claims merge by name",
        {"claims": [{"name": "gpu"}, {"name": "nic", "request": "a"}]},
        [{"claims": [{"name": "nic", "request": "b"}, {"name": "fpga"}]}],
        {"claims": [{"name": "gpu"}, {"name": "nic", "request": "b"}, {"name": "fpga"}]},
    ),
]


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
@pytest.mark.parametrize(
    ("runtime", "patches"),
    [c[1:3] for c in CASES if "claims" not in c[0]],
    ids=[c[0] for c in CASES if "claims" not in c[0]],
)
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
