"""The RuntimeClass overhead of a TrainJob's pods, as the cluster adds it: what ``check`` counts against a
ResourceQuota and a Kueue ClusterQueue.

A pod template that names ``runtimeClassName`` and sets no ``overhead`` gets the RuntimeClass's
``overhead.podFixed`` at admission (k8s.io/kubernetes/plugin/pkg/admission/runtimeclass/admission.go,
``setOverhead``), which the quota evaluator adds to the pod's requests and set limits
(k8s.io/component-helpers/resource ``PodRequests``/``PodLimits``); Kueue reads the same RuntimeClass for the
Workload's pod sets (sigs.k8s.io/kueue/pkg/workload/resources.go at v0.17.0, ``handlePodOverhead``).
``explain`` counts the template's own ``overhead`` only, having no cluster to read.

Pure: the RuntimeClasses come in as the API server's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kube.podmath import PodResources, Quantities, pod_limits, pod_requests
from ..kube.quantity import QuantityError, parse_quantity
from ..report.explain import JobView, TrainJobPods


def class_names(views: Mapping[str, TrainJobPods]) -> set[str]:
    """The RuntimeClasses the pods name that set no overhead of their own."""
    return {name for view in views.values() for job in view.jobs if (name := _class_of(job)) is not None}


def _class_of(job: JobView) -> str | None:
    name = job.pod_spec.get("runtimeClassName")
    return name if isinstance(name, str) and name and not job.pod.overhead else None


def pod_fixed(runtime_class: Mapping[str, Any] | None) -> Quantities:
    overhead = runtime_class.get("overhead") if runtime_class is not None else None
    fixed = overhead.get("podFixed") if isinstance(overhead, Mapping) else None
    out: Quantities = {}
    for name, raw in fixed.items() if isinstance(fixed, Mapping) else ():
        try:
            out[str(name)] = parse_quantity(raw)
        except QuantityError:
            continue
    return out


def with_overhead(
    views: Mapping[str, TrainJobPods], runtime_classes: Mapping[str, Mapping[str, Any]]
) -> dict[str, TrainJobPods]:
    """``views`` with each pod's RuntimeClass overhead, where its class has one."""
    out: dict[str, TrainJobPods] = {}
    for key, view in views.items():
        changed = False
        for job in view.jobs:
            name = _class_of(job)
            fixed = pod_fixed(runtime_classes.get(name)) if name is not None else {}
            if not fixed:
                continue
            pod = job.pod
            job.pod = PodResources(pod.init_containers, pod.containers, pod.requests, pod.limits, fixed)
            job.pod_requests, job.pod_limits = pod_requests(job.pod), pod_limits(job.pod)
            changed = True
        out[key] = (
            TrainJobPods(view.name, view.namespace, view.runtime_kind, view.runtime_name, view.jobs, view.problems)
            if changed
            else view
        )
    return out
