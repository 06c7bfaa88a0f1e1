"""What the TrainJob CRD's schema refuses, beyond the field names and types ``models`` checks.

The markers of ``pkg/apis/trainer/v1alpha1/trainjob_types.go``: ``MaxItems``,
``MinLength``/``MaxLength``, ``Minimum`` (``activeDeadlineSeconds`` at least 1), ``listType=map``
keys (a duplicate key is refused) and the CEL rules on ``metadata.name``, ``managedBy`` (one of two
values) and the initializers' ``storageUri`` (empty or ``scheme://...``). Also strategic-merge
directives (``$patch``, ``$retainKeys``, ``$setElementOrder/...``, ``$deleteFromPrimitiveList/...``)
anywhere the TrainJob keeps them. In a typed field the API server validates the TrainJob against its
schema, where a directive is an unknown field (or, in a map of quantities such as
``resourcesPerNode.limits``, a value that fails the quantity pattern): it never reaches upstream's
merge. In a map of strings (``nodeSelector``, labels) it would reach ``mergeRuntimePatches`` and act
there, which the function does not model. The one exception is the function's own extension,
``$patch: replace`` inside ``limits`` or ``requests`` of a ContainerPatch's ``resources`` in
``materialize`` mode, which never reaches the cluster (see ``merge``).

Checked with or without the runtime (after
``manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..kube.merge import DIRECTIVE, MAPPINGS, REPLACE
from ..resolve.context import TrainJobContext
from ..trainer.api import JOB_CHAIN, POD_CHAIN
from ..trainer.releases import NEWEST, TrainerRelease, release
from ..values import fieldpath
from ..values.keys import CONTAINER_LISTS
from ..values.violations import Violation
from .framework import Rule
from .stages import RUNTIME_FREE, TRAINJOB
from .stored_quantities import stored_spellings

_RFC1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_POD_LISTS: tuple[tuple[str, int, str | None], ...] = (
    # field, MaxItems, listMapKey
    ("volumes", 128, "name"),
    ("initContainers", 64, "name"),
    ("containers", 64, "name"),
    ("imagePullSecrets", 64, "name"),
    ("tolerations", 128, None),
    ("schedulingGates", 16, "name"),
)
NEWEST_RELEASE = release(NEWEST)
_CONTAINER_LISTS = (("env", 128, "name"), ("volumeMounts", 128, "name"))
_TRAINER_LISTS: tuple[tuple[str, int, str | None], ...] = (
    ("command", 128, None),
    ("args", 128, None),
    ("env", 128, "name"),
)


def crd_violations(
    trainjob: Mapping[str, Any],
    mode: str = "materialize",
    directives: bool = True,
    rewritten: bool = False,
    trainer: TrainerRelease = NEWEST_RELEASE,
) -> list[Violation]:
    """``trainjob``: plain data that ``models.parse_trainjob`` accepted. ``directives``: whether a key
    may start with ``$`` (False when the text it was read from has no ``$`` that could spell one).
    ``rewritten``: whether the function writes resourcesPerNode's quantities as the API server
    stores them (then it does not warn of them). ``trainer``: the release whose CRD it is (``releases``)."""
    out: list[Violation] = []
    name = _get(trainjob, "metadata", "name")
    if isinstance(name, str) and name:
        if not _RFC1035.fullmatch(name):
            out.append(
                Violation("metadata.name", "metadata.name must match RFC 1035 DNS label format", current_value=name)
            )
        if len(name) > 63:
            out.append(
                Violation(
                    "metadata.name",
                    f"metadata.name must be no more than 63 characters, has {len(name)}",
                    current_value=name,
                )
            )
    spec = trainjob.get("spec") or {}
    ref = spec.get("runtimeRef") or {}
    out += _length(ref.get("name"), "spec.runtimeRef.name", 253, 1)
    for key in ("apiGroup", "kind"):
        out += _length(ref.get(key), f"spec.runtimeRef.{key}", 253)
    out += _trainer(spec.get("trainer"))
    out += _spec_fields(spec)
    out += _initializer(spec.get("initializer"), trainer.storage_uri_rule)
    patches = spec.get("runtimePatches") or []
    out += _max_items(patches, "spec.runtimePatches", 16)
    for p, patch in enumerate(patches):
        path = fieldpath.index("spec.runtimePatches", p)
        out += _length(patch.get("manager"), f"{path}.manager", 253, 1)
        jobs = _get(patch, *JOB_CHAIN) or []
        jobs_path = ".".join([path, *JOB_CHAIN])
        out += _max_items(jobs, jobs_path, 100) + _unique(jobs, jobs_path, "name")
        for j, job in enumerate(jobs):
            job_path = fieldpath.index(jobs_path, j)
            out += _length(job.get("name"), f"{job_path}.name", 253, 1)
            pod = _get(job, *POD_CHAIN)
            if isinstance(pod, MAPPINGS):
                out += _pod(pod, ".".join([job_path, *POD_CHAIN]), trainer)
        if directives:
            out += _directives(patch, path, mode)
    if patches and not rewritten:
        out += _numeric_quantities(_get(spec, "trainer", "resourcesPerNode"))
    if not directives:
        return out
    per_node = _get(spec, "trainer", "resourcesPerNode")
    for at, key, _ in _directive_keys(per_node, "spec.trainer.resourcesPerNode"):
        out.append(_directive(at, key, "spec.trainer.resourcesPerNode is merged by upstream, not patched"))
    return out


MANAGED_BY = ("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")
# The CEL rule on DatasetInitializer.storageUri and ModelInitializer.storageUri.
_STORAGE_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://.+", re.DOTALL)


def _spec_fields(spec: Mapping[str, Any]) -> list[Violation]:
    """``TrainJobSpec``'s ``managedBy`` (CEL ``self in [...]``, MaxLength 253) and
    ``activeDeadlineSeconds`` (Minimum 1)."""
    out: list[Violation] = []
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str):
        out += _length(managed_by, "spec.managedBy", 253)
        if managed_by not in MANAGED_BY:
            out.append(
                Violation(
                    "spec.managedBy",
                    f"ManagedBy must be {MANAGED_BY[0]} or {MANAGED_BY[1]} if set (the TrainJob CRD's rule)",
                    current_value=managed_by,
                )
            )
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline < 1:
        out.append(
            Violation(
                "spec.activeDeadlineSeconds",
                f"{deadline} should be greater than or equal to 1 (the TrainJob CRD's Minimum)",
                current_value=deadline,
            )
        )
    return out


def _initializer(initializer: Any, storage_uri_rule: bool) -> list[Violation]:
    """``DatasetInitializer`` and ``ModelInitializer``: ``storageUri`` empty or ``scheme://...`` (CEL),
    at most 2048 characters; at most 128 ``env``, unique by name."""
    if not isinstance(initializer, MAPPINGS):
        return []
    out: list[Violation] = []
    for key in ("dataset", "model"):
        one = initializer.get(key)
        if not isinstance(one, MAPPINGS):
            continue
        path = f"spec.initializer.{key}"
        uri = one.get("storageUri")
        if isinstance(uri, str):
            out += _length(uri, f"{path}.storageUri", 2048)
            if storage_uri_rule and uri and not _STORAGE_URI.fullmatch(uri):
                out.append(
                    Violation(
                        f"{path}.storageUri",
                        "storageUri may be empty, or it must be a valid URI (scheme://...) (the TrainJob CRD's rule)",
                        current_value=uri,
                    )
                )
        out += _list(one.get("env"), path, "env", 128, "name")
    return out


def _pod(pod: Mapping[str, Any], path: str, trainer: TrainerRelease) -> list[Violation]:
    out = _length(pod.get("serviceAccountName"), f"{path}.serviceAccountName", 253)
    grace = pod.get("terminationGracePeriodSeconds")
    if "terminationGracePeriodSeconds" in pod and not trainer.grace_period_patch:
        out.append(
            Violation(
                f"{path}.terminationGracePeriodSeconds",
                f"{trainer.name}'s PodSpecPatch has no terminationGracePeriodSeconds (added in v2.3.0): the API "
                "server refuses the TrainJob (field not declared in schema); set it in the runtime, or leave it out",
                current_value=grace,
            )
        )
    elif isinstance(grace, int) and grace < 0:
        out.append(
            Violation(
                f"{path}.terminationGracePeriodSeconds",
                f"{grace} should be greater than or equal to 0",
                current_value=grace,
            )
        )
    for field, most, key in _POD_LISTS:
        out += _list(pod.get(field), path, field, most, key)
    for field in CONTAINER_LISTS:
        for c, container in enumerate(pod.get(field) or []):
            where = fieldpath.index(f"{path}.{field}", c)
            out += _length(container.get("name"), f"{where}.name", 253, 1)
            for list_field, most, key in _CONTAINER_LISTS:
                out += _list(container.get(list_field), where, list_field, most, key)
    return out


def _trainer(trainer: Any) -> list[Violation]:
    if not isinstance(trainer, MAPPINGS):
        return []
    path = "spec.trainer"
    out = _length(trainer.get("image"), f"{path}.image", 500)
    for field, most, key in _TRAINER_LISTS:
        out += _list(trainer.get(field), path, field, most, key)
    num_nodes = trainer.get("numNodes")
    if isinstance(num_nodes, int) and num_nodes < 0:
        out.append(
            Violation(f"{path}.numNodes", f"{num_nodes} should be greater than or equal to 0", current_value=num_nodes)
        )
    per_node = trainer.get("numProcPerNode")
    if isinstance(per_node, int) and per_node < 1:
        out.append(
            Violation(
                f"{path}.numProcPerNode",
                f"numProcPerNode {per_node} must be greater than or equal to 1",
                current_value=per_node,
            )
        )
    return out


def _numeric_quantities(per_node: Any) -> list[Violation]:
    """``stored_spellings``, said: where the function passes the TrainJob through (native mode, or
    its runtime is not in the bundle), it never changes what the user wrote; materializing, it
    writes them as stored (``process.py``)."""
    return [
        Violation(
            fieldpath.child(f"spec.trainer.resourcesPerNode.{section}", name),
            f'write this quantity as the string "{stored}" ({name}: "{stored}"): upstream\'s TrainJob webhook, '
            "which timestamps runtimePatches, stores every quantity here in Kubernetes' canonical form, a string, "
            "when the TrainJob is created, and spec.trainer is immutable "
            "(self == oldSelf, trainjob_types.go), so the API server refuses every later apply of any other "
            "spelling: the first sync works, every re-sync fails",
            severity="warning",
            current_value=value,
            proposed_value=stored,
        )
        for section, name, value, stored in stored_spellings(per_node)
    ]


def _directives(patch: Mapping[str, Any], path: str, mode: str) -> list[Violation]:
    out: list[Violation] = []
    for at, key, value in _directive_keys(patch, path):
        if mode == "materialize" and key == DIRECTIVE and value == REPLACE and _OWN_EXTENSION.fullmatch(at):
            continue
        out.append(_directive(at, key, "runtimePatches are applied from the TrainJob's typed fields"))
    return out


_OWN_EXTENSION = re.compile(r".*\.(initContainers|containers)\[\d+\]\.resources\.(limits|requests)")


def _has_directive(value: Any) -> bool:
    """Whether any map key below ``value`` starts with ``$`` (cheap: the common answer is no)."""
    if isinstance(value, dict):
        for key, child in value.items():
            if type(key) is str and key[:1] == "$":
                return True
            if isinstance(child, (dict, list)) and _has_directive(child):
                return True
        return False
    if isinstance(value, list):
        for child in value:
            if isinstance(child, (dict, list)) and _has_directive(child):
                return True
    return False


def _directive_keys(value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path of the map, key, value) of every map key that starts with ``$``."""
    if not _has_directive(value):
        return
    if isinstance(value, MAPPINGS):
        for key, child in value.items():
            if isinstance(key, str) and key.startswith("$"):
                yield path, key, child
            else:
                yield from _directive_keys(child, fieldpath.child(path, str(key)))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _directive_keys(child, fieldpath.index(path, i))


