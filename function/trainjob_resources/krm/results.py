"""The KRM Functions Specification's results: ``Result`` with ``resourceRef`` (``ResourceRef``),
``field`` (``Field``) and ``file`` (``FileRef``), each message and value bounded and escaped, and
the ``results:`` of the output as the emitter writes them (at most MAX_RESULTS, the most severe
first)."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from yaml.nodes import MappingNode, Node, SequenceNode

from ..values.records import Record
from ..values.text import bounded
from ..values.violations import Severity
from ..yamltext import yamlnodes as yn

MAX_RESULTS = 10_000


class ResourceRef(Record):
    __slots__ = ("api_version", "kind", "name", "namespace")

    def __init__(self, api_version: str, kind: str, name: str, namespace: str = "") -> None:
        self.api_version: Final = api_version
        self.kind: Final = kind
        self.name: Final = name
        self.namespace: Final = namespace

    def __reduce__(self) -> tuple[type[ResourceRef], tuple[str, str, str, str]]:
        # Pickled as its arguments (cli/fan_out.py sends thousands): no state dict per object.
        return ResourceRef, (self.api_version, self.kind, self.name, self.namespace)

    def display(self) -> str:
        where = f"{bounded(self.namespace)}/" if self.namespace else ""
        return f"{bounded(self.kind)} {where}{bounded(self.name)}".strip()


class FileRef(Record):
    """Where a result's object (or field) is: the file, the document's index in it (0-based, as the
    KRM Functions Specification has it) and, where known, the line (1-based)."""

    __slots__ = ("index", "line", "path")

    def __init__(self, path: str, index: int | None = None, line: int | None = None) -> None:
        self.path: Final = path
        self.index: Final = index
        self.line: Final = line

    def __reduce__(self) -> tuple[type[FileRef], tuple[str, int | None, int | None]]:
        return FileRef, (self.path, self.index, self.line)

    def display(self) -> str:
        """``path:line`` as editors and CI annotations read it, else the document's position."""
        path = bounded(self.path, MAX_PATH_SHOWN)
        if self.line is not None:
            return f"{path}:{self.line}"
        if self.index in (None, 0):
            return path
        return f"{path} (document {self.index + 1})"


class Field(Record):
    """The field a result is about: its path, and what it is and should be (kyaml ``fn/framework``
    ``Field``)."""

    __slots__ = ("current_value", "path", "proposed_value")

    def __init__(self, path: str, current_value: object = None, proposed_value: object = None) -> None:
        self.path: Final = path
        self.current_value: Final = current_value
        self.proposed_value: Final = proposed_value

    def __reduce__(self) -> tuple[type[Field], tuple[Any, ...]]:
        return Field, (self.path, self.current_value, self.proposed_value)


class Result(Record):
    """One result of the KRM Functions Specification. ``rule``: the rule that made it, written as
    the result's ``tags: {rule: ...}`` (kyaml ``fn/framework/result.go``: ``Tags map[string]string``)."""

    __slots__ = ("field", "file", "message", "resource_ref", "rule", "severity")

    def __init__(
        self,
        message: str,
        severity: Severity = "error",
        resource_ref: ResourceRef | None = None,
        field: Field | None = None,
        file: FileRef | None = None,
        rule: str = "",
    ) -> None:
        self.message: Final = message
        self.severity: Final = severity
        self.resource_ref: Final = resource_ref
        self.field: Final = field
        self.file: Final = file
        self.rule: Final = rule

    def __reduce__(self) -> tuple[type[Result], tuple[Any, ...]]:
        return Result, (self.message, self.severity, self.resource_ref, self.field, self.file, self.rule)

    @property
    def field_path(self) -> str | None:
        return self.field.path if self.field is not None else None

    @property
    def current_value(self) -> object:
        return self.field.current_value if self.field is not None else None

    @property
    def proposed_value(self) -> object:
        return self.field.proposed_value if self.field is not None else None

    def to_python(self) -> dict[str, Any]:
        """The result as the KRM spec writes it; every text escaped and bounded (``display``)."""
        out: dict[str, Any] = {"message": _message(self.message), "severity": self.severity}
        if self.resource_ref is not None:
            ref = {"apiVersion": bounded(self.resource_ref.api_version), "kind": bounded(self.resource_ref.kind)}
            ref["name"] = bounded(self.resource_ref.name)
            if self.resource_ref.namespace:
                ref["namespace"] = bounded(self.resource_ref.namespace)
            out["resourceRef"] = ref
        if self.field_path is not None:
            fld: dict[str, Any] = {"path": bounded(self.field_path, MAX_PATH_SHOWN)}
            if self.current_value is not None:
                fld["currentValue"] = _shown_value(self.current_value)
            if self.proposed_value is not None:
                fld["proposedValue"] = _shown_value(self.proposed_value)
            out["field"] = fld
        if self.file is not None:
            out["file"] = {"path": bounded(self.file.path, MAX_PATH_SHOWN)}
            if self.file.index is not None:
                out["file"]["index"] = self.file.index
            if self.file.line is not None:
                out["file"]["line"] = self.file.line  # beyond the spec's path and index; readers ignore it
        if self.rule:
            out["tags"] = {"rule": self.rule}
        return out

    def display(self) -> str:
        """One line for a terminal: file[:line], resource, field, message, and the proposed value
        when the message does not say it already."""
        parts: list[str] = [self.severity]
        if self.file is not None:
            parts.append(self.file.display())
        if self.resource_ref is not None and self.resource_ref.display():
            parts.append(self.resource_ref.display())
        if self.field_path:
            parts.append(bounded(self.field_path, MAX_PATH_SHOWN))
        line = ": ".join(parts) + ": " + _message(self.message)
        if self.proposed_value is not None:
            proposed = self.proposed_value
            text = proposed if isinstance(proposed, str) else json.dumps(proposed, separators=(",", ":"), default=str)
            if text not in self.message:
                line += f" (proposed: {bounded(text, MAX_MESSAGE)})"
        return line


