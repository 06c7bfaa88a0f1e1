"""Derived runtimes the real API accepts, and the TrainJob rewritten to use one.

The derived runtime is the base runtime with the effective resources folded into the patched
containers. Its name is the base name plus a hash of the base's identity, the derived kind and
namespace and the overrides (never the base's content: ``NAME_SCHEME_VERSION``), so identical
overrides share one runtime, different ones never collide, and an edit of the base changes the
derived runtime's content, never its name. The TrainJob points at it and loses ``resources`` from
its patches (and any patch level that leaves empty); everything else stays as written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, Final

from yaml.nodes import MappingNode, Node, SequenceNode

from ..krm.resource_list import FileRef, Item
from ..kube.quantity import QuantityError, parse_quantity
from ..trainer.api import CLUSTER_RUNTIME_KIND, JOB_CHAIN, POD_CHAIN, TRAINER_GROUP
from ..trainer.effective import ContainerKey, Effective
from ..values import records
from ..values.keys import (
    CONTAINER_LISTS,
    DEPENDS_ON,
    INDEX_ANNOTATIONS,
    ORCHESTRATOR_PREFIXES,
    PATH_ANNOTATIONS,
    SYNC_WAVE,
    is_ownership_key,
)
from ..yamltext import written_form
from ..yamltext import yamlnodes as yn
from .provenance import (
    DERIVED_FROM,
    DERIVED_LABEL,
    NAME_SCHEME,
    OVERRIDES,
    RESOURCES,
    RUNTIME_REF,
    PatchRecord,
    dependency,
    dump,
    record_text,
    says_something,
    with_dependency,
)

MAX_NAME = 63
HASH_LENGTH = 10
_MAX_DECIMAL_BITS = 3000  # about 900 digits, far below Python's limit on int-to-decimal conversion
_INTEGER = re.compile(r"[+-]?[0-9]+")  # what Go's strconv.Atoi, which Argo CD reads waves with, accepts
# Bumped only with a change of what the name hashes; tests/test_names.py pins the names it gives.
NAME_SCHEME_VERSION = "1"
# A derived runtime is a different object from its base, and one of this function's: it claims
# none of its base's source or identity (``ORCHESTRATOR_PREFIXES``) and none of its ownership
# (``is_ownership_key``: upstream's chart deletes every ClusterTrainingRuntime labelled
# ``trainer.kubeflow.org/managed-by: runtimes-installer`` that is not in its manifest,
# charts/kubeflow-trainer/templates/runtimes/cleanup-job.yaml; ``app.kubernetes.io/instance`` is
# Argo CD's default tracking label, so the platform's app would claim, then prune, it).


def _kept_annotation(key: str) -> bool:
    return not is_ownership_key(key) and not key.startswith(ORCHESTRATOR_PREFIXES)


def _kept_label(key: str, value: str | None) -> bool:
    if key == "app.kubernetes.io/managed-by" and value == "Helm":
        return False
    return not is_ownership_key(key)


class Derived(records.Record):
    __slots__ = ("kind", "name", "namespace", "node", "resized", "written_base")

    def __init__(
        self,
        kind: str,
        namespace: str,
        name: str,
        node: MappingNode,
        resized: tuple[MappingNode, ...] = (),
        written_base: WrittenBase | None = None,
    ) -> None:
        self.kind: Final = kind
        self.namespace: Final = namespace
        self.name: Final = name
        self.node: Final = node
        self.resized: Final = resized  # the containers whose resources ``derive_runtime`` wrote
        self.written_base: Final = written_base  # the base it was copied from

    def item(self) -> Item:
        """The derived runtime as an item, serialized in the form kustomize writes, so that its text
        is the same whatever text its base was read from. The rest of the tree is the base's in that
        form already; only what was written into it since (its metadata, the resized containers)
        has its keys sorted again, and only that is serialized where the base's text is known."""
        written_form.sort_keys(self.node, deep=False)
        metadata = yn.get(self.node, "metadata")
        for edited in (metadata, *self.resized) if metadata is not None else self.resized:
            written_form.sort_keys(edited)
        item = Item(self.node)
        if self.written_base is not None:
            item.written = self.written_base.text_of(self.node)
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
    """The effective resources per ``job/list/container``: what a derived runtime holds."""
    return {"/".join(key): clean_requirements(effective[key].requirements) for key in sorted(effective)}


