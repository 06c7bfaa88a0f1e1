"""One name per container (issue 50): the role ``maxPerRole`` caps a container by is the role ``explain``
labels it with, for every container that is not the trainer's or an initializer's. The case the new
user met: the MPI launcher of upstream's ``mpi-distributed`` runtime shape (a ``launcher`` job with a
``launcher`` container, no ancestor label; kubeflow/trainer manifests/base/runtimes/pretraining/
mpi_distributed.yaml) was capped as a ``sidecar`` while ``explain`` labelled it ``container``.
Run through the CLI as installed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kit import build

EXECUTABLE = Path(sys.executable).parent / "trainjob-resources"
SSHD = {"command": ["/usr/sbin/sshd"], "args": ["-De"]}


def mpi_runtime() -> dict[str, Any]:
    launcher = {"name": "launcher", "image": "mpi", "command": ["mpirun"], "resources": {"limits": {"memory": "2Gi"}}}
    shipper = {"name": "log-shipper", "image": "logs", "restartPolicy": "Always"}
    shipper["resources"] = {"limits": {"memory": "2Gi"}}
    fetch = {"name": "fetch", "image": "fetch", "resources": {"limits": {"memory": "2Gi"}}}
    worker = {"name": "trainer-node", "image": "mpi", **SSHD, "resources": {"limits": {"memory": "2Gi"}}}
    jobs = [
        build.replicated_job("launcher", {"containers": [launcher]}),
        build.replicated_job("trainer-node", {"initContainers": [fetch, shipper], "containers": [worker]}),
    ]
    policy = {"numNodes": 2, "mpi": {"numProcPerNode": 1, "mpiImplementation": "OpenMPI"}}
    return build.training_runtime("mpi-distributed", jobs, policy)


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXECUTABLE), *args], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.slow
def test_every_capped_container_is_named_by_the_role_explain_shows(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    documents = [mpi_runtime(), build.trainjob("pi", "mpi-distributed", namespace="team-a")]
    (tmp_path / "app" / "jobs.yaml").write_text(yaml.safe_dump_all(documents))
    explained = run(tmp_path, "explain", "app", "--format", "json")
    assert explained.returncode == 0, explained.stderr
    (trainjob,) = json.loads(explained.stdout)["trainJobs"]
    roles = {c["name"]: c["role"] for job in trainjob["replicatedJobs"] for c in job["containers"]}
    assert roles["launcher"] == "container"

    caps = {role: {"memory": "1Gi"} for role in ("container", "sidecar", "initContainer")}
    config = {"apiVersion": "fn.trainjob-resources.io/v1alpha1", "kind": "TrainJobResources"}
    (tmp_path / "platform.yaml").write_text(
        yaml.safe_dump({**config, "metadata": {"name": "p"}, "spec": {"maxPerRole": caps}})
    )
    refused = run(tmp_path, "render", "app", "--config", "platform.yaml")
    assert refused.returncode == 1
    capped = dict(
        re.findall(
            r"of \w+ '([\w-]+)' of replicated job '[\w-]+' is above the policy's maximum for the (\w+) role",
            refused.stderr,
        )
    )
    # no job is labelled the trainer's and none is named node: every container is capped by its own role
    assert capped == roles, refused.stderr
    assert set(capped.values()) == {"container", "sidecar", "initContainer"}

    only_sidecars = {"sidecar": {"memory": "1Gi"}}
    (tmp_path / "platform.yaml").write_text(
        yaml.safe_dump({**config, "metadata": {"name": "p"}, "spec": {"maxPerRole": only_sidecars}})
    )
    out = run(tmp_path, "render", "app", "--config", "platform.yaml")
    assert "'launcher'" not in out.stderr and "'log-shipper'" in out.stderr, "a sidecar cap is for sidecars only"
