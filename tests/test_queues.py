"""``queue-exceeded``'s flavor assignment (live/queues.py), on the function's own pod counts: the cases
the control-plane test (tests/cluster/test_kueue.py) does not build one by one."""

from __future__ import annotations

from typing import Any

from trainjob_resources.cli.explain import explain_item
from trainjob_resources.krm.resource_list import Item
from trainjob_resources.live.kueue_usage import reserved
from trainjob_resources.live.queues import KueueObjects, exceeded
from trainjob_resources.options.config import parse_config
from trainjob_resources.report.explain import TrainJobPods
from trainjob_resources.resolve.bundle import index
from trainjob_resources.yamltext import yamlnodes as yn

from tests.kit import build

KUEUE = "kueue.x-k8s.io/v1beta2"


def runtime(pod_extra: dict[str, Any] | None = None, gpu: bool = False) -> dict[str, Any]:
    requests = {"cpu": "2", "memory": "4Gi", **({"nvidia.com/gpu": "1"} if gpu else {})}
    limits = {"nvidia.com/gpu": "1"} if gpu else {}
    container = {"name": "node", "image": "pytorch", "resources": {"requests": requests, "limits": limits}}
    pod = {"containers": [container], **(pod_extra or {})}
    job = build.replicated_job("node", pod, labels=build.trainer_labels())
    return build.training_runtime("rt", [job], {"numNodes": 2, "torch": {}})


def trainjob(name: str, queue: str = "lq") -> dict[str, Any]:
    return build.trainjob(name, "rt", namespace="team", labels={"kueue.x-k8s.io/queue-name": queue})


def views(*docs: dict[str, Any]) -> dict[str, TrainJobPods]:
    items = [Item(yn.from_python(d)) for d in docs]
    bundle = index(items)
    out = {}
    for item in bundle.trainjobs:
        explained = explain_item(item, bundle, parse_config(None))
        assert explained is not None
        out[f"{item.namespace}/{item.name}"] = explained[0]
    return out