def canonical_quantity(raw: Any) -> Any:
    """A quantity as its exact value, whatever its spelling or format: ``64Gi``, ``65536Mi`` and
    ``68719476736`` are all ``68719476736``, ``500m`` and ``0.5`` are both ``5e-1``. (The API server
    stores ``64Gi`` and ``68719476736`` as written, but compares them equal: so do names.)"""
    try:
        quantity = parse_quantity(raw)
    except QuantityError:
        return raw  # not a quantity (validation reported it); hashed as written
    coefficient, exponent = quantity.coefficient, quantity.exponent
    if coefficient == 0:
        return "0"
    if coefficient.bit_length() > _MAX_DECIMAL_BITS:  # absurd, but valid: written in hex, as it is
        return f"{coefficient:#x}e{exponent}"
    while coefficient % 10 == 0:
        coefficient //= 10
        exponent += 1
    return f"{coefficient}e{exponent}" if exponent else str(coefficient)


def canonical_patch(patch: Mapping[str, Any]) -> dict[str, Any]:
    """One container's composed ``resources`` patch in canonical form: quantities by value, empty
    maps left out (they change nothing), ``null`` deletions and ``$patch`` directives kept."""
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if key in ("limits", "requests") and isinstance(value, Mapping):
            values = {k: v if k == "$patch" or v is None else canonical_quantity(v) for k, v in value.items()}
            if values:
                out[key] = values
        elif value != {}:
            out[key] = value
    return out


def base_ref(base: Item, name: str | None = None) -> str:
    """``Kind/[namespace/]name`` of the base; ``name``: its name in the cluster, when not the item's."""
    namespace = "" if base.kind == CLUSTER_RUNTIME_KIND else base.namespace
    return "/".join(p for p in (base.kind, namespace, name or base.name) if p)


def derived_name(
    base: Item, kind: str, namespace: str, overrides: Mapping[str, Any], base_name: str | None = None
) -> str:
    """The base name (cut to fit) + ``-`` + 10 hex characters of a SHA-256 over the name scheme's
    version, the base's identity, the derived kind and namespace, and the canonical overrides
    (``canonical_patch`` per ``job/list/container``): canonical JSON, keys sorted. Nothing of the
    base's content, so that an edit of the base never renames (``TrainJob.spec.runtimeRef`` is
    immutable upstream). ``base_name``: the base's name in the cluster, where the bundle's copy was
    renamed by kustomize."""
    base_namespace = "" if base.kind == CLUSTER_RUNTIME_KIND else base.namespace
    name = base_name or base.name
    payload = {
        "scheme": NAME_SCHEME_VERSION,
        "base": {"kind": base.kind, "namespace": base_namespace, "name": name},
        "kind": kind,
        "namespace": "" if kind == CLUSTER_RUNTIME_KIND else namespace,
        "overrides": overrides,
    }
    digest = hashlib.sha256(dump(payload).encode()).hexdigest()[:HASH_LENGTH]
    return f"{name[: MAX_NAME - HASH_LENGTH - 1].rstrip('-.')}-{digest}"


