"""``running-suspended``: a sync that sends ``spec.suspend: true`` again to a queued TrainJob Kueue started.

Kueue's webhook gives each TrainJob it defaults an empty runtimePatches entry of manager
``kueue.x-k8s.io/manager`` (on create only: ``+kubebuilder:webhook ... verbs=create``), and at admission
fills it and sets ``suspend: false`` (``RunWithPodSetsInfo``, sigs.k8s.io/kueue/pkg/controller/jobs/trainjob/
trainjob_controller.go, v0.17.0 and v0.19.2). Where git says ``suspend: true``, every sync sends it again:
kubectl's client-side apply of a custom resource is a three-way JSON merge patch that carries each field
where the live value differs from the render's (k8s.io/apimachinery/pkg/util/jsonmergepatch/patch.go,
``CreateThreeWayJSONMergePatch``, from k8s.io/kubectl/pkg/cmd/apply/patcher.go), and a server-side apply
forced over Kueue's ownership of the field (Argo CD's ServerSideApply forces conflicts:
argo-cd docs/proposals/server-side-apply.md) sets it too. Trainer suspends the TrainJob (its JobSet's pods
go), and Kueue, whose Workload is still admitted, starts it again (``// 7. handle job is suspended``,
sigs.k8s.io/kueue/pkg/controller/jobframework/reconciler.go): it restarts, a warning.

A client-side apply that sends the list (``patches_immutable.sends_the_list``) replaces it with the
render's, dropping Kueue's entry. Trainer's webhook lets runtimePatches change since the TrainJob is
suspended after the update. Then Kueue cannot start it again (``RunWithPodSetsInfo``: "kueue runtime patch
not found", retried, not permanent) and the Workload keeps its quota: the TrainJob stays stopped, an error.
While its JobSet still has active jobs the webhook refuses the update instead, and nothing is stopped:
``runtime-patches-immutable`` says so (``jobset_active``), and this finding says nothing.

Pure: the live TrainJobs come in as the API server's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..trainer.api import TRAINJOB_KIND
from .findings import Live, Render, annotations_of, name_of, namespace_of, runtime_ref, suspended
from .jobset_active import refused
from .patches_immutable import LAST_APPLIED, entries, sends_the_list
from .queues import queue_name
from .report import Finding, object_name

KUEUE_MANAGER: Final = "kueue.x-k8s.io/manager"  # trainjob_controller.go: runtimePatchManagerName
FIX: Final = (
    "Drop spec.suspend: true from git (Kueue's webhook suspends each queued TrainJob when it is created, and "
    "starts it on admission)"
)


def _kueue_started(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Running, with Kueue's entry and a queue: Kueue admitted and started it."""
    queued = queue_name(old) is not None or queue_name(new) is not None
    return queued and not suspended(old) and KUEUE_MANAGER in entries(old)


def _drops_kueue_entry(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    client_side = LAST_APPLIED in annotations_of(old)
    return client_side and sends_the_list(new, old) and KUEUE_MANAGER not in entries(new)


def running_suspended(render: Render, live: Live) -> list[Finding]:
    existing = {f"{namespace_of(t)}/{name_of(t)}": t for t in live.trainjobs}
    out = []
    for trainjob in render.trainjobs():
        old = existing.get(f"{namespace_of(trainjob)}/{name_of(trainjob)}")
        if old is None or runtime_ref(trainjob) != runtime_ref(old):
            continue  # created, or refused by the CEL rule on spec.runtimeRef first
        if not suspended(trainjob) or not _kueue_started(old, trainjob):
            continue
        subject = object_name(TRAINJOB_KIND, namespace_of(trainjob), name_of(trainjob))
        said = (
            "git says spec.suspend: true of this TrainJob, which Kueue admitted and started (suspend: false, "
            f"its runtimePatches entry {KUEUE_MANAGER} filled in), and the sync sends suspend: true again"
        )
        if _drops_kueue_entry(trainjob, old):
            if refused(live.jobsets, f"{namespace_of(trainjob)}/{name_of(trainjob)}"):
                continue  # the update is refused: runtime-patches-immutable
            message = (
                f"{said} with the render's runtimePatches: a client-side apply (kubectl apply, Argo CD's default) "
                "replaces the list, dropping Kueue's entry. Trainer's webhook accepts it (the TrainJob is suspended "
                "after the update): the TrainJob is suspended, its pods deleted, and Kueue cannot start it again "
                "without its entry (kueue "
                "runtime patch not found): it stays stopped, its Workload holding the queue's quota. "
                f"{FIX}; or sync server-side (Argo CD's ServerSideApply=true), which keeps Kueue's entry: "
                "Kueue then restarts it"
            )
            out.append(Finding("running-suspended", "error", subject, message))
            continue
        message = (
            f"{said}: Trainer suspends it (its pods are deleted) and Kueue, whose Workload is still admitted, "
            f"starts it again at once: the TrainJob restarts from the beginning. {FIX}"
        )
        out.append(Finding("running-suspended", "warning", subject, message))
    return out
