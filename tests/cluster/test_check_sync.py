"""`check` says what the sync will really do (issue 49), on both Trainer releases' control planes: each test
runs `check`, then makes the sync (server-side as Argo CD's `argocd-controller`, or client-side as
`kubectl apply`, Argo CD's default) and sees the consequence the finding names happen, or the sync pass
where there is no finding.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import (
    MUST_EXIST,
    NODE_GROUP,
    _hook_objects,
    _token_kubeconfig,
    check,
    dump,
    namespace,
    render,
    runtime,
    take_each_rule_away,
    trainjob,
    write,
)
from tests.cluster.test_check_release import RBAC_KINDS, publish
from tests.kit import build

pytestmark = pytest.mark.cluster
RELEASES = ["v2.3.0", "v2.2.1"]
MODES = ["server-side", "client-side"]
PATCHES_IMMUTABLE = "RuntimePatches can only be modified when the TrainJob is suspended"


def sync(cp: ControlPlane, text: str, mode: str, timeout: float = 20.0) -> tuple[bool, str]:
    """The sync: `kubectl apply` server-side (field manager argocd-controller) or client-side; again while
    the webhook's cache has not seen a new runtime yet. (accepted, stderr)."""
    started = time.monotonic()
    while True:
        if mode == "server-side":
            done = cp.apply_server_side(text, check=False)
        else:
            done = cp.kubectl("apply", "-f", "-", input=text, check=False)
        if done.returncode == 0 or MUST_EXIST not in done.stderr or time.monotonic() - started > timeout:
            return done.returncode == 0, done.stderr
        time.sleep(0.2)


def synced(cp: ControlPlane, text: str, mode: str) -> None:
    accepted, stderr = sync(cp, text, mode)
    assert accepted, stderr


