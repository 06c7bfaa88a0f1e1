"""Annotations that make a render repeatable, and undoing a previous render before the next.

A rendered TrainJob records its runtimeRef as written and the ``resources`` the function took
out of its patches; a derived runtime records the runtime it was derived from. The next render
puts the recorded resources back (under any the user added since, which win), resolves the base
runtime again, and derives afresh: a fixed point when nothing changed, an update when the base
runtime or an override did.
"""

from __future__ import annotations

import json
from typing import Any, Final

from yaml.nodes import MappingNode, Node, SequenceNode

from . import yamlnodes as yn
from .merge import compose_patches
from .records import Record as _Record

PREFIX = "trainjob-resources.kubeflow.org/"
DERIVED_FROM = PREFIX + "derived-from"
OVERRIDES = PREFIX + "overrides"
RUNTIME_REF = PREFIX + "runtime-ref"
RESOURCES = PREFIX + "resources"

JOB_CHAIN = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")
POD_CHAIN = ("template", "spec", "template", "spec")


class Record(_Record):
    """``resources`` that one manager's patch set on one container."""

    __slots__ = ("container", "container_list", "job", "manager", "resources")

    def __init__(self, manager: str, job: str, container_list: str, container: str, resources: dict[str, Any]) -> None:
        self.manager: Final = manager
        self.job: Final = job
        self.container_list: Final = container_list
        self.container: Final = container
        self.resources: Final = resources

    def to_python(self) -> dict[str, Any]:
        return {
            "manager": self.manager,
            "replicatedJob": self.job,
            "list": self.container_list,
            "container": self.container,
            "resources": self.resources,
        }


def dump(value: Any) -> str:
    """Canonical JSON: keys sorted, for hashing and comparing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_text(value: Any) -> str:
    """JSON that keeps key order: a re-render must put resources back exactly as they were written."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class ProvenanceError(ValueError):
    """An annotation of this function that no longer parses; the path names it."""


def parse_records(text: str) -> list[Record]:
    try:
        raw = json.loads(text)
        return [Record(r["manager"], r["replicatedJob"], r["list"], r["container"], dict(r["resources"])) for r in raw]
    except (ValueError, KeyError, TypeError) as err:
        raise ProvenanceError(f"annotation {RESOURCES} is not what this function wrote: {err}") from None


def parse_runtime_ref(text: str) -> Node:
    try:
        value = json.loads(text)
    except ValueError as err:
        raise ProvenanceError(f"annotation {RUNTIME_REF} is not what this function wrote: {err}") from None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ProvenanceError(f"annotation {RUNTIME_REF} must hold a runtimeRef with a name")
    return yn.from_python(value)


def _entry(seq: SequenceNode, key: str, value: str) -> MappingNode:
    for node in seq.value:
        if isinstance(node, MappingNode) and yn.scalar(yn.get(node, key)) == value:
            return node
    fresh = MappingNode(yn.MAP_TAG, [(yn.str_node(key), yn.str_node(value))], flow_style=False)
    seq.value.append(fresh)
    return fresh


def _ensure_seq(node: MappingNode, key: str) -> SequenceNode:
    child = yn.get(node, key)
    if isinstance(child, SequenceNode):
        return child
    fresh = SequenceNode(yn.SEQ_TAG, [], flow_style=False)
    yn.set_key(node, key, fresh)
    return fresh


def has_provenance(trainjob: Node) -> bool:
    annotations = yn.get_path(trainjob, "metadata", "annotations")
    return yn.get(annotations, RUNTIME_REF) is not None or yn.get(annotations, RESOURCES) is not None


def restore(trainjob: MappingNode) -> bool:
    """Undo a previous render on ``trainjob`` in place. True when there was one to undo."""
    annotations = yn.get_path(trainjob, "metadata", "annotations")
    ref_text = yn.scalar(yn.get(annotations, RUNTIME_REF))
    records_text = yn.scalar(yn.get(annotations, RESOURCES))
    if ref_text is None and records_text is None:
        return False
    spec = yn.ensure_map(trainjob, "spec")
    if ref_text is not None:
        yn.set_key(spec, "runtimeRef", parse_runtime_ref(ref_text))
    patches = yn.get(spec, "runtimePatches")
    for record in parse_records(records_text) if records_text is not None else []:
        patch = next(
            (
                p
                for p in (patches.value if isinstance(patches, SequenceNode) else [])
                if isinstance(p, MappingNode) and yn.scalar(yn.get(p, "manager")) == record.manager
            ),
            None,
        )
        if patch is None:
            continue  # the user removed that manager's patch since: its overrides go with it
        level = patch
        for key in JOB_CHAIN[:-1]:
            level = yn.ensure_map(level, key)
        job = _entry(_ensure_seq(level, JOB_CHAIN[-1]), "name", record.job)
        for key in POD_CHAIN:
            job = yn.ensure_map(job, key)
        container = _entry(_ensure_seq(job, record.container_list), "name", record.container)
        current = yn.get(container, "resources")
        merged = compose_patches(record.resources, yn.to_python(current) if current is not None else None)
        yn.set_key(container, "resources", yn.from_python(merged))
    assert isinstance(annotations, MappingNode)
    yn.delete_key(annotations, RUNTIME_REF)
    yn.delete_key(annotations, RESOURCES)
    return True
