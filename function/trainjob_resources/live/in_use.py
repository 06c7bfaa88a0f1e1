"""``runtime-in-use``: a derived runtime a pruning sync deletes while live TrainJobs use it.

Which derived runtimes the prune deletes: those the render no longer has in a namespace it writes to
(the cluster scope counts as one where the render has a cluster-scoped object), and, elsewhere, those
Argo CD tracks for the render's own application (the application that tracks the live copies of the
render's objects): Argo CD prunes every object it tracks that the target state lacks, wherever it is,
and nothing another application tracks (another team's derived ClusterTrainingRuntime included).
TrainJobs Argo CD tracks for that application and the render no longer has are pruned with it and not
counted.

What follows depends on the cluster's Trainer release (``trainer/releases.py``): v2.3.0 deletes the
runtime, and Trainer's webhook then refuses every update of the TrainJobs on it (``ValidateObjects``
reads the runtime); v2.2 keeps it Terminating behind the ``trainer.kubeflow.org/resource-in-use``
finalizer until they are gone, and accepts their updates.

Pure: the live objects come in as the API server's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..trainer.releases import release, trainer_version_of
from .findings import (
    Live,
    Render,
    RuntimeKey,
    is_derived,
    key_name,
    name_of,
    namespace_of,
    runtime_ref,
    tracking,
)
from .report import Finding

MAX_NAMED = 10


def render_apps(render: Render, live: Live) -> set[str]:
    """The Argo CD applications that track the live copies of the render's Trainer objects."""
    rendered = {f"{namespace_of(t)}/{name_of(t)}" for t in render.trainjobs()}
    applied = set(render.runtimes())
    found = [t for t in live.trainjobs if f"{namespace_of(t)}/{name_of(t)}" in rendered]
    found += [r for key, r in live.runtimes.items() if key in applied]
    return {app for obj in found if (app := tracking(obj)) is not None}


def pruned(render: Render, live: Live) -> dict[RuntimeKey, Mapping[str, Any]]:
    """The live derived runtimes a pruning sync of the render deletes."""
    applied = render.runtimes()
    namespaces = {namespace_of(o) for o in render.objects}
    apps = render_apps(render, live)
    out: dict[RuntimeKey, Mapping[str, Any]] = {}
    for key, runtime in sorted(live.runtimes.items()):
        if key in applied or not is_derived(runtime):
            continue
        if key[1] not in namespaces and tracking(runtime) not in apps:
            continue
        out[key] = runtime
    return out


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return f"{shown} and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else shown


def runtime_in_use(render: Render, live: Live) -> list[Finding]:
    rendered = {f"{namespace_of(t)}/{name_of(t)}" for t in render.trainjobs()}
    users: dict[RuntimeKey, list[dict[str, Any]]] = {}
    for trainjob in live.trainjobs:
        ref = runtime_ref(trainjob)
        if ref is not None:
            users.setdefault(ref.key(namespace_of(trainjob)), []).append(trainjob)
    version = trainer_version_of(live.trainer[0])
    kept = version is not None and release(version).in_use_finalizer
    out = []
    for key, runtime in pruned(render, live).items():
        app = tracking(runtime)
        using = []
        for trainjob in users.get(key, []):
            where = f"{namespace_of(trainjob)}/{name_of(trainjob)}"
            if where in rendered:
                using.append(f"{where} (in the render)")
            elif app is None or tracking(trainjob) != app:  # not pruned with it: made outside git
                using.append(f"{where} (not in the render: made outside git)")
        if not using:
            continue
        start = (
            "the render no longer has this derived runtime, so a pruning sync deletes it, but live TrainJobs use "
            f"it: {_names(using)}."
        )
        if kept:
            out.append(
                Finding(
                    "runtime-in-use",
                    "warning",
                    key_name(key),
                    f"{start} Trainer {live.trainer[0]} keeps it Terminating behind the finalizer "
                    "trainer.kubeflow.org/resource-in-use until they are deleted, and accepts their updates. Keep it "
                    "(argocd.argoproj.io/sync-options: Prune=false) "
                    "until they are done",
                )
            )
            continue
        out.append(
            Finding(
                "runtime-in-use",
                "error",
                key_name(key),
                f"{start} Trainer's webhook then refuses every update of them (even a label), and the SDK's "
                "list_jobs fails on their namespace. Keep the runtime (exclude derived runtimes from pruning: "
                "argocd.argoproj.io/sync-options: Prune=false) until they are deleted, or delete them first",
            )
        )
    return out
