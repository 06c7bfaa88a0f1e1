"""``trainjob-resources explain``'s reports of what TrainJobs ask for (``explain``): JSON, a plain-text
table and markdown, each value with where it came from. Pure: nothing here reads or writes files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..kube.quantity import Quantity
from ..values.text import bounded, code_span, json_text, markdown_name, markdown_text
from .explain import DEFAULTED_FROM_LIMITS, SECTIONS, UNBOUNDED, ContainerView, LeftOut, TrainJobPods, listing


def to_json(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"trainJobs": [trainjob_json(v) for v in views]}
    if left_out:
        out["notExplained"] = [{"name": t.name, "namespace": t.namespace, "reason": t.reason} for t in left_out]
    return out


def render_json(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> str:
    """``to_json`` as indented JSON, written a TrainJob at a time (``json_entry``): the text of
    ``json.dumps(to_json(...), indent=2)`` without the whole document as Python objects first."""
    lines = ['{\n  "trainJobs": [']
    lines.append(",".join(json_entry(v) for v in views) + ("\n  ]" if views else "]"))
    if left_out:
        rest = {"notExplained": [{"name": t.name, "namespace": t.namespace, "reason": t.reason} for t in left_out]}
        lines.append(",\n  " + json.dumps(rest, indent=2, ensure_ascii=False)[4:-2])
    return json_text("".join(lines) + "\n}\n")


def json_entry(view: TrainJobPods) -> str:
    """One TrainJob's explanation as ``render_json`` writes it in its ``trainJobs`` list (on a line
    of its own, indented, without the comma before it)."""
    return "\n    " + json.dumps(trainjob_json(view), indent=2, ensure_ascii=False).replace("\n", "\n    ")


def left_out_text(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut], none: str, markdown: bool = False) -> str:
    """What to say about the TrainJobs not shown, and when nothing is shown at all; each name and
    reason escaped (a refused TrainJob's name is the user's, whatever it holds)."""
    if not left_out:
        return "" if views else none
    count = len(left_out)
    lead = (
        f"No TrainJob could be explained ({count} in the input):"
        if not views
        else f"{count} more TrainJob{'s' if count != 1 else ''} not explained:"
    )
    if markdown:
        lines = (f"- {markdown_name(t.display, False)}: {markdown_text(t.reason, 4000)}\n" for t in left_out)
        return lead + "\n" + "".join(lines)
    return lead + "\n" + "".join(f"- {bounded(t.display)}: {bounded(t.reason, 4000)}\n" for t in left_out)


def trainjob_json(view: TrainJobPods) -> dict[str, Any]:
    return {
        "name": view.name,
        "namespace": view.namespace,
        "runtime": {"kind": view.runtime_kind, "name": view.runtime_name},
        "replicatedJobs": [
            {
                "name": job.name,
                "pods": job.pods,
                "podRequests": _canonical(job.pod_requests),
                "podLimits": _bounded(job.pod_limits, job.unbounded),
                "unboundedLimits": sorted(job.unbounded),
                "containers": [
                    {
                        "name": c.name,
                        "role": c.role,
                        "requests": _canonical(c.quantities("requests")),
                        "limits": _canonical(c.quantities("limits")),
                        "sources": {
                            section: {n: c.section(section)[n].source for n in sorted(c.section(section))}
                            for section in SECTIONS
                        },
                        **({"claims": c.claims} if c.claims else {}),
                        **({"claimsDroppedByResourcesPerNode": c.dropped_claims} if c.dropped_claims else {}),
                    }
                    for c in job.containers
                ],
            }
            for job in view.jobs
        ],
        "totalRequests": _canonical(view.total_requests),
        "totalLimits": _bounded(view.total_limits, view.unbounded),
        "unboundedLimits": sorted(view.unbounded),
    }


def _bounded(limits: Mapping[str, Quantity], unbounded: frozenset[str]) -> dict[str, str]:
    return _canonical({name: q for name, q in limits.items() if name not in unbounded})


def _canonical(values: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: values[name].canonical() for name in sorted(values)}


def _source_text(container: ContainerView, name: str) -> str:
    request, limit = container.requests.get(name), container.limits.get(name)
    if request is not None and limit is not None:
        if request.source == DEFAULTED_FROM_LIMITS:
            return f"{limit.source} (request defaulted from the limit)"
        if request.source == limit.source:
            return request.source
        return f"request: {request.source}; limit: {limit.source}"
    if request is not None:
        return f"request: {request.source}"
    return f"limit: {limit.source}" if limit is not None else ""


POD_RESOURCES_LABEL = "(pod resources)"
POD_RESOURCES_SOURCE = "runtime (pod-level resources)"
OVERHEAD_LABEL = "(overhead)"
OVERHEAD_SOURCE = "runtime (overhead: added to the requests, and to the limits that are set)"


def render_table(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> str:
    """A plain-text table per TrainJob: one row per container and resource, each pod, and the total."""
    blocks: list[str] = []
    for view in views:
        rows = [["REPLICATED JOB", "PODS", "CONTAINER", "ROLE", "RESOURCE", "REQUEST", "LIMIT", "SOURCE"]]
        for job in view.jobs:
            block: list[list[str]] = []
            for c in job.containers:
                block += _rows(c.name, c.role, c.quantities("requests"), c.quantities("limits"), c)
            if job.pod.requests or job.pod.limits:
                block += _rows(POD_RESOURCES_LABEL, "", job.pod.requests, job.pod.limits, POD_RESOURCES_SOURCE)
            if job.pod.overhead:
                block += _rows(OVERHEAD_LABEL, "", job.pod.overhead, {}, OVERHEAD_SOURCE)
            block += _rows("= per pod", "", job.pod_requests, job.pod_limits, "", job.unbounded)
            block[0][:2] = [bounded(job.name), str(job.pods)]
            rows += block
        total = _rows("= pods x pod", "", view.total_requests, view.total_limits, "", view.unbounded)
        total[0][:2] = ["TOTAL", str(view.pods)]
        title = f"TrainJob {bounded(view.display)} (runtime {bounded(view.runtime_kind)} {bounded(view.runtime_name)})"
        blocks.append(title + "\n\n" + _align(rows + total))
    tail = left_out_text(views, left_out, "no TrainJobs\n")
    return "\n".join([*blocks, tail] if tail and blocks else blocks) if blocks else tail


def _rows(
    label: str,
    role: str,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
    source: ContainerView | str,
    unbounded: frozenset[str] = frozenset(),
) -> list[list[str]]:
    rows = []
    for i, name in enumerate(sorted({*requests, *limits, *unbounded}) or ["-"]):
        limit = UNBOUNDED if name in unbounded else limits[name].canonical() if name in limits else "-"
        rows.append(
            [
                "",
                "",
                bounded(label) if i == 0 else "",
                role if i == 0 else "",
                bounded(name),
                requests[name].canonical() if name in requests else "-",
                limit,
                bounded(_source_text(source, name))
                if isinstance(source, ContainerView)
                else source
                if name != "-"
                else "",
            ]
        )
    return rows


def _align(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() + "\n" for row in rows
    )


def render_markdown(views: Sequence[TrainJobPods], left_out: Sequence[LeftOut] = ()) -> str:
    """Markdown for a pull-request comment: one table per TrainJob, one row per container."""
    blocks: list[str] = []
    for view in views:
        lines = [
            f"### TrainJob {code_span(view.display)}",
            "",
            f"Runtime: {markdown_text(view.runtime_kind)} {code_span(view.runtime_name)}",
            "",
            "| replicated job | pods | container | role | requests | limits | set by |",
            "| --- | ---: | --- | --- | --- | --- | --- |",
        ]
        for job in view.jobs:
            first_row = len(lines)
            for i, container in enumerate(job.containers):
                lines.append(
                    _md_row(
                        markdown_name(job.name) if i == 0 else "",
                        str(job.pods) if i == 0 else "",
                        markdown_name(container.name),
                        container.role,
                        markdown_text(listing(container.quantities("requests")), 4000),
                        markdown_text(listing(container.quantities("limits")), 4000),
                        _md_sources(container),
                    )
                )
            extra = []
            if job.pod.requests or job.pod.limits:
                extra.append((POD_RESOURCES_LABEL, job.pod.requests, job.pod.limits, POD_RESOURCES_SOURCE))
            if job.pod.overhead:
                extra.append((OVERHEAD_LABEL, job.pod.overhead, {}, OVERHEAD_SOURCE))
            for label, requests, limits, source in extra:
                lead = (markdown_name(job.name), str(job.pods)) if len(lines) == first_row else ("", "")
                cells = (markdown_text(label), "", _md_listing(requests), _md_listing(limits), markdown_text(source))
                lines.append(_md_row(*lead, *cells))
            lead = (markdown_name(job.name), str(job.pods)) if len(lines) == first_row else ("", "")
            lines.append(
                _md_row(
                    *lead,
                    "**per pod**",
                    "",
                    f"**{_md_listing(job.pod_requests)}**",
                    f"**{_md_listing(job.pod_limits, job.unbounded)}**",
                    "",
                )
            )
        lines.append(
            _md_row(
                "**total**",
                f"**{view.pods}**",
                "",
                "",
                f"**{_md_listing(view.total_requests)}**",
                f"**{_md_listing(view.total_limits, view.unbounded)}**",
                "",
            )
        )
        blocks.append("\n".join(lines) + "\n")
    tail = left_out_text(views, left_out, "No TrainJobs.\n", markdown=True)
    return "\n".join([*blocks, tail] if tail and blocks else blocks) if blocks else tail


def _md_row(*cells: str) -> str:
    """One table row of cells already escaped (``markdown_text``, ``markdown_name``) or of this module's own markup."""
    return "| " + " | ".join(cells) + " |"


def _md_listing(values: Mapping[str, Quantity], unbounded: frozenset[str] = frozenset()) -> str:
    return markdown_text(listing(values, unbounded=unbounded), 4000)


def _md_sources(container: ContainerView) -> str:
    """Which fields each source set: a whole section by name when one source set all of it."""
    by_source: dict[str, list[str]] = {}
    for section in SECTIONS:
        values = container.section(section)
        sources = {v.source for v in values.values()}
        if len(sources) == 1:
            by_source.setdefault(sources.pop(), []).append(section)
            continue
        for name in sorted(values):
            by_source.setdefault(values[name].source, []).append(f"{section}.{name}")
    ordered = sorted(by_source.items(), key=lambda pair: pair[0] == DEFAULTED_FROM_LIMITS)
    return "; ".join(f"{_md_source(source)}: {markdown_text(', '.join(fields), 4000)}" for source, fields in ordered)


def _md_source(source: str) -> str:
    for prefix in ("patch ", "LimitRange "):
        if source.startswith(prefix):
            return f"{prefix}{code_span(source.removeprefix(prefix), table=True)}"
    return markdown_text(source)
