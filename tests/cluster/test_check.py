"""`trainjob-resources check` on the control plane: every finding against real objects, no fake client.

Each test has its own namespace and runtimes, and makes what a live cluster holds the way it comes
there: rendered output applied server-side as Argo CD applies it, a TrainJob created outside git
(`kubectl create`, as the SDK does), a ResourceQuota whose live usage is written through the status
subresource (no kube-controller-manager runs here, so nothing else would write `status.used`), a
LimitRange, an identity without rights (`--as`, RBAC roles), a drifted `--runtimes` copy, and the
runtime snapshots Trainer's own controller writes. Where the finding predicts a refusal, the test
also makes the sync and sees the API server or the webhook refuse it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import ControlPlane
from tests.kit import build

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
RUNTIMES = ROOT / "tests" / "testdata" / "runtimes"
MUST_EXIST = "must be created before the TrainJob is created"
TRACKING = "argocd.argoproj.io/tracking-id"


class Checked:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.code = done.returncode
        self.stderr = done.stderr
        self.stdout = done.stdout
        self.findings: list[dict[str, str]] = json.loads(done.stdout)["findings"] if done.stdout.startswith("{") else []

    def codes(self, *, ignore: tuple[str, ...] = ("trainer-version",)) -> list[str]:
        return [f["code"] for f in self.findings if f["code"] not in ignore]

    def of(self, code: str) -> list[dict[str, str]]:
        return [f for f in self.findings if f["code"] == code]


def check(cp: ControlPlane, *args: str, cwd: Path, stdin: str | None = None) -> Checked:
    return _check_as(Path(cp.kubeconfig), *args, cwd=cwd, stdin=stdin)


def render(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "trainjob_resources", "render", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def apply(cp: ControlPlane, text: str, timeout: float = 20.0) -> None:
    """Server-side apply as Argo CD does, again while the webhook's cache has not seen a new runtime yet."""
    started = time.monotonic()
    while True:
        done = cp.apply_server_side(text, check=False)
        if done.returncode == 0:
            return
        if MUST_EXIST not in done.stderr or time.monotonic() - started > timeout:
            raise AssertionError(done.stderr)
        time.sleep(0.2)


