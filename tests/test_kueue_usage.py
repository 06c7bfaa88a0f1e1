"""What each ClusterQueue has reserved, from the Workloads as Kueue's cache counts them (live/kueue_usage.py);
tests/cluster/test_kueue.py compares it with the ClusterQueue's status Kueue writes, on both Kueue releases."""

from __future__ import annotations

from typing import Any

from trainjob_resources.kube.quantity import parse_quantity
from trainjob_resources.live.kueue_usage import reserved


def workload(
    cq: str, usage: dict[str, str], pods: int = 2, *, conditions: tuple[str, ...] = ("QuotaReserved",), **extra: Any
) -> dict[str, Any]:
    status = {
        "conditions": [{"type": c, "status": "True"} for c in conditions],
        "admission": {
            "clusterQueue": cq,
            "podSetAssignments": [
                {"name": "node", "count": pods, "flavors": {"cpu": "f", "memory": "f"}, "resourceUsage": usage}
            ],
        },
        **extra.pop("status", {}),
    }
    return {"spec": {"podSets": [{"name": "node", "count": pods}], **extra}, "status": status}


def test_the_workloads_with_an_active_reservation_add_up_per_cluster_queue_flavor_and_resource() -> None:
    found = reserved(
        [
            workload("a", {"cpu": "2", "memory": "8Gi"}),
            workload("a", {"cpu": "500m", "memory": "1Gi"}, conditions=("QuotaReserved", "Admitted")),
            workload("b", {"cpu": "1"}),
            workload("a", {"cpu": "9"}, conditions=()),  # pending
            workload("a", {"cpu": "9"}, conditions=("QuotaReserved", "Finished")),
            workload("a", {"cpu": "9"}, active=False),  # deactivated
        ]
    )
    assert found == {
        "a": {("f", "cpu"): parse_quantity("2500m"), ("f", "memory"): parse_quantity("9Gi")},
        "b": {("f", "cpu"): parse_quantity("1")},
    }


def test_reclaimable_pods_give_back_their_share_in_kueues_integers() -> None:
    # 3 pods hold 1 cpu and 10 bytes; one is reclaimable: 1000m / 3 * 2 = 666m, 10 / 3 * 2 = 6.
    reclaiming = workload(
        "a", {"cpu": "1", "memory": "10"}, 3, status={"reclaimablePods": [{"name": "node", "count": 1}]}
    )
    assert reserved([reclaiming]) == {"a": {("f", "cpu"): parse_quantity("666m"), ("f", "memory"): parse_quantity("6")}}
