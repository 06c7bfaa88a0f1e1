"""resourcesPerNode quantities on a TrainJob with runtimePatches, written as the API server stores
them (issue 33; on the control plane: tests/cluster/test_stored_quantities.py)."""

from __future__ import annotations

import textwrap
from typing import Any

import yaml

from tests.goldens import run_function
from tests.kit import build
from tests.support import load_fixture, resource_list
from tests.test_cluster_admission import placing_patch

PATCHES = textwrap.indent(build.yaml_text({"runtimePatches": [placing_patch()]}), "  ")

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sq
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    resourcesPerNode:
      limits:
        cpu: 1.5
        nvidia.com/gpu: 1
        memory: 8Gi  # as written
%s"""


def _render(patched: bool, items: list[Any], config: dict[str, Any] | None = None) -> tuple[Any, str]:
    """The function's output for ``items`` and the TrainJob, its text as written (comments kept)."""
    head = resource_list(items, config).decode()
    trainjob = "- " + (TRAINJOB % (PATCHES if patched else "")).replace("\n", "\n  ").rstrip() + "\n"
    body = head.replace("items: []\n", "items:\n") if not items else head
    lines = body.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("items:")) + 1
    while at < len(lines) and (lines[at].startswith("- ") or lines[at].startswith("  ")):
        at += 1
    text = "".join([*lines[:at], trainjob, *lines[at:]])
    _, out, _ = run_function(text.encode())
    return yaml.safe_load(out), out.decode()


def _limits(output: Any) -> Any:
    (trainjob,) = [i for i in output["items"] if i["kind"] == "TrainJob"]
    return trainjob["spec"]["trainer"]["resourcesPerNode"]["limits"]


def test_materialize_writes_each_quantity_as_stored_with_an_info_result() -> None:
    output, _ = _render(True, [load_fixture("torch-plain")])
    assert _limits(output) == {"cpu": "1500m", "nvidia.com/gpu": "1", "memory": "8Gi"}
    infos = [r for r in output["results"] if "the string the API server stores" in r["message"]]
    assert [(r["severity"], r["field"]["path"], r["field"]["proposedValue"]) for r in infos] == [
        ("info", "spec.trainer.resourcesPerNode.limits.cpu", "1500m"),
        ("info", "spec.trainer.resourcesPerNode.limits[nvidia.com/gpu]", "1"),
    ]
    assert not [r for r in output["results"] if r["severity"] == "warning"]


def test_the_rest_of_the_text_is_kept() -> None:
    _, text = _render(True, [load_fixture("torch-plain")])
    # Only the values change (a line's own comment would go with its value, as textedit replaces values).
    assert '          cpu: 1500m\n          nvidia.com/gpu: "1"\n          memory: 8Gi  # as written\n' in text, text


def test_without_runtime_patches_nothing_changes() -> None:
    output, _ = _render(False, [load_fixture("torch-plain")])
    assert _limits(output) == {"cpu": 1.5, "nvidia.com/gpu": 1, "memory": "8Gi"}
    assert not [r for r in output["results"] if "API server stores" in r["message"] or "canonical" in r["message"]]


def test_native_mode_and_an_absent_runtime_warn_and_change_nothing() -> None:
    native = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"mode": "native"}}
    for items, config in (([load_fixture("torch-plain")], native), ([], None)):
        output, _ = _render(True, items, config)
        assert _limits(output) == {"cpu": 1.5, "nvidia.com/gpu": 1, "memory": "8Gi"}
        warned = [r for r in output["results"] if r["severity"] == "warning" and "canonical form" in r["message"]]
        assert [r["field"]["proposedValue"] for r in warned] == ["1500m", "1"], output["results"]
