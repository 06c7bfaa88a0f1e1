"""Plausibility warnings (issue 32): quantities Kubernetes accepts that are almost surely not what
was meant (``rules/plausible_quantities.py``), named with the likely intent."""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.rules.plausible_quantities import implausible

from tests.support import container_patch, render, trainer_runtime, trainjob

SIDECAR = (
    "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
    ".template.spec.template.spec.initContainers[0].resources"
)


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("memory", 256, "memory: 256 is 256 bytes; did you mean 256Mi?"),
        ("memory", "256", "memory: 256 is 256 bytes; did you mean 256Mi?"),
        ("memory", "400m", "memory: 400m is 0.4 bytes (m is milli: a thousandth); did you mean 400Mi?"),
        ("memory", "512Ki", "memory: 512Ki is 524288 bytes, below 1Mi; did you mean 512Mi?"),
        ("memory", "100k", "memory: 100k is 100000 bytes, below 1Mi; did you mean 100Mi?"),
        ("memory", 0.5, "memory: 0.5 is 0.5 bytes; did you mean 0.5Gi?"),
        ("memory", "1e3", "memory: 1e3 is 1000 bytes, below 1Mi; did you mean a unit such as Mi or Gi?"),
        ("ephemeral-storage", "64", "ephemeral-storage: 64 is 64 bytes; did you mean 64Mi?"),
        (
            "cpu",
            "100u",
            "cpu: 100u is 0.0001 of a cpu, below 1m: Kubernetes counts cpu in millicores and rounds it up to 1m; "
            "did you mean 100m?",
        ),
        (
            "cpu",
            "0.0005",
            "cpu: 0.0005 is 0.0005 of a cpu, below 1m: Kubernetes counts cpu in millicores and rounds it up to 1m; "
            "write 1m if that is what is meant",
        ),
        ("cpu", 500, "cpu: 500 is 500 whole cpus (cores); did you mean 500m?"),
        ("cpu", "100", "cpu: 100 is 100 whole cpus (cores); did you mean 100m?"),
    ],
)
def test_an_implausible_quantity_names_the_value_and_the_intent(name: str, raw: Any, message: str) -> None:
    assert implausible(name, raw) == message


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("memory", "1Mi"),
        ("memory", 1048576),
        ("memory", "64Gi"),
        ("memory", 0),
        ("memory", "0"),
        ("memory", "lots"),  # not a quantity: container-site's error
        ("cpu", "1m"),
        ("cpu", "500m"),
        ("cpu", 96),
        ("cpu", "99"),
        ("cpu", "100.5"),  # not whole: written on purpose
        ("cpu", "0"),
        ("nvidia.com/gpu", 256),
        ("hugepages-2Mi", "1"),
    ],
)
def test_a_plausible_quantity_is_not_reported(name: str, raw: Any) -> None:
    assert implausible(name, raw) is None


def _job(resources: dict[str, Any], runtime: str = "rt") -> dict[str, Any]:
    patch = container_patch("node", "initContainers", {"name": "data-loader", "resources": resources})
    return trainjob("tj", runtime, [patch], trainer={"resourcesPerNode": {"limits": {"memory": "512"}}})


def test_warnings_at_the_field_and_the_trainjob_renders() -> None:
    runtime = trainer_runtime("rt", [{"name": "data-loader", "image": "loader", "restartPolicy": "Always"}])
    out = render([runtime, _job({"limits": {"memory": "400m", "cpu": "2"}})])
    assert out.code == 0, out.results
    warnings = [
        (r["field"]["path"], r["message"], r["field"]["currentValue"])
        for r in out.results
        if r["severity"] == "warning"
    ]
    assert warnings == [
        (
            f"{SIDECAR}.limits.memory",
            "memory: 400m is 0.4 bytes (m is milli: a thousandth); did you mean 400Mi?",
            "400m",
        ),
        ("spec.trainer.resourcesPerNode.limits.memory", "memory: 512 is 512 bytes; did you mean 512Mi?", "512"),
    ]


def test_a_trainjob_whose_runtime_is_not_in_the_bundle_is_read_too() -> None:
    # The cluster has the runtime, the TrainJob sizes its trainer by resourcesPerNode alone: it is
    # passed through, and the rules that need no runtime run.
    job = trainjob("tj", "in-the-cluster", [])
    job["spec"]["trainer"] = {"resourcesPerNode": {"limits": {"memory": "512", "cpu": "250"}}}
    out = render([job])
    assert out.code == 0, out.results
    assert [(r["field"]["path"], r["message"]) for r in out.results if r["severity"] == "warning"] == [
        ("spec.trainer.resourcesPerNode.limits.memory", "memory: 512 is 512 bytes; did you mean 512Mi?"),
        ("spec.trainer.resourcesPerNode.limits.cpu", "cpu: 250 is 250 whole cpus (cores); did you mean 250m?"),
    ]
