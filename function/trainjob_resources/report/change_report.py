"""What a change does to each TrainJob: ``explain --against DIR`` compares the TrainJobs explained on
the base (``before``) with those of the change (``after``): added, removed, changed or unchanged,
with old → new requests and limits per pod and in total, and a total per namespace; with the
review (``change_review``): the status, every refusal, the TrainJobs to recreate, and per container
what changed.

Rendered as markdown for a pull-request comment (the status line, then a one-line-per-TrainJob
table), as JSON for bots, or as a text table; byte quantities in the markdown and the table as a
person reads them (``kube/readable.py``), canonical in JSON. Pure: nothing here reads or writes files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..krm.results import Result
from ..kube.podmath import Quantities, add
from ..kube.readable import readable
from ..values.records import Record
from ..values.text import bounded, code_span, json_text, markdown_name, markdown_text
from .change_review import (
    Review,
    container_changes,
    container_changes_json,
    recreate_text,
    ref_json,
    refusals_json,
)
from .explain import UNBOUNDED, LeftOut, TrainJobPods
from .explain_report import trainjob_json

ADDED, REMOVED, CHANGED, UNCHANGED = "added", "removed", "changed", "unchanged"
ARROW = " → "

Key = tuple[str, str]  # namespace, name


class TrainJobChange(Record):
    """One TrainJob on both sides: ``before`` is None where the change adds it, ``after`` where it removes it."""

    __slots__ = ("after", "before", "change")

    def __init__(self, before: TrainJobPods | None, after: TrainJobPods | None) -> None:
        self.before: Final = before
        self.after: Final = after
        if before is None:
            self.change: str = ADDED
        elif after is None:
            self.change = REMOVED
        else:
            self.change = UNCHANGED if trainjob_json(before) == trainjob_json(after) else CHANGED

    @property
    def view(self) -> TrainJobPods:
        view = self.after or self.before
        assert view is not None
        return view


class Totals(Record):
    """Requests and limits summed over some TrainJobs; ``unbounded``: resources one of them does not bound."""

    __slots__ = ("limits", "requests", "trainjobs", "unbounded")

    def __init__(self, views: Sequence[TrainJobPods]) -> None:
        requests: Quantities = {}
        limits: Quantities = {}
        for view in views:
            requests = add(requests, view.total_requests)
            limits = add(limits, view.total_limits)
        self.trainjobs: Final = len(views)
        self.requests: Final = requests
        self.limits: Final = limits
        self.unbounded: Final = frozenset(name for view in views for name in view.unbounded)


class NamespaceTotals(Record):
    __slots__ = ("after", "before", "namespace")

    def __init__(self, namespace: str, before: Totals, after: Totals) -> None:
        self.namespace: Final = namespace
        self.before: Final = before
        self.after: Final = after


class ChangeReport(Record):
    """Every TrainJob of either side, in the change's order (removed ones after, in the base's), the
    namespaces' totals, the TrainJobs one side could not explain (not compared), and the review."""

    __slots__ = ("changes", "namespaces", "not_compared", "review")

    def __init__(
        self,
        changes: list[TrainJobChange],
        namespaces: list[NamespaceTotals],
        not_compared: list[tuple[str, LeftOut]],
        review: Review | None = None,
    ) -> None:
        self.changes: Final = changes
        self.namespaces: Final = namespaces
        self.not_compared: Final = not_compared
        self.review: Final = review if review is not None else Review()

    def count(self, change: str) -> int:
        return sum(1 for c in self.changes if c.change == change)


def _key(view: TrainJobPods | LeftOut) -> Key:
    return (view.namespace, view.name)


