"""``check`` on a TrainJob with overrides whose runtimeRef has a typo (issue 50): the render cannot
derive without the runtime, but ``check`` read the cluster's runtimes already, so the advice to
supply one (``--runtimes``, a local-config copy) is wrong there. It says the cluster has no such
runtime and names the closest one it has; the API server (Trainer's webhook) refuses the TrainJob."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import MUST_EXIST, apply, check, dump, namespace, runtime, trainjob, write

pytestmark = pytest.mark.cluster


def test_a_runtime_name_typo_is_said_as_the_cluster_has_it(control_plane: ControlPlane, tmp_path: Path) -> None:
    cp = control_plane
    ns = namespace(cp, "check-typo")
    apply(cp, dump(runtime("check-typo-pipeline")))
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("train", ns, "check-typo-pipline", memory="2Gi"))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1
    (error,) = [line for line in checked.stderr.splitlines() if line.startswith("error: ")]
    assert "ClusterTrainingRuntime check-typo-pipline: the cluster has no such runtime" in error, error
    assert error.endswith("Did you mean 'check-typo-pipeline'?"), error
    assert "--runtimes" not in error and "local-config" not in error
    # What it predicts: the TrainJob, as upstream's API takes it (no resources in its patches), is refused.
    refused = cp.apply_server_side(dump(trainjob("train", ns, "check-typo-pipline")), check=False)
    assert refused.returncode != 0 and MUST_EXIST in refused.stderr
    # The runtime named right: the render derives, nothing to say about the name.
    write(repo, trainjob("train", ns, "check-typo-pipeline", memory="2Gi"))
    assert check(cp, str(repo), cwd=tmp_path).code == 0
