"""``check``'s findings and their three formats: a plain table, markdown, JSON ``{"findings": [...]}``.

Pure: values in, text out. Every value the cluster or the repository wrote is escaped by
``values.text``: control, bidi and zero-width characters spelled out in the table
(``printable``), and markup, links and ``|`` made literal besides in markdown (``markdown_literal``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from ..values.records import Record
from ..values.text import json_text, markdown_literal, printable

# The order findings are reported in: what refuses the sync first, then what it would break, then notes.
CODES: Final = (
    "runtime-ref-immutable",
    "runtime-patches-immutable",
    "runtime-missing",
    "runtime-in-use",
    "running-suspended",
    "quota-exceeded",
    "queue-exceeded",
    "forbidden",
    "mode",
    "runtime-drift",
    "snapshot-kept",
    "trainer-version",
    "kueue-release",
)
SEVERITIES: Final = ("error", "warning", "info")


class Finding(Record):
    """One thing the sync would do to the live cluster. ``object``: ``Kind/namespace/name``
    (``Kind/name`` for a cluster-scoped object)."""

    __slots__ = ("code", "message", "object", "severity")

    def __init__(self, code: str, severity: str, object: str, message: str) -> None:
        assert code in CODES and severity in SEVERITIES, (code, severity)
        self.code: Final = code
        self.severity: Final = severity
        self.object: Final = object
        self.message: Final = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "object": self.object, "message": self.message}


def object_name(kind: str, namespace: str, name: str) -> str:
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def ordered(findings: Sequence[Finding]) -> list[Finding]:
    """By code (the order of ``CODES``), then object; each finding once."""
    unique = {(f.code, f.object, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (CODES.index(f.code), f.object, f.message))


def has_errors(findings: Sequence[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def render_json(findings: Sequence[Finding]) -> str:
    return json_text(json.dumps({"findings": [f.as_dict() for f in findings]}, indent=2, ensure_ascii=False) + "\n")


def render_table(findings: Sequence[Finding]) -> str:
    if not findings:
        return "no findings: the sync would be accepted as it is\n"
    rows = [["SEVERITY", "CODE", "OBJECT", "MESSAGE"]]
    rows += [[f.severity, f.code, printable(f.object), printable(f.message)] for f in findings]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "".join(
        "  ".join([*(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)), row[3]]) + "\n" for row in rows
    )


def render_markdown(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No findings: the sync would be accepted as it is.\n"
    lines = ["| severity | code | object | message |", "| --- | --- | --- | --- |"]
    for f in findings:
        lines.append(f"| {f.severity} | `{f.code}` | {markdown_literal(f.object)} | {markdown_literal(f.message)} |")
    return "\n".join(lines) + "\n"
