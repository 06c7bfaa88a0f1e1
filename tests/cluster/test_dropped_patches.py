"""A runtimePatches entry left with nothing but its manager, dropped by the render, on each Trainer
release: the TrainJob as rendered now (the entry gone) and as rendered before (``{manager: X}`` kept)
are both admitted, and Trainer builds the same JobSet for each; the entries left keep their order
and get Trainer's ``time`` stamp."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import TRAINER_RELEASES, ControlPlane
from tests.cluster.test_check import apply, dump, namespace, render, runtime, write
from tests.kit import build

pytestmark = pytest.mark.cluster

TRAINJOBS = "trainjobs.trainer.kubeflow.org"
MANAGERS = ("a.example.com/sizing", "b.example.com/env", "c.example.com/sizing", "d.example.com/env")


def patch(manager: str, loader: dict[str, Any]) -> dict[str, Any]:
    return build.container_patch("node", "initContainers", {"name": "data-loader", **loader}, manager=manager)


def trainjob(name: str, ns: str, base: str) -> dict[str, Any]:
    """Four managers in turn: sizing only, an env with sizing, sizing only, an env alone."""
    memory = {"requests": {"memory": "2Gi"}, "limits": {"memory": "2Gi"}}
    patches = [
        patch(MANAGERS[0], {"resources": memory}),
        patch(MANAGERS[1], {"env": [{"name": "B", "value": "1"}], "resources": {"limits": {"memory": "3Gi"}}}),
        patch(MANAGERS[2], {"resources": {"requests": {"memory": "3Gi"}}}),
        patch(MANAGERS[3], {"env": [{"name": "D", "value": "1"}]}),
    ]
    return build.trainjob(name, base, patches, namespace=ns, kind="ClusterTrainingRuntime")


def without_identity(jobset: dict[str, Any]) -> dict[str, Any]:
    spec = copy.deepcopy(jobset["spec"])
    return yaml.safe_load(yaml.safe_dump(spec).replace(jobset["metadata"]["name"], "NAME"))  # type: ignore[no-any-return]


@pytest.mark.parametrize("trainer_control_plane", TRAINER_RELEASES, indirect=True)
def test_a_dropped_manager_only_entry_changes_nothing_trainer_builds(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = trainer_control_plane
    ns = namespace(cp, f"dropped-{cp.trainer.replace('.', '-')}")
    base = f"dropped-base-{cp.trainer.replace('.', '-')}"
    installed = runtime(base)
    apply(cp, dump(installed))
    runtimes = write(tmp_path / "runtimes" / "base.yaml", installed)
    source = write(tmp_path / "repo" / "trainjob.yaml", trainjob("now", ns, base))
    docs = [d for d in yaml.safe_load_all(render(str(source), "--runtimes", str(runtimes), cwd=tmp_path)) if d]
    now = next(d for d in docs if d["kind"] == "TrainJob")
    assert [p["manager"] for p in now["spec"]["runtimePatches"]] == [MANAGERS[1], MANAGERS[3]]
    before = copy.deepcopy(now)  # as the render wrote it before: the emptied entries kept, in place
    before["metadata"]["name"] = "before"
    kept = before["spec"]["runtimePatches"]
    before["spec"]["runtimePatches"] = [{"manager": MANAGERS[0]}, kept[0], {"manager": MANAGERS[2]}, kept[1]]
    apply(cp, dump(*docs, before))
    jobsets = {name: cp.wait_for_jobset(name, ns) for name in ("now", "before")}
    assert without_identity(jobsets["now"]) == without_identity(jobsets["before"])
    live = {name: cp.get(TRAINJOBS, name, ns) for name in ("now", "before")}
    patches = {name: (obj or {})["spec"]["runtimePatches"] for name, obj in live.items()}
    assert [p["manager"] for p in patches["now"]] == [MANAGERS[1], MANAGERS[3]]
    assert [p["manager"] for p in patches["before"]] == list(MANAGERS)
    assert all(isinstance(p.get("time"), str) for p in patches["now"] + patches["before"])
    assert [{k: v for k, v in p.items() if k != "time"} for p in patches["now"]] == now["spec"]["runtimePatches"]