def compare(
    before: Sequence[TrainJobPods],
    after: Sequence[TrainJobPods],
    before_left_out: Sequence[LeftOut] = (),
    after_left_out: Sequence[LeftOut] = (),
    review: Review | None = None,
) -> ChangeReport:
    """A TrainJob that one side could not explain is not compared (its reason is kept, with the side)."""
    skipped = {_key(t) for t in (*before_left_out, *after_left_out)}
    old = {_key(v): v for v in before if _key(v) not in skipped}
    new = {_key(v): v for v in after if _key(v) not in skipped}
    changes = [TrainJobChange(old.get(key), view) for key, view in new.items()]
    changes += [TrainJobChange(view, None) for key, view in old.items() if key not in new]
    namespaces = sorted({key[0] for key in (*old, *new)})
    totals = [
        NamespaceTotals(
            ns,
            Totals([v for k, v in old.items() if k[0] == ns]),
            Totals([v for k, v in new.items() if k[0] == ns]),
        )
        for ns in namespaces
    ]
    not_compared = [("base", t) for t in before_left_out] + [("change", t) for t in after_left_out]
    return ChangeReport(changes, totals, not_compared, review)


def transition(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    before_unbounded: frozenset[str] = frozenset(),
    after_unbounded: frozenset[str] = frozenset(),
) -> str:
    """``cpu 4, memory 8Gi → 64Gi``: each resource once, old → new where the two sides differ;
    one side's values alone where the other has none (an added or removed TrainJob). Byte quantities
    as a person reads them (``readable``): exact, and equal texts for equal values."""
    sides = [(before, before_unbounded), (after, after_unbounded)]
    present = [(values, unbounded) for values, unbounded in sides if values is not None]
    names = sorted({name for values, unbounded in present for name in (*values, *unbounded)})

    def shown(values: Mapping[str, Any], unbounded: frozenset[str], name: str) -> str:
        if name in unbounded:
            return UNBOUNDED
        value = values.get(name)
        return readable(name, value) if value is not None else "none"

    parts = []
    for name in names:
        texts = [shown(values, unbounded, name) for values, unbounded in present]
        parts.append(f"{name} {texts[0] if len(set(texts)) == 1 else ARROW.join(texts)}")
    return ", ".join(parts) or "none"


def _count_transition(before: int | None, after: int | None) -> str:
    values = [str(v) for v in (before, after) if v is not None]
    return values[0] if len(set(values)) == 1 else ARROW.join(values)


def _totals_json(totals: Totals) -> dict[str, Any]:
    return {
        "trainJobs": totals.trainjobs,
        "totalRequests": {n: totals.requests[n].canonical() for n in sorted(totals.requests)},
        "totalLimits": {n: totals.limits[n].canonical() for n in sorted(totals.limits) if n not in totals.unbounded},
        "unboundedLimits": sorted(totals.unbounded),
    }


def to_json(report: ChangeReport) -> dict[str, Any]:
    review = report.review
    return {
        "status": "refused" if review.errors else "ok",
        "errors": len(review.errors),
        "refusals": refusals_json(review),
        "summary": {c: report.count(c) for c in (CHANGED, ADDED, REMOVED, UNCHANGED)},
        "trainJobs": [
            {
                "name": c.view.name,
                "namespace": c.view.namespace,
                "change": c.change,
                "runtimeRef": _runtime_ref_json(review, c),
                "containerChanges": container_changes_json(container_changes(c.before, c.after)),
                "before": trainjob_json(c.before) if c.before is not None else None,
                "after": trainjob_json(c.after) if c.after is not None else None,
            }
            for c in report.changes
        ],
        "namespaces": [
            {"namespace": n.namespace, "before": _totals_json(n.before), "after": _totals_json(n.after)}
            for n in report.namespaces
        ],
        "notCompared": [
            {"name": t.name, "namespace": t.namespace, "side": side, "reason": t.reason}
            for side, t in report.not_compared
        ],
    }


def _runtime_ref_json(review: Review, change: TrainJobChange) -> dict[str, Any]:
    """The runtimeRef each side renders the TrainJob with (the derived runtime's name; None where
    that side does not render it), and whether the TrainJob must be recreated."""
    key = (change.view.namespace, change.view.name)
    before, after = review.runtime_refs.get(key, (None, None))
    return {"before": ref_json(before), "after": ref_json(after), "recreate": review.recreated(key) is not None}


