"""Kueue on the control plane: upstream Kueue's controllers, scheduler and webhooks (v0.17.0:
tests/cluster/kueue; v0.19.2: tests/cluster/kueue-v0.19) beside Trainer v2.3.0's, with the function's
output applied as Argo CD applies it.

What the tests hold Kueue to: the Workload Kueue makes for each queued TrainJob reserves, pod set by
pod set, what ``explain`` counts, except where Kueue's own Trainer (v2.2.0 or v2.2.1, its go.mod's) sizes
the trainer container otherwise (``resourcesPerNode`` replaces its resources there); and ``check``'s
``queue-exceeded`` names exactly the TrainJobs Kueue's scheduler leaves pending, on each release.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trainjob_resources.live import kueue_usage

from tests.cluster.controlplane import KUEUE_RELEASES, ControlPlane
from tests.cluster.test_check import (
    KUEUE_GROUP,
    SYNCER,
    _check_as,
    _hook_objects,
    _token_kubeconfig,
    apply,
    check,
    dump,
    render,
    take_each_rule_away,
    write,
)
from tests.kit import build

pytestmark = pytest.mark.cluster

KUEUE = "kueue.x-k8s.io/v1beta2"
WORKLOADS = "workloads.kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
TRAINER = "trainer.kubeflow.org/v1alpha1"
ON_EACH_RELEASE = pytest.mark.parametrize("kueue_release_plane", KUEUE_RELEASES, indirect=True)


def shapes_runtime(name: str) -> dict[str, Any]:
    """A dataset initializer, then 3 nodes whose pod has an init container (4 cpu) before a native
    sidecar: the pod's cpu is the init container's, its memory the sidecar's plus the trainer's."""

    def job(name: str, step: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
        labels = {"trainer.kubeflow.org/trainjob-ancestor-step": step}
        return {
            "name": name,
            **extra,
            "template": {"metadata": {"labels": labels}, "spec": {"template": {"spec": spec}}},
        }

    def container(name: str, cpu: str, memory: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "image": "busybox", **extra, "resources": {"requests": {"cpu": cpu, "memory": memory}}}

    initializer = job(
        "dataset-initializer", "dataset-initializer", {"containers": [container("dataset-initializer", "1", "2Gi")]}
    )
    node_pod = {
        "initContainers": [container("prep", "4", "1Gi"), container("loader", "500m", "1Gi", restartPolicy="Always")],
        "containers": [container("node", "2", "8Gi")],
    }
    node = job("node", "trainer", node_pod, dependsOn=[{"name": "dataset-initializer", "status": "Complete"}])
    return build.training_runtime(name, [initializer, node], {"numNodes": 3, "torch": {}})


def sized(name: str, namespace: str, runtime: str, queue: str | None) -> dict[str, Any]:
    """Overrides through the function: the sidecar to 3Gi, the dataset initializer to 2 cpu."""

    def patch(job: str, where: str, container: str, requests: dict[str, str]) -> dict[str, Any]:
        resources = {"resources": {"requests": requests}, "name": container}
        return build.replicated_job(job, {where: [resources]})

    jobs = [
        patch("node", "initContainers", "loader", {"memory": "3Gi"}),
        patch("dataset-initializer", "containers", "dataset-initializer", {"cpu": "2"}),
    ]
    patches = [build.runtime_patch(*jobs, manager="example.com/team")]
    return build.trainjob(name, runtime, patches, namespace=namespace, labels=_queue(queue))


def per_node(name: str, namespace: str, runtime: str, queue: str | None) -> dict[str, Any]:
    trainer = {"resourcesPerNode": {"requests": {"cpu": "3"}}}
    return build.trainjob(name, runtime, namespace=namespace, labels=_queue(queue), trainer=trainer)


def _queue(queue: str | None) -> dict[str, str] | None:
    return None if queue is None else {QUEUE_LABEL: queue}


def queues(namespace: str, cluster_queue: str, cpu: str, memory: str) -> list[dict[str, Any]]:
    flavor = {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": f"{cluster_queue}-flavor"}}
    quota = [{"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}]
    group = {
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": f"{cluster_queue}-flavor", "resources": quota}],
    }
    cq = {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": cluster_queue},
        "spec": {"namespaceSelector": {}, "resourceGroups": [group]},
    }
    lq = {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "team", "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }
    return [flavor, cq, lq]


def namespace(cp: ControlPlane, name: str) -> str:
    cp.kubectl("create", "namespace", name)
    return name


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout:.0f}s")
        time.sleep(0.2)


def workloads(cp: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    """The namespace's Workloads by the TrainJob that owns them."""
    items = json.loads(cp.kubectl("get", WORKLOADS, "-n", namespace, "-o", "json").stdout)["items"]
    return {w["metadata"]["ownerReferences"][0]["name"]: w for w in items}