def node_selector_job(name: str, ns: str, base: str, zone: str, **spec: Any) -> dict[str, Any]:
    """A TrainJob with a data-loader memory override (a derived runtime) and a nodeSelector patch of another
    manager, which stays in runtimePatches."""
    job = trainjob(name, ns, base, memory="2Gi", **spec)
    pin = build.runtime_patch(build.replicated_job("node", {"nodeSelector": {"zone": zone}}), manager="example.com/pin")
    job["spec"]["runtimePatches"].append(pin)
    return job


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("trainer_control_plane", RELEASES, indirect=True)
def test_a_changed_node_selector_patch_on_a_running_trainjob_is_refused_by_the_webhook(
    trainer_control_plane: ControlPlane, mode: str, tmp_path: Path
) -> None:
    cp = trainer_control_plane
    ns = namespace(cp, f"sync-patch-{mode}")
    base = runtime(f"sync-patch-{mode}")
    synced(cp, dump(base), mode)
    runtimes = str(write(tmp_path / "base.yaml", base))
    repo = tmp_path / "repo" / "trainjob.yaml"
    write(repo, node_selector_job("running", ns, base["metadata"]["name"], "a"))
    write(tmp_path / "repo" / "held.yaml", node_selector_job("held", ns, base["metadata"]["name"], "a", suspend=True))
    synced(cp, render(str(repo.parent), "--runtimes", runtimes, cwd=tmp_path), mode)
    assert check(cp, str(repo.parent), cwd=tmp_path).codes() == []

    # The platform moves the job to zone b: the running TrainJob's patch changes, the suspended one's too.
    write(repo, node_selector_job("running", ns, base["metadata"]["name"], "b"))
    write(tmp_path / "repo" / "held.yaml", node_selector_job("held", ns, base["metadata"]["name"], "b", suspend=True))
    checked = check(cp, str(repo.parent), cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    [finding] = checked.of("runtime-patches-immutable")
    assert (finding["severity"], finding["object"]) == ("error", f"TrainJob/{ns}/running"), finding
    assert "manager example.com/pin" in finding["message"] and PATCHES_IMMUTABLE in finding["message"]
    assert checked.codes() == ["runtime-patches-immutable"], checked.findings

    # The sync: the webhook refuses the running TrainJob, and lets the suspended one change.
    rendered = list(yaml.safe_load_all(render(str(repo.parent), "--runtimes", runtimes, cwd=tmp_path)))
    running = [d for d in rendered if d["metadata"]["name"] == "running"]
    held = [d for d in rendered if d["metadata"]["name"] == "held"]
    accepted, stderr = sync(cp, dump(*running), mode)
    assert not accepted and PATCHES_IMMUTABLE in stderr, stderr
    synced(cp, dump(*held), mode)
    live = cp.get("trainjob", "held", ns)
    assert live is not None
    [pin] = [p for p in live["spec"]["runtimePatches"] if p["manager"] == "example.com/pin"]
    assert pin["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "nodeSelector"
    ] == {"zone": "b"}


def grant(cp: ControlPlane, ns: str, user: str, verbs: list[str]) -> None:
    """``verbs`` on TrainJobs and TrainingRuntimes in ``ns`` for ``user`` (a Role and its RoleBinding)."""
    rbac = "rbac.authorization.k8s.io"
    role = {
        "apiVersion": f"{rbac}/v1",
        "kind": "Role",
        "metadata": {"name": user, "namespace": ns},
        "rules": [
            {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs", "trainingruntimes"], "verbs": verbs}
        ],
    }
    binding = {
        "apiVersion": f"{rbac}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": user, "namespace": ns},
        "roleRef": {"apiGroup": rbac, "kind": "Role", "name": user},
        "subjects": [{"apiGroup": rbac, "kind": "User", "name": user}],
    }
    cp.apply_server_side(dump(role, binding))


def test_forbidden_asks_about_get_which_only_a_client_side_apply_needs(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    ns = namespace(cp, "sync-no-get")
    base = runtime("sync-no-get", kind="TrainingRuntime", namespace=ns)
    synced(cp, dump(base), "server-side")
    grant(cp, ns, "getless", ["create", "patch", "update", "list", "watch"])
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("train", ns, "sync-no-get", "2Gi", "TrainingRuntime"))
    checked = check(cp, str(repo), "--as", "getless", cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    forbidden = checked.of("forbidden")
    assert sorted(f["object"].split("/")[0] for f in forbidden) == ["TrainJob", "TrainingRuntime"], forbidden
    for finding in forbidden:
        assert finding["message"].startswith("getless may not get "), finding
        assert "a client-side apply (kubectl apply, Argo CD's default) of" in finding["message"]
    rendered = render(str(repo), "--runtimes", str(write(tmp_path / "base.yaml", base)), cwd=tmp_path)
    # The sync as that identity: client-side, refused (kubectl reads each object first); server-side passes.
    client = cp.kubectl("apply", "--as", "getless", "-f", "-", input=rendered, check=False)
    assert client.returncode != 0 and "cannot get resource" in client.stderr, client.stderr
    deadline = time.monotonic() + 20
    while True:
        server = cp.kubectl(
            "apply",
            "--server-side",
            "--field-manager=argocd-controller",
            "--as",
            "getless",
            "-f",
            "-",
            input=rendered,
            check=False,
        )
        if server.returncode == 0 or MUST_EXIST not in server.stderr or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert server.returncode == 0, server.stderr
    # With get, nothing to say.
    grant(cp, ns, "getless", ["get", "create", "patch", "update", "list", "watch"])
    deadline = time.monotonic() + 10
    while (left := check(cp, str(repo), "--as", "getless", cwd=tmp_path).of("forbidden")) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.5)  # RBAC reaches the authorizer through its informer
    assert left == []


def quota(cp: ControlPlane, ns: str, hard: dict[str, str]) -> None:
    """A ResourceQuota with its status written as the quota controller would (none runs here): the quota
    admission then counts each pod created against it and updates ``used`` itself."""
    obj = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "team", "namespace": ns}}
    cp.apply_server_side(dump({**obj, "spec": {"hard": hard}}))
    status = {"status": {"hard": hard, "used": dict.fromkeys(hard, "0")}}
    cp.kubectl(
        "patch", "resourcequota", "team", "-n", ns, "--subresource=status", "--type=merge", "-p", json.dumps(status)
    )


