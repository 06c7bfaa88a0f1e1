"""``mode``: which mode the cluster needs, read from the served TrainJob CRD's schema.

KEP-2782 (kubeflow/trainer ``proposals/2782-dra-support/README.md``, merged as PR 3540; implemented by
PR 4027, open) adds ``resources`` to ``ContainerPatch`` and ``resourceClaims`` to ``PodSpecPatch``. No
release serves them: v2.3.0's CRD (``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml``) has
neither. Whether a cluster's does is read as Kueue reads the TrainJob CRD before it relies on a field
(kubernetes-sigs/kueue PR 14943, its TrainJob integration's ``crd_validation.go``: the served
version's ``openAPIV3Schema``, walked property by property down to the field).

Where the CRD lacks a field a native render keeps, the API server refuses the TrainJob under strict
field validation (kubectl apply's default: "strict decoding error: unknown field"; server-side apply
always: "field not declared in schema") and otherwise prunes the field: measured on the control plane
(tests/cluster/test_check_mode.py). An error. Where the CRD has ``resources`` and the render
materializes, an info: ``mode: native`` would keep the patches as written.

Pure: the CRD and the render's objects in, findings out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from ..trainer.api import TRAINER_GROUP, TRAINJOB_KIND
from .findings import name_of, namespace_of
from .report import Finding, object_name

# ContainerPatch and PodSpecPatch under spec.runtimePatches[] (trainjob_types.go at v2.3.0); "[]" is a list's items.
POD_PATCH: Final = (
    "spec",
    "runtimePatches",
    "[]",
    "trainingRuntimeSpec",
    "template",
    "spec",
    "replicatedJobs",
    "[]",
    "template",
    "spec",
    "template",
    "spec",
)
CONTAINER_LISTS: Final = ("containers", "initContainers")
CONTAINER_FIELD: Final = "runtimePatches[].….containers[].resources"
POD_FIELD: Final = "runtimePatches[].….spec.resourceClaims"
KEP: Final = "KEP-2782 (kubeflow/trainer proposals/2782-dra-support)"
GATE: Final = "TrainJobDynamicResourceAllocation"
MAX_PATHS: Final = 3  # field paths named in one message


class Served:
    """What the served TrainJob CRD's schema has of KEP-2782's fields (``version``: the one read)."""

    __slots__ = ("claims", "resources", "version")

    def __init__(self, version: str, resources: bool, claims: bool) -> None:
        self.version: Final = version
        self.resources: Final = resources  # ContainerPatch.resources, on containers and initContainers
        self.claims: Final = claims  # PodSpecPatch.resourceClaims


def served(crd: Mapping[str, Any] | None, version: str = "v1alpha1") -> Served | None:
    """The KEP's fields in the CRD's schema of ``version``; None when that version is not served."""
    spec = crd.get("spec") if isinstance(crd, Mapping) else None
    for entry in spec.get("versions") or [] if isinstance(spec, Mapping) else []:
        if not isinstance(entry, Mapping) or entry.get("name") != version or entry.get("served") is False:
            continue
        schema = entry.get("schema")
        root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        pod = _at(root, POD_PATCH)
        resources = all(_at(pod, (name, "[]", "resources")) is not None for name in CONTAINER_LISTS)
        claims = _at(pod, ("resourceClaims",)) is not None
        return Served(version, resources, claims)
    return None


def _at(schema: Any, path: Sequence[str]) -> Mapping[str, Any] | None:
    """The schema node at ``path``: a name steps into ``properties``, ``[]`` into ``items``."""
    node = schema
    for step in path:
        if not isinstance(node, Mapping):
            return None
        if step == "[]":
            node = node.get("items")
        else:
            properties = node.get("properties")
            node = properties.get(step) if isinstance(properties, Mapping) else None
    return node if isinstance(node, Mapping) else None


def kept_fields(trainjob: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field path, which field) of each ``resources`` of a ContainerPatch and ``resourceClaims`` of a
    PodSpecPatch the TrainJob carries."""
    spec = trainjob.get("spec")
    patches = spec.get("runtimePatches") if isinstance(spec, Mapping) else None
    for p, patch in enumerate(patches if isinstance(patches, list) else []):
        jobs = _value(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        for j, job in enumerate(jobs if isinstance(jobs, list) else []):
            pod = _value(job, "template", "spec", "template", "spec")
            if not isinstance(pod, Mapping):
                continue
            where = (
                f"spec.runtimePatches[{p}].trainingRuntimeSpec.template.spec.replicatedJobs[{j}]"
                ".template.spec.template.spec"
            )
            if "resourceClaims" in pod:
                yield f"{where}.resourceClaims", "claims"
            for field in CONTAINER_LISTS:
                containers = pod.get(field)
                for c, container in enumerate(containers if isinstance(containers, list) else []):
                    if isinstance(container, Mapping) and "resources" in container:
                        yield f"{where}.{field}[{c}].resources", "resources"


def _value(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def mode(configured: str, crd: Mapping[str, Any] | None, objects: Sequence[Mapping[str, Any]]) -> list[Finding]:
    """The ``mode`` findings of a render made in ``configured`` mode, against the served TrainJob CRD."""
    trainjobs = [o for o in objects if o.get("kind") == TRAINJOB_KIND and _group(o) == TRAINER_GROUP]
    fields = served(crd) if trainjobs else None
    if fields is None:
        return []  # no TrainJob, or no TrainJob CRD: the sync fails on that with its own message
    crd_object = object_name("CustomResourceDefinition", "", f"{TRAINJOB_KIND.lower()}s.{TRAINER_GROUP}")
    if configured != "native":
        if not fields.resources:
            return []
        return [
            Finding(
                "mode",
                "info",
                crd_object,
                f"the cluster's TrainJob CRD ({fields.version}) serves {CONTAINER_FIELD}, the field {KEP} adds: "
                "mode: native would keep the TrainJobs' patched resources as written, where this render "
                f"derives runtimes. By the KEP, Trainer applies them only with its alpha {GATE} feature gate on "
                "(off by default; check cannot read a controller's gates)",
            )
        ]
    out: list[Finding] = []
    for trainjob in trainjobs:
        kept = [(path, field) for path, field in kept_fields(trainjob) if not getattr(fields, field)]
        if not kept:
            continue
        missing = [path for path, _ in kept]
        used = {field for _, field in kept}
        named = ", ".join(missing[:MAX_PATHS]) + (
            f" and {len(missing) - MAX_PATHS} more" if len(missing) > MAX_PATHS else ""
        )
        lacks = " and ".join(
            name for field, name in (("resources", CONTAINER_FIELD), ("claims", POD_FIELD)) if field in used
        )
        out.append(
            Finding(
                "mode",
                "error",
                object_name(TRAINJOB_KIND, namespace_of(trainjob), name_of(trainjob)),
                f"mode: native keeps {named} as written, but the cluster's TrainJob CRD ({fields.version}) has no "
                f"{lacks} ({KEP}; no release serves it): the API server refuses the TrainJob under strict field "
                "validation (kubectl apply's default, and server-side apply) and otherwise drops the field, so "
                "the pods keep the runtime's values. Render with mode: materialize (the default), which moves "
                "the resources into a derived runtime",
            )
        )
    return out


def _group(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion") or "").rpartition("/")[0]
