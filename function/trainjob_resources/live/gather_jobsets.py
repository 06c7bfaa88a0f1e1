"""What ``check`` reads for ``runtime-patches-immutable`` on a suspended TrainJob (``jobset_active``): the
JobSets of the namespaces where the sync changes the runtimePatches of a TrainJob suspended before or
after it, one list call per namespace, and only there. Where the cluster serves no JobSets (discovery of
jobset.x-k8s.io/v1alpha2) none are read, and the webhook refuses every such change; a list the identity may not
make stops ``check`` as every other read does (exit 2, naming the rights docs/check.md lists).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .findings import Live, Render, name_of, namespace_of, suspended
from .jobset_active import JOBSET_GROUP, JOBSET_VERSION
from .patches_immutable import changes, refuses, suspended_after

if TYPE_CHECKING:
    from .cluster import Cluster


def read(cluster: Cluster, render: Render, live: Live) -> None:
    """Set ``live.jobsets``: those of the namespaces where the webhook would read one."""
    spaces = sorted(
        {
            namespace_of(trainjob)
            for trainjob, old, _ in changes(render, live)
            if not refuses(suspended(old), suspended_after(trainjob, old), live.trainer[0])
        }
    )
    if not spaces:
        return
    base = f"/apis/{JOBSET_GROUP}/{JOBSET_VERSION}"
    if "JobSet" not in cluster.resources(f"{JOBSET_GROUP}/{JOBSET_VERSION}"):
        live.jobsets = None
        return
    found = cluster.lists([f"{base}/namespaces/{ns}/jobsets" for ns in spaces])
    live.jobsets = {f"{namespace_of(j)}/{name_of(j)}": j for jobsets in found for j in jobsets}