def render_json(report: ChangeReport) -> str:
    return json_text(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n")


def _headline(report: ChangeReport) -> str:
    counts = ", ".join(f"{report.count(c)} {c}" for c in (CHANGED, ADDED, REMOVED, UNCHANGED))
    return f"TrainJob resources, this change against the base: {counts}"


def _cells(old: Any, new: Any, count: str, requests: str, limits: str) -> tuple[str, str, str]:
    """Count, requests and limits of one thing on both sides (None where a side has none), old → new:
    a TrainJob's totals, a replicated job's per pod, a namespace's totals."""

    def on(side: Any, attribute: str) -> Any:
        return getattr(side, attribute) if side is not None else None

    return (
        _count_transition(on(old, count), on(new, count)),
        transition(on(old, requests), on(new, requests)),
        transition(
            on(old, limits), on(new, limits), on(old, "unbounded") or frozenset(), on(new, "unbounded") or frozenset()
        ),
    )


def _total_cells(change: TrainJobChange) -> tuple[str, str, str]:
    return _cells(change.before, change.after, "pods", "total_requests", "total_limits")


def _namespace_cells(totals: NamespaceTotals) -> tuple[str, str, str]:
    return _cells(totals.before, totals.after, "trainjobs", "requests", "limits")


def _job_rows(change: TrainJobChange) -> list[tuple[str, str, str, str]]:
    """Per replicated job of either side: pods, requests and limits per pod, old → new."""
    before = {job.name: job for job in change.before.jobs} if change.before else {}
    after = {job.name: job for job in change.after.jobs} if change.after else {}
    names = list(after) + [name for name in before if name not in after]
    return [(name, *_cells(before.get(name), after.get(name), "pods", "pod_requests", "pod_limits")) for name in names]


def _runtime(change: TrainJobChange) -> str:
    names = [f"{v.runtime_kind} {v.runtime_name}" for v in (change.before, change.after) if v is not None]
    return names[0] if len(set(names)) == 1 else ARROW.join(names)


def _md_cell(text: str) -> str:
    return markdown_text(text, 4000)


def _recreated(report: ChangeReport) -> list[tuple[TrainJobChange, str]]:
    """The TrainJobs the change re-points at another runtime, each with what to say."""
    out = []
    for change in report.changes:
        refs = report.review.recreated((change.view.namespace, change.view.name))
        if refs is not None:
            out.append((change, recreate_text(refs)))
    return out


def _md_result(result: Result) -> str:
    """An error as a list item: where (file and line, field) as code, then the message."""
    where = [code_span(result.file.display(), 1000)] if result.file is not None else []
    where += [code_span(result.field_path, 1000)] if result.field_path else []
    text = markdown_text(result.message, 4000)
    return f"{' '.join(where)}: {text}" if where else text


def _markdown_review(report: ChangeReport) -> list[str]:
    """Every refusal, per object, and every TrainJob to recreate: what a reviewer must act on."""
    lines: list[str] = []
    if report.review.refusals:
        lines += ["#### Refused: the sync of this change fails", ""]
        for refusal in report.review.refusals:
            lines.append(f"- {markdown_text(refusal.display)}:")
            lines += [f"  - {_md_result(result)}" for result in refusal.results]
        lines.append("")
    recreated = _recreated(report)
    if recreated:
        lines += ["#### TrainJobs to recreate", ""]
        lines += [f"- {markdown_name(c.view.display, False)}: {markdown_text(text, 4000)}" for c, text in recreated]
        lines.append("")
    return lines


def _markdown_containers(change: TrainJobChange) -> list[str]:
    changes = container_changes(change.before, change.after)
    if not changes:
        return []
    lines = ["| replicated job | container | what changed |", "| --- | --- | --- |"]
    lines += [f"| {markdown_name(c.job)} | {markdown_name(c.container)} | {_md_cell(c.what())} |" for c in changes]
    return [*lines, ""]


def render_markdown(report: ChangeReport) -> str:
    """For a pull-request comment: the status line (``refused: 2 errors`` or ``ok``), every refusal and
    every TrainJob to recreate, the summary table, the namespaces' totals, then each TrainJob the
    change adds, removes or changes: its runtime, its containers' changes, per replicated job. Every
    user's name escaped (``markdown_name``)."""
    lines = [f"**{report.review.status}**", "", f"### {_headline(report)}", ""]
    lines += _markdown_review(report)
    if report.changes:
        lines += ["| TrainJob | change | pods | total requests | total limits |", "| --- | --- | ---: | --- | --- |"]
        for change in report.changes:
            pods, requests, limits = _total_cells(change)
            name = markdown_name(change.view.display)
            lines.append(f"| {name} | {change.change} | {pods} | {_md_cell(requests)} | {_md_cell(limits)} |")
        lines += ["", "#### Per namespace", "", "| namespace | TrainJobs | total requests | total limits |"]
        lines.append("| --- | ---: | --- | --- |")
        for ns in report.namespaces:
            count, requests, limits = _namespace_cells(ns)
            name = markdown_name(ns.namespace) if ns.namespace else "(none)"
            lines.append(f"| {name} | {count} | {_md_cell(requests)} | {_md_cell(limits)} |")
    else:
        lines.append("No TrainJobs on either side.")
    for change in report.changes:
        if change.change == UNCHANGED:
            continue
        lines += ["", f"#### TrainJob {code_span(change.view.display)} ({change.change})", ""]
        lines += [f"Runtime: {_md_cell(_runtime(change))}", ""]
        refs = report.review.recreated((change.view.namespace, change.view.name))
        if refs is not None:
            lines += [f"**{markdown_text(recreate_text(refs), 4000)}**", ""]
        lines += _markdown_containers(change)
        lines += ["| replicated job | pods | requests per pod | limits per pod |", "| --- | ---: | --- | --- |"]
        for job, pods, requests, limits in _job_rows(change):
            lines.append(f"| {markdown_name(job)} | {pods} | {_md_cell(requests)} | {_md_cell(limits)} |")
    if report.not_compared:
        lines += ["", "Not compared (not explained on one side):"]
        lines += [
            f"- {markdown_name(t.display, False)} ({side}): {markdown_text(t.reason, 4000)}"
            for side, t in report.not_compared
        ]
    return "\n".join(lines) + "\n"


def render_table(report: ChangeReport) -> str:
    """Plain text: the status line, every refusal, the summary, then each TrainJob that differs: what
    changed per container, per replicated job."""
    lines = [report.review.status, ""]
    for refusal in report.review.refusals:
        lines.append(f"refused: {bounded(refusal.display)}:")
        lines += [f"  {bounded(result.display(), 8000)}" for result in refusal.results]
    for change, text in _recreated(report):
        lines.append(f"recreate: {bounded(change.view.display)}: {bounded(text, 4000)}")
    if report.review.refusals or _recreated(report):
        lines.append("")
    lines += [_headline(report), ""]
    for change in report.changes:
        pods, requests, limits = _total_cells(change)
        lines.append(f"TrainJob {bounded(change.view.display)}: {change.change}")
        if change.change == UNCHANGED:
            continue
        lines.append(f"  runtime: {bounded(_runtime(change))}")
        for one in container_changes(change.before, change.after):
            lines.append(f"  in {bounded(one.job)}: {bounded(one.text(), 4000)}")
        for job, job_pods, job_requests, job_limits in _job_rows(change):
            lines.append(
                f"  {bounded(job)}: pods {job_pods}; per pod requests {bounded(job_requests, 4000)}; "
                f"limits {bounded(job_limits, 4000)}"
            )
        lines.append(f"  total: pods {pods}; requests {bounded(requests, 4000)}; limits {bounded(limits, 4000)}")
    if report.namespaces:
        lines += ["", "Per namespace:"]
        for ns in report.namespaces:
            count, requests, limits = _namespace_cells(ns)
            name = bounded(ns.namespace) if ns.namespace else "(none)"
            lines.append(
                f"  {name}: TrainJobs {count}; requests {bounded(requests, 4000)}; limits {bounded(limits, 4000)}"
            )
    if report.not_compared:
        lines += ["", "Not compared (not explained on one side):"]
        lines += [f"- {bounded(t.display)} ({side}): {bounded(t.reason, 4000)}" for side, t in report.not_compared]
    return "\n".join(lines) + "\n"
