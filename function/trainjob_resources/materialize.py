"""Derived runtimes the real API accepts, and the TrainJob rewritten to use one.

The derived runtime is the base runtime with the effective resources folded into the patched
containers; its name is the base name plus a hash of what it holds, so identical overrides share
one runtime and different ones never collide. The TrainJob points at it and loses ``resources``
from its patches (and any patch level that leaves empty); everything else stays as written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from yaml.nodes import MappingNode, Node, SequenceNode

from . import records, textedit
from . import yamlnodes as yn
from .effective import ContainerKey, Effective
from .krm import INDEX_ANNOTATIONS, PATH_ANNOTATIONS, Item
from .models import CLUSTER_RUNTIME_KIND, TRAINER_GROUP
from .provenance import (
    DERIVED_FROM,
    JOB_CHAIN,
    OVERRIDES,
    POD_CHAIN,
    RESOURCES,
    RUNTIME_REF,
    Record,
    dump,
    record_text,
)

MAX_NAME = 63
HASH_LENGTH = 10
# Annotations that describe the base object's source or identity to an orchestrator (file, index,
# kustomize's resource id, build metadata): a derived runtime is a different object and must not
# claim them.
_ORCHESTRATOR_PREFIXES = (
    "internal.config.kubernetes.io/",
    "config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
    "alpha.config.kubernetes.io/",
)
_DROPPED_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration"}


def _kept_annotation(key: str) -> bool:
    return key not in _DROPPED_ANNOTATIONS and not key.startswith(_ORCHESTRATOR_PREFIXES)


class Derived(records.Record):
    __slots__ = ("kind", "name", "namespace", "node", "text")

    def __init__(
        self, kind: str, namespace: str, name: str, node: MappingNode, text: tuple[str, int] | None = None
    ) -> None:
        self.kind: Final = kind
        self.namespace: Final = namespace
        self.name: Final = name
        self.node: Final = node
        self.text: Final = text  # the base runtime's item text (and dash column) that node was copied from

    def item(self) -> Item:
        """The derived runtime as an item: written as the base runtime's text with its edits when
        the base was read from text (its layout and comments kept, but not the comment above it,
        which describes the base), else serialized."""
        if self.text is None:
            return Item(self.node)
        item = Item(self.node, source=self.text[0], dash=self.text[1])
        item.another = True
        item.touched()
        return item

    @property
    def identity(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


def clean_requirements(requirements: Mapping[str, Any]) -> dict[str, Any]:
    """Resources as they go into the runtime: limits, requests, claims, in that order; none empty."""
    out: dict[str, Any] = {}
    for key in ("limits", "requests", "claims"):
        value = requirements.get(key)
        if value:
            out[key] = value
    for key, value in requirements.items():
        if key not in out and value:
            out[key] = value
    return out


def overrides_of(effective: Mapping[ContainerKey, Effective]) -> dict[str, Any]:
    """The effective resources per ``job/list/container``: what a derived runtime changes."""
    return {"/".join(key): clean_requirements(effective[key].requirements) for key in sorted(effective)}


def base_ref(base: Item) -> str:
    return "/".join(p for p in (base.kind, base.namespace, base.name) if p)


def derived_name(base: Item, kind: str, overrides: Mapping[str, Any]) -> str:
    """Base name + a hash of everything the derived runtime holds (base content included)."""
    content = dump({"base": base_ref(base), "kind": kind, "spec": base.value().get("spec"), "overrides": overrides})
    digest = hashlib.sha256(content.encode()).hexdigest()[:HASH_LENGTH]
    return f"{base.name[: MAX_NAME - HASH_LENGTH - 1].rstrip('-.')}-{digest}"


def derive_runtime(
    base: Item, kind: str, namespace: str, effective: Mapping[ContainerKey, Effective], name: str
) -> Derived:
    text = (base.source, base.dash) if base.source is not None else None
    base_node = base.node
    assert isinstance(base_node, MappingNode)
    # Read from text: copy only what changes, the rest is written as the base's text. Otherwise a
    # full copy, which is serialized.
    draft = textedit.Draft(base_node) if text is not None else None
    node = draft.root if draft is not None else yn.deep_copy(base_node)
    assert isinstance(node, MappingNode)

    def child(parent: Node, key: str | int) -> Node:
        if draft is not None:
            assert isinstance(parent, MappingNode | SequenceNode)
            return draft.child(parent, key)
        found = parent.value[key] if isinstance(key, int) else yn.get(parent, key)
        assert found is not None
        return found

    yn.set_key(node, "kind", yn.str_node(kind))
    for key in sorted(effective):
        info = effective[key].container
        requirements = clean_requirements(effective[key].requirements)
        pod: Node = node
        for step in ("spec", *JOB_CHAIN[1:], info.job_index, *POD_CHAIN, info.container_list):
            pod = child(pod, step)
        target = child(pod, info.index)
        assert isinstance(target, MappingNode)
        if requirements:
            yn.set_key(target, "resources", yn.from_python(requirements))
        else:
            yn.delete_key(target, "resources")
    scope = namespace if kind != CLUSTER_RUNTIME_KIND else ""
    _rebuild_metadata(node, base, name, scope)
    annotations = yn.ensure_map(yn.ensure_map(node, "metadata"), "annotations")
    yn.set_key(annotations, DERIVED_FROM, yn.str_node(base_ref(base)))
    yn.set_key(annotations, OVERRIDES, yn.str_node(dump(overrides_of(effective))))
    return Derived(kind, scope, name, node, text)


def _rebuild_metadata(node: MappingNode, base: Item, name: str, namespace: str) -> None:
    old = yn.get(node, "metadata")
    metadata = MappingNode(yn.MAP_TAG, [], flow_style=False)
    yn.set_key(metadata, "name", yn.str_node(name))
    if namespace:
        yn.set_key(metadata, "namespace", yn.str_node(namespace))
    labels = yn.get(old, "labels")
    if isinstance(labels, MappingNode) and labels.value:
        yn.set_key(metadata, "labels", labels)
    kept = [(k, v) for k, v in yn.items_of(yn.get(old, "annotations")) if _kept_annotation(k)]
    annotations = MappingNode(yn.MAP_TAG, [(yn.str_node(k), v) for k, v in kept], flow_style=False)
    yn.set_key(metadata, "annotations", annotations)
    yn.set_key(node, "metadata", metadata)


def place_next_to(derived: Derived, trainjob: Item) -> None:
    """A new derived runtime's file: beside the TrainJob that first uses it (kpt writes it there),
    named after its kind, namespace and name: TrainJobs of two namespaces in one folder can derive
    runtimes of one name, and kpt refuses two objects at one path."""
    source = trainjob.file
    if source is None:
        return
    folder = source.path.rsplit("/", 1)[0] + "/" if "/" in source.path else ""
    parts = [derived.kind.lower(), derived.namespace, derived.name]
    file = "_".join(p for p in parts if p) + ".yaml"  # names and namespaces hold no '_'
    annotations = yn.ensure_map(yn.ensure_map(derived.node, "metadata"), "annotations")
    yn.set_key(annotations, PATH_ANNOTATIONS[0], yn.str_node(folder + file))


def with_internal_annotations(derived: MappingNode, previous: Item) -> None:
    """Keep the orchestrator's annotations (file path, index) of the object this one replaces."""
    annotations = yn.ensure_map(yn.ensure_map(derived, "metadata"), "annotations")
    for key, value in previous.annotations().items():
        if key in PATH_ANNOTATIONS or key in INDEX_ANNOTATIONS or key.startswith("internal.config.kubernetes.io/"):
            yn.set_key(annotations, key, yn.str_node(value))