def runtime(
    name: str, kind: str = "ClusterTrainingRuntime", namespace: str | None = None, **changes: Any
) -> dict[str, Any]:
    """torch-plain with a native-sidecar data loader (the container the overrides size: the trainer
    container is sized by resourcesPerNode); ``changes`` go to the trainer container."""
    doc: dict[str, Any] = yaml.safe_load((RUNTIMES / "torch-plain.yaml").read_text())
    doc["kind"] = kind
    doc["metadata"]["name"] = name
    if namespace:
        doc["metadata"]["namespace"] = namespace
    pod = doc["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0].update(changes)
    pod["initContainers"] = [
        {
            "name": "data-loader",
            "image": "docker.io/library/busybox:1.36",
            "restartPolicy": "Always",
            "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}},
        }
    ]
    return doc


def trainjob(
    name: str,
    namespace: str,
    runtime_name: str,
    memory: str | None = None,
    kind: str = "ClusterTrainingRuntime",
    **spec: Any,
) -> dict[str, Any]:
    """A TrainJob; with ``memory``, an override of the data loader's (so a derived runtime)."""
    if memory is not None:
        resources = {"requests": {"memory": memory}, "limits": {"memory": memory}}
        loader = {"name": "data-loader", "resources": resources}
        spec["runtimePatches"] = [build.container_patch("node", "initContainers", loader, manager="example.com/team")]
    return build.trainjob(name, runtime_name, namespace=namespace, kind=kind, **spec)


def dump(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def write(path: Path, *docs: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(*docs))
    return path


@pytest.fixture(scope="module")
def cp(control_plane: ControlPlane) -> Iterator[ControlPlane]:
    yield control_plane


def namespace(cp: ControlPlane, name: str) -> str:
    cp.kubectl("create", "namespace", name)
    return name


def test_a_sync_the_cluster_accepts_has_no_error_finding_and_rendering_it_twice_changes_nothing(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "check-clean")
    apply(cp, dump(runtime("check-clean-base")))
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("train", ns, "check-clean-base", memory="2Gi"))
    first = check(cp, str(repo), cwd=tmp_path)
    assert first.code == 0, first.stderr
    assert first.codes() == [], first.findings
    rendered = render(
        str(repo), "--runtimes", str(write(tmp_path / "base.yaml", runtime("check-clean-base"))), cwd=tmp_path
    )
    apply(cp, rendered)
    again = check(cp, str(repo), cwd=tmp_path)
    assert again.code == 0 and again.codes() == [], again.findings
    # A rendered stream on stdin re-renders to itself: the same answer.
    piped = check(cp, "-", cwd=tmp_path, stdin=rendered)
    assert piped.code == 0 and piped.codes() == [], (piped.findings, piped.stderr)


def test_runtime_ref_immutable_when_an_edited_override_repoints_a_live_trainjob(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "check-immutable")
    apply(cp, dump(runtime("check-immutable-base")))
    repo = tmp_path / "repo" / "trainjob.yaml"
    write(repo, trainjob("train", ns, "check-immutable-base", memory="2Gi"))
    apply(
        cp,
        render(
            str(repo),
            "--namespace",
            ns,
            "--runtimes",
            str(write(tmp_path / "b.yaml", runtime("check-immutable-base"))),
            cwd=tmp_path,
        ),
    )
    write(repo, trainjob("train", ns, "check-immutable-base", memory="4Gi"))  # the edit
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1
    [finding] = checked.of("runtime-ref-immutable")
    assert finding["severity"] == "error" and finding["object"] == f"TrainJob/{ns}/train"
    assert "Force=true,Replace=true" in finding["message"]
    # What the finding predicts: the API server refuses the sync.
    edited = render(str(repo), "--runtimes", str(tmp_path / "b.yaml"), cwd=tmp_path)
    with pytest.raises(AssertionError, match="field is immutable"):
        apply(cp, edited)


def test_runtime_missing_when_a_trainjob_names_a_runtime_neither_the_render_nor_the_cluster_has(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "check-missing")
    repo = write(tmp_path / "trainjob.yaml", trainjob("orphan", ns, "no-such-runtime"))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1
    [finding] = checked.of("runtime-missing")
    assert (
        finding["object"] == f"TrainJob/{ns}/orphan" and "ClusterTrainingRuntime no-such-runtime" in finding["message"]
    )
    refused = cp.apply_server_side(repo.read_text(), check=False)
    assert refused.returncode != 0 and MUST_EXIST in refused.stderr


def test_runtime_in_use_when_the_render_drops_a_derived_runtime_a_trainjob_made_outside_git_uses(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "check-prune")
    base = runtime("check-prune-base", kind="TrainingRuntime", namespace=ns)
    apply(cp, dump(base))
    repo = tmp_path / "repo" / "trainjob.yaml"
    write(repo, trainjob("from-git", ns, "check-prune-base", memory="3Gi", kind="TrainingRuntime"))
    rendered = render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path)
    apply(cp, rendered)
    derived = next(d for d in yaml.safe_load_all(rendered) if d["kind"] == "TrainingRuntime")["metadata"]["name"]
    # A TrainJob made outside git (as the SDK makes one) on the derived runtime.
    cp.create(dump(trainjob("from-sdk", ns, derived, kind="TrainingRuntime")))
    write(repo, trainjob("from-git", ns, "check-prune-base", kind="TrainingRuntime"))  # the override is gone
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1
    [finding] = checked.of("runtime-in-use")
    assert finding["object"] == f"TrainingRuntime/{ns}/{derived}"
    assert f"{ns}/from-sdk (not in the render: made outside git)" in finding["message"]
    assert f"{ns}/from-git (in the render)" in finding["message"]
    assert checked.of("runtime-ref-immutable")  # from-git itself is re-pointed too
    # A TrainJob Argo CD tracks for the runtime's own application and the render no longer has was
    # deleted from git: a pruning sync deletes it with the runtime, so it is not named.
    tracked = trainjob("deleted-from-git", ns, derived, kind="TrainingRuntime")
    tracked["metadata"]["annotations"] = {TRACKING: f"team:trainer.kubeflow.org/TrainJob:{ns}/deleted-from-git"}
    cp.create(dump(tracked))
    cp.kubectl(
        "annotate",
        "trainingruntime",
        derived,
        "-n",
        ns,
        f"{TRACKING}=team:trainer.kubeflow.org/TrainingRuntime:{ns}/{derived}",
    )
    [again] = check(cp, str(repo), cwd=tmp_path).of("runtime-in-use")
    assert "deleted-from-git" not in again["message"] and "from-sdk" in again["message"]