def derive_runtime(
    base: Item,
    identity: tuple[str, str, str],
    effective: Mapping[ContainerKey, Effective],
    overrides: Mapping[str, Any],
    base_name: str | None = None,
    written_base: WrittenBase | None = None,
) -> Derived:
    """The derived runtime ``identity`` (kind, namespace or "" for a cluster-scoped one, name):
    ``base`` with ``effective`` folded in, the overrides and the base recorded. ``written_base``
    is the base in written form where the caller keeps one (shared, never changed)."""
    kind, scope, name = identity
    # Written as kustomize's build writes objects (sorted keys, one quoting): a base read from a
    # plain file, from a kustomization's build or from a ResourceList gives the same text.
    if written_base is None:
        written_base = WrittenBase(base)
    # Copy-on-write: only the collections on the way to an edit are copied, the rest is shared with
    # the base's tree, which nothing changes.
    node = _shallow(written_base.node)
    assert isinstance(node, MappingNode)
    owned = {id(node)}
    resized: list[MappingNode] = []

    def child(parent: Node, key: str | int) -> Node:
        assert isinstance(parent, MappingNode | SequenceNode)
        found: Node
        if isinstance(key, int):
            found = parent.value[key]
            if id(found) not in owned:
                found = parent.value[key] = _shallow(found)
        else:
            assert isinstance(parent, MappingNode)
            at = next(i for i, (k, _) in enumerate(parent.value) if yn.scalar(k) == key)
            found = parent.value[at][1]
            if id(found) not in owned:
                found = _shallow(found)
                parent.value[at] = (parent.value[at][0], found)
        owned.add(id(found))
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
        resized.append(target)
    _rebuild_metadata(node, base, name, scope)
    annotations = yn.ensure_map(yn.ensure_map(node, "metadata"), "annotations")
    yn.set_key(annotations, DERIVED_FROM, yn.str_node(base_ref(base, base_name)))
    yn.set_key(annotations, OVERRIDES, yn.str_node(dump(overrides)))
    yn.set_key(annotations, NAME_SCHEME, yn.str_node(NAME_SCHEME_VERSION))
    return Derived(kind, scope, name, node, tuple(resized), written_base)


def _shallow(node: Node) -> Node:
    """A copy with its own list of the same children (a scalar as it is: scalars are never edited in place)."""
    if isinstance(node, MappingNode):
        return MappingNode(node.tag, list(node.value), flow_style=node.flow_style)
    if isinstance(node, SequenceNode):
        return SequenceNode(node.tag, list(node.value), flow_style=node.flow_style)
    return node


class WrittenBase:
    """A base runtime's tree in the form kustomize writes (``written``), kept for the runtimes
    derived from it, and its text with what a derived runtime changes left open: ``kind``,
    ``metadata`` and each container's ``resources`` (``written_form.Template``)."""

    __slots__ = ("_containers", "_template", "node", "size")

    def __init__(self, base: Item, limit: int = yn.MAX_INPUT_BYTES) -> None:
        """``limit``: the base's text as written (aliases expanded, as the writer writes them) may
        hold at most this many bytes, else ``yamlnodes.OutputLimitError``, raised as the count
        passes it (the text is counted, not kept)."""
        self.node: Final = written(base)
        self.size: Final = yn.written_size(self.node, limit)  # its text's bytes, metadata and all
        self._containers: Final = _container_paths(self.node)
        slots = self._slots(self.node)
        self._template: Final = written_form.Template(self.node, slots) if slots is not None else None

    def _slots(self, root: MappingNode) -> list[written_form.Slot] | None:
        containers = [_at(root, path) for path in self._containers]
        slots: list[written_form.Slot] = [(root, "kind"), (root, "metadata")]
        for container in containers:
            if not isinstance(container, MappingNode):
                return None
            slots.append((container, "resources"))
        return slots

    def text_of(self, derived: MappingNode) -> str | None:
        """The serialization of a runtime ``derive_runtime`` made from this base (None: serialize it)."""
        if self._template is None:
            return None
        slots = self._slots(derived)
        return self._template.fill(slots) if slots is not None else None


_Path = tuple[str | int, ...]


def _container_paths(root: MappingNode) -> tuple[_Path, ...]:
    """Where each container of each replicated job's pod is, as mapping keys and sequence indexes."""
    paths: list[_Path] = []
    jobs = yn.get_path(root, "spec", *JOB_CHAIN[1:])
    for j, job in enumerate(jobs.value if isinstance(jobs, SequenceNode) else []):
        pod = yn.get_path(job, *POD_CHAIN)
        for container_list in CONTAINER_LISTS:
            entries = yn.get(pod, container_list) if isinstance(pod, MappingNode) else None
            if isinstance(entries, SequenceNode):
                chain = ("spec", *JOB_CHAIN[1:], j, *POD_CHAIN, container_list)
                paths += [(*chain, i) for i in range(len(entries.value))]
    return tuple(paths)