def _directive(at: str, key: str, why: str) -> Violation:
    return Violation(
        fieldpath.child(at, key),
        f"strategic-merge directive {key!r} is not supported here: {why}, so the API server refuses or "
        "prunes it (or, in a map of strings, upstream's merge acts on it); write the values you want instead",
    )


def _get(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, MAPPINGS) else None
    return value


def _length(value: Any, path: str, most: int, least: int = 0) -> list[Violation]:
    if not isinstance(value, str):
        return []
    if len(value) > most:
        return [
            Violation(
                path,
                f"may not be more than {most} characters (the TrainJob CRD's MaxLength), has {len(value)}",
                current_value=value,
            )
        ]
    if len(value) < least:
        return [Violation(path, f"may not be empty (the TrainJob CRD's MinLength is {least})", current_value=value)]
    return []


def _list(entries: Any, parent: str, field: str, most: int, key: str | None) -> list[Violation]:
    """``_max_items`` and ``_unique`` of the list at ``parent.field``; its path is only built for a
    list that could break either (a list of one can neither be too long nor hold a duplicate)."""
    if not isinstance(entries, list) or len(entries) < 2:
        return []
    path = f"{parent}.{field}"
    out = _max_items(entries, path, most)
    if key is not None:
        out += _unique(entries, path, key)
    return out


