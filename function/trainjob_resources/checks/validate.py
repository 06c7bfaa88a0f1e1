"""Validation of a TrainJob's runtimePatches against its unpatched runtime and Kubernetes' rules.

Upstream: ``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate`` (``IsDomainPrefixedPath``
on each manager, no env for the ``node``/initializer containers, the initializer jobs a TrainJob
with ``spec.initializer`` needs), the TrainJob CRD (``pkg/apis/trainer/v1alpha1/trainjob_types.go``,
see ``crd_rules``), the runtime webhook (``pkg/webhooks/trainingruntime_webhook.go``
``validateReplicatedJobs``) and Kubernetes' ResourceRequirements rules (``resource_rules``).

Stricter than upstream on purpose: ``Validate`` checks that patched jobs and containers exist in
the *merged* spec (``ValidateObjects``, ``pkg/runtime/core/trainingruntime.go``, runs
``newRuntimeInfo``, whose ``mergeRuntimePatches`` has added them already), so it admits a misspelt
name; here they must exist in the unpatched runtime, in the list the patch names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..kube.resource_rules import default_requests, validate_resource_requirements
from ..trainer.effective import Effective
from ..trainer.runtime_view import (
    ANCESTOR_LABEL,
    RESERVED_ENV_CONTAINERS,
    TRAINER_ANCESTOR,
    TRAINER_CONTAINER,
    JobInfo,
    RuntimeSpecView,
)
from ..trainer.sites import ContainerSite, JobPatchSite
from ..trainer.topology import Topology
from ..values import fieldpath
from ..values.violations import Violation

# k8s.io/apimachinery/pkg/util/validation: Go's ``^...$`` matches the whole string only (Python's
# ``$`` also matches before a final newline), hence ``fullmatch``.
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_PATH_SEGMENT = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")
_RELATIVE = re.compile(r"^(limits|requests)(?:\.([A-Za-z_][A-Za-z0-9_-]*)|\[([^\]]+)\])?(.*)$")


def validate_managers(managers: list[str]) -> list[Violation]:
    """Upstream's ``IsDomainPrefixedPath`` on every manager, and one entry per manager."""
    out: list[Violation] = []
    seen: dict[str, int] = {}
    for i, manager in enumerate(managers):
        path = f"spec.runtimePatches[{i}].manager"
        domain, _, rest = manager.partition("/")
        if not rest or len(domain) > 253 or not _DNS_SUBDOMAIN.fullmatch(domain) or not _PATH_SEGMENT.fullmatch(rest):
            out.append(
                Violation(
                    path,
                    "must be a domain-prefixed path such as 'example.com/my-controller' "
                    "(a lowercase DNS subdomain, '/', then a path)",
                    current_value=manager,
                )
            )
        if manager in seen:
            out.append(
                Violation(
                    path, f"duplicate manager: runtimePatches[{seen[manager]}] has it already", current_value=manager
                )
            )
        seen.setdefault(manager, i)
    return out


def validate_job_site(site: JobPatchSite, jobs: Mapping[str, JobInfo], runtime_display: str) -> list[Violation]:
    if site.job in jobs:
        return []
    names = ", ".join(jobs) or "none"
    return [
        Violation(
            f"{site.path}.name",
            f"replicated job {site.job!r} is not in {runtime_display} (its replicated jobs: {names})",
            current_value=site.job,
        )
    ]


def reserved_env_violations(site: ContainerSite) -> list[Violation]:
    """``jobset.go`` ``Validate``: no ``env`` in a ``containers`` entry named ``node``,
    ``dataset-initializer`` or ``model-initializer``. By the name alone, whatever the runtime: it checks
    the spec with the patches merged, and a container of that name missing there is refused too ('must
    not have container that doesn't exist'), so the rule needs no runtime."""
    if not (site.patch.env and site.container_list == "containers" and site.name in RESERVED_ENV_CONTAINERS):
        return []
    return [
        Violation(
            f"{site.path}.env",
            f"must not set env for the {', '.join(RESERVED_ENV_CONTAINERS)} containers: "
            "use spec.trainer.env or spec.initializer instead (Trainer's TrainJob webhook refuses it, whatever "
            "the runtime: jobset.go Validate, pkg/runtime/framework/plugins/jobset/jobset.go)",
        )
    ]