def test_quota_exceeded_against_hard_minus_live_used_with_the_clusters_limit_range_defaults(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "check-quota")
    apply(cp, dump(runtime("check-quota-base")))
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "team", "namespace": ns},
        "spec": {"hard": {"requests.memory": "10Gi", "requests.cpu": "4", "count/trainjobs.trainer.kubeflow.org": "5"}},
    }
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "defaults", "namespace": ns},
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "500m"}, "default": {"cpu": "1"}}]},
    }
    apply(cp, dump(quota, limits))
    # No kube-controller-manager runs here: the live usage is written as its quota controller would.
    used = {"status": {"hard": quota["spec"]["hard"], "used": {"requests.memory": "6Gi", "requests.cpu": "0"}}}
    cp.kubectl(
        "patch", "resourcequota", "team", "-n", ns, "--subresource=status", "--type=merge", "-p", json.dumps(used)
    )
    repo = write(
        tmp_path / "trainjob.yaml",
        trainjob("big", ns, "check-quota-base", memory="2Gi", trainer={"numNodes": 3}),
    )
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1
    # The trainer container sets no memory: the quota on requests.memory refuses every pod (must specify).
    [unset] = [f for f in checked.of("quota-exceeded") if "admission requires requests.memory" in f["message"]]
    assert unset["message"].startswith("TrainJob big: ResourceQuota check-quota/team tracks requests.memory")
    found = {f["message"].split(" with ")[0]: f for f in totals(checked.of("quota-exceeded"))}
    memory = found["the TrainJobs this sync starts need requests.memory 6Gi"]
    assert memory["object"] == f"ResourceQuota/{ns}/team"
    assert "has 4Gi left (hard 10Gi, used 6Gi)" in memory["message"] and "(big)" in memory["message"]
    # 3 pods x 2 containers x the LimitRange's defaultRequest 500m, read from the cluster: 3 of 4, within.
    assert not any("requests.cpu" in key for key in found)
    assert len(found) == 1
    # Within the quota once the usage is lower: nothing.
    used["status"]["used"]["requests.memory"] = "2Gi"
    cp.kubectl(
        "patch", "resourcequota", "team", "-n", ns, "--subresource=status", "--type=merge", "-p", json.dumps(used)
    )
    assert totals(check(cp, str(repo), cwd=tmp_path).of("quota-exceeded")) == []
    # And the cpu the LimitRange defaults counts: 5 pods x 2 containers x 500m is more than 4.
    write(tmp_path / "trainjob.yaml", trainjob("big", ns, "check-quota-base", memory="1Gi", trainer={"numNodes": 5}))
    [cpu] = totals(check(cp, str(repo), cwd=tmp_path).of("quota-exceeded"))
    assert cpu["message"].startswith("the TrainJobs this sync starts need requests.cpu 5 "), cpu
    assert "has 4 left (hard 4, used 0)" in cpu["message"]


def totals(findings: list[dict[str, str]]) -> list[dict[str, str]]:
    """The quota-exceeded findings of the arithmetic (not of a value the quota makes every container set)."""
    return [f for f in findings if f["message"].startswith("the TrainJobs this sync starts")]


def _rbac_is_on(cp: ControlPlane) -> bool:
    done = cp.kubectl("auth", "can-i", "list", "pods", "--as", "nobody-at-all", "-n", "default", check=False)
    return done.stdout.strip() == "no"