def start_pods(cp: ControlPlane, ns: str, trainjob_name: str) -> list[str]:
    """What the JobSet controller would do (none runs here): create each pod of the JobSet Trainer built
    (replicas x parallelism of each replicated job), through the API server's admission (RuntimeClass,
    LimitRanger, ResourceQuota). The refusals, in order."""
    jobset = cp.wait_for_jobset(trainjob_name, ns)
    cp.kubectl("create", "serviceaccount", "default", "-n", ns, check=False)
    refused = []
    for job in jobset["spec"]["replicatedJobs"]:
        template = job["template"]["spec"]["template"]
        count = job.get("replicas", 1) * job["template"]["spec"].get("parallelism", 1)
        for i in range(count):
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {**template.get("metadata", {}), "name": f"{trainjob_name}-{job['name']}-{i}"},
                "spec": template["spec"],
            }
            done = cp.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(pod), check=False)
            if done.returncode != 0:
                refused.append(done.stderr)
    return refused


def loader_job(name: str, ns: str, base: str, memory: str, nodes: int) -> dict[str, Any]:
    return trainjob(name, ns, base, memory, "TrainingRuntime", trainer={"numNodes": nodes})


def test_quota_exceeded_counts_the_runtime_class_overhead_the_cluster_adds(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """Two pods of a 1Gi trainer and a 2Gi loader on a RuntimeClass with 1Gi of overhead: 8Gi against a 7Gi
    quota (6Gi without the overhead). The second pod is refused."""
    cp = control_plane
    ns = namespace(cp, "sync-overhead")
    kata = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "sync-kata"},
        "handler": "kata",
        "overhead": {"podFixed": {"memory": "1Gi"}},
    }
    cp.apply_server_side(dump(kata))
    base = runtime("sync-overhead", kind="TrainingRuntime", namespace=ns, resources={"requests": {"memory": "1Gi"}})
    base["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "runtimeClassName"
    ] = "sync-kata"
    synced(cp, dump(base), "server-side")
    quota(cp, ns, {"requests.memory": "7Gi"})
    repo = write(tmp_path / "repo" / "trainjob.yaml", loader_job("kata", ns, "sync-overhead", "2Gi", 2))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    [finding] = checked.of("quota-exceeded")
    assert "need requests.memory 8Gi with all their pods running (kata)" in finding["message"], finding
    assert "has 7Gi left (hard 7Gi, used 0)" in finding["message"], finding

    # The PreSync hook's read-only rights (deploy/check-presync) read the RuntimeClass; without that rule,
    # check cannot (exit 2).
    rbac = [o for o in _hook_objects(tmp_path, ns) if o["kind"] in RBAC_KINDS]
    cp.apply_server_side(dump(*rbac))
    kubeconfig = _token_kubeconfig(cp, ns, "trainjob-resources-check", tmp_path / "hook-kubeconfig")
    assert take_each_rule_away(cp, rbac, kubeconfig, repo, tmp_path, lambda r: r["apiGroups"] == [NODE_GROUP]) == 1

    synced(cp, render(str(repo), "--runtimes", str(write(tmp_path / "base.yaml", base)), cwd=tmp_path), "server-side")
    refused = start_pods(cp, ns, "kata")
    assert len(refused) == 1 and "exceeded quota: team" in refused[0], refused
    assert "requested: requests.memory=4Gi, used: requests.memory=4Gi, limited: requests.memory=7Gi" in refused[0]


