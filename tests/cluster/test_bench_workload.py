"""The benchmark's workload is one upstream admits: bench/generate.py's runtime and TrainJobs, through
the function, applied to the control plane (server-side, with kubectl's strict field validation, as
Argo CD applies), so the figures are measured on a bundle a user could sync."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_upstream_parity import _admit

pytestmark = pytest.mark.cluster

GENERATOR = Path(__file__).resolve().parents[2] / "bench" / "generate.py"


def test_the_benchmark_bundle_applies_to_upstream(control_plane: ControlPlane, tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "--n", "12", "--out", str(tmp_path)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "trainjob_resources"],
        input=(tmp_path / "resourcelist.yaml").read_bytes(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    items = yaml.safe_load(done.stdout)["items"]
    namespaces = sorted({i["metadata"]["namespace"] for i in items if i["metadata"].get("namespace")})
    for namespace in namespaces:
        control_plane.kubectl("create", "namespace", namespace, check=False)
    runtimes = [i for i in items if i["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime")]
    others = [i for i in items if i not in runtimes]
    assert len(runtimes) > 1  # the base and what the function derived from it
    # As JSON: PyYAML writes the string "5e-4" plain, which go-yaml (kubectl) reads as a number.
    control_plane.apply_server_side(_as_list(runtimes))
    _admit(control_plane, _as_list(others))


def _as_list(items: list[dict[str, Any]]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
