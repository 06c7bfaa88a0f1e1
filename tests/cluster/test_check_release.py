"""`check` and the Trainer release, on both releases' control planes (RBAC on, real objects, no fake client).

Issue 46: a render that followed another release than the cluster's is an error where it gives the pods
other resources (what the caps and quotas saw is not what runs); issue 49: an unset trainerVersion is
unset for `check`, which then follows the cluster's release. Each test also makes the sync and reads what
Trainer's controller built, so the finding is measured against the running program.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

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

pytestmark = pytest.mark.cluster
RBAC_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def publish(cp: ControlPlane, ns: str, release: str) -> None:
    """The ConfigMap Trainer publishes its release in (manifests/overlays/manager/kustomization.yaml), in
    ``ns`` (check's --trainer-namespace), readable by every authenticated identity as Trainer's own Role and
    RoleBinding make it (manifests/base/rbac/public_configmap_role.yaml, public_configmap_role_binding.yaml):
    the harness installs neither."""
    name = "kubeflow-trainer-public"
    public = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": {"kubeflow_trainer_version": release},
    }
    rbac = "rbac.authorization.k8s.io"
    role = {
        "apiVersion": f"{rbac}/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": ns},
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [name], "verbs": ["get", "list", "watch"]}
        ],
    }
    binding = {
        "apiVersion": f"{rbac}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": rbac, "kind": "Role", "name": name},
        "subjects": [{"kind": "Group", "apiGroup": rbac, "name": "system:authenticated"}],
    }
    apply(cp, dump(public, role, binding))


def trainer_resources(jobset: dict[str, Any]) -> dict[str, Any]:
    job = next(j for j in jobset["spec"]["replicatedJobs"] if j["name"] == "node")
    node = next(c for c in job["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node")
    resources: dict[str, Any] = node.get("resources", {})
    return resources


def config(path: Path, **options: str) -> Path:
    return write(path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "platform"}, "data": options})


PER_NODE_CPU = {"resourcesPerNode": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}


@pytest.mark.parametrize("trainer_control_plane", ["v2.3.0"], indirect=True)
def test_a_render_that_followed_v2_2_is_an_error_where_v2_3_gives_the_trainer_64_gpus(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The platform's config says v2.2.0, its cap is 8 GPUs; the runtime's trainer has 64; the TrainJob sets
    resourcesPerNode {cpu: 1}. v2.2 replaces (no GPU, the cap passes), v2.3.0 merges: 64 GPUs."""
    cp = trainer_control_plane
    ns = namespace(cp, "release-gpus")
    gpus = {"requests": {"nvidia.com/gpu": "64"}, "limits": {"nvidia.com/gpu": "64"}}
    apply(cp, dump(runtime("release-gpu64", resources=gpus)))
    publish(cp, ns, "v2.3.0")
    hook = [o for o in _hook_objects(tmp_path, ns) if o["kind"] in RBAC_KINDS]
    apply(cp, dump(*hook))
    kubeconfig = _token_kubeconfig(cp, ns, "trainjob-resources-check", tmp_path / "hook-kubeconfig")
    platform = config(tmp_path / "platform.yaml", maxPerContainer="nvidia.com/gpu=8", trainerVersion="v2.2.0")
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("greedy", ns, "release-gpu64", trainer=PER_NODE_CPU))
    args = (str(repo), "--config", str(platform), "--trainer-namespace", ns)

    # Read with the PreSync hook's read-only rights (deploy/check-presync).
    checked = _check_as(kubeconfig, *args, cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    [finding] = checked.of("trainer-version")
    assert (finding["severity"], finding["object"]) == ("error", f"TrainJob/{ns}/greedy"), finding
    message = finding["message"]
    assert "the cluster runs Trainer v2.3.0 (ConfigMap" in message
    assert "the render follows Trainer v2.2.0 (trainerVersion)" in message
    for section in ("requests", "limits"):
        said = f"{section}.nvidia.com/gpu of container 'node' of replicated job 'node': 64 on the cluster, none in"
        assert said in message, message
    assert "set trainerVersion: v2.3.0 in the config" in message

    # The sync: the render applied, Trainer v2.3.0's controller builds the JobSet with 64 GPUs on the trainer.
    apply(cp, render(*args[:3], cwd=tmp_path))
    assert trainer_resources(cp.wait_for_jobset("greedy", ns))["limits"] == {"cpu": "1", "nvidia.com/gpu": "64"}

    # The release's other arithmetic is a warning where no TrainJob's pods change (no resourcesPerNode).
    apply(cp, dump(runtime("release-small")))
    plain = write(tmp_path / "plain" / "trainjob.yaml", trainjob("plain", ns, "release-small", trainer=PER_NODE_CPU))
    warned = _check_as(kubeconfig, str(plain), *args[1:], cwd=tmp_path)
    [finding] = warned.of("trainer-version")
    assert finding["severity"] == "warning" and "set trainerVersion: v2.3.0" in finding["message"], finding
    # Following the cluster's release: no finding, and the render refuses the 64 GPUs itself.
    followed = config(tmp_path / "v23.yaml", maxPerContainer="nvidia.com/gpu=8", trainerVersion="v2.3.0")
    refused = _check_as(kubeconfig, str(repo), "--config", str(followed), "--trainer-namespace", ns, cwd=tmp_path)
    assert refused.code == 1 and "the render fails" in refused.stderr, refused.stderr
    assert "limits.nvidia.com/gpu 64 (runtime)" in refused.stderr


@pytest.mark.parametrize("trainer_control_plane", ["v2.2.1"], indirect=True)
def test_a_config_without_trainer_version_lets_check_follow_a_v2_2_1_cluster(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """Issue 49: `--config` without trainerVersion on v2.2.1. check follows v2.2.1 (the quota sees the
    trainer's memory replaced by resourcesPerNode, as the JobSet shows), and says that render, without a
    cluster, follows v2.3.0, and what to set: never to leave it unset."""
    cp = trainer_control_plane
    ns = namespace(cp, "release-unset")
    memory = {"requests": {"memory": "16Gi"}, "limits": {"memory": "16Gi"}}
    apply(cp, dump(runtime("unset-base", "TrainingRuntime", ns, resources=memory)))
    quota = {"hard": {"requests.memory": "4Gi"}}
    apply(
        cp,
        dump({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": ns}, "spec": quota}),
    )
    publish(cp, ns, "v2.2.1")
    job = trainjob("replaced", ns, "unset-base", kind="TrainingRuntime", trainer=PER_NODE_CPU)
    repo = write(tmp_path / "repo" / "trainjob.yaml", job)
    unset = config(tmp_path / "platform.yaml", maxPerContainer="memory=64Gi")
    checked = check(cp, str(repo), "--config", str(unset), "--trainer-namespace", ns, cwd=tmp_path)
    assert "the render fails" not in checked.stderr, checked.stderr
    # v2.2.1: the trainer requests no memory, so 1Gi of the loader fits 4Gi; and the quota on requests.memory
    # then refuses the pods, whose trainer container sets none (must specify): that, and nothing else.
    [unset] = checked.of("quota-exceeded")
    assert "admission requires requests.memory of every container" in unset["message"], unset
    [finding] = checked.of("trainer-version")
    message = finding["message"]
    assert (finding["severity"], finding["object"]) == ("error", f"TrainJob/{ns}/replaced"), finding
    assert "the render follows Trainer v2.3.0 (the default: trainerVersion is unset)" in message
    assert "requests.memory of container 'node' of replicated job 'node': none on the cluster, 16Gi in" in message
    assert "set trainerVersion: v2.2.1" in message and "leave it unset" not in checked.stdout
    assert checked.code == 1

    # With the release set, nothing to say; and the quota arithmetic is v2.2.1's.
    pinned = config(tmp_path / "pinned.yaml", maxPerContainer="memory=64Gi", trainerVersion="v2.2.1")
    clean = check(cp, str(repo), "--config", str(pinned), "--trainer-namespace", ns, cwd=tmp_path)
    assert (clean.of("trainer-version"), clean.of("quota-exceeded")) == ([], [unset]), clean.stdout

    # The sync, on v2.2.1: the JobSet's trainer has resourcesPerNode's cpu and no memory, as check said.
    apply(cp, render(str(repo), "--config", str(pinned), cwd=tmp_path))
    assert trainer_resources(cp.wait_for_jobset("replaced", ns)) == {
        "requests": {"cpu": "1"},
        "limits": {"cpu": "1"},
    }
    assert yaml.safe_load(cp.kubectl("get", "resourcequota", "q", "-n", ns, "-o", "yaml").stdout)["spec"] == quota
