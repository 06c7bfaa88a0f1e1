"""``explain --against``'s "the TrainJob must be recreated" against the API server (issue 50): the base's
render applied server-side as Argo CD applies it, then the change's. Where the report flags the
TrainJob (an override edited: the derived runtime renamed), the API server refuses the sync (the
CRD's ``self == oldSelf`` on spec.runtimeRef); where it does not (the same overrides), it applies.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import apply, dump, namespace, render, runtime, trainjob, write

pytestmark = pytest.mark.cluster

EXECUTABLE = Path(sys.executable).parent / "trainjob-resources"  # the CLI as installed


def report(change: Path, base: Path, runtimes: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(EXECUTABLE), "explain", ".", "--against", str(base), "--runtimes", str(runtimes), "--format", "json"],
        cwd=change,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    parsed: dict[str, object] = json.loads(done.stdout)
    return parsed


@pytest.mark.parametrize(("memory", "recreate"), [("4Gi", True), ("2Gi", False)])
def test_the_report_flags_exactly_the_trainjobs_the_api_server_refuses_to_update(
    control_plane: ControlPlane, tmp_path: Path, memory: str, recreate: bool
) -> None:
    cp = control_plane
    ns = namespace(cp, f"pr-report-{memory.lower()}")
    base_runtime = runtime(f"pr-report-base-{memory.lower()}")
    apply(cp, dump(base_runtime))
    runtimes = write(tmp_path / "platform" / "runtime.yaml", base_runtime)
    base = write(tmp_path / "base" / "trainjob.yaml", trainjob("train", ns, base_runtime["metadata"]["name"], "2Gi"))
    edited = trainjob("train", ns, base_runtime["metadata"]["name"], memory)
    edited["metadata"]["labels"] = {"team": "a"}  # a change either way
    change = write(tmp_path / "change" / "trainjob.yaml", edited)
    apply(cp, render(str(base), "--runtimes", str(runtimes), cwd=tmp_path))

    (job,) = report(change.parent, base.parent, runtimes)["trainJobs"]  # type: ignore[misc]
    assert job["runtimeRef"]["recreate"] is recreate, job["runtimeRef"]
    rendered = render(str(change), "--runtimes", str(runtimes), cwd=tmp_path)
    if recreate:
        with pytest.raises(AssertionError, match="field is immutable"):
            apply(cp, rendered)
    else:
        apply(cp, rendered)
        live = cp.kubectl("get", "trainjob", "train", "-n", ns, "-o", "jsonpath={.spec.runtimeRef.name}")
        assert live.stdout == job["runtimeRef"]["after"]["name"]