def test_quota_exceeded_counts_the_clusters_limit_range_defaults_under_namespace_policy_off(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """namespacePolicy: off turns the render's LimitRange and ResourceQuota findings off; the API server still
    defaults the trainer's memory request (1Gi) from the namespace's LimitRange: two pods of 1Gi and a 2Gi
    loader need 6Gi (4Gi without the default) against a 5Gi quota. The second pod is refused."""
    cp = control_plane
    ns = namespace(cp, "sync-policy-off")
    limits = {"type": "Container", "defaultRequest": {"memory": "1Gi"}, "default": {"memory": "1Gi"}}
    cp.apply_server_side(
        dump(
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "defaults", "namespace": ns},
                "spec": {"limits": [limits]},
            }
        )
    )
    base = runtime("sync-policy-off", kind="TrainingRuntime", namespace=ns)
    synced(cp, dump(base), "server-side")
    quota(cp, ns, {"requests.memory": "5Gi"})
    repo = write(tmp_path / "repo" / "trainjob.yaml", loader_job("defaulted", ns, "sync-policy-off", "2Gi", 2))
    off = write(
        tmp_path / "platform.yaml",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, "data": {"namespacePolicy": "off"}},
    )
    checked = check(cp, str(repo), "--config", str(off), cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    [finding] = checked.of("quota-exceeded")
    assert "need requests.memory 6Gi with all their pods running (defaulted)" in finding["message"], finding

    rendered = render(
        str(repo), "--config", str(off), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path
    )
    synced(cp, rendered, "server-side")
    refused = start_pods(cp, ns, "defaulted")
    assert len(refused) == 1 and "exceeded quota: team" in refused[0], refused
    assert "requested: requests.memory=3Gi, used: requests.memory=3Gi, limited: requests.memory=5Gi" in refused[0]


def test_a_suspended_trainjob_under_kueue_is_started_by_kueue_and_counted_in_queue_exceeded(
    kueue_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """A queued TrainJob with spec.suspend: true (6Gi) and another (6Gi) on a 10Gi ClusterQueue: Kueue
    admits the suspended one and sets suspend: false, so the other does not fit."""
    from tests.cluster.test_kueue import QUEUE_LABEL, condition, queues, settled

    cp = kueue_control_plane
    ns = namespace(cp, "sync-kueue-held")
    synced(cp, dump(*queues(ns, "sync-kueue-held", "100", "10Gi")), "server-side")
    base = runtime("sync-kueue-held", kind="TrainingRuntime", namespace=ns)
    synced(cp, dump(base), "server-side")

    def queued(name: str, **spec: Any) -> dict[str, Any]:
        job = trainjob(name, ns, "sync-kueue-held", "6Gi", "TrainingRuntime", **spec)
        job["metadata"]["labels"] = {QUEUE_LABEL: "team"}
        return job

    repo = tmp_path / "repo"
    write(repo / "a-held.yaml", queued("held", suspend=True))
    write(repo / "b-next.yaml", queued("next"))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    [finding] = checked.of("queue-exceeded")
    assert finding["object"] == f"TrainJob/{ns}/next", finding
    assert "needs memory 6Gi where flavor sync-kueue-held-flavor has 4Gi left" in finding["message"], finding

    # The sync, in the render's order: Kueue admits the suspended TrainJob and unsuspends it; the next waits.
    docs = list(
        yaml.safe_load_all(render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path))
    )
    synced(cp, dump(*(d for d in docs if d["metadata"]["name"] != "next")), "server-side")
    settled(cp, ns, 1, "Admitted")
    synced(cp, dump(*(d for d in docs if d["metadata"]["name"] == "next")), "server-side")
    found = settled(cp, ns, 2, "QuotaReserved")
    assert (condition(found["held"], "Admitted") or {}).get("status") == "True"
    assert "insufficient unused quota for memory" in condition(found["next"], "QuotaReserved")["message"]
    held = cp.get("trainjobs.trainer.kubeflow.org", "held", ns)
    assert held is not None and held["spec"]["suspend"] is False


TRACKING = "argocd.argoproj.io/tracking-id"


def tracked(docs: list[dict[str, Any]], app: str) -> list[dict[str, Any]]:
    """The objects with Argo CD's tracking annotation for ``app``, as its generation adds it."""
    for doc in docs:
        group = doc["apiVersion"].rpartition("/")[0]
        where = f"{doc['metadata'].get('namespace', '')}/{doc['metadata']['name']}"
        doc["metadata"].setdefault("annotations", {})[TRACKING] = f"{app}:{group}/{doc['kind']}:{where}"
    return docs


@pytest.mark.parametrize("trainer_control_plane", RELEASES, indirect=True)
def test_runtime_in_use_in_a_namespace_the_render_no_longer_writes_to_as_each_release_prunes_it(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """An application with a TrainJob in each of two namespaces; the one in `a` (with a derived runtime) is
    deleted from git, and nothing else of the render is left in `a`. A TrainJob made with the SDK runs on the
    derived runtime there. The prune deletes the runtime: v2.3.0 then refuses the SDK TrainJob's updates,
    v2.2.1 keeps the runtime Terminating behind its finalizer and accepts them."""
    cp = trainer_control_plane
    a, b = namespace(cp, "sync-prune-a"), namespace(cp, "sync-prune-b")
    base = runtime("sync-prune-base", kind="TrainingRuntime", namespace=a)
    plain = runtime("sync-prune-plain")
    synced(cp, dump(base, plain), "server-side")
    publish(cp, a, cp.trainer)
    repo = tmp_path / "repo"
    write(repo / "a.yaml", trainjob("from-git", a, "sync-prune-base", "3Gi", "TrainingRuntime"))
    write(repo / "b.yaml", trainjob("stays", b, "sync-prune-plain"))
    runtimes = str(write(tmp_path / "runtimes.yaml", base, plain))
    first = tracked(list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path))), "sync-prune")
    synced(cp, dump(*first), "server-side")
    [derived] = [d["metadata"]["name"] for d in first if d["kind"] == "TrainingRuntime"]
    cp.create(dump(trainjob("from-sdk", a, derived, kind="TrainingRuntime")))
    if cp.trainer == "v2.2.1":  # its runtime controller puts the finalizer on a runtime TrainJobs name
        deadline = time.monotonic() + 30
        while "trainer.kubeflow.org/resource-in-use" not in (
            (cp.get("trainingruntimes.trainer.kubeflow.org", derived, a) or {})
            .get("metadata", {})
            .get("finalizers", [])
        ):
            assert time.monotonic() < deadline, "no finalizer"
            time.sleep(0.2)

    (repo / "a.yaml").unlink()  # from-git deleted from git: the render writes nothing to `a`
    checked = check(cp, str(repo), "--trainer-namespace", a, cwd=tmp_path)
    [finding] = checked.of("runtime-in-use")
    assert finding["object"] == f"TrainingRuntime/{a}/{derived}", finding
    assert f"{a}/from-sdk (not in the render: made outside git)" in finding["message"], finding
    assert "from-git" not in finding["message"], "pruned with the runtime: not counted"

    # Argo CD's prune: every object tracked for the application that the render no longer has.
    for doc in first:
        if doc["metadata"]["name"] in (derived, "from-git"):
            cp.kubectl(
                "delete",
                doc["kind"].lower() + "s.trainer.kubeflow.org",
                doc["metadata"]["name"],
                "-n",
                a,
                "--wait=false",
            )
    left = cp.get("trainingruntimes.trainer.kubeflow.org", derived, a)
    deadline = time.monotonic() + 10
    while True:  # the webhook reads runtimes from its cache: a moment after the deletion
        touch = f"touched={time.monotonic_ns()}"
        labelled = cp.kubectl(
            "label", "--overwrite", "trainjobs.trainer.kubeflow.org", "from-sdk", "-n", a, touch, check=False
        )
        if labelled.returncode != 0 or cp.trainer == "v2.2.1" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if cp.trainer == "v2.2.1":
        assert finding["severity"] == "warning" and checked.code == 0, checked.findings
        assert "keeps it Terminating behind the finalizer trainer.kubeflow.org/resource-in-use" in finding["message"]
        assert left is not None and left["metadata"].get("deletionTimestamp"), left
        assert labelled.returncode == 0, labelled.stderr
    else:
        assert finding["severity"] == "error" and checked.code == 1, checked.findings
        assert "refuses every update of them" in finding["message"]
        assert left is None
        assert labelled.returncode != 0 and "not found" in labelled.stderr, labelled.stderr