def runtime_free_violations(managers: list[str], sites: list[ContainerSite]) -> list[Violation]:
    """What ``jobset.go`` ``Validate`` refuses without reading the runtime, for a TrainJob whose
    runtime is not in the bundle: each manager (``IsDomainPrefixedPath``; one entry per manager is the
    CRD's map key) and ``env`` for the ``node`` and initializer containers. Its other rules (the initializer jobs,
    the patched jobs and containers existing) need the runtime."""
    out = validate_managers(managers)
    for site in sites:
        out += reserved_env_violations(site)
    return out


def foreign_runtime_resources(group: str, paths: list[str]) -> list[Violation]:
    """``resources`` in a ContainerPatch of a TrainJob whose runtimeRef names another API group: the
    function knows nothing of that runtime, so it cannot derive one with them, and the API server
    refuses the field (v2.3.0's ContainerPatch has none, pkg/apis/trainer/v1alpha1/trainjob_types.go),
    as it does when the runtime is not in the bundle (``bundle.resolve``)."""
    return [
        Violation(
            path,
            f"runtimeRef names apiGroup {group!r}: not a Trainer runtime, so the function cannot derive one "
            "with these resources, and the API server refuses resources in a ContainerPatch (Trainer v2.3.0's "
            "ContainerPatch has no such field, pkg/apis/trainer/v1alpha1/trainjob_types.go: 'field not "
            "declared in schema'): size the containers in that runtime itself, or name a Trainer runtime",
        )
        for path in paths
    ]


def validate_container_site(
    site: ContainerSite,
    jobs: Mapping[str, JobInfo],
    runtime_display: str,
    trainer_resources: str,
    topo: Topology,
    moved: dict[str, Any] | None = None,
) -> list[Violation]:
    """``moved``: the resourcesPerNode that ``moveToResourcesPerNode`` would write (the proposed value)."""
    job = jobs.get(site.job)
    if job is None:
        return []
    out: list[Violation] = []
    if (site.container_list, site.name) not in job.containers:
        other = "containers" if site.container_list == "initContainers" else "initContainers"
        if (other, site.name) in job.containers:
            message = (
                f"{site.name!r} is one of the {other} of replicated job {site.job!r} in {runtime_display}, "
                f"not one of its {site.container_list}: move this entry under {other}"
            )
        else:
            inits = [n for (lst, n) in job.containers if lst == "initContainers"]
            mains = [n for (lst, n) in job.containers if lst == "containers"]
            message = (
                f"no container {site.name!r} among the {site.container_list} of replicated job {site.job!r} "
                f"in {runtime_display} (initContainers: {', '.join(inits) or 'none'}; "
                f"containers: {', '.join(mains) or 'none'})"
            )
        return [Violation(f"{site.path}.name", message, current_value=site.name)]
    out += reserved_env_violations(site)
    trainer = site.resources is not None and topo.is_trainer(site.job, site.container_list, site.name)
    # Only where the move can be made: where it cannot (checks/moving.py), the unmovable rule says why,
    # once, instead of a proposal that contradicts it.
    if trainer and site.resources is not None and trainer_resources == "error" and moved is not None:
        proposed = {"spec": {"trainer": {"resourcesPerNode": moved}}}
        out.append(
            Violation(
                site.resources_path,
                f"the trainer container {site.name!r} of replicated job {site.job!r} is sized by "
                "spec.trainer.resourcesPerNode, not by runtimePatches: move these resources there "
                "(or set the functionConfig option trainerResources: moveToResourcesPerNode)",
                current_value=None,
                proposed_value=proposed,
            )
        )
    return out