def strip_resources(trainjob: MappingNode) -> list[Record]:
    """Remove ``resources`` from every ContainerPatch, prune what that leaves empty; return what was removed."""
    removed: list[Record] = []
    patches = yn.get_path(trainjob, "spec", "runtimePatches")
    for patch in patches.value if isinstance(patches, SequenceNode) else []:
        manager = yn.scalar(yn.get(patch, "manager")) or ""
        _strip_chain(patch, JOB_CHAIN, lambda job, manager=manager: _strip_job(job, manager, removed))
    return removed


def _strip_job(job: Node, manager: str, removed: list[Record]) -> bool:
    """Strip one replicatedJobs entry; True when it is left with nothing but its name."""
    name = yn.scalar(yn.get(job, "name")) or ""

    def strip_pod(pod: Node) -> bool:
        assert isinstance(pod, MappingNode)
        for list_name in ("initContainers", "containers"):
            entries = yn.get(pod, list_name)
            if not isinstance(entries, SequenceNode):
                continue
            kept = []
            for container in entries.value:
                resources = yn.get(container, "resources")
                if isinstance(container, MappingNode) and resources is not None:
                    cname = yn.scalar(yn.get(container, "name")) or ""
                    value = yn.to_python(resources)
                    removed.append(Record(manager, name, list_name, cname, value if isinstance(value, dict) else {}))
                    yn.delete_key(container, "resources")
                    if [k for k, _ in yn.items_of(container)] == ["name"]:
                        continue
                kept.append(container)
            entries.value = kept
            if not kept:
                yn.delete_key(pod, list_name)
        return not pod.value

    if isinstance(job, MappingNode):
        _strip_chain(job, POD_CHAIN, strip_pod)
        return [k for k, _ in yn.items_of(job)] == ["name"]
    return False


def _strip_chain(node: Node, chain: tuple[str, ...], leaf: Any) -> bool:
    """Descend ``chain``; apply ``leaf`` at the end; delete levels left empty. True if ``node`` is empty."""
    if not isinstance(node, MappingNode):
        return False
    key, rest = chain[0], chain[1:]
    child = yn.get(node, key)
    if child is None:
        return False
    if rest:
        if _strip_chain(child, rest, leaf):
            yn.delete_key(node, key)
    elif isinstance(child, SequenceNode):
        before = len(child.value)
        child.value = [entry for entry in child.value if not leaf(entry)]
        if before and not child.value:
            yn.delete_key(node, key)
    elif isinstance(child, MappingNode) and leaf(child):
        yn.delete_key(node, key)
    return not node.value


def point_at(trainjob: Item, derived: Derived, original_ref: Any, removed: list[Record]) -> None:
    """Rewrite the TrainJob's runtimeRef to ``derived`` and record what a re-render needs."""
    assert isinstance(trainjob.node, MappingNode)
    spec = yn.ensure_map(trainjob.node, "spec")
    ref = [("apiGroup", TRAINER_GROUP), ("kind", derived.kind), ("name", derived.name)]
    pairs = [(yn.str_node(key), yn.str_node(value)) for key, value in ref]
    yn.set_key(spec, "runtimeRef", MappingNode(yn.MAP_TAG, pairs, flow_style=False))
    trainjob.set_annotation(RUNTIME_REF, record_text(original_ref))
    trainjob.set_annotation(RESOURCES, record_text([r.to_python() for r in removed]))
