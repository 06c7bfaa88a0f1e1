"""The benchmark's workload generator: deterministic, and its bundle is one the function accepts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

GENERATOR = Path(__file__).resolve().parent.parent / "bench" / "generate.py"
KPT_ANNOTATIONS = {
    "config.kubernetes.io/index",
    "config.kubernetes.io/path",
    "internal.config.kubernetes.io/index",
    "internal.config.kubernetes.io/path",
}


def generate(n: int, out: Path, hash_seed: str = "0") -> dict[str, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run([sys.executable, str(GENERATOR), "--n", str(n), "--out", str(out)], check=True, env=env)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_generator_is_deterministic(tmp_path: Path) -> None:
    first = generate(40, tmp_path / "a", hash_seed="1")
    second = generate(40, tmp_path / "b", hash_seed="2")
    assert first == second
    assert "resourcelist.yaml" in first
    assert "kustomize/kustomization.yaml" in first


def test_small_bundle_is_a_resource_list_the_function_accepts(tmp_path: Path) -> None:
    generate(3, tmp_path)
    data = (tmp_path / "resourcelist.yaml").read_bytes()
    parsed = yaml.safe_load(data)
    assert parsed["kind"] == "ResourceList"
    assert [i["kind"] for i in parsed["items"]] == [
        "ClusterTrainingRuntime",
        "TrainJob",
        "TrainJob",
        "TrainJob",
        "ConfigMap",
    ]
    proc = subprocess.run([sys.executable, "-m", "trainjob_resources"], input=data, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    out = yaml.safe_load(proc.stdout)
    assert out["kind"] == "ResourceList"
    assert all(r["severity"] == "info" for r in out.get("results") or [])


def _without_kpt_annotations(item: dict[str, Any]) -> dict[str, Any]:
    metadata = item["metadata"]
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if k not in KPT_ANNOTATIONS}
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return item


@pytest.mark.kubectl
def test_kustomize_folder_holds_the_same_objects(tmp_path: Path, kubectl: str) -> None:
    generate(12, tmp_path)
    built = subprocess.run(
        [kubectl, "kustomize", str(tmp_path / "kustomize")], capture_output=True, text=True, check=True
    ).stdout
    items = yaml.safe_load((tmp_path / "resourcelist.yaml").read_text())["items"]

    def key(obj: dict[str, Any]) -> tuple[str, str, str]:
        return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])

    expected = sorted((_without_kpt_annotations(i) for i in items), key=key)
    assert sorted(yaml.safe_load_all(built), key=key) == expected