def _at(root: Node, path: _Path) -> Node | None:
    node: Node | None = root
    for step in path:
        if isinstance(step, int):
            node = node.value[step] if isinstance(node, SequenceNode) and step < len(node.value) else None
        else:
            node = yn.get(node, step) if isinstance(node, MappingNode) else None
    return node


def written(base: Item) -> MappingNode:
    """``base``'s tree in the form kustomize's build writes (``written_form.copy``)."""
    base_node = base.node
    assert isinstance(base_node, MappingNode)
    node = written_form.copy(base_node)
    assert isinstance(node, MappingNode)
    return node


def _rebuild_metadata(node: MappingNode, base: Item, name: str, namespace: str) -> None:
    old = yn.get(node, "metadata")
    metadata = MappingNode(yn.MAP_TAG, [], flow_style=False)
    yn.set_key(metadata, "name", yn.str_node(name))
    if namespace:
        yn.set_key(metadata, "namespace", yn.str_node(namespace))
    labels = [(k, v) for k, v in yn.items_of(yn.get(old, "labels")) if _kept_label(k, yn.scalar(v))]
    labels.append((DERIVED_LABEL, yn.str_node("true")))
    yn.set_key(metadata, "labels", MappingNode(yn.MAP_TAG, [(yn.str_node(k), v) for k, v in labels], flow_style=False))
    kept = [(k, v) for k, v in yn.items_of(yn.get(old, "annotations")) if _kept_annotation(k)]
    annotations = MappingNode(yn.MAP_TAG, [(yn.str_node(k), v) for k, v in kept], flow_style=False)
    yn.set_key(metadata, "annotations", annotations)
    yn.set_key(node, "metadata", metadata)


def add_metadata(derived: Derived, metadata: Mapping[str, Mapping[str, str]]) -> None:
    """The functionConfig's ``derivedRuntimeMetadata``, on a derived runtime whose base's labels and
    annotations were filtered (``_rebuild_metadata``): the platform's way to mark every derived
    runtime, e.g. ``argocd.argoproj.io/sync-options: Prune=false`` where the function runs after
    the kustomization (Argo CD's plugin, kpt), so that no overlay could patch them."""
    for section in ("labels", "annotations"):
        entries = metadata.get(section) or {}
        if entries:
            target = yn.ensure_map(yn.ensure_map(derived.node, "metadata"), section)
            for key, value in entries.items():
                yn.set_key(target, key, yn.str_node(value))


def place_next_to(derived: Derived, source: FileRef | None) -> None:
    """A new derived runtime's file: beside the TrainJob that first uses it (``source``: kpt writes
    it there), named after its kind, namespace and name: TrainJobs of two namespaces in one folder
    can derive runtimes of one name, and kpt refuses two objects at one path."""
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


def strip_resources(
    trainjob: MappingNode, keep_names: frozenset[tuple[str, str]] = frozenset()
) -> tuple[list[PatchRecord], list[int]]:
    """Remove ``resources`` from every ContainerPatch, prune what that leaves empty (but an entry's name
    in the lists ``keep_names`` holds, (job, list): ``topology.names_kept_for_order``); return what was
    removed, and the places of the patches dropped.

    A runtimePatches entry left with nothing but its ``manager`` goes too (and ``runtimePatches`` when
    that leaves it empty), its records noting its place (``provenance.restored_places`` counts it
    among the patches a restore puts back) for ``provenance.restore``: a CRD's list has no
    strategic merge, so a client-side apply of a TrainJob whose render holds ``runtimePatches`` replaces
    the live list, and with it the entry Kueue appends (``kueue.x-k8s.io/manager``); with no entry of
    its own left, the render does not name the list and the apply leaves Kueue's entry alone
    (tests/cluster/test_kueue_apply.py measures both)."""
    removed: list[PatchRecord] = []
    dropped: list[int] = []
    spec = yn.get(trainjob, "spec")
    patches = yn.get(spec, "runtimePatches")
    if not isinstance(patches, SequenceNode):
        return removed, dropped
    kept: list[Node] = []
    for place, patch in enumerate(patches.value):
        manager = yn.scalar(yn.get(patch, "manager")) or ""
        first = len(removed)
        written_keys = [k for k, _ in yn.items_of(patch)]
        _strip_chain(patch, JOB_CHAIN, lambda job, manager=manager: _strip_job(job, manager, removed, keep_names))
        if written_keys != ["manager"] and [k for k, _ in yn.items_of(patch)] == ["manager"]:
            removed[first:] = [r.dropped_at(place) for r in removed[first:]]
            dropped.append(place)
            continue
        kept.append(patch)
    if len(kept) != len(patches.value):
        patches.value = kept
        if not kept and isinstance(spec, MappingNode):
            yn.delete_key(spec, "runtimePatches")
    return removed, dropped