MAX_MESSAGE = 4000  # characters of one result's message (a message quotes a bounded number of values)
MAX_PATH_SHOWN = 1000  # characters of a file path or field path in a result


def _message(text: str) -> str:
    return bounded(text, MAX_MESSAGE)


def _shown_value(value: object) -> object:
    """A current or proposed value as a result carries it: a long or unprintable string bounded and
    escaped; structured values as they are (their texts are the function's own)."""
    return bounded(value) if isinstance(value, str) else value


_LINE_BREAKS = re.compile("[\n\r\x85\u2028\u2029]")


def results_text(results: list[Result]) -> str:
    """``results:`` and the results, as the emitter writes them, without building a node per value.

    Results repeat a few texts (messages, file paths, kinds) thousands of times: each distinct one
    goes through the emitter once, as an item of one sequence, and is then written from its text.
    A result holding other values (a proposed mapping, a text of several lines) is serialized whole.
    """
    rows = [r.to_python() for r in results]
    simple = [_flat_strings(row) for row in rows]
    wanted = {text for strings in simple if strings is not None for text in strings}
    texts = _scalar_texts(wanted)
    out = ["results:\n"]
    for row, strings in zip(rows, simple, strict=True):
        if strings is None:
            out.append(yn.serialize(results_node([row])))
        else:
            _write_row(row, texts, 0, out)
    return "".join(out)


def _flat_strings(row: dict[str, Any]) -> list[str] | None:
    """Every key and text of a result made of mappings, texts and integers only; else None."""
    found: list[str] = []
    stack: list[Any] = [row]
    while stack:
        value = stack.pop()
        for key, child in value.items():
            found.append(key)
            if isinstance(child, dict) and child:
                stack.append(child)
            elif isinstance(child, str) and not _LINE_BREAKS.search(child):
                found.append(child)
            elif type(child) is not int:
                return None
    return found


def _scalar_texts(wanted: set[str]) -> dict[str, str]:
    """How the emitter writes each text as a block value (plain or quoted): one item per line of
    one sequence, since none holds a line break and lines are never folded."""
    texts = sorted(wanted)
    written = yn.serialize(SequenceNode(yn.SEQ_TAG, [yn.text_node(t) for t in texts], flow_style=False))
    lines = written.split("\n")[: len(texts)]
    assert all(line.startswith("- ") for line in lines), "one line per text"
    return dict(zip(texts, (line[2:] for line in lines), strict=True))


def _write_row(row: dict[str, Any], texts: dict[str, str], depth: int, out: list[str]) -> None:
    pad = " " * depth
    first = depth == 0
    for key, value in row.items():
        lead = "- " if first else ("  " if depth == 0 else pad)
        first = False
        if isinstance(value, dict):
            out.append(f"{lead}{texts[key]}:\n")
            _write_row(value, texts, (depth or 2) + 2, out)
        else:
            out.append(f"{lead}{texts[key]}: {texts[value] if isinstance(value, str) else value}\n")


def results_node(results: list[Result] | list[dict[str, Any]]) -> SequenceNode:
    """The results as nodes: strings directly (thousands of them), other values through the representer."""

    def node_of(value: Any) -> Node:
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            return MappingNode(yn.MAP_TAG, [(yn.text_node(k), node_of(v)) for k, v in value.items()], flow_style=False)
        if isinstance(value, str):
            return yn.text_node(value)
        return yn.from_python(value)

    rows = [r.to_python() if isinstance(r, Result) else r for r in results]
    return SequenceNode(yn.SEQ_TAG, [node_of(row) for row in rows], flow_style=False)


def shown_results(results: list[Result]) -> list[Result]:
    """All the results, or the MAX_RESULTS most severe (errors first, in order) and a count of the rest."""
    if len(results) <= MAX_RESULTS:
        return results
    rank = {"error": 0, "warning": 1, "info": 2}
    order = sorted(range(len(results)), key=lambda i: (rank.get(results[i].severity, 3), i))
    kept = set(order[:MAX_RESULTS])
    rest = [results[i] for i in order[MAX_RESULTS:]]
    severity = min((r.severity for r in rest), key=lambda s: rank.get(s, 3))
    shown = [r for i, r in enumerate(results) if i in kept]
    return [*shown, Result(f"{len(rest)} more results not shown", severity)]
