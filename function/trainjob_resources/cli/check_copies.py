"""``check`` decides on the cluster's runtimes where the cluster has them (issue 46).

A runtime copy the render reads (a local-config copy in the repository, or ``--runtimes``) is never
applied: a TrainJob the render leaves pointing at it runs on the runtime installed in the cluster
(Trainer's webhook and controller read the runtimeRef's object: pkg/runtime/core/trainingruntime.go
and clustertrainingruntime.go). So where a copy differs from the installed runtime, ``check`` also
renders with the installed one in its place, and for those TrainJobs takes that render's decisions
(caps, namespace policy) and pods (quotas, Kueue): an error the installed runtime brings that the copy
hid is a ``runtime-drift`` error. A TrainJob the render re-points to a derived runtime runs on the
derived runtime it writes, made from the copy: the copy's content is what runs there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..krm.resource_list import ResourceList
    from ..live.findings import Live, RuntimeKey
    from ..live.report import Finding
    from ..report.explain import TrainJobPods


class Drifted:
    """The copies that differ from their installed runtime, and the render with the installed ones instead."""

    def __init__(self, resource_list: ResourceList, platform: frozenset[int], live: Live) -> None:
        from ..live import findings
        from ..repo.collected import PATH_KEY
        from ..trainer.api import RUNTIME_KINDS, TRAINER_GROUP
        from ..values.keys import LOCAL_CONFIG

        self.copies: dict[RuntimeKey, tuple[str, list[str]]] = {}  # key -> (where it was read, differing fields)
        installed: dict[int, dict[str, Any]] = {}
        for item in resource_list.items:
            if item.annotation(LOCAL_CONFIG) != "true" or item.group != TRAINER_GROUP or item.kind not in RUNTIME_KINDS:
                continue
            value = item.value()
            key = findings.runtime_key(value)
            live_runtime = live.runtimes.get(key)
            if live_runtime is None or findings.is_derived(live_runtime):
                continue
            fields = findings.runtime_fields(value, live_runtime, live)
            if fields:
                self.copies[key] = (item.annotation(PATH_KEY) or "--runtimes", fields)
                installed[id(item)] = live_runtime
        self.resource_list, self.platform = (
            _replaced(resource_list, platform, installed) if installed else (resource_list, platform)
        )

    def __bool__(self) -> bool:
        return bool(self.copies)


def _replaced(
    resource_list: ResourceList, platform: frozenset[int], installed: dict[int, dict[str, Any]]
) -> tuple[ResourceList, frozenset[int]]:
    """A fresh ResourceList (the render changes its items) with each drifted copy replaced by the installed
    runtime, which the platform supplies."""
    from ..krm.resource_list import Item, ResourceList
    from ..live.gather import as_copy
    from ..repo.collected import PATH_KEY
    from ..values.keys import LOCAL_CONFIG
    from ..yamltext import yamlnodes as yn

    items: list[Item] = []
    ids: set[int] = set()
    for item in resource_list.items:
        runtime = installed.get(id(item))
        fresh = Item(yn.from_python(as_copy(runtime) if runtime is not None else item.value()))
        if runtime is not None:
            fresh.set_annotation(LOCAL_CONFIG, "true")
            fresh.set_annotation(PATH_KEY, "the cluster")
        if runtime is not None or id(item) in platform:
            ids.add(id(fresh))
        items.append(fresh)
    return ResourceList(items=items, function_config=resource_list.function_config), frozenset(ids)


def on_installed(result: ResourceList, drifted: Drifted) -> set[str]:
    """The rendered TrainJobs (``namespace/name``) that name a drifted copy's runtime: they run on the
    installed one."""
    from ..live import findings
    from ..trainer.api import TRAINJOB_KIND

    out: set[str] = set()
    for item in result.items:
        if item.kind != TRAINJOB_KIND:
            continue
        value = item.value()
        ref = findings.runtime_ref(value)
        if ref is not None and ref.key(item.namespace) in drifted.copies:
            out.add(f"{item.namespace}/{item.name}")
    return out


def hidden_errors(result: ResourceList, installed_result: ResourceList, trainjobs: set[str]) -> dict[str, list[str]]:
    """By TrainJob (of ``trainjobs``), the errors the render with the installed runtimes reports and the
    render with the copies does not."""
    said = {(_key(r.resource_ref), r.message) for r in result.results if r.severity == "error"}
    out: dict[str, list[str]] = {}
    for r in installed_result.results:
        key = _key(r.resource_ref)
        if r.severity == "error" and key in trainjobs and (key, r.message) not in said:
            out.setdefault(key, []).append(r.message)
    return out


def _key(ref: Any) -> str:
    return f"{ref.namespace}/{ref.name}" if ref is not None else ""


def views_on_installed(
    views: dict[str, TrainJobPods], installed_views: dict[str, TrainJobPods], trainjobs: set[str]
) -> dict[str, TrainJobPods]:
    """The pods the quotas and queues count: the installed runtime's for the TrainJobs that run on it."""
    return {key: installed_views.get(key, view) if key in trainjobs else view for key, view in views.items()}


def drift_errors(drifted: Drifted, hidden: dict[str, list[str]], result: ResourceList) -> list[Finding]:
    """``runtime-drift`` errors: a copy whose installed runtime refuses what the copy let through."""
    from ..live import findings
    from ..live.report import Finding

    by_copy: dict[RuntimeKey, list[str]] = {}
    for item in result.items:
        key = f"{item.namespace}/{item.name}"
        if key not in hidden:
            continue
        ref = findings.runtime_ref(item.value())
        if ref is not None:
            by_copy.setdefault(ref.key(item.namespace), []).extend(f"TrainJob {key}: {m}" for m in hidden[key])
    out = []
    for runtime_key, errors in sorted(by_copy.items()):
        where, fields = drifted.copies[runtime_key]
        shown = "; ".join(errors[:3]) + (f"; and {len(errors) - 3} more" if len(errors) > 3 else "")
        out.append(
            Finding(
                "runtime-drift",
                "error",
                findings.key_name(runtime_key),
                f"the copy read from {where} differs from the runtime installed in the cluster at "
                f"{_fields(fields)}, and the TrainJobs that name it run on the installed one, which the policy "
                f"refuses: {shown}. check decides on the installed runtime; the copy is never applied. Make "
                "the copy the installed runtime, or ask the platform to change the installed one",
            )
        )
    return out


def _fields(fields: list[str]) -> str:
    from ..kube import compare

    return compare.listed(fields)