def test_forbidden_for_an_identity_that_may_only_read_runtimes(cp: ControlPlane, tmp_path: Path) -> None:
    assert _rbac_is_on(cp), "the control plane's kube-apiserver authorizes with RBAC"
    ns = namespace(cp, "check-rbac")
    apply(cp, dump(runtime("check-rbac-base")))
    # kubeflow-edit's rights on runtimes (get/list/watch), and full rights on TrainJobs.
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "edit", "namespace": ns},
        "rules": [
            {
                "apiGroups": ["trainer.kubeflow.org"],
                "resources": ["trainingruntimes"],
                "verbs": ["get", "list", "watch"],
            },
            {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"], "verbs": ["*"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "edit-syncer", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "edit"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "syncer"}],
    }
    apply(cp, dump(role, binding))
    repo = write(tmp_path / "trainjob.yaml", trainjob("train", ns, "check-rbac-base", memory="2Gi"))
    as_admin = check(cp, str(repo), cwd=tmp_path)
    assert as_admin.of("forbidden") == []
    checked = check(cp, str(repo), "--as", "syncer", cwd=tmp_path)
    assert checked.code == 1
    forbidden = checked.of("forbidden")
    assert sorted(f["message"].split(" ")[3] for f in forbidden) == ["create", "patch"], forbidden
    for finding in forbidden:
        assert finding["object"].startswith(f"TrainingRuntime/{ns}/check-rbac-base-")
        assert finding["message"].startswith("syncer may not ")
        assert f"trainingruntimes.trainer.kubeflow.org in namespace {ns}" in finding["message"]
    # What it predicts: that identity's apply of the derived runtime is refused.
    rendered = render(
        str(repo), "--runtimes", str(write(tmp_path / "b.yaml", runtime("check-rbac-base"))), cwd=tmp_path
    )
    derived = next(d for d in yaml.safe_load_all(rendered) if d["kind"] == "TrainingRuntime")
    refused = cp.kubectl("apply", "--server-side", "--as", "syncer", "-f", "-", input=dump(derived), check=False)
    assert refused.returncode != 0 and "forbidden" in refused.stderr


def test_runtime_drift_names_the_fields_a_runtimes_copy_differs_in(cp: ControlPlane, tmp_path: Path) -> None:
    ns = namespace(cp, "check-drift")
    installed = runtime("check-drift-base", image="docker.io/pytorch/pytorch:2.7.1")
    apply(cp, dump(installed))
    repo = write(tmp_path / "trainjob.yaml", trainjob("train", ns, "check-drift-base", memory="2Gi"))
    same = check(cp, str(repo), "--runtimes", str(write(tmp_path / "same.yaml", installed)), cwd=tmp_path)
    assert same.of("runtime-drift") == [], same.findings  # the CRD's defaults on the installed one are no drift
    drifted = runtime("check-drift-base", image="docker.io/pytorch/pytorch:2.8.0")
    drifted["metadata"]["labels"]["team"] = "a"
    checked = check(cp, str(repo), "--runtimes", str(write(tmp_path / "copy.yaml", drifted)), cwd=tmp_path)
    assert checked.code == 0, checked.findings  # a warning
    [finding] = checked.of("runtime-drift")
    assert finding["severity"] == "warning" and finding["object"] == "ClusterTrainingRuntime/check-drift-base"
    image = "spec.template.spec.replicatedJobs[node].template.spec.template.spec.containers[node].image"
    assert f"at {image}, metadata.labels.team:" in finding["message"], finding["message"]
    assert "copy.yaml" in finding["message"]
    # A local-config copy vendored in the repository is compared the same way.
    vendored = runtime("check-drift-base", image="docker.io/pytorch/pytorch:2.6.0")
    vendored["metadata"]["annotations"] = {"config.kubernetes.io/local-config": "true"}
    write(tmp_path / "vendored" / "runtime.yaml", vendored)
    write(tmp_path / "vendored" / "trainjob.yaml", trainjob("train", ns, "check-drift-base", memory="2Gi"))
    [copy] = check(cp, "vendored", cwd=tmp_path).of("runtime-drift")
    assert f"at {image}:" in copy["message"] and "vendored/runtime.yaml" in copy["message"], copy["message"]


def _snapshot(cp: ControlPlane, ns: str, name: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        found = cp.get("configmap", f"{name}-runtime-snapshot", ns)
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"Trainer wrote no runtime snapshot for {ns}/{name} within {timeout:.0f}s")
        time.sleep(0.2)


def test_snapshot_kept_when_a_base_edit_changes_the_runtime_a_running_trainjob_started_on(
    cp: ControlPlane, tmp_path: Path
) -> None:
    ns = namespace(cp, "check-snapshot")
    apply(cp, dump(runtime("check-snapshot-base")))
    repo = write(tmp_path / "trainjob.yaml", trainjob("running", ns, "check-snapshot-base", memory="2Gi"))
    apply(
        cp,
        render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", runtime("check-snapshot-base"))), cwd=tmp_path),
    )
    _snapshot(cp, ns, "running")
    assert check(cp, str(repo), cwd=tmp_path).of("snapshot-kept") == []
    # The platform edits the installed base: the derived runtime's content changes, the name does not.
    apply(cp, dump(runtime("check-snapshot-base", image="docker.io/pytorch/pytorch:2.8.0")))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 0 and checked.codes() == ["snapshot-kept"], checked.findings
    [finding] = checked.of("snapshot-kept")
    assert finding["severity"] == "info" and finding["object"] == f"TrainJob/{ns}/running"
    assert "containers[node].image" in finding["message"] and "running-runtime-snapshot" in finding["message"]


def test_trainer_version_says_what_it_read(cp: ControlPlane, tmp_path: Path) -> None:
    ns = namespace(cp, "check-version")
    repo = write(tmp_path / "trainjob.yaml", trainjob("train", ns, "torch-anything"))
    # Trainer v2.3.0's CRDs carry no release; without its public ConfigMap the release cannot be told.
    [unknown] = check(cp, str(repo), cwd=tmp_path).of("trainer-version")
    assert unknown["severity"] == "warning" and "could not tell" in unknown["message"]
    assert "controller-gen.kubebuilder.io/version" in unknown["message"]
    assert "ConfigMap kubeflow-system/kubeflow-trainer-public: not found" in unknown["message"]
    namespace(cp, "kubeflow-system")
    public = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kubeflow-trainer-public", "namespace": "kubeflow-system"},
        "data": {"kubeflow_trainer_version": "v2.3.0"},
    }
    # A pod-spec patch with terminationGracePeriodSeconds, which only v2.3.0's PodSpecPatch has.
    graceful = dict(trainjob("graceful", ns, "torch-anything"))
    grace_period = build.replicated_job("node", {"terminationGracePeriodSeconds": 30})
    graceful["spec"]["runtimePatches"] = [build.runtime_patch(grace_period, manager="example.com/me")]
    grace = write(tmp_path / "graceful" / "trainjob.yaml", graceful)
    pinned = write(
        tmp_path / "pinned" / "config.yaml",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"trainerVersion": "v2.3.0"}},
    )
    try:
        apply(cp, dump(public))
        assert check(cp, str(repo), cwd=tmp_path).of("trainer-version") == []
        admitted = check(cp, str(grace), cwd=tmp_path)
        assert "the render fails" not in admitted.stderr and admitted.of("runtime-missing"), admitted.stderr
        # v2.2.0: check follows the cluster's release (trainerVersion unset), so its render refuses the patch;
        # render, without a cluster, follows v2.3.0: a warning (no pod's resources differ) naming what to set.
        public["data"]["kubeflow_trainer_version"] = "v2.2.0"
        apply(cp, dump(public))
        [unset] = check(cp, str(repo), cwd=tmp_path).of("trainer-version")
        assert unset["severity"] == "warning" and "check followed the cluster's (v2.2.0)" in unset["message"]
        assert "set trainerVersion: v2.2.0" in unset["message"] and "leave it unset" not in unset["message"]
        refused = check(cp, str(grace), cwd=tmp_path)
        assert "the render fails" in refused.stderr, refused.stderr
        said = "terminationGracePeriodSeconds\": Kubeflow Trainer v2.2.0's TrainJob CRD does not declare"
        assert said in refused.stderr, refused.stderr
        # A config that says otherwise is followed, and the finding says so.
        [differs] = check(cp, str(repo), "--config", str(pinned), cwd=tmp_path).of("trainer-version")
        assert "runs Trainer v2.2.0 (ConfigMap kubeflow-system/kubeflow-trainer-public data" in differs["message"]
        assert "the render follows Trainer v2.3.0 (trainerVersion)" in differs["message"]
        assert "set trainerVersion: v2.2.0" in differs["message"]
        public["data"]["kubeflow_trainer_version"] = "v2.1.0"
        apply(cp, dump(public))
        [older] = check(cp, str(repo), cwd=tmp_path).of("trainer-version")
        assert (
            "runs Trainer v2.1.0" in older["message"]
            and "does not support (v2.2.0, v2.2.1, v2.3.0)" in (older["message"])
        )
    finally:  # the namespace stays: no kube-controller-manager runs here to finish deleting one
        cp.delete("configmap", "kubeflow-trainer-public", "kubeflow-system")


