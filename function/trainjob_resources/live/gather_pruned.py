"""What ``check`` reads for ``runtime-in-use`` outside the render's namespaces: the derived
TrainingRuntimes of every namespace (one list call, by the function's ``derived`` label), and the
TrainJobs of the namespaces where one is tracked by the render's own Argo CD application (which a
pruning sync deletes there: ``in_use``). An identity that may not list them cluster-wide (the PreSync
hook's Role is the application's namespace's) reads none, and ``check`` decides on the render's
namespaces alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..derive.provenance import DERIVED_LABEL
from ..trainer.api import TRAINER_GROUP
from .findings import Live, Render, is_derived, name_of, namespace_of, runtime_key, tracking
from .gather import TRAINER_VERSION
from .in_use import render_apps

if TYPE_CHECKING:
    from .cluster import Cluster


def read(cluster: Cluster, objects: Sequence[dict[str, Any]], live: Live) -> None:
    """Add to ``live`` the derived TrainingRuntimes elsewhere that the render's application tracks, and the
    TrainJobs of their namespaces."""
    apps = render_apps(Render(list(objects), [], {}), live)
    if not apps:
        return
    spaces = {namespace_of(o) for o in objects}
    base = f"/apis/{TRAINER_GROUP}/{TRAINER_VERSION}"
    found = cluster.try_list(f"{base}/trainingruntimes", f"{DERIVED_LABEL}=true") or []
    elsewhere = [r for r in found if is_derived(r) and namespace_of(r) not in spaces and tracking(r) in apps]
    if not elsewhere:
        return
    read_spaces = {namespace_of(t) for t in live.trainjobs} | spaces
    have = {(namespace_of(t), name_of(t)) for t in live.trainjobs}
    for ns in sorted({namespace_of(r) for r in elsewhere} - read_spaces):
        trainjobs = cluster.try_list(f"{base}/namespaces/{ns}/trainjobs")
        if trainjobs is None:
            continue  # who uses it cannot be told: not reported
        live.trainjobs += [t for t in trainjobs if (namespace_of(t), name_of(t)) not in have]
    for runtime in elsewhere:
        live.runtimes[runtime_key(runtime)] = runtime
