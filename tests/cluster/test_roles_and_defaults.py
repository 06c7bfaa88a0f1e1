"""Facts the policy believes (issue 46), on the running control plane (tests/cluster/README.md; no mocks).

1. Roles. A runtime patch that writes ``trainer.kubeflow.org/trainjob-ancestor-step`` on the trainer job's
   template: what upstream Kubeflow Trainer (each release) then makes of the job, and the function's refusal
   (rules/role_labels.py, which cites where Trainer reads the label).
2. A LimitRange shipped in the tenant's own bundle: the API server's LimitRanger really defaults the pods'
   containers with it, and the platform's maxPerRole caps count what it defaults (rules/max_per_role.py).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from trainjob_resources.kube.quantity import parse_quantity

from tests.cluster.apply import submit
from tests.cluster.controlplane import TRAINER_RELEASES, ControlPlane
from tests.examples import VENV_BIN
from tests.kit import build
from tests.support import load_fixture

pytestmark = pytest.mark.cluster

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
on_each_release = pytest.mark.parametrize("trainer_control_plane", TRAINER_RELEASES, indirect=True)


def _namespace(cp: ControlPlane, name: str) -> str:
    cp.kubectl("create", "namespace", name)
    return name


def _runtime(namespace: str) -> dict[str, Any]:
    """tests/testdata/runtimes/torch-plain.yaml as a TrainingRuntime whose trainer job has a second container."""
    rt = load_fixture("torch-plain")
    rt["kind"] = "TrainingRuntime"
    rt["metadata"] = {"name": "torch", "namespace": namespace}
    pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"].append({"name": "helper", "image": "busybox:1.36"})
    return rt


def _trainjob(name: str, namespace: str, labels: dict[str, str] | None, sized: bool = True) -> dict[str, Any]:
    """numNodes 3 and a trainer image of its own; a patch that sizes the helper 128Gi (``sized``: what the
    function reads; upstream's API has no resources there, so what the cluster gets sets an env var instead)
    and writes ``labels`` on the trainer job's template."""
    helper: dict[str, Any] = {"name": "helper"}
    helper.update({"resources": {"limits": {"memory": "128Gi"}}} if sized else {"env": [{"name": "X", "value": "1"}]})
    patch = build.runtime_patch(build.replicated_job("node", {"containers": [helper]}, labels=labels))
    trainer = {"numNodes": 3, "image": "example.com/trainer:1"}
    return build.trainjob(name, "torch", [patch], namespace=namespace, kind="TrainingRuntime", trainer=trainer)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(VENV_BIN / "trainjob-resources"), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def _render(tmp_path: Path, objects: list[dict[str, Any]], config: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(objects))
    (tmp_path / "fc.yaml").write_text(yaml.safe_dump(config))
    return _cli(tmp_path, "render", "--config", "fc.yaml", "in.yaml")


def _policy(**caps: dict[str, str]) -> dict[str, Any]:
    return build.function_config("policy", maxPerRole=caps)


# 1. Roles ------------------------------------------------------------------------------------------------------


@on_each_release
def test_trainer_makes_a_relabelled_trainer_job_an_initializer_and_the_function_refuses_it(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """Trainer accepts a TrainJob whose patch relabels the trainer job ``dataset-initializer`` and builds that
    job as an initializer: one replica and parallelism 1 whatever spec.trainer.numNodes says, the runtime's
    image kept (Trainer's ``Trainer`` builder skips it), the labels as patched. The function refuses that
    patch (the 128Gi helper would sit under the initializer cap instead of the container cap); with the
    runtime's own label written, the JobSet is the unlabelled TrainJob's and the render passes the roles on."""
    cp = trainer_control_plane
    release = cp.trainer.replace(".", "-")
    ns = _namespace(cp, f"roles-{release}")
    rt = _runtime(ns)
    cp.apply_server_side(yaml.safe_dump(rt))
    jobs = {}
    for name, labels in (
        ("plain", None),
        ("same", {ANCESTOR: "trainer"}),
        ("relabelled", {ANCESTOR: "dataset-initializer"}),
    ):
        done = submit(cp, _trainjob(name, ns, labels, sized=False))
        assert done.returncode == 0, done.stderr
        jobs[name] = cp.wait_for_jobset(name, ns)["spec"]["replicatedJobs"][0]

    def pod(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {c["name"]: c for c in job["template"]["spec"]["template"]["spec"]["containers"]}

    plain, same, relabelled = jobs["plain"], jobs["same"], jobs["relabelled"]
    assert plain["template"]["spec"]["parallelism"] == 3 and pod(plain)["node"]["image"] == "example.com/trainer:1"
    # The same JobSet but for the TrainJob's name (in the env Trainer writes).
    assert json.dumps(same, sort_keys=True).replace("same", "<name>") == json.dumps(plain, sort_keys=True).replace(
        "plain", "<name>"
    )
    assert relabelled["template"]["metadata"]["labels"][ANCESTOR] == "dataset-initializer"
    assert relabelled["replicas"] == 1 and relabelled["template"]["spec"]["parallelism"] == 1, relabelled
    assert (
        pod(relabelled)["node"]["image"]
        == rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0][
            "image"
        ]
    )

    caps = _policy(container={"memory": "16Gi"}, initializer={"memory": "256Gi"})
    refused = _render(tmp_path, [rt, _trainjob("relabelled", ns, {ANCESTOR: "dataset-initializer"})], caps)
    assert (refused.returncode, refused.stdout) == (1, ""), refused.stderr
    assert f"this patch sets {ANCESTOR}: dataset-initializer on replicated job 'node'" in refused.stderr
    assert "pkg/runtime/core/trainingruntime.go" in refused.stderr and "remove the label" in refused.stderr
    capped = _render(tmp_path, [rt, _trainjob("same", ns, {ANCESTOR: "trainer"})], caps)
    assert capped.returncode == 1 and "above the policy's maximum for the container role, 16Gi" in capped.stderr


# 2. A LimitRange from the bundle -------------------------------------------------------------------------------

QUANTITIES = st.sampled_from(["4Gi", "16Gi", "64Gi"])


def _admitted(cp: ControlPlane, ns: str, container: dict[str, Any]) -> dict[str, Any] | None:
    """The resources the API server gives ``container`` as a restartable init container of a pod in ``ns``
    (``kubectl create --dry-run=server``: defaulting and admission, the LimitRanger's included); None
    where it refuses the pod (a request above the limit it defaulted)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "probe-", "namespace": ns},
        "spec": {
            "initContainers": [{**container, "image": "busybox:1.36", "restartPolicy": "Always"}],
            "containers": [{"name": "main", "image": "busybox:1.36"}],
        },
    }
    done = cp.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", input=json.dumps(pod), check=False)
    if "must be less than or equal to memory limit" in done.stderr:
        return None
    assert done.returncode == 0, done.stderr
    resources: dict[str, Any] = json.loads(done.stdout)["spec"]["initContainers"][0].get("resources") or {}
    return resources


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(default=QUANTITIES, request=st.one_of(st.none(), QUANTITIES), limit=st.one_of(st.none(), QUANTITIES))
@example(default="64Gi", request="4Gi", limit=None)  # the issue's: a 64Gi default beside the team's request
def test_a_bundle_limit_range_defaults_the_pod_and_counts_against_the_cap(
    control_plane: ControlPlane,
    tmp_path_factory: pytest.TempPathFactory,
    default: str,
    request: str | None,
    limit: str | None,
) -> None:
    """A LimitRange in the tenant's bundle defaulting memory limits to ``default``, a sidecar the TrainJob
    sizes ``request``/``limit`` (either may be absent), a 16Gi sidecar cap. The LimitRange applied to a
    namespace of the control plane defaults a pod's sidecar as the API server admits it; the render refuses
    exactly when an admitted value is above 16Gi, and a LimitRange default above it is named as such."""
    cp = control_plane
    tmp_path = tmp_path_factory.mktemp("lr")
    ns = f"lr-{default}-{request}-{limit}".lower()
    if cp.kubectl("get", "namespace", ns, check=False).returncode != 0:
        _namespace(cp, ns)
        cp.kubectl("create", "serviceaccount", "default", "-n", ns, check=False)
    limit_range = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults", "namespace": ns},
        "spec": {"limits": [{"type": "Container", "default": {"memory": default}}]},
    }
    cp.apply_server_side(yaml.safe_dump(limit_range))
    resources = {
        key: {"memory": value} for key, value in (("requests", request), ("limits", limit)) if value is not None
    }
    admitted = _admitted(cp, ns, {"name": "data-loader", "resources": copy.deepcopy(resources)})

    rt = load_fixture("torch-plain")
    rt["metadata"] = {"name": "torch"}
    pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["initContainers"] = [{"name": "data-loader", "image": "busybox:1.36", "restartPolicy": "Always"}]
    trainjob = _trainjob("tj", ns, None)
    trainjob["spec"]["runtimeRef"] = {"name": "torch"}
    patched = trainjob["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    # The sidecar's patch: its resources, or (where it sets none) an env var, so that the patch names it.
    sidecar: dict[str, Any] = {"name": "data-loader"}
    sidecar.update({"resources": resources} if resources else {"env": [{"name": "X", "value": "1"}]})
    patched["template"]["spec"]["template"]["spec"] = {"initContainers": [sidecar]}
    done = _render(tmp_path, [rt, limit_range, trainjob], _policy(sidecar={"memory": "16Gi"}))
    if admitted is None:
        said = ("the API server would reject the pod", "must be less than or equal to memory limit")
        assert done.returncode == 1 and any(s in done.stderr for s in said), done.stderr
        return
    cap = parse_quantity("16Gi")
    above = [
        section
        for section in ("requests", "limits")
        if "memory" in admitted.get(section, {}) and parse_quantity(admitted[section]["memory"]) > cap
    ]
    assert (done.returncode == 1) == bool(above), (admitted, done.stderr)
    if "limits" in above and limit is None:
        assert f"limits.memory {default} (LimitRange {ns}/defaults, a default" in done.stderr, done.stderr
