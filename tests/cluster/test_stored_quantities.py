"""resourcesPerNode quantities on a TrainJob with runtimePatches (issue 33), on the control plane.

Upstream's TrainJob defaulting webhook re-encodes such a TrainJob on create, every quantity in its
canonical form (``Quantity.String()``), and ``spec.trainer`` is immutable: a re-apply of any other
spelling is refused. Seen first here, for the TrainJob as written: numbers and non-canonical strings
("1.5", "2048Mi") alike. The function writes each as stored, with an info result; its output applies,
then applies again (an Argo CD re-sync), and what is stored is what it wrote."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_upstream_parity import NS, _admit, _dump
from tests.kit import build
from tests.support import load_fixture, render

pytestmark = pytest.mark.cluster

TRAINJOBS = "trainjobs.trainer.kubeflow.org"
# (resourcesPerNode limits as written, what the API server stores)
CASES: list[tuple[dict[str, Any], dict[str, str]]] = [
    ({"nvidia.com/gpu": 1}, {"nvidia.com/gpu": "1"}),
    ({"cpu": 1.5, "memory": "2048Mi"}, {"cpu": "1500m", "memory": "2Gi"}),
    ({"cpu": "0.5", "memory": "8Gi"}, {"cpu": "500m", "memory": "8Gi"}),
    ({"cpu": "1000m", "nvidia.com/gpu": "2"}, {"cpu": "1", "nvidia.com/gpu": "2"}),
    ({"cpu": 1e3}, {"cpu": "1k"}),
]


def _trainjob(name: str, runtime: str, limits: dict[str, Any]) -> dict[str, Any]:
    # A patch without resources: runtimePatches stay on the TrainJob, which the webhook timestamps.
    patch = build.runtime_patch(build.replicated_job("node", {"nodeSelector": {"pool": "a"}}))
    trainer = {"image": "example.com/train:v1", "resourcesPerNode": {"limits": limits}}
    return build.trainjob(name, runtime, namespace=NS, trainer=trainer, runtimePatches=[patch])


@pytest.mark.parametrize(("written", "stored"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_function_writes_resources_per_node_as_stored_and_the_re_sync_passes(
    control_plane: ControlPlane, written: dict[str, Any], stored: dict[str, str]
) -> None:
    cp = control_plane
    index = CASES.index((written, stored))
    runtime = load_fixture("torch-plain")
    runtime["metadata"]["name"] = f"sq-rt-{index}"
    tj = _trainjob(f"sq-{index}", runtime["metadata"]["name"], written)
    cp.apply_server_side(_dump(runtime))
    # As written: admitted, stored canonical, and the re-apply refused.
    raw = copy.deepcopy(tj)
    raw["metadata"]["name"] += "-raw"
    _admit(cp, _dump(raw))
    kept = cp.get(TRAINJOBS, raw["metadata"]["name"], NS)
    assert kept is not None and kept["spec"]["trainer"]["resourcesPerNode"]["limits"] == stored
    again = cp.apply_server_side(_dump(raw), check=False)
    assert again.returncode != 0, "the spelling as written re-applied: the premise no longer holds"
    # The function's output: the spellings as stored, an info result at each, and the re-sync passes.
    rendered = render([copy.deepcopy(runtime), tj])
    assert rendered.code == 0, rendered.results
    (out,) = [o for o in rendered.items if o["kind"] == "TrainJob"]
    assert out["spec"]["trainer"]["resourcesPerNode"]["limits"] == stored
    infos = [
        r for r in rendered.results if r["severity"] == "info" and "the string the API server stores" in r["message"]
    ]
    assert len(infos) == sum(1 for name in written if written[name] != stored[name]), rendered.results
    # Only the plausible-quantities rule may warn (1e3 written as a float: 1000 whole cpus).
    warnings = [r for r in rendered.results if r["severity"] == "warning"]
    assert all(" whole cpus (cores); did you mean " in r["message"] for r in warnings), rendered.results
    text = yaml.safe_dump(out)
    cp.apply_server_side(_dump(*[o for o in rendered.items if o["kind"] != "TrainJob"]))
    _admit(cp, text)
    resync = cp.apply_server_side(text, check=False)
    assert resync.returncode == 0, resync.stderr
    kept = cp.get(TRAINJOBS, out["metadata"]["name"], NS)
    assert kept is not None and kept["spec"]["trainer"]["resourcesPerNode"]["limits"] == stored
