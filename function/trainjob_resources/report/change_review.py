"""What a pull-request report (``explain --against``) says besides the numbers: whether the change is
refused (a status line, and every error of the change's render, per object), which TrainJobs it
re-points at another runtime, and per container what changed, with the values as written.

A TrainJob's ``spec.runtimeRef`` is immutable once created (Trainer's CRD,
pkg/apis/trainer/v1alpha1/trainjob_types.go: ``self == oldSelf`` on ``runtimeRef``), and the derived
runtime's name is a digest of the overrides (``materialize.derived_name``): a change of an override
renames it, and the sync of the TrainJob fails unless it is recreated. Pure: nothing here reads or
writes files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ..krm.item import Item
from ..krm.results import ResourceRef, Result
from ..trainer.api import CLUSTER_RUNTIME_KIND, TRAINJOB_KIND
from ..values.records import Record
from ..yamltext import yamlnodes as yn
from .explain import SECTIONS, ContainerView, TrainJobPods, Value

Key = tuple[str, str]  # namespace, name
RuntimeRef = tuple[str, str]  # kind, name
ARROW = " → "
RECREATE = "the TrainJob must be recreated (runtimeRef is immutable)"


class Refusal(Record):
    """The errors about one object (``resource`` None: about none, such as an input or the bound)."""

    __slots__ = ("resource", "results")

    def __init__(self, resource: ResourceRef | None, results: tuple[Result, ...]) -> None:
        self.resource: Final = resource
        self.results: Final = results

    @property
    def display(self) -> str:
        return self.resource.display() if self.resource is not None else "the inputs"


class Review(Record):
    """``errors``: the change's (exit 1); ``runtime_refs``: per TrainJob the runtimeRef each side renders
    it with (None where that side does not render it)."""

    __slots__ = ("errors", "refusals", "runtime_refs")

    def __init__(
        self,
        errors: Sequence[Result] = (),
        runtime_refs: Mapping[Key, tuple[RuntimeRef | None, RuntimeRef | None]] | None = None,
    ) -> None:
        self.errors: Final = tuple(errors)
        self.refusals: Final = refusals(self.errors)
        self.runtime_refs: Final = dict(runtime_refs or {})

    @property
    def status(self) -> str:
        count = len(self.errors)
        return f"refused: {count} error{'s' if count != 1 else ''}" if count else "ok"

    def recreated(self, key: Key) -> tuple[RuntimeRef, RuntimeRef] | None:
        """The runtimeRef before and after, where the change renders the TrainJob pointing elsewhere."""
        before, after = self.runtime_refs.get(key, (None, None))
        return (before, after) if before is not None and after is not None and before != after else None


def refusals(errors: Iterable[Result]) -> list[Refusal]:
    """The errors grouped by the object they are about, in the order first met."""
    grouped: dict[ResourceRef | None, list[Result]] = {}
    for result in errors:
        grouped.setdefault(result.resource_ref, []).append(result)
    return [Refusal(resource, tuple(results)) for resource, results in grouped.items()]


def rendered_runtime_refs(items: Iterable[Item], results: Iterable[Result]) -> dict[Key, RuntimeRef]:
    """Each TrainJob's ``spec.runtimeRef`` in a render's output (the derived runtime's name where it
    has one), for the TrainJobs that render: none with an error."""
    refused = {r.resource_ref for r in results if r.severity == "error" and r.resource_ref is not None}
    out: dict[Key, RuntimeRef] = {}
    for item in items:
        if item.kind != TRAINJOB_KIND or item.ref in refused:
            continue
        ref = yn.get_path(item.node, "spec", "runtimeRef")
        out[(item.namespace, item.name)] = (
            str(yn.scalar(yn.get(ref, "kind")) or CLUSTER_RUNTIME_KIND),
            str(yn.scalar(yn.get(ref, "name")) or ""),
        )
        item.settle()  # its tree dropped again where its text stands for it
    return out


def ref_text(ref: RuntimeRef) -> str:
    return f"{ref[0]} {ref[1]}"


def recreate_text(refs: tuple[RuntimeRef, RuntimeRef]) -> str:
    return f"runtimeRef changes from {ref_text(refs[0])} to {ref_text(refs[1])}: {RECREATE}"


def ref_json(ref: RuntimeRef | None) -> dict[str, str] | None:
    return {"kind": ref[0], "name": ref[1]} if ref is not None else None


# -- per container ---------------------------------------------------------------------------------

ADDED, REMOVED, CHANGED = "added", "removed", "changed"


class ValueChange(Record):
    """One request or limit of a container on both sides, as written (None where a side has none)."""

    __slots__ = ("after", "before", "resource", "section")

    def __init__(self, section: str, resource: str, before: str | None, after: str | None) -> None:
        self.section: Final = section
        self.resource: Final = resource
        self.before: Final = before
        self.after: Final = after


class ContainerChange(Record):
    __slots__ = ("change", "container", "job", "values")

    def __init__(self, job: str, container: str, change: str, values: tuple[ValueChange, ...]) -> None:
        self.job: Final = job
        self.container: Final = container
        self.change: Final = change  # added, removed, changed
        self.values: Final = values

    def text(self) -> str:
        """``data-loader memory 16Gi → 40Gi``; ``data-loader cpu request 1 → 4, memory limit 8Gi → 16Gi``."""
        return f"{self.container} {self.what()}"

    def what(self) -> str:
        """``memory 16Gi → 40Gi``; ``added: cpu 1, memory 8Gi``; ``removed``."""
        if self.change == REMOVED:
            return REMOVED
        values = values_text(self.values, self.change == ADDED)
        return f"added: {values}" if self.change == ADDED else values


def values_text(values: Sequence[ValueChange], added: bool = False) -> str:
    """Per resource: one transition where the request and the limit go the same way, else each."""
    parts: list[str] = []
    for resource in dict.fromkeys(v.resource for v in values):
        mine = {v.section: v for v in values if v.resource == resource}
        request, limit = mine.get("requests"), mine.get("limits")
        if request is not None and limit is not None and (request.before, request.after) == (limit.before, limit.after):
            parts.append(f"{resource} {_transition(request, added)}")
            continue
        parts += [
            f"{resource} {label} {_transition(v, added)}"
            for label, v in (("request", request), ("limit", limit))
            if v is not None
        ]
    return ", ".join(parts)


def _transition(value: ValueChange, added: bool) -> str:
    if added:
        return value.after or "none"
    return f"{value.before or 'none'}{ARROW}{value.after or 'none'}"


def container_changes(before: TrainJobPods | None, after: TrainJobPods | None) -> list[ContainerChange]:
    """Per replicated job of either side (the change's order, then the base's others), each container
    whose requests or limits differ in value, added or removed; a value shown as written."""
    if before is None or after is None:
        return []
    old = {job.name: {c.name: c for c in job.containers} for job in before.jobs}
    new = {job.name: {c.name: c for c in job.containers} for job in after.jobs}
    out: list[ContainerChange] = []
    for job in [*new, *(name for name in old if name not in new)]:
        was, now = old.get(job, {}), new.get(job, {})
        for name in [*now, *(n for n in was if n not in now)]:
            one = _container_change(job, name, was.get(name), now.get(name))
            if one is not None:
                out.append(one)
    return out


def _container_change(
    job: str, name: str, before: ContainerView | None, after: ContainerView | None
) -> ContainerChange | None:
    if after is None:
        return ContainerChange(job, name, REMOVED, ())
    if before is None:
        return ContainerChange(job, name, ADDED, _values(None, after, every=True))
    values = _values(before, after)
    return ContainerChange(job, name, CHANGED, values) if values else None


def _values(before: ContainerView | None, after: ContainerView, every: bool = False) -> tuple[ValueChange, ...]:
    out: list[ValueChange] = []
    names = sorted({n for side in (before, after) if side is not None for s in SECTIONS for n in side.section(s)})
    for resource in names:
        for section in SECTIONS:
            old = before.section(section).get(resource) if before is not None else None
            new = after.section(section).get(resource)
            present = old is not None or new is not None
            if present and (every or _quantity(old) != _quantity(new)):
                out.append(ValueChange(section, resource, _text(old), _text(new)))
    return tuple(out)


def _quantity(value: Value | None) -> Any:
    return value.quantity if value is not None else None


def _text(value: Value | None) -> str | None:
    return value.text if value is not None else None


def container_changes_json(changes: Sequence[ContainerChange]) -> list[dict[str, Any]]:
    return [
        {
            "replicatedJob": c.job,
            "container": c.container,
            "change": c.change,
            **{
                section: {v.resource: {"before": v.before, "after": v.after} for v in c.values if v.section == section}
                for section in SECTIONS
                if any(v.section == section for v in c.values)
            },
        }
        for c in changes
    ]


def refusals_json(review: Review) -> list[dict[str, Any]]:
    out = []
    for refusal in review.refusals:
        results = [r.to_python() for r in refusal.results]
        resource = results[0].get("resourceRef") if refusal.resource is not None else None
        out.append(
            {"resource": resource, "results": [{k: v for k, v in r.items() if k != "resourceRef"} for r in results]}
        )
    return out