def validate_effective(effective: Effective) -> list[Violation]:
    """Kubernetes' rules on the effective requirements, each reported at the field that set the value."""
    requirements = effective.requirements
    found = validate_resource_requirements(default_requests(requirements), "")
    # A request defaulted from a bad limit repeats the limit's error: report it once, at the limit.
    said = {(v.path, v.message) for v in found}
    written = requirements.get("requests") or {}
    out: list[Violation] = []
    for violation in found:
        match = _RELATIVE.match(violation.path)
        if match and match.group(1) == "requests" and not match.group(4):
            name = match.group(2) or match.group(3)
            limit_path = fieldpath.child("limits", name) if name else ""
            if name not in written and (limit_path, violation.message) in said:
                continue
        out.append(_attribute(violation, effective))
    return out


def _attribute(violation: Violation, effective: Effective) -> Violation:
    fallback = next((s for s in reversed(effective.patched_by) if s.path), None)
    match = _RELATIVE.match(violation.path)
    if match is None:
        base = fallback.path if fallback else None
        return _at(violation, fieldpath.child(base, violation.path) if base else violation.path, None)
    section, plain, bracketed, _rest = match.groups()
    name = plain or bracketed
    if name is None:
        return _at(
            violation, f"{fallback.path}.{violation.path}" if fallback and fallback.path else violation.path, None
        )
    own = effective.source_of(section, name)
    if own.path is not None:
        return _at(violation, f"{own.path}.{violation.path}", None)
    counterpart_section = "limits" if section == "requests" else "requests"
    defaulted = section == "requests" and (section, name) not in effective.sources
    counterpart = effective.source_of(counterpart_section, name)
    if counterpart.path is not None:
        # Reported at the other side of the pair: the values are the ones at that field.
        rel = fieldpath.child(counterpart_section, name)
        origin = "defaulted from the limit" if defaulted else f"from {own.label}"
        # A proposed fix comes with a message that shows the value already (a comparison, a misspelling).
        shows_value = violation.current_value is None or violation.proposed_value is not None
        value = "" if shows_value else f" {violation.current_value}"
        here = (effective.requirements.get(counterpart_section) or {}).get(name)
        proposed = violation.current_value if section == "requests" else None
        message = violation.message
        if proposed is not None:
            message += f": set this limit to {proposed}, or set requests.{name} in the patch too"
        moved = Violation(violation.path, message, violation.severity, here, proposed)
        return _at(moved, f"{counterpart.path}.{rel}", f"effective {violation.path}{value} ({origin})")
    base = fallback.path if fallback and fallback.path else None
    return _at(violation, f"{base}.{violation.path}" if base else violation.path, f"effective {violation.path}")


def _at(violation: Violation, path: str, context: str | None) -> Violation:
    message = f"{context}: {violation.message}" if context else violation.message
    return Violation(path, message, violation.severity, violation.current_value, violation.proposed_value)


# pkg/webhooks/trainingruntime_webhook.go validateReplicatedJobs: the container each ancestor's job must have.
_REQUIRED_CONTAINERS = {
    TRAINER_ANCESTOR: TRAINER_CONTAINER,
    "model-initializer": "model-initializer",
    "dataset-initializer": "dataset-initializer",
}
INITIALIZER_VOLUME = "initializer"  # pkg/runtime/framework/plugins/jobset/constants/constants.go


def webhook_violations(
    runtime: RuntimeSpecView, base_display: str, kind: str, selector: bool = True
) -> list[Violation]:
    """What the runtime webhooks refuse on create (``validateReplicatedJobs``,
    ``pkg/webhooks/trainingruntime_webhook.go``, also run by ``clustertrainingruntime_webhook.go``):
    a job labelled trainer or initializer with ``replicas`` other than 1 (the CRD defaults it to 1),
    or without its required container. A derived runtime keeps the base's jobs and labels but never
    the label ``trainer.kubeflow.org/webhook-validation: disabled``, so a base that only passed with
    it makes a derived runtime the cluster refuses. ``selector``: whether the release has that label's
    selector (Trainer v2.2 has none: there the base was let in before the webhook ran, or not at all)."""
    out: list[Violation] = []
    for job in runtime.replicated_jobs:
        ancestor = job.labels.get(ANCESTOR_LABEL)
        required = _REQUIRED_CONTAINERS.get(ancestor) if ancestor is not None else None
        if required is None:
            continue
        why = (
            f"the derived {kind} would be refused by Kubeflow Trainer's runtime webhook (validateReplicatedJobs, "
            f"pkg/webhooks/trainingruntime_webhook.go): replicated job {job.name!r} of {base_display}, labelled "
            f"{ANCESTOR_LABEL}: {ancestor}"
        )
        replicas = 1 if job.replicas is None else job.replicas
        if replicas != 1:
            out.append(Violation("spec.runtimeRef", f"{why}, has replicas {replicas}: it must always be 1"))
        if all(c.name != required for c in job.containers):
            out.append(Violation("spec.runtimeRef", f"{why}, has no container {required!r}, which it must have"))
    if out and selector:
        out[-1] = Violation(
            out[-1].path,
            out[-1].message + " (the label trainer.kubeflow.org/webhook-validation: disabled, which a derived "
            "runtime never carries, is what let the base in): fix the base runtime",
        )
    return out