@pytest.mark.parametrize("trainer_control_plane", RELEASES, indirect=True)
def test_the_initializer_volume_mount_rule_is_v2_3_s_the_data_cache_runtime_runs_on_v2_2_1(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """Upstream's data-cache runtime (its dataset-initializer mounts no volume `initializer`) with
    spec.initializer.dataset: v2.3.0's webhook refuses the TrainJob, v2.2.1's admits it; check, following the
    cluster's release, says the same."""
    from tests.support import load_fixture

    cp = trainer_control_plane
    ns = namespace(cp, "sync-data-cache")
    publish(cp, ns, cp.trainer)
    cache = load_fixture("torch-data-cache")
    cache["metadata"]["name"] = "sync-data-cache"
    synced(cp, dump(cache), "server-side")
    job = trainjob("cached", ns, "sync-data-cache", initializer={"dataset": {"storageUri": "cache://ds/table"}})
    repo = write(tmp_path / "repo" / "trainjob.yaml", job)
    checked = check(cp, str(repo), "--trainer-namespace", ns, cwd=tmp_path)
    accepted, stderr = sync(cp, dump(job), "server-side")
    mount = "must have volumeMount with name - initializer in container dataset-initializer"
    if cp.trainer == "v2.2.1":
        assert checked.code == 0 and "the render fails" not in checked.stderr, checked.stderr
        assert accepted, stderr
    else:
        assert checked.code == 1 and mount in checked.stderr, checked.stderr
        assert not accepted and mount in stderr, stderr


def trainer_image(jobset: dict[str, Any]) -> str:
    [job] = [j for j in jobset["spec"]["replicatedJobs"] if j["name"] == "node"]
    [node] = [c for c in job["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"]
    image: str = node["image"]
    return image


@pytest.mark.parametrize("trainer_control_plane", RELEASES, indirect=True)
def test_a_base_edit_under_a_running_trainjob_is_reported_as_each_release_keeps_it(
    trainer_control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The platform edits the base's image under a running TrainJob (with a derived runtime): the sync
    re-renders the derived runtime with the new image. Neither release rebuilds the running JobSet; v2.3.0
    keeps the runtime's snapshot even across a suspension, v2.2.1 (no snapshot) gives the resumed one the new
    image."""
    cp = trainer_control_plane
    ns = namespace(cp, "sync-base-edit")
    publish(cp, ns, cp.trainer)
    base = runtime("sync-base-edit", image="example.com/trainer:before")
    synced(cp, dump(base), "server-side")
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("running", ns, "sync-base-edit", "2Gi"))
    synced(cp, render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path), "server-side")
    assert trainer_image(cp.wait_for_jobset("running", ns)) == "example.com/trainer:before"

    base = runtime("sync-base-edit", image="example.com/trainer:after")
    synced(cp, dump(base), "server-side")
    checked = check(cp, str(repo), "--trainer-namespace", ns, cwd=tmp_path)
    assert checked.code == 0 and checked.codes() == ["snapshot-kept"], checked.findings
    [finding] = checked.of("snapshot-kept")
    assert (finding["severity"], finding["object"]) == ("info", f"TrainJob/{ns}/running"), finding
    assert "containers[node].image" in finding["message"], finding
    if cp.trainer == "v2.2.1":
        assert "keeps no snapshot and does not rebuild the JobSet of a running TrainJob" in finding["message"]
    else:
        assert "running-runtime-snapshot" in finding["message"], finding

    # The sync: the running JobSet keeps the old image on both; suspended and resumed, each release's way.
    synced(cp, render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path), "server-side")
    assert trainer_image(cp.wait_for_jobset("running", ns)) == "example.com/trainer:before"
    for suspend in ("true", "false"):
        patch = f'{{"spec": {{"suspend": {suspend}}}}}'
        cp.kubectl("patch", "trainjobs.trainer.kubeflow.org", "running", "-n", ns, "--type=merge", "-p", patch)
    expected = {"v2.2.1": "example.com/trainer:after", "v2.3.0": "example.com/trainer:before"}[cp.trainer]
    deadline = time.monotonic() + 30
    while (image := trainer_image(cp.wait_for_jobset("running", ns))) != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    assert image == expected


def test_quota_exceeded_when_a_container_sets_no_value_the_quota_tracks(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """A quota on requests.memory and a trainer container without a memory request (no LimitRange default):
    the quota admission refuses every pod ("must specify requests.memory"), however much quota is left."""
    cp = control_plane
    ns = namespace(cp, "sync-must-specify")
    base = runtime("sync-must-specify", kind="TrainingRuntime", namespace=ns)
    synced(cp, dump(base), "server-side")
    quota(cp, ns, {"requests.memory": "100Gi"})
    repo = write(tmp_path / "repo" / "trainjob.yaml", loader_job("bare", ns, "sync-must-specify", "1Gi", 2))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    [finding] = checked.of("quota-exceeded")
    assert finding["object"] == f"ResourceQuota/{ns}/team", finding
    assert "admission requires requests.memory of every container" in finding["message"], finding

    synced(cp, render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path), "server-side")
    refused = start_pods(cp, ns, "bare")
    assert len(refused) == 2 and all("must specify requests.memory for: node" in r for r in refused), refused

    # A LimitRange default gives it one: nothing to say, and the pods come.
    limits = {"type": "Container", "defaultRequest": {"memory": "1Gi"}, "default": {"memory": "1Gi"}}
    lr = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "d", "namespace": ns},
        "spec": {"limits": [limits]},
    }
    cp.apply_server_side(dump(lr))
    assert check(cp, str(repo), cwd=tmp_path).of("quota-exceeded") == []
    assert start_pods(cp, ns, "bare") == []


@pytest.mark.parametrize("mode", MODES)
def test_an_admitted_queued_trainjob_synced_again_unchanged_as_each_apply_mode_treats_kueues_patch(
    kueue_control_plane: ControlPlane, mode: str, tmp_path: Path
) -> None:
    """Kueue adds its own runtimePatches entry (manager kueue.x-k8s.io/manager) to a queued TrainJob and fills
    it on admission. The same render synced again: server-side, accepted; client-side, refused by Trainer's
    webhook (the JSON merge patch drops Kueue's entry from the running TrainJob). check says which."""
    from tests.cluster.test_kueue import QUEUE_LABEL, queues, settled

    cp = kueue_control_plane
    ns = namespace(cp, f"sync-kueue-again-{mode}")
    synced(cp, dump(*queues(ns, f"sync-kueue-again-{mode}", "100", "100Gi")), "server-side")
    base = runtime("sync-kueue-again", kind="TrainingRuntime", namespace=ns)
    synced(cp, dump(base), "server-side")
    job = node_selector_job("queued", ns, "sync-kueue-again", "a", kind="TrainingRuntime")
    job["metadata"]["labels"] = {QUEUE_LABEL: "team"}
    repo = write(tmp_path / "repo" / "trainjob.yaml", job)
    rendered = render(str(repo), "--runtimes", str(write(tmp_path / "b.yaml", base)), cwd=tmp_path)
    synced(cp, rendered, mode)
    settled(cp, ns, 1, "Admitted")
    deadline = time.monotonic() + 30
    while (live := cp.get("trainjobs.trainer.kubeflow.org", "queued", ns)) is None or live["spec"].get("suspend"):
        assert time.monotonic() < deadline, live
        time.sleep(0.2)
    managers = [p["manager"] for p in live["spec"]["runtimePatches"]]
    assert "kueue.x-k8s.io/manager" in managers, managers

    checked = check(cp, str(repo), cwd=tmp_path)
    accepted, stderr = sync(cp, rendered, mode)
    predicted = checked.of("runtime-patches-immutable")
    if mode == "server-side":  # the render's entry is unchanged, Kueue's stays Kueue's
        assert accepted and predicted == [], (stderr, checked.findings)
    else:  # kubectl's JSON merge patch replaces the list: Kueue's entry dropped, and that is a change
        assert not accepted and PATCHES_IMMUTABLE in stderr, stderr
        [finding] = predicted
        assert finding["object"] == f"TrainJob/{ns}/queued", finding
        assert "manager kueue.x-k8s.io/manager" in finding["message"], finding
        assert "sync server-side" in finding["message"], finding