def test_the_table_and_markdown_formats_and_the_kubectl_plugin(cp: ControlPlane, tmp_path: Path) -> None:
    ns = namespace(cp, "check-formats")
    repo = write(tmp_path / "trainjob.yaml", trainjob("orphan", ns, "no-such-runtime"))
    for fmt, head in (("table", "SEVERITY  CODE"), ("markdown", "| severity | code | object | message |")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "trainjob_resources",
                "check",
                str(repo),
                "--kubeconfig",
                cp.kubeconfig,
                "--format",
                fmt,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 1 and done.stdout.startswith(head), done.stdout
        assert f"TrainJob/{ns}/orphan" in done.stdout
    plugin = Path(sys.executable).with_name("kubectl-trainjob_resources")
    if not plugin.exists():
        pytest.skip(f"{plugin} is not installed (pip install -e .)")
    env = {"PATH": f"{plugin.parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [cp.kubectl_path, "trainjob-resources", "check", str(repo), "--kubeconfig", cp.kubeconfig],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 1 and "runtime-missing" in done.stdout, done.stderr


HOOK = ROOT / "deploy" / "check-presync"
SYNCER = "system:serviceaccount:argocd:argocd-application-controller"


def _hook_objects(tmp_path: Path, ns: str) -> list[dict[str, Any]]:
    """deploy/check-presync as a user adds it: an overlay that sets the application's namespace."""
    from tests.cluster.standalone import kustomize

    overlay = tmp_path / "overlay"
    shutil.copytree(HOOK, overlay / "check-presync")
    (overlay / "kustomization.yaml").write_text(f"namespace: {ns}\nresources:\n- check-presync\n")
    built = subprocess.run(
        [kustomize(), "build", str(overlay)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return list(yaml.safe_load_all(built))


def _token_kubeconfig(cp: ControlPlane, ns: str, account: str, path: Path) -> Path:
    """A kubeconfig for the service account: a token from the TokenRequest API, the admin's server and CA."""
    token = cp.kubectl("create", "token", account, "-n", ns).stdout.strip()
    admin = yaml.safe_load(Path(cp.kubeconfig).read_text())
    cluster = admin["clusters"][0]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": account, "context": {"cluster": cluster["name"], "user": account, "namespace": ns}}],
        "current-context": account,
    }
    path.write_text(yaml.safe_dump(config))
    return path


AS_JSON = ("--format", "json")


def _check_as(kubeconfig: Path, *args: str, cwd: Path, stdin: str | None = None) -> Checked:
    """``check`` as installed, with ``kubeconfig``'s credentials, its report as JSON."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainjob_resources",
            "check",
            *args,
            "--kubeconfig",
            str(kubeconfig),
            "--format",
            "json",
        ],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return Checked(done)


def test_the_presync_hooks_read_only_rights_are_exactly_what_check_needs(cp: ControlPlane, tmp_path: Path) -> None:
    ns = namespace(cp, "check-hook")
    objects = _hook_objects(tmp_path, ns)
    assert {o["kind"] for o in objects} == {
        "ConfigMap",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Job",
    }
    for obj in objects:
        assert obj["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "PreSync", obj["metadata"]["name"]
    [job] = [o for o in objects if o["kind"] == "Job"]
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == "trainjob-resources-check"
    assert "trainjob-resources check" in job["spec"]["template"]["spec"]["containers"][0]["args"][0]
    rbac = [
        o
        for o in objects
        if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    ]
    for obj in rbac:
        if obj["kind"] in ("ClusterRoleBinding", "RoleBinding"):  # the overlay's namespace reaches the subjects
            assert obj["subjects"] == [{"kind": "ServiceAccount", "name": "trainjob-resources-check", "namespace": ns}]
    apply(cp, dump(*rbac))
    base = runtime("check-hook-base")
    apply(cp, dump(base))
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("train", ns, "check-hook-base", memory="2Gi"))
    kubeconfig = _token_kubeconfig(cp, ns, "trainjob-resources-check", tmp_path / "hook-kubeconfig")
    # With these rights check reads everything it needs, and asks as Argo CD's controller (which may do
    # nothing here: forbidden is the expected answer, from impersonated access reviews).
    ok = _check_as(kubeconfig, str(repo), "--as", SYNCER, cwd=tmp_path)
    assert ok.code == 1, ok.stderr
    assert sorted({f["code"] for f in ok.findings}) == ["forbidden", "trainer-version"], ok.findings
    assert all(f["message"].startswith(f"{SYNCER} may not ") for f in ok.of("forbidden"))
    # Each rule is needed: without it, check cannot read the cluster (exit 2, one line). No Kueue here:
    # tests/cluster/test_kueue.py takes its rules away on its own control plane; no RuntimeClass or JobSet either.
    taken = take_each_rule_away(
        cp, rbac, kubeconfig, repo, tmp_path, lambda r: r["apiGroups"] not in ([KUEUE_GROUP], [NODE_GROUP], [JOBSET])
    )
    assert taken == 5


KUEUE_GROUP = "kueue.x-k8s.io"
NODE_GROUP = "node.k8s.io"  # RuntimeClasses: tests/cluster/test_check_sync.py takes that rule away
JOBSET = "jobset.x-k8s.io"  # JobSets: tests/cluster/test_check_jobset_active.py takes that rule away


def take_each_rule_away(
    cp: ControlPlane,
    rbac: list[dict[str, Any]],
    kubeconfig: Path,
    repo: Path,
    tmp_path: Path,
    which: Callable[[dict[str, Any]], bool],
) -> int:
    """Take each rule ``which`` picks out of the hook's ClusterRole and Role in turn, and see check exit 2
    (one line) without it; put it back. How many were taken."""
    roles = {o["kind"]: o for o in rbac if o["kind"] in ("ClusterRole", "Role")}
    taken = 0
    for kind, role in roles.items():
        for i, rule in enumerate(role["rules"]):
            if not which(rule):
                continue
            taken += 1
            reduced = json.loads(json.dumps(role))
            del reduced["rules"][i]
            apply(cp, dump(reduced))
            try:
                deadline = time.monotonic() + 10
                while True:  # RBAC changes reach the authorizer through its informer: a moment
                    without = _check_as(kubeconfig, str(repo), "--as", SYNCER, cwd=tmp_path)
                    if without.code == 2 or time.monotonic() > deadline:
                        break
                    time.sleep(0.5)
                assert without.code == 2, f"{kind} rule {rule} is not needed: {without.findings}"
                assert len(without.stderr.splitlines()) == 1, without.stderr
            finally:
                apply(cp, dump(role))
    return taken


def test_python_m_controlplane_writes_a_kubeconfig_and_stops_when_stdin_closes(tmp_path: Path) -> None:
    """`python -m tests.cluster.controlplane --kubeconfig FILE`, for users who try their own output."""
    from tests.cluster.controlplane import find_kubectl, tool_paths
    from tests.cluster.standalone import unavailable

    if tool_paths() is None:
        unavailable("the control-plane binaries are not built (make cluster)")
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.cluster.controlplane", "--kubeconfig", str(kubeconfig)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        assert line.startswith("control plane up in ") and str(kubeconfig) in line, line + proc.stderr.read()
        done = subprocess.run(
            [
                find_kubectl(),
                f"--kubeconfig={kubeconfig}",
                "get",
                "crd",
                "trainjobs.trainer.kubeflow.org",
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.stdout.strip() == "customresourcedefinition.apiextensions.k8s.io/trainjobs.trainer.kubeflow.org"
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        assert not kubeconfig.exists(), "the kubeconfig of a stopped control plane is removed"
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=60)