def flavor(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def kueue(
    flavors: list[tuple[str, str, str]], *, covered: tuple[str, ...] = ("cpu", "memory"), **spec: Any
) -> KueueObjects:
    """One ClusterQueue ``cq`` with one resource group: per flavor (name, cpu, memory) nominal quotas."""
    objects = KueueObjects("v1beta2")
    rows = [
        {"name": n, "resources": [{"name": "cpu", "nominalQuota": c}, {"name": "memory", "nominalQuota": m}]}
        for n, c, m in flavors
    ]
    group = {"coveredResources": list(covered), "flavors": rows}
    objects.cluster_queues["cq"] = {"metadata": {"name": "cq"}, "spec": {"resourceGroups": [group], **spec}}
    objects.local_queues["team/lq"] = {"metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "cq"}}
    objects.flavors = {n: flavor(n) for n, _, _ in flavors}
    return objects


def test_a_trainjob_that_fits_has_no_finding_and_reserves_for_the_next() -> None:
    pods = views(runtime(), trainjob("a"), trainjob("b"))  # each: 2 pods x (2 cpu, 4Gi)
    queues = kueue([("default", "6", "100Gi")])
    [found] = exceeded([trainjob("a"), trainjob("b")], pods, queues)
    assert found.object == "TrainJob/team/b" and found.severity == "error"
    assert "needs cpu 4 where flavor default has 2 left (nominal 6, reserved 4)" in found.message
    assert exceeded([trainjob("a")], pods, queues) == []


def test_the_next_flavor_is_taken_when_the_first_is_full_or_does_not_suit_the_pod() -> None:
    pods = views(runtime({"nodeSelector": {"pool": "big"}}), trainjob("a"))
    queues = kueue([("small", "100", "100Gi"), ("big", "3", "100Gi")])
    queues.flavors["small"] = flavor("small", nodeLabels={"pool": "small"})
    [found] = exceeded([trainjob("a")], pods, queues)
    assert "flavor big has 3 left" in found.message and "flavor small" not in found.message
    queues.flavors["small"] = flavor("small", nodeLabels={"pool": "big"})
    assert exceeded([trainjob("a")], pods, queues) == []


def test_a_tainted_flavor_is_passed_over_unless_the_pod_or_the_flavor_tolerates_it() -> None:
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    queues = kueue([("tainted", "100", "100Gi")])
    queues.flavors["tainted"] = flavor("tainted", nodeTaints=[taint])
    pods = views(runtime(), trainjob("a"))
    [found] = exceeded([trainjob("a")], pods, queues)
    assert "no flavor that covers it suits the pod" in found.message
    tolerating = views(runtime({"tolerations": [{"key": "gpu", "operator": "Exists"}]}), trainjob("a"))
    assert exceeded([trainjob("a")], tolerating, queues) == []
    queues.flavors["tainted"] = flavor("tainted", nodeTaints=[taint], tolerations=[{"key": "gpu", "value": "yes"}])
    assert exceeded([trainjob("a")], pods, queues) == []


def test_a_resource_no_group_covers_is_named() -> None:
    pods = views(runtime(gpu=True), trainjob("a"))
    [found] = exceeded([trainjob("a")], pods, kueue([("default", "100", "100Gi")]))
    assert "requests nvidia.com/gpu, which no resource group of ClusterQueue cq covers" in found.message


def test_pods_count_only_where_a_group_covers_them() -> None:
    pods = views(runtime(), trainjob("a"))
    assert exceeded([trainjob("a")], pods, kueue([("default", "100", "100Gi")])) == []
    queues = kueue([("default", "100", "100Gi")], covered=("cpu", "memory", "pods"))
    queues.cluster_queues["cq"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"].append(
        {"name": "pods", "nominalQuota": "1"}
    )
    [found] = exceeded([trainjob("a")], pods, queues)
    assert "needs pods 2 where flavor default has 1 left" in found.message


def test_in_a_cohort_it_is_a_warning_and_without_kueue_or_a_local_queue_it_says_so() -> None:
    pods = views(runtime(), trainjob("a"), trainjob("b", queue="nope"))
    [borrow] = exceeded([trainjob("a")], pods, kueue([("default", "1", "100Gi")], cohortName="shared"))
    assert borrow.severity == "warning" and "borrow that from cohort shared" in borrow.message
    assert exceeded([trainjob("a")], pods, KueueObjects()) == []
    [lost] = exceeded([trainjob("b", queue="nope")], pods, kueue([("default", "100", "100Gi")]))
    assert lost.severity == "error" and "has no LocalQueue nope" in lost.message


def test_what_the_workloads_reserve_counts_before_the_cluster_queues_status_says_it() -> None:
    """Right after an admission the ClusterQueue's status has not caught up; the Workloads have
    (live/kueue_usage.py): 4 cpu of 6 are held, so a TrainJob of 4 does not fit."""
    pods = views(runtime(), trainjob("a"))
    queues = kueue([("default", "6", "100Gi")])
    status = {"flavorsReservation": [{"name": "default", "resources": [{"name": "cpu", "total": "0"}]}]}
    queues.cluster_queues["cq"]["status"] = status
    assert exceeded([trainjob("a")], pods, queues) == []
    queues.reserved = reserved([admitted("cq", {"default": {"cpu": "4", "memory": "8Gi"}})])
    [found] = exceeded([trainjob("a")], pods, queues)
    assert "needs cpu 4 where flavor default has 2 left (nominal 6, reserved 4)" in found.message


def admitted(cluster_queue: str, usage: dict[str, dict[str, str]]) -> dict[str, Any]:
    """A Workload holding ``usage`` (flavor -> resource -> quantity) in ``cluster_queue``, one pod set a flavor."""
    assignments = [
        {"name": f, "count": 1, "flavors": dict.fromkeys(resources, f), "resourceUsage": resources}
        for f, resources in usage.items()
    ]
    status = {
        "conditions": [{"type": "QuotaReserved", "status": "True"}],
        "admission": {"clusterQueue": cluster_queue, "podSetAssignments": assignments},
    }
    return {"spec": {"podSets": [{"name": f, "count": 1} for f in usage]}, "status": status}
