"""``quota-exceeded`` for a value the quota makes every container set: a live ResourceQuota on cpu or
memory (requests or limits) refuses each pod with a container that sets none of it, after the
LimitRanger's defaults ("must specify requests.memory for: node": ``Constraints`` in
k8s.io/kubernetes/pkg/quota/v1/evaluator/core/pods.go). The TrainJob is accepted; none of its pods ever comes.

Pure: the quotas come in as the API server's JSON, the pods as ``explain`` counts them with the
namespace's live LimitRanges.
"""

from __future__ import annotations

from ..krm.resource_list import Item
from ..rules.namespace_objects import read_quota
from ..rules.resource_quota import quota_constraints, scopes_match
from ..yamltext import yamlnodes as yn
from .findings import Live, Render, name_of, namespace_of, starting
from .report import Finding, object_name


def unspecified(render: Render, live: Live) -> list[Finding]:
    by_namespace: dict[str, list[str]] = {}
    for trainjob in starting(render, live):
        by_namespace.setdefault(namespace_of(trainjob), []).append(name_of(trainjob))
    out = []
    for raw in live.quotas:
        namespace = namespace_of(raw)
        if namespace not in by_namespace:
            continue
        try:
            quota = read_quota(Item(yn.from_python(raw)))
        except ValueError:
            continue
        for name in by_namespace[namespace]:
            view = render.views.get(f"{namespace}/{name}")
            if view is None:
                continue
            jobs = [job for job in view.jobs if job.pods and scopes_match(quota, job) is True]
            missing = dict.fromkeys(v.message for v in quota_constraints(quota, jobs))
            if not missing:
                continue
            out.append(
                Finding(
                    "quota-exceeded",
                    "error",
                    object_name("ResourceQuota", namespace, name_of(raw)),
                    f"TrainJob {name}: {'; '.join(missing)}. The quota refuses each such pod (must specify ...): "
                    "the TrainJob is accepted and its pods never come. Set the value in the runtime or an "
                    "override, or give the namespace a LimitRange default",
                )
            )
    return out
