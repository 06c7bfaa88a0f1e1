"""``runtime-patches-immutable`` where the TrainJob is suspended before or after the sync: Trainer's webhook
then reads the TrainJob's JobSet (same namespace and name, from its manager's cache) and refuses the change
while any of its replicated jobs has active jobs (``status.replicatedJobsStatus[].active`` above 0:
"RuntimePatches cannot be modified when the JobSet's ReplicatedJob ... is still active"); no JobSet is no
refusal (``client.IgnoreNotFound``), and a cluster that serves no JobSets refuses every such change (the
cached client's "no matches for kind" is an internal error). ``checkRuntimePatchesImmutability``,
pkg/runtime/framework/plugins/jobset/jobset.go, the same at v2.2.0, v2.2.1 and v2.3.0. That status is the
JobSet controller's (sigs.k8s.io/jobset): the jobs stay active until a suspended JobSet's pods are gone.

Pure: the JobSets come in as the API server's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .report import Finding

JOBSET_GROUP: Final = "jobset.x-k8s.io"
JOBSET_VERSION: Final = "v1alpha2"  # the version Trainer reads (sigs.k8s.io/jobset/api/jobset/v1alpha2)


def active_jobs(jobset: Mapping[str, Any] | None) -> list[str]:
    """The replicated jobs of ``jobset`` with active jobs."""
    status = jobset.get("status") if jobset is not None else None
    rows = status.get("replicatedJobsStatus") if isinstance(status, Mapping) else None
    return [
        str(row.get("name"))
        for row in (rows if isinstance(rows, list) else [])
        if isinstance(row, Mapping)
        and isinstance(row.get("active"), int)
        and not isinstance(row.get("active"), bool)
        and row["active"] > 0
    ]


def refused(jobsets: Mapping[str, Mapping[str, Any]] | None, key: str) -> bool:
    """Whether the webhook refuses a runtimePatches change of the suspended TrainJob ``key``
    ("<namespace>/<name>"): its JobSet has active jobs, or the cluster serves no JobSets (None)."""
    return jobsets is None or bool(active_jobs(jobsets.get(key)))


def while_active(
    subject: str,
    key: str,
    was_suspended: bool,
    managers: list[str],
    jobsets: Mapping[str, Mapping[str, Any]] | None,
    others: str = "",
) -> list[Finding]:
    """The finding on the TrainJob ``subject`` (``key``: "<namespace>/<name>") whose runtimePatches of
    ``managers`` the sync changes while it is suspended (``was_suspended``) or suspends it; ``jobsets``:
    the JobSets read, None where the cluster serves none."""
    state = "this suspended TrainJob" if was_suspended else "this TrainJob, which the sync suspends,"
    said = f"the sync changes the runtimePatches of manager {', '.join(managers)} of {state}"
    if jobsets is None:
        message = (
            f"{said}, and this cluster serves no JobSets ({JOBSET_GROUP}/{JOBSET_VERSION}): Trainer's webhook "
            "cannot read the TrainJob's JobSet and refuses the update (Internal error: no matches for kind "
            '"JobSet"): the sync fails on it. Install JobSet, which Trainer needs to run a TrainJob, or put the '
            f"patch back as it was{others}"
        )
        return [Finding("runtime-patches-immutable", "error", subject, message)]
    active = active_jobs(jobsets.get(key))
    if not active:
        return []
    message = (
        f"{said} while its JobSet's replicated job{'s' if len(active) > 1 else ''} {', '.join(active)} "
        f"{'are' if len(active) > 1 else 'is'} still active, and Trainer's webhook "
        f"refuses the update (RuntimePatches cannot be modified when the JobSet's ReplicatedJob {active[0]} is "
        "still active): the sync fails on it. Sync spec.suspend: true alone first and change the patch once "
        f"the JobSet has no active job, or recreate the TrainJob under a new name{others}"
    )
    return [Finding("runtime-patches-immutable", "error", subject, message)]
