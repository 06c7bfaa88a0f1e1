"""Materialized runtimes fit the real CRDs, and their resources are what Kubernetes' own strategic
merge (``kubectl patch --local --type strategic``) computes from the same runtime and patches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.kube.quantity import parse_quantity

from tests.crd_schema import problems
from tests.support import container_of, container_patch, kubectl_patch, load_fixture, pod_spec_of, render, trainjob

FIXTURE = Path(__file__).parent / "testdata" / "success" / "sidecar-init-and-container" / "input.yaml"


def own_runtime() -> dict[str, Any]:
    items = yaml.safe_load(FIXTURE.read_text())["items"]
    runtime: dict[str, Any] = next(i for i in items if i["kind"] == "ClusterTrainingRuntime")
    return runtime


def canonical(resources: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section in ("limits", "requests"):
        values = resources.get(section) or {}
        if values:
            out[section] = {k: parse_quantity(v).canonical() for k, v in values.items()}
    return out


def kubectl_pod(kubectl: str, runtime: dict[str, Any], job: str, patches: list[dict[str, Any]], tmp: Path) -> Any:
    """The runtime's pod for ``job`` as a Pod, each patch's pod spec applied by kubectl in list order."""
    pod: Any = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": pod_spec_of(runtime, job)}
    path = tmp / "pod.yaml"
    for patch in patches:
        for rjob in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
            if rjob["name"] != job:
                continue
            pod = kubectl_patch(kubectl, pod, {"spec": rjob["template"]["spec"]["template"]["spec"]}, path)
    return pod


SCENARIOS = [
    (
        "native sidecar initContainer, two managers, null removes",
        "own",
        "node",
        "initContainers",
        "data-loader",
        [
            {
                "name": "data-loader",
                "resources": {"limits": {"memory": "64Gi"}, "requests": {"memory": "64Gi", "cpu": "2"}},
            },
            {
                "name": "data-loader",
                "resources": {"requests": {"cpu": None, "memory": "48Gi"}, "limits": {"memory": "48Gi"}},
            },
        ],
    ),
    (
        "regular initContainer",
        "own",
        "node",
        "initContainers",
        "prepare",
        [{"name": "prepare", "resources": {"limits": {"cpu": "500m"}}}],
    ),
    (
        "regular non-trainer container",
        "own",
        "node",
        "containers",
        "metrics",
        [{"name": "metrics", "resources": {"requests": {"cpu": "0.25"}}}],
    ),
    (
        "model-initializer job",
        "own",
        "model-initializer",
        "containers",
        "model-initializer",
        [{"name": "model-initializer", "resources": {"limits": {"memory": "32Gi"}, "requests": {"memory": "32Gi"}}}],
    ),
    (
        "data-cache dataset-initializer job",
        "torch-data-cache",
        "dataset-initializer",
        "containers",
        "dataset-initializer",
        [
            {
                "name": "dataset-initializer",
                "resources": {"limits": {"cpu": "4", "memory": "16Gi"}, "requests": {"cpu": "2"}},
            }
        ],
    ),
    (
        "model-initializer beside a dataset-initializer",
        "torch-initializers",
        "model-initializer",
        "containers",
        "model-initializer",
        [{"name": "model-initializer", "resources": {"requests": {"memory": "24Gi", "ephemeral-storage": "40Gi"}}}],
    ),
    (
        "torchtune dataset-initializer, the trainer's GPU limit an integer",
        "torchtune",
        "dataset-initializer",
        "containers",
        "dataset-initializer",
        [{"name": "dataset-initializer", "resources": {"limits": {"memory": "8Gi"}, "requests": {"memory": "8Gi"}}}],
    ),
]


@pytest.mark.kubectl
@pytest.mark.parametrize(
    ("source", "job", "list_name", "name", "containers"), [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS]
)
def test_materialized_resources_match_kubectl_and_fit_the_crds(
    kubectl: str, source: str, job: str, list_name: str, name: str, containers: list[dict[str, Any]], tmp_path: Path
) -> None:
    runtime = own_runtime() if source == "own" else load_fixture(source)
    patches = [container_patch(job, list_name, c, f"m{i}.example.com/p") for i, c in enumerate(containers)]
    out = render([runtime, trainjob("tj", runtime["metadata"]["name"], patches, namespace="team-a")])
    assert out.code == 0, out.results
    tj = out.of_kind("TrainJob")[0]
    derived = out.named("TrainingRuntime", tj["spec"]["runtimeRef"]["name"])
    assert problems(tj) == []
    assert problems(derived) == []
    expected_pod = kubectl_pod(kubectl, runtime, job, patches, tmp_path)
    expected = next(c for c in expected_pod["spec"][list_name] if c["name"] == name).get("resources", {})
    actual = container_of(derived, job, list_name, name).get("resources", {})
    assert canonical(actual) == canonical(expected)
    others = [c for c in expected_pod["spec"][list_name] if c["name"] != name]
    for other in others:
        assert container_of(derived, job, list_name, other["name"]) == container_of(
            runtime, job, list_name, other["name"]
        )


def test_a_trainjob_with_other_patches_fits_after_materialization() -> None:
    runtime = load_fixture("torch-data-cache")
    example = load_fixture("trainjob-runtime-patches")
    example["spec"]["runtimeRef"]["name"] = runtime["metadata"]["name"]
    example["spec"]["runtimePatches"].append(
        container_patch(
            "dataset-initializer",
            "containers",
            {"name": "dataset-initializer", "resources": {"limits": {"memory": "32Gi"}}},
        )
    )
    assert problems(example) != [], "the input is what today's CRD rejects"
    out = render([runtime, example])
    assert out.code == 0, out.results
    for item in out.items:
        assert problems(item) == [], item["kind"]
    tj = out.of_kind("TrainJob")[0]
    assert tj["spec"]["runtimePatches"][0] == example["spec"]["runtimePatches"][0], (
        "other patch content stays as written"
    )
    assert tj["spec"]["trainer"] == example["spec"]["trainer"], "resourcesPerNode and the rest of trainer stay"
