"""`check` decides on the installed runtime, not on the repository's copy of it (issue 46), on the control
plane with RBAC on (read with the PreSync hook's read-only rights) and real objects.

A TrainJob the render leaves pointing at the runtime runs on the installed one; a TrainJob the render
re-points runs on the derived runtime, made from the copy. The test makes the sync and reads the JobSets
Trainer's controller builds for both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import (
    _check_as,
    _hook_objects,
    _token_kubeconfig,
    apply,
    check,
    dump,
    namespace,
    render,
    runtime,
    trainjob,
    write,
)
from tests.cluster.test_check_release import RBAC_KINDS, config, trainer_resources

pytestmark = pytest.mark.cluster
LOCAL = {"config.kubernetes.io/local-config": "true"}


def sized(memory: str) -> dict[str, Any]:
    return {"requests": {"memory": memory}, "limits": {"memory": memory}}


@pytest.fixture(scope="module")
def cp(control_plane: ControlPlane) -> ControlPlane:
    return control_plane


def test_a_copy_that_hides_the_installed_runtimes_512gi_from_a_32gi_cap_is_an_error(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "copy-trust")
    apply(cp, dump(runtime("copy-trust-base", resources=sized("512Gi"))))
    apply(cp, dump(*(o for o in _hook_objects(tmp_path, ns) if o["kind"] in RBAC_KINDS)))
    kubeconfig = _token_kubeconfig(cp, ns, "trainjob-resources-check", tmp_path / "hook-kubeconfig")
    copy = runtime("copy-trust-base", resources=sized("8Gi"))
    copy["metadata"]["annotations"] = LOCAL
    repo = tmp_path / "repo"
    write(repo / "runtime.yaml", copy)
    write(repo / "plain.yaml", trainjob("plain", ns, "copy-trust-base"))
    cap = config(tmp_path / "platform.yaml", maxPerContainer="memory=32Gi")

    checked = _check_as(kubeconfig, "repo", "--config", str(cap), cwd=tmp_path)
    assert checked.code == 1 and "the render fails" not in checked.stderr, checked.stderr
    [finding] = checked.of("runtime-drift")
    assert (finding["severity"], finding["object"]) == ("error", "ClusterTrainingRuntime/copy-trust-base"), finding
    message = finding["message"]
    assert "the copy read from repo/runtime.yaml differs from the runtime installed in the cluster at" in message
    assert "containers[node].resources.limits.memory" in message
    assert f"TrainJob {ns}/plain:" in message and "512Gi" in message and "32Gi" in message, message
    # Without the copy the render itself reads the installed runtime and refuses the same TrainJob.
    (repo / "runtime.yaml").unlink()
    alone = _check_as(kubeconfig, "repo", "--config", str(cap), cwd=tmp_path)
    assert alone.code == 1 and "the render fails" in alone.stderr and "512Gi" in alone.stderr, alone.stderr
    write(repo / "runtime.yaml", copy)

    # A TrainJob with an override runs on the derived runtime, made from the copy: no error there.
    (repo / "plain.yaml").unlink()
    write(repo / "sized.yaml", trainjob("sized", ns, "copy-trust-base", memory="2Gi"))
    derived = _check_as(kubeconfig, "repo", "--config", str(cap), cwd=tmp_path)
    assert "the render fails" not in derived.stderr, derived.stderr
    errors = {f["code"] for f in derived.findings if f["severity"] == "error"}
    assert errors == {"forbidden"}, derived.findings  # the read-only identity may not apply: nothing else
    [warning] = derived.of("runtime-drift")
    assert warning["severity"] == "warning", warning

    # The sync, as check said: the derived TrainJob's trainer has the copy's 8Gi, the plain one the
    # installed 512Gi (applied without the cap, to see what the cluster runs).
    write(repo / "plain.yaml", trainjob("plain", ns, "copy-trust-base"))
    apply(cp, render("repo", cwd=tmp_path))
    assert trainer_resources(cp.wait_for_jobset("sized", ns)) == sized("8Gi")
    assert trainer_resources(cp.wait_for_jobset("plain", ns)) == sized("512Gi")


def test_a_quota_counts_the_installed_runtime_a_copy_understates(cp: ControlPlane, tmp_path: Path) -> None:
    ns = namespace(cp, "copy-quota")
    apply(cp, dump(runtime("copy-quota-base", "TrainingRuntime", ns, resources=sized("64Gi"))))
    quota = {"hard": {"requests.memory": "32Gi"}}
    apply(
        cp,
        dump({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": ns}, "spec": quota}),
    )
    copy = runtime("copy-quota-base", "TrainingRuntime", ns, resources=sized("8Gi"))
    copy["metadata"]["annotations"] = LOCAL
    repo = tmp_path / "repo"
    write(repo / "runtime.yaml", copy)
    write(repo / "plain.yaml", trainjob("plain", ns, "copy-quota-base", kind="TrainingRuntime"))
    checked = check(cp, "repo", cwd=tmp_path)
    [exceeded] = checked.of("quota-exceeded")
    assert "requests.memory 65Gi" in exceeded["message"], exceeded  # 64Gi installed + the 1Gi loader
    assert checked.code == 1