def settled(cp: ControlPlane, namespace: str, count: int, kind: str) -> dict[str, dict[str, Any]]:
    """The namespace's ``count`` Workloads once each has a ``kind`` condition (Kueue has decided on it)."""

    def probe() -> dict[str, dict[str, Any]] | None:
        found = workloads(cp, namespace)
        return found if len(found) == count and all(condition(w, kind) for w in found.values()) else None

    found: dict[str, dict[str, Any]] = wait_for(f"{count} Workloads with {kind}", probe)
    return found


def condition(workload: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (workload.get("status") or {}).get("conditions", []) if c["type"] == kind), None)


def explained(path: Path, cwd: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``explain --format json``: per TrainJob, per replicated job, its pods and pod requests."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "trainjob_resources", "explain", "--format", "json", str(path)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return {t["name"]: {j["name"]: j for j in t["replicatedJobs"]} for t in json.loads(done.stdout)["trainJobs"]}


def milli(value: str) -> int:
    """A quantity in milli-units (the function's parser, which tests/test_quantity.py holds to kubectl's)."""
    from trainjob_resources.kube.quantity import parse_quantity

    q = parse_quantity(value)
    scaled = q.coefficient * 10 ** (q.exponent + 3) if q.exponent >= -3 else q.coefficient // 10 ** (-3 - q.exponent)
    return int(scaled)


@ON_EACH_RELEASE
def test_each_workload_reserves_what_explain_counts_and_resources_per_node_as_kueues_trainer_sizes_it(
    kueue_release_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = kueue_release_plane
    ns = namespace(cp, "kq-shapes")
    apply(cp, dump(*queues(ns, "kq-shapes", "100", "1000Gi")))
    source = write(
        tmp_path / "repo" / "bundle.yaml",
        shapes_runtime("kq-shapes"),
        sized("sized", ns, "kq-shapes", "team"),
        per_node("per-node", ns, "kq-shapes", "team"),
    )
    apply(cp, render(str(source), cwd=tmp_path))
    pods = explained(source, tmp_path)
    found = settled(cp, ns, 2, "Admitted")
    for name, workload in found.items():
        assignments = {a["name"]: a for a in workload["status"]["admission"]["podSetAssignments"]}
        assert set(assignments) == set(pods[name]), name
        for job, assignment in assignments.items():
            assert assignment["count"] == pods[name][job]["pods"], (name, job)
            reserved = {r: milli(q) for r, q in assignment["resourceUsage"].items()}
            counted = {r: milli(q) * pods[name][job]["pods"] for r, q in pods[name][job]["podRequests"].items()}
            if (name, job) == ("per-node", "node"):
                # Kueue's Trainer v2.2.x gives the trainer container resourcesPerNode as its whole
                # resources: no memory (the runtime's 8Gi is gone), while Trainer v2.3.0's JobSet
                # merges it per name and keeps the 8Gi. Kueue reserves 3 x max(1Gi, 1Gi + 0).
                assert counted["memory"] == 3 * 9 * 1024**3 * 1000
                assert reserved == {"cpu": 12_000, "memory": 3 * 1024**3 * 1000}, reserved
                jobset = cp.wait_for_jobset("per-node", ns)
                [trainer] = [j for j in jobset["spec"]["replicatedJobs"] if j["name"] == "node"]
                container = trainer["template"]["spec"]["template"]["spec"]["containers"][0]
                assert container["resources"]["requests"] == {"cpu": "3", "memory": "8Gi"}
                podset = next(p for p in workload["spec"]["podSets"] if p["name"] == "node")
                assert podset["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "3"}
            else:
                assert reserved == counted, (name, job)


def reserving_workloads(cp: ControlPlane, namespace: str) -> list[str]:
    """The TrainJobs whose Workloads hold quota."""
    return sorted(
        name
        for name, w in workloads(cp, namespace).items()
        if (condition(w, "QuotaReserved") or {}).get("status") == "True"
    )


def reservation(cp: ControlPlane, cluster_queue: str) -> dict[str, str]:
    obj = json.loads(cp.kubectl("get", "clusterqueues.kueue.x-k8s.io", cluster_queue, "-o", "json").stdout)
    rows = (obj.get("status") or {}).get("flavorsReservation") or []
    return {r["name"]: r["total"] for row in rows for r in row["resources"]}


@ON_EACH_RELEASE
def test_queue_exceeded_names_exactly_the_trainjobs_kueue_leaves_pending(
    kueue_release_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = kueue_release_plane
    ns = namespace(cp, "kq-admit")
    # Memory is what runs short: 40Gi. The first TrainJob, live and admitted, holds 35Gi (2Gi + 3 x 11Gi).
    apply(cp, dump(*queues(ns, "kq-admit", "100", "40Gi")))
    first = sized("first", ns, "kq-admit", "team")
    repo = tmp_path / "repo"
    write(repo / "bundle.yaml", shapes_runtime("kq-admit"), first)
    apply(cp, render(str(repo / "bundle.yaml"), cwd=tmp_path))
    # check counts the Workloads, as Kueue's scheduler does: the admission, not the ClusterQueue's status
    # Kueue writes a moment later.
    wait_for("the first Workload's reservation", lambda: reserving_workloads(cp, ns) == ["first"])
    # The next sync: the first again, one Kueue sizes at 5Gi (2Gi + 3 x 1Gi: resourcesPerNode as Kueue's
    # Trainer applies it; explain counts 29Gi, what its pods request), one more of the first's size
    # (35Gi), and one on a LocalQueue the namespace does not have.
    docs = [
        shapes_runtime("kq-admit"),
        first,
        per_node("small", ns, "kq-admit", "team"),
        sized("second", ns, "kq-admit", "team"),
        sized("lost", ns, "kq-admit", "nope"),
    ]
    write(repo / "bundle.yaml", *docs)
    checked = check(cp, str(repo / "bundle.yaml"), cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    findings = {f["object"]: f for f in checked.of("queue-exceeded")}
    assert sorted(findings) == [f"TrainJob/{ns}/lost", f"TrainJob/{ns}/second"], checked.findings
    second = findings[f"TrainJob/{ns}/second"]
    assert second["severity"] == "error"
    assert second["message"] == (
        f"queued on {ns}/team (ClusterQueue kq-admit): pod set dataset-initializer (1 pod) needs memory 2Gi where "
        "flavor kq-admit-flavor has 0 left (nominal 40Gi, reserved 40Gi); pod set node (3 pods) needs memory 33Gi "
        "where flavor kq-admit-flavor has 0 left (nominal 40Gi, reserved 40Gi). Kueue does not admit it: the "
        "TrainJob stays suspended until quota frees. Lower the requests, raise the ClusterQueue's nominalQuota, "
        "or start fewer at once"
    )
    assert findings[f"TrainJob/{ns}/lost"]["message"].startswith(
        f"is labelled {QUEUE_LABEL}: nope, and namespace {ns} has no LocalQueue nope: Kueue keeps the TrainJob "
        "suspended"
    )
    # The sync, and what Kueue does: it admits the small one, and leaves the other two suspended.
    apply(cp, render(str(repo / "bundle.yaml"), cwd=tmp_path))
    found = settled(cp, ns, 4, "QuotaReserved")
    admitted = sorted(name for name, w in found.items() if (condition(w, "Admitted") or {}).get("status") == "True")
    assert admitted == ["first", "small"], {n: (w.get("status") or {}).get("conditions") for n, w in found.items()}
    assert "insufficient unused quota for memory" in condition(found["second"], "QuotaReserved")["message"]
    assert "LocalQueue nope doesn't exist" in condition(found["lost"], "QuotaReserved")["message"]
    for name in ("second", "lost"):
        live = cp.get("trainjobs.trainer.kubeflow.org", name, ns)
        assert live is not None and live["spec"]["suspend"] is True, name
    wait_for("the reservation of both", lambda: reservation(cp, "kq-admit").get("memory") == "40Gi")
    # What check counts of the Workloads is what Kueue counts, once it has written it into the status.
    listed = json.loads(cp.kubectl("get", WORKLOADS, "--all-namespaces", "-o", "json").stdout)["items"]
    counted = {resource: q.canonical() for (_, resource), q in kueue_usage.reserved(listed)["kq-admit"].items()}
    assert counted == reservation(cp, "kq-admit")
    # Once synced, check says nothing new about the admitted ones, and the same of the pending ones.
    again = check(cp, str(repo / "bundle.yaml"), cwd=tmp_path)
    assert sorted(f["object"] for f in again.of("queue-exceeded")) == sorted(findings)


def test_the_presync_hooks_kueue_rules_are_each_needed_for_a_queued_trainjob(
    kueue_control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = kueue_control_plane
    ns = namespace(cp, "kq-hook")
    objects = _hook_objects(tmp_path, ns)
    rbac = [
        o
        for o in objects
        if o["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    ]
    apply(cp, dump(*rbac))
    apply(cp, dump(*queues(ns, "kq-hook", "100", "100Gi")))
    repo = write(tmp_path / "repo" / "bundle.yaml", shapes_runtime("kq-hook"), sized("train", ns, "kq-hook", "team"))
    kubeconfig = _token_kubeconfig(cp, ns, "trainjob-resources-check", tmp_path / "hook-kubeconfig")
    ok = _check_as(kubeconfig, str(repo), "--as", SYNCER, cwd=tmp_path)
    assert ok.code == 1 and ok.of("queue-exceeded") == [], (ok.stderr, ok.findings)
    taken = take_each_rule_away(cp, rbac, kubeconfig, repo, tmp_path, lambda r: r["apiGroups"] == [KUEUE_GROUP])
    assert taken == 2
