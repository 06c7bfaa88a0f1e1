"""The platform's ``allowedResources`` and ``allowGpuInSidecars`` (functionConfig): which resources
a container may use at all, and whether an init container (a sidecar or one that runs to
completion) may use a GPU (``gpuResources`` names them). Errors."""

from __future__ import annotations

from ..kube.podmath import Section
from ..report.explain import ContainerView, JobView
from ..resolve.context import TrainJobContext
from ..values.violations import Violation
from .framework import Rule
from .policy_math import container_path, where
from .policy_pods import POLICY_READS
from .stages import POLICY


def _check(context: TrainJobContext, subject: tuple[JobView, ContainerView]) -> list[Violation]:
    config = context.config
    allowed = config.allowed_resources
    if allowed is None and config.allow_gpu_in_sidecars:
        return []
    job, c = subject
    out: list[Violation] = []
    for name in sorted({*c.requests, *c.limits}):
        section: Section = "limits" if name in c.limits else "requests"
        if allowed is not None and name not in allowed:
            out.append(
                Violation(
                    container_path(c, section, name),
                    f"{where(job, c)} uses {name}, which the platform does not allow "
                    f"(functionConfig allowedResources: {', '.join(sorted(set(allowed))) or 'none'})",
                    current_value=name,
                )
            )
        if not config.allow_gpu_in_sidecars and c.container_list == "initContainers" and config.is_gpu(name):
            value = c.section(section)[name]
            if value.quantity.is_zero():
                continue
            out.append(
                Violation(
                    container_path(c, section, name),
                    f"{where(job, c)} asks for {name} {value.quantity.canonical()} ({value.source}), "
                    "but the platform lets only regular containers use GPUs "
                    "(functionConfig allowGpuInSidecars: false applies to every initContainers entry)",
                    current_value=value.quantity.canonical(),
                )
            )
    return out


RULE = Rule(
    "allowed-resources",
    (POLICY,),
    "pod-container",
    POLICY_READS,
    "a resource outside the platform's allowedResources; a GPU in an init container (allowGpuInSidecars: false)",
    _check,
)
