"""``runtime-patches-immutable``: a sync that changes ``spec.runtimePatches`` of a running TrainJob.

Trainer's webhook compares the TrainJob's runtimePatches before and after the update (``equality.Semantic``,
each entry's ``time`` restored by the defaulter where the entry is otherwise unchanged:
pkg/webhooks/trainjob_webhook.go) and refuses a change unless the TrainJob is suspended before or after
it (``checkRuntimePatchesImmutability``, pkg/runtime/framework/plugins/jobset/jobset.go at v2.2.1 and
v2.3.0; at v2.2.0 only "after" counts), and a change it lets through while the TrainJob's JobSet has
active jobs (``jobset_active``). The function moves a patch's ``resources`` into a derived runtime
(a new runtimeRef: ``runtime-ref-immutable``, which the API server's CEL rule refuses before the webhook
runs); any other field of a patch (a nodeSelector, a toleration, a label) stays in runtimePatches.

What the sync leaves in the list: the list is ``listType=map`` keyed by ``manager``
(pkg/apis/trainer/v1alpha1/trainjob_types.go), so a server-side apply replaces the render's entries and
removes those only appliers owned (``managedFields``); a client-side apply (``kubectl apply``, Argo CD's
default) sends a JSON merge patch, which replaces the whole list with the render's.

Pure: the live TrainJobs come in as the API server's JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from ..kube import compare
from ..trainer.api import TRAINJOB_KIND
from .findings import Live, Render, annotations_of, crd_name, name_of, namespace_of, runtime_ref, suspended
from .jobset_active import while_active
from .report import Finding, object_name

LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
RUNTIME_PATCHES_FIELD: Final = "f:runtimePatches"


def entries(obj: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """runtimePatches by manager, without ``time`` (the webhook's defaulter restores it on unchanged entries)."""
    spec = obj.get("spec") if obj is not None else None
    patches = spec.get("runtimePatches") if isinstance(spec, Mapping) else None
    out: dict[str, dict[str, Any]] = {}
    for patch in patches if isinstance(patches, list) else []:
        if isinstance(patch, Mapping) and isinstance(patch.get("manager"), str):
            out[patch["manager"]] = {k: v for k, v in patch.items() if k != "time"}
    return out


def _applied_managers(live: Mapping[str, Any]) -> set[str]:
    """The runtimePatches entries only appliers own (``operation: Apply`` in managedFields): a server-side
    apply that no longer sends one removes it."""
    owners: dict[str, set[str]] = {}
    meta = live.get("metadata")
    for entry in meta.get("managedFields") or [] if isinstance(meta, Mapping) else []:
        fields = entry.get("fieldsV1") if isinstance(entry, Mapping) else None
        spec = fields.get("f:spec") if isinstance(fields, Mapping) else None
        patches = spec.get(RUNTIME_PATCHES_FIELD) if isinstance(spec, Mapping) else None
        for key in patches if isinstance(patches, Mapping) else ():
            if not key.startswith("k:"):
                continue
            try:
                manager = json.loads(key[2:]).get("manager")
            except (ValueError, AttributeError):
                continue
            if isinstance(manager, str):
                owners.setdefault(manager, set()).add(str(entry.get("operation")))
    return {manager for manager, operations in owners.items() if operations == {"Apply"}}


def sends_the_list(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether kubectl's client-side three-way JSON merge patch touches runtimePatches: where the render has
    the list, or the last-applied configuration had it (then ``null`` deletes it); where neither has it the
    patch leaves the live list alone (k8s.io/apimachinery/pkg/util/jsonmergepatch/patch.go,
    ``CreateThreeWayJSONMergePatch``, which kubectl's patcher.go uses for custom resources)."""
    spec = new.get("spec")
    if isinstance(spec, Mapping) and "runtimePatches" in spec:
        return True
    try:
        applied = json.loads(str(annotations_of(old).get(LAST_APPLIED)))
    except ValueError:
        return True
    applied_spec = applied.get("spec") if isinstance(applied, Mapping) else None
    return not isinstance(applied_spec, Mapping) or "runtimePatches" in applied_spec


def changed_entries(
    new: Mapping[str, Any], old: Mapping[str, Any], schema: Mapping[str, Any] | None = None
) -> list[str]:
    """The managers whose runtimePatches entry the sync changes, adds or removes (client-side when the live
    TrainJob carries kubectl's last-applied annotation, else server-side); ``schema``: the TrainJob CRD's,
    whose defaults the API server gives the render's entries."""
    rendered, before = entries(new), entries(old)
    if any(rendered.get(m) != before.get(m) for m in rendered):  # else nothing to default: the common case
        patches = (new.get("spec") or {}).get("runtimePatches")
        rendered = entries(compare.defaulted({"spec": {"runtimePatches": patches}}, schema))
    out = [m for m, entry in rendered.items() if m not in before or compare.differing(entry, before[m])]
    if LAST_APPLIED in annotations_of(old):
        removable = set(before) if sends_the_list(new, old) else set()
    else:
        removable = _applied_managers(old)
    out += [m for m in before if m not in rendered and m in removable]
    return out


def refuses(old_suspended: bool, new_suspended: bool, cluster_release: str | None) -> bool:
    """Whether the webhook refuses a change of runtimePatches: v2.2.0 only looks at the TrainJob after the
    update, later releases at both sides."""
    if cluster_release in ("v2.2.0", "2.2.0"):
        return not new_suspended
    return not old_suspended and not new_suspended


def suspended_after(trainjob: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """``spec.suspend`` after the sync: the render's where it has one, else the live one."""
    spec = trainjob.get("spec")
    return suspended(trainjob) if isinstance(spec, Mapping) and "suspend" in spec else suspended(old)


def changes(render: Render, live: Live) -> list[tuple[dict[str, Any], dict[str, Any], list[str]]]:
    """The live TrainJobs whose runtimePatches the sync changes: (rendered, live, the managers)."""
    existing = {f"{namespace_of(t)}/{name_of(t)}": t for t in live.trainjobs}
    schema = compare.version_schema(live.crds.get(crd_name(TRAINJOB_KIND)), "v1alpha1")
    out = []
    for trainjob in render.trainjobs():
        old = existing.get(f"{namespace_of(trainjob)}/{name_of(trainjob)}")
        if old is None or runtime_ref(trainjob) != runtime_ref(old):
            continue  # created, or refused by the CEL rule on spec.runtimeRef first
        managers = changed_entries(trainjob, old, schema)
        if managers:
            out.append((trainjob, old, managers))
    return out


def runtime_patches_immutable(render: Render, live: Live) -> list[Finding]:
    out = []
    for trainjob, old, managers in changes(render, live):
        subject = object_name(TRAINJOB_KIND, namespace_of(trainjob), name_of(trainjob))
        dropped = [m for m in managers if m not in entries(trainjob)]
        others = (
            f" (a client-side apply replaces the whole list, dropping {', '.join(dropped)}: sync server-side, "
            "Argo CD's ServerSideApply=true, to keep the entries of other managers such as Kueue's)"
            if dropped and LAST_APPLIED in annotations_of(old)
            else ""
        )
        if not refuses(suspended(old), suspended_after(trainjob, old), live.trainer[0]):
            key = f"{namespace_of(trainjob)}/{name_of(trainjob)}"
            out += while_active(subject, key, suspended(old), managers, live.jobsets, others)
            continue
        out.append(
            Finding(
                "runtime-patches-immutable",
                "error",
                subject,
                f"the sync changes the runtimePatches of manager {', '.join(managers)} of this running TrainJob, "
                "and Trainer's webhook refuses the update (RuntimePatches can only be modified when the TrainJob "
                "is suspended before or after the update): the sync fails on it. Put the patch back as it was "
                "until the TrainJob is done, suspend it first (spec.suspend: true, synced before the change), or "
                f"recreate it under a new name{others}",
            )
        )
    return out
