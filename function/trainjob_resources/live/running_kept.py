"""``snapshot-kept`` on Trainer v2.2.x, which keeps no snapshot: a running TrainJob whose runtime the sync
gives other content keeps the JobSet it was built with.

The JobSet plugin rebuilds a TrainJob's JobSet only while it or the TrainJob is suspended (``Build`` in
pkg/runtime/framework/plugins/jobset/jobset.go, both releases), and v2.2's ``NewObjects`` reads the live
runtime at each reconcile (pkg/runtime/core/trainingruntime.go at v2.2.1): a running TrainJob's pods keep
the content they started with; suspended and resumed, it gets the runtime's content of that moment. On
v2.3.0 the snapshot decides (``findings.snapshot_kept``).

Pure: the live objects come in as the API server's JSON.
"""

from __future__ import annotations

from typing import Any

from ..kube import compare
from ..trainer.api import TRAINJOB_KIND
from ..trainer.releases import release, trainer_version_of
from .findings import Live, Render, RuntimeKey, crd_name, name_of, namespace_of, runtime_key, runtime_ref, suspended
from .report import Finding, object_name


def running_kept(render: Render, live: Live) -> list[Finding]:
    version = trainer_version_of(live.trainer[0])
    if version is None or release(version).runtime_snapshot:
        return []
    applied = render.runtimes()
    copies = {runtime_key(c): c for c, _ in render.copies}
    compared: dict[RuntimeKey, list[str]] = {}
    out = []
    for trainjob in live.trainjobs:
        ref = runtime_ref(trainjob)
        if ref is None or suspended(trainjob):
            continue
        key = ref.key(namespace_of(trainjob))
        new, old = applied.get(key) or copies.get(key), live.runtimes.get(key)
        if new is None or old is None:
            continue
        if key not in compared:
            compared[key] = _changed(new, old, live)
        if not compared[key]:
            continue
        out.append(
            Finding(
                "snapshot-kept",
                "info",
                object_name(TRAINJOB_KIND, namespace_of(trainjob), name_of(trainjob)),
                f"runs on {ref.display()}, which the sync changes at {compare.listed(compared[key])}: Trainer "
                f"{live.trainer[0]} keeps no snapshot and does not rebuild the JobSet of a running TrainJob, so its "
                "pods keep the content they started with; suspended and resumed, it gets the new content. "
                "Recreate it to give it the new content now",
            )
        )
    return out


def _changed(new: dict[str, Any], old: dict[str, Any], live: Live) -> list[str]:
    version = str(new.get("apiVersion") or "").rpartition("/")[2]
    schema = compare.version_schema(live.crds.get(crd_name(str(new.get("kind")))), version)
    defaulted = compare.defaulted({"spec": new.get("spec")}, schema)
    return compare.differing(defaulted.get("spec"), old.get("spec"), "spec")