def initializer_violations(
    trainjob: Mapping[str, Any], runtime: RuntimeSpecView, sites: list[ContainerSite], display: str
) -> list[Violation]:
    """``pkg/runtime/framework/plugins/jobset/jobset.go`` ``Validate``: a TrainJob with
    ``spec.initializer.dataset`` (``model``) needs a replicated job ``dataset-initializer``
    (``model-initializer``) with a container of that name that mounts the volume ``initializer``,
    in the runtime as the TrainJob's patches make it (ContainerPatch ``volumeMounts`` count)."""
    initializer = (trainjob.get("spec") or {}).get("initializer")
    if not isinstance(initializer, Mapping):
        return []
    out: list[Violation] = []
    jobs = {job.name: job for job in runtime.replicated_jobs}
    for key, name in (("dataset", "dataset-initializer"), ("model", "model-initializer")):
        if initializer.get(key) is None:
            continue
        job = jobs.get(name)
        container = next((c for c in job.containers if c.name == name), None) if job is not None else None
        if job is None:
            problem = f"must have {name} job when trainJob is configured with input {key}Config"
        elif container is None:
            problem = f"must have container with name - {name} in the {name} job"
        else:
            mounts = set(container.mounts)
            for site in sites:
                if site.job == name and site.container_list == "containers" and site.name == name:
                    mounts |= {str(m.get("name")) for m in site.patch.volume_mounts or [] if isinstance(m, Mapping)}
            if INITIALIZER_VOLUME in mounts:
                continue
            problem = f"must have volumeMount with name - {INITIALIZER_VOLUME} in container {name} of the {name} job"
        out.append(
            Violation(
                "spec.runtimeRef",
                f"{display} {problem} (spec.initializer.{key} is set; jobset.go Validate, "
                "pkg/runtime/framework/plugins/jobset/jobset.go)",
            )
        )
    return out


def claim_violations(site: ContainerSite, runtime: RuntimeSpecView, display: str) -> list[Violation]:
    """A patched container claim must name an entry of the pod's ``resourceClaims`` (Kubernetes'
    pod validation, ``validateResourceClaimNames``); a ``PodSpecPatch`` cannot add one, so the
    runtime's pod template has to have it."""
    claims = (site.resources or {}).get("claims")
    if not isinstance(claims, list):
        return []
    job = next((j for j in runtime.replicated_jobs if j.name == site.job), None)
    if job is None:
        return []
    pod_claims = job.pod_spec.get("resourceClaims")
    names = {c.get("name") for c in pod_claims if isinstance(c, Mapping)} if isinstance(pod_claims, list) else set()
    out: list[Violation] = []
    for i, claim in enumerate(claims):
        name = claim.get("name") if isinstance(claim, Mapping) else None
        if isinstance(name, str) and name and name not in names:
            have = ", ".join(sorted(str(n) for n in names)) or "none"
            out.append(
                Violation(
                    f"{site.resources_path}.claims[{i}].name",
                    f"must be the name of one of the pod's resourceClaims: replicated job {site.job!r} of "
                    f"{display} has {have} (spec.template.spec.resourceClaims, which a runtimePatch cannot add); "
                    "the API server refuses the pod",
                    current_value=name,
                )
            )
    return out
