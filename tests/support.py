"""Helpers shared by tests: run the function on a bundle built by the test kit (tests/kit/build.py) and read
what it returns."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.goldens import run_function

# The test kit's builders (tests/kit/build.py), importable from here as before.
from tests.kit.build import GoSafeDumper, container_patch, resource_list, trainer_runtime, trainjob

__all__ = ["GoSafeDumper", "container_patch", "resource_list", "trainer_runtime", "trainjob"]

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


def render(items: list[Any], config: dict[str, Any] | None = None) -> Rendered:
    code, out, _ = run_function(resource_list(items, config))
    parsed = yaml.safe_load(out)
    return Rendered(code, parsed.get("items") or [], parsed.get("results") or [], out)


def load_fixture(name: str) -> dict[str, Any]:
    """``tests/testdata/runtimes/<name>.yaml``."""
    doc: dict[str, Any] = yaml.safe_load((RUNTIMES / f"{name}.yaml").read_text())
    return doc


def pod_spec_of(runtime: dict[str, Any], job: str) -> dict[str, Any]:
    for rjob in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        if rjob["name"] == job:
            spec: dict[str, Any] = rjob["template"]["spec"]["template"]["spec"]
            return spec
    raise KeyError(job)


def container_of(runtime: dict[str, Any], job: str, list_name: str, name: str) -> dict[str, Any]:
    return next(c for c in pod_spec_of(runtime, job).get(list_name, []) if c["name"] == name)
