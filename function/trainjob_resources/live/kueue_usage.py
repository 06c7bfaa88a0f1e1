"""What each ClusterQueue has reserved, as Kueue's scheduler counts it: from the Workloads, not from the
ClusterQueue's status, which Kueue writes a moment after an admission.

Kueue's cache holds every Workload with an active quota reservation (condition ``QuotaReserved``, not
``Finished``, ``spec.active`` not false: ``HasActiveQuotaReservation``, sigs.k8s.io/kueue/pkg/workload/
workload.go, and ``addOrUpdateWorkloadWithoutLock``, pkg/cache/scheduler/cache.go, v0.17.0 and v0.19.2),
and adds to its ClusterQueue (``status.admission.clusterQueue``) each pod set assignment's
``resourceUsage`` under the flavor assigned to each resource (``FlavorResourceUsage`` over
``totalRequestsFromAdmission``, workload.go). Where pods of a pod set are reclaimable
(``status.reclaimablePods``, Kueue's ReclaimablePods gate, on by default) the usage is scaled to the pods
left, in Kueue's integers (milli-CPU, else units: pkg/resources/requests.go) with Go's division.

Pure: the Workloads come in as the API server's JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..kube.quantity import Quantity, QuantityError, parse_quantity

Usage = dict[tuple[str, str], Quantity]  # (flavor, resource) -> quantity


def _true(workload: Mapping[str, Any], kind: str) -> bool:
    status = workload.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    return any(
        isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True"
        for c in (conditions if isinstance(conditions, list) else [])
    )


def _counts(rows: Any, field: str) -> dict[str, int]:
    return {
        str(row.get("name")): row[field]
        for row in (rows if isinstance(rows, list) else [])
        if isinstance(row, Mapping) and isinstance(row.get(field), int)
    }


def _scaled(resource: str, quantity: Quantity, count: int, left: int) -> Quantity | None:
    """``quantity`` of ``count`` pods for the ``left`` ones: Kueue's ``Divide`` then ``Mul`` on int64s."""
    scale = -3 if resource == "cpu" else 0  # ResourceValue: MilliValue for cpu, Value for the rest
    value = quantity.scaled_value(scale)
    if value is None:
        return None
    truncated = value // count if value >= 0 else -(-value // count)
    return Quantity(truncated * left, scale)


def reserved(workloads: Iterable[Mapping[str, Any]]) -> dict[str, Usage]:
    """Per ClusterQueue, what its Workloads with an active quota reservation hold."""
    out: dict[str, Usage] = {}
    for workload in workloads:
        spec, status = workload.get("spec"), workload.get("status")
        if not isinstance(spec, Mapping) or not isinstance(status, Mapping):
            continue
        if not _true(workload, "QuotaReserved") or _true(workload, "Finished") or spec.get("active") is False:
            continue
        admission = status.get("admission")
        if not isinstance(admission, Mapping) or not isinstance(admission.get("clusterQueue"), str):
            continue
        totals = _counts(spec.get("podSets"), "count")
        reclaimed = _counts(status.get("reclaimablePods"), "count")
        usage = out.setdefault(admission["clusterQueue"], {})
        for assignment in admission.get("podSetAssignments") or []:
            if not isinstance(assignment, Mapping):
                continue
            name = str(assignment.get("name"))
            admitted = assignment.get("count")
            count = admitted if isinstance(admitted, int) else totals.get(name, 0)
            left = totals.get(name, 0) - reclaimed.get(name, 0)
            assigned = assignment.get("flavors")
            flavors: Mapping[str, Any] = assigned if isinstance(assigned, Mapping) else {}
            used = assignment.get("resourceUsage")
            for resource, raw in used.items() if isinstance(used, Mapping) else ():
                try:
                    quantity = parse_quantity(raw)
                except QuantityError:
                    continue
                held = _scaled(str(resource), quantity, count, left) if count > 0 and left < count else quantity
                if held is None:
                    continue
                key = (str(flavors.get(resource, "")), str(resource))
                usage[key] = usage[key] + held if key in usage else held
    return out