def _max_items(entries: Any, path: str, most: int) -> list[Violation]:
    if isinstance(entries, list) and len(entries) > most:
        return [Violation(path, f"must have at most {most} items (the TrainJob CRD's MaxItems), has {len(entries)}")]
    return []


def _unique(entries: Any, path: str, key: str) -> list[Violation]:
    out: list[Violation] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        value = entry.get(key) if isinstance(entry, MAPPINGS) else None
        if value is None:
            continue
        try:
            first = seen.setdefault(value, i)
        except TypeError:
            continue
        if first != i:
            out.append(
                Violation(
                    f"{fieldpath.index(path, i)}.{key}",
                    f"Duplicate value: {key} {value!r} is already at {fieldpath.index(path, first)} "
                    "(a list keyed by name in the TrainJob CRD)",
                    current_value=value,
                )
            )
    return out


def _check(context: TrainJobContext, _: Any) -> list[Violation]:
    # A resolved TrainJob is written out by materialize mode, its quantities as the API server stores them.
    rewritten = context.entry is not None and not context.native
    return crd_violations(context.raw, context.config.mode, context.directives, rewritten, context.release)


RULE = Rule(
    "crd",
    (RUNTIME_FREE, TRAINJOB),
    "trainjob",
    (),  # reads the TrainJob as written: never remembered
    "what the API server refuses by the TrainJob CRD's schema and CEL rules",
    _check,
)