def _strip_job(job: Node, manager: str, removed: list[PatchRecord], keep_names: frozenset[tuple[str, str]]) -> bool:
    """Strip one replicatedJobs entry; True when it is left with nothing but its name."""
    name = yn.scalar(yn.get(job, "name")) or ""

    def strip_pod(pod: Node) -> bool:
        assert isinstance(pod, MappingNode)
        for list_name in CONTAINER_LISTS:
            entries = yn.get(pod, list_name)
            if not isinstance(entries, SequenceNode):
                continue
            kept = []
            for container in entries.value:
                resources = yn.get(container, "resources")
                if isinstance(container, MappingNode) and resources is not None:
                    cname = yn.scalar(yn.get(container, "name")) or ""
                    value = yn.to_python(resources)
                    removed.append(
                        PatchRecord(manager, name, list_name, cname, value if isinstance(value, dict) else {})
                    )
                    yn.delete_key(container, "resources")
                    if [k for k, _ in yn.items_of(container)] == ["name"] and (name, list_name) not in keep_names:
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


def point_at(
    trainjob: Item, kind: str, namespace: str, name: str, original_ref: Any, removed: list[PatchRecord]
) -> None:
    """Rewrite the TrainJob's runtimeRef to the derived runtime ``kind`` ``namespace``/``name``
    (``namespace`` empty for a cluster-scoped one), make it depend on it for kpt live apply (not
    when the TrainJob names no namespace: its runtime's namespace is then not known), and record
    what a re-render needs."""
    assert isinstance(trainjob.node, MappingNode)
    spec = yn.ensure_map(trainjob.node, "spec")
    ref = [("apiGroup", TRAINER_GROUP), ("kind", kind), ("name", name)]
    pairs = [(yn.str_node(key), yn.str_node(value)) for key, value in ref]
    yn.set_key(spec, "runtimeRef", MappingNode(yn.MAP_TAG, pairs, flow_style=False))
    if kind == CLUSTER_RUNTIME_KIND or namespace:
        needed = dependency(kind, namespace, name)
        trainjob.set_annotation(DEPENDS_ON, with_dependency(trainjob.annotation(DEPENDS_ON), needed))
    trainjob.set_annotation(RUNTIME_REF, record_text(original_ref))
    record_removed(trainjob, removed)


def record_removed(trainjob: Item, removed: list[PatchRecord]) -> None:
    """Record the ``resources`` taken out of the patches (those that say nothing, ``{}`` or only
    empty maps, are dropped for good), so that a re-render puts them back."""
    kept = [r for r in removed if says_something(r)]
    if kept:
        trainjob.set_annotation(RESOURCES, record_text([r.to_python() for r in kept]))


def sync_wave(trainjob_waves: list[str | None]) -> str:
    """The Argo CD wave of a derived runtime: one below the lowest of the TrainJobs using it (an
    unset or non-integer wave is 0, as Argo CD reads it), so that it is applied first."""
    waves = [int(w) if w is not None and _INTEGER.fullmatch(w) else 0 for w in trainjob_waves]
    return str(min(waves, default=0) - 1)


def set_sync_wave(derived: Derived, wave: str) -> None:
    annotations = yn.ensure_map(yn.ensure_map(derived.node, "metadata"), "annotations")
    yn.set_key(annotations, SYNC_WAVE, yn.str_node(wave))
