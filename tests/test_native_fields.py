"""``check``'s ``mode`` finding from a TrainJob CRD's schema (live/native_fields.py), on schemas built here:
the control plane tests (tests/cluster/test_check_mode.py) run it on v2.3.0's CRD and on the simulated one."""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.live.native_fields import POD_PATCH, kept_fields, mode, served

from tests.kit import build


def _crd(resources: bool, claims: bool, served_version: bool = True) -> dict[str, Any]:
    container: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}}
    if resources:
        container["properties"]["resources"] = {"type": "object"}
    pod: dict[str, Any] = {
        "type": "object",
        "properties": {field: {"type": "array", "items": container} for field in ("containers", "initContainers")},
    }
    if claims:
        pod["properties"]["resourceClaims"] = {"type": "array"}
    node = pod
    for step in reversed(POD_PATCH):
        node = {"type": "array", "items": node} if step == "[]" else {"type": "object", "properties": {step: node}}
    version = {"name": "v1alpha1", "served": served_version, "schema": {"openAPIV3Schema": node}}
    return {"kind": "CustomResourceDefinition", "spec": {"versions": [version]}}


def _trainjob() -> dict[str, Any]:
    loader = {"name": "data-loader", "resources": {"limits": {"memory": "1Gi"}}}
    return build.trainjob("t", "rt", [build.container_patch("node", "initContainers", loader)], namespace="ns")


@pytest.mark.parametrize(("resources", "claims"), [(False, False), (True, False), (False, True), (True, True)])
def test_served_reads_each_field(resources: bool, claims: bool) -> None:
    found = served(_crd(resources, claims))
    assert found is not None and (found.resources, found.claims) == (resources, claims)


def test_a_version_not_served_or_absent_is_none() -> None:
    assert served(_crd(True, True, served_version=False)) is None
    assert served(_crd(True, True), version="v1") is None
    assert served(None) is None


def test_native_is_an_error_only_where_the_crd_lacks_a_kept_field() -> None:
    [error] = mode("native", _crd(False, True), [_trainjob()])
    assert (error.code, error.severity, error.object) == ("mode", "error", "TrainJob/ns/t")
    assert "initContainers[0].resources" in error.message
    assert mode("native", _crd(True, False), [_trainjob()]) == []


def test_materialize_is_an_info_where_the_crd_has_resources() -> None:
    [info] = mode("materialize", _crd(True, False), [_trainjob()])
    assert info.severity == "info" and info.object == "CustomResourceDefinition/trainjobs.trainer.kubeflow.org"
    assert mode("materialize", _crd(False, False), [_trainjob()]) == []
    assert mode("materialize", _crd(True, True), []) == []  # no TrainJob in the render


def test_kept_fields_names_each_resources_and_resource_claims() -> None:
    tj = _trainjob()
    pod = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    pod["template"]["spec"]["template"]["spec"]["resourceClaims"] = []
    assert [field for _, field in kept_fields(tj)] == ["claims", "resources"]


def test_the_error_names_only_the_fields_the_trainjob_keeps() -> None:
    [error] = mode("native", _crd(False, False), [_trainjob()])
    assert "containers[].resources" in error.message and "resourceClaims" not in error.message
