"""Helpers shared by tests: build a ResourceList from plain objects and run the function on it."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from trainjob_resources.yamltext import yamlnodes as yn

from tests.goldens import run_function

# Runtimes and a TrainJob in the shapes upstream ships, written for these tests (see its README).
RUNTIMES = Path(__file__).parent / "testdata" / "runtimes"


def kubectl_patch(kubectl: str, obj: Any, patch: Any, path: Path) -> Any:
    """``obj`` after ``kubectl patch --local --type strategic`` with ``patch`` (written to ``path`` first):
    Kubernetes' own strategic merge, the oracle of the merge tests."""
    path.write_text(json.dumps(obj))
    command = [kubectl, "patch", "--local", "-f", str(path), "--type", "strategic", "-p", json.dumps(patch)]
    return json.loads(subprocess.run([*command, "-o", "json"], check=True, capture_output=True, text=True).stdout)


@dataclass
class Rendered:
    code: int
    items: list[dict[str, Any]]
    results: list[dict[str, Any]]
    raw: bytes

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [i for i in self.items if i.get("kind") == kind]

    def named(self, kind: str, name: str) -> dict[str, Any]:
        return next(i for i in self.of_kind(kind) if i["metadata"]["name"] == name)

    def errors(self) -> list[dict[str, Any]]:
        return [r for r in self.results if r["severity"] == "error"]


class GoSafeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, but a string go-yaml would read as another type (``n``, ``0o17``, ``1e3``)
    is double-quoted: what it writes reads the same to kubectl and kustomize (issue 30)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if yn.needs_quotes(value) else None)


GoSafeDumper.add_representer(str, _represent_str)


def resource_list(items: list[Any], config: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        body["functionConfig"] = config
    return yaml.dump(body, Dumper=GoSafeDumper, sort_keys=False).encode()


def render(items: list[Any], config: dict[str, Any] | None = None) -> Rendered:
    code, out, _ = run_function(resource_list(items, config))
    parsed = yaml.safe_load(out)
    return Rendered(code, parsed.get("items") or [], parsed.get("results") or [], out)


def load_fixture(name: str) -> dict[str, Any]:
    """``tests/testdata/runtimes/<name>.yaml``."""
    doc: dict[str, Any] = yaml.safe_load((RUNTIMES / f"{name}.yaml").read_text())
    return doc


def container_patch(
    job: str, list_name: str, container: dict[str, Any], manager: str = "user.example.com/me"
) -> dict[str, Any]:
    """One runtimePatches entry that patches a single container."""
    pod_spec = {list_name: [container]}
    return {
        "manager": manager,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {"replicatedJobs": [{"name": job, "template": {"spec": {"template": {"spec": pod_spec}}}}]}
            }
        },
    }


def trainjob(
    name: str, runtime: str, patches: list[dict[str, Any]], namespace: str | None = None, kind: str | None = None
) -> dict[str, Any]:
    ref: dict[str, Any] = {"name": runtime}
    if kind:
        ref["kind"] = kind
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": metadata,
        "spec": {"runtimeRef": ref, "runtimePatches": patches},
    }


def pod_spec_of(runtime: dict[str, Any], job: str) -> dict[str, Any]:
    for rjob in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if rjob["name"] == job:
            spec: dict[str, Any] = rjob["template"]["spec"]["template"]["spec"]
            return spec
    raise KeyError(job)


def container_of(runtime: dict[str, Any], job: str, list_name: str, name: str) -> dict[str, Any]:
    return next(c for c in pod_spec_of(runtime, job).get(list_name, []) if c["name"] == name)


def trainer_runtime(
    name: str,
    init_containers: list[dict[str, Any]],
    image: str = "pytorch",
    labels: dict[str, str] | None = None,
    pod: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ClusterTrainingRuntime with one replicated job, ``node`` (the trainer), whose pod has
    ``init_containers`` and the trainer container ``node``; ``pod`` adds other pod fields."""
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    pod_spec = {"initContainers": init_containers, "containers": [{"name": "node", "image": image}], **(pod or {})}
    job = {
        "name": "node",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": pod_spec}},
        },
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": metadata,
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [job]}}},
    }
