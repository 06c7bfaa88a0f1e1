"""deploy/check-presync as Argo CD runs it, on the control plane: every object of the hook (its
ConfigMap, ServiceAccount, RBAC and Job) applied server-side as Argo CD's controller, in the hook's
waves; the Job accepted by the API server. The control plane has no kubelet and no Job controller, so
no pod runs: the Job's two containers' commands, as read back from the API server, run here in turn
(the init container's ``git clone`` of a local repository, then the check container's
``trainjob-resources check``), with the ConfigMap's variables, the Job's working folder, and the
hook's ServiceAccount's own credentials (a token from the TokenRequest API, in a kubeconfig: in a pod
the same token comes mounted). Its volume paths (``/work``, ``/tmp``) are folders of the test's own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.controlplane import ARGOCD_FIELD_MANAGER, ControlPlane
from tests.cluster.test_check import (
    SYNCER,
    _hook_objects,
    _token_kubeconfig,
    apply,
    dump,
    namespace,
    runtime,
    trainjob,
    write,
)

pytestmark = pytest.mark.cluster

WAVE = "argocd.argoproj.io/sync-wave"
DELETE_POLICY = "argocd.argoproj.io/hook-delete-policy"
ACCOUNT = "trainjob-resources-check"


def git(*args: str, cwd: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *ident, *args], cwd=cwd, env=env, check=True, capture_output=True)


def run_container(container: dict[str, Any], env: dict[str, str], root: Path) -> subprocess.CompletedProcess[str]:
    """A container's ``command`` + ``args`` (``sh -c SCRIPT``) with its ``env`` and working folder; its
    volume paths under ``root``."""
    assert container["command"] == ["sh", "-c"], container["command"]
    (script,) = container["args"]
    mounts = [m["mountPath"] for m in container.get("volumeMounts") or []]
    at_root = re.compile(r"(?<![\w/.-])(" + "|".join(re.escape(m) for m in mounts) + r")(?=/|\b|$)")

    def moved(text: str) -> str:  # each mount path, once, to its folder under root
        return at_root.sub(lambda found: str(root / found.group(1).lstrip("/")), text)

    script = moved(script)
    workdir = container.get("workingDir")
    cwd = Path(moved(workdir)) if workdir else root
    fixed = {e["name"]: moved(e["value"]) for e in container.get("env") or []}
    return subprocess.run(
        ["sh", "-c", script], cwd=cwd, env={**env, **fixed}, capture_output=True, text=True, timeout=300, check=False
    )


def hook_run(cp: ControlPlane, tmp_path: Path, ns: str, repo: Path) -> subprocess.CompletedProcess[str]:
    """The hook's objects applied as Argo CD applies them (server-side, its field manager, lowest wave
    first), with the ConfigMap naming ``repo``; then the Job's containers run as read back."""
    objects = _hook_objects(tmp_path, ns)
    for obj in objects:
        if obj["kind"] == "ConfigMap":
            obj["data"].update({"REPOSITORY": f"file://{repo}", "REVISION": "main", "SOURCE_PATH": "."})
    for obj in objects:  # BeforeHookCreation: Argo CD deletes the last run's hook first (here the Job, whose pod
        # template is immutable; the rest is applied again unchanged)
        if obj["metadata"]["annotations"].get(DELETE_POLICY) == "BeforeHookCreation" and obj["kind"] == "Job":
            cp.delete("jobs.batch", obj["metadata"]["name"], ns)
    for wave in sorted({int(o["metadata"]["annotations"].get(WAVE, "0")) for o in objects}):
        batch = [o for o in objects if int(o["metadata"]["annotations"].get(WAVE, "0")) == wave]
        cp.apply_server_side(dump(*batch), field_manager=ARGOCD_FIELD_MANAGER)
    job = cp.get("jobs.batch", ACCOUNT, ns)
    assert job is not None
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == ACCOUNT
    settings = cp.get("configmaps", ACCOUNT, ns)
    assert settings is not None
    kubeconfig = _token_kubeconfig(cp, ns, ACCOUNT, tmp_path / "token-kubeconfig")
    root = tmp_path / "pod"
    for volume in pod["volumes"]:
        (root / volume["name"]).mkdir(parents=True)
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "KUBECONFIG": str(kubeconfig),
        **settings["data"],
    }
    (fetch,) = pod["initContainers"]
    fetched = run_container(fetch, env, root)
    assert fetched.returncode == 0, fetched.stderr
    (check,) = pod["containers"]
    return run_container(check, env, root)


def test_the_presync_hook_applied_as_argo_cd_passes_and_fails_the_sync_with_check(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    ns = namespace(cp, "presync-hook")
    apply(cp, dump(runtime("presync-base")))
    # The identity Argo CD syncs as, with the rights a sync needs (cluster-admin here).
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "presync-syncer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "argocd-application-controller", "namespace": "argocd"}],
    }
    apply(cp, dump(binding))
    # Removed afterwards: the control plane is shared, and a later test of the syncer's own rights
    # (test_check.py's PreSync rights) must not find it cluster-admin.
    try:
        assert SYNCER == "system:serviceaccount:argocd:argocd-application-controller"
        repo = tmp_path / "repo"
        write(repo / "trainjob.yaml", trainjob("train", ns, "presync-base", memory="2Gi"))
        git("init", "-q", cwd=repo)
        git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", "sync", cwd=repo)
        passed = hook_run(cp, tmp_path / "first", ns, repo)
        assert passed.returncode == 0, (passed.stdout, passed.stderr)
        # The next revision names a runtime the cluster does not have: the hook fails, and so the sync.
        write(repo / "trainjob.yaml", trainjob("train", ns, "no-such-runtime"))
        git("commit", "-q", "-am", "broken", cwd=repo)
        failed = hook_run(cp, tmp_path / "second", ns, repo)
        assert failed.returncode == 1, (failed.stdout, failed.stderr)
        assert "runtime-missing" in failed.stdout, failed.stdout
    finally:
        cp.delete("clusterrolebinding", "presync-syncer")
