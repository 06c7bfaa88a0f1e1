"""Annotations that make a render repeatable, and undoing a previous render before the next.

A rendered TrainJob records its runtimeRef as written and the ``resources`` the function took
out of its patches; a derived runtime records the runtime it was derived from. The next render
puts the recorded resources back (under any the user added since, which win), resolves the base
runtime again, and derives afresh: a fixed point when nothing changed, an update when the base
runtime or an override did.
"""

from __future__ import annotations

import bisect
import json
from typing import Any, Final

from yaml.nodes import MappingNode, Node, SequenceNode

from ..kube.merge import compose_patches
from ..trainer.api import CLUSTER_RUNTIME_KIND, JOB_CHAIN, POD_CHAIN, TRAINER_GROUP
from ..values.keys import DEPENDS_ON, OLD_PREFIX, PREFIX
from ..values.records import Record
from ..yamltext import yamlnodes as yn

# The project's own domain, the functionConfig's API group (config.CONFIG_API_VERSION): every
# annotation and label this function writes starts with it.
# What earlier versions wrote (Kubeflow's domain, not ours): still read, so that their output
# re-renders; never written.
DERIVED_FROM = PREFIX + "derived-from"
OVERRIDES = PREFIX + "overrides"
NAME_SCHEME = PREFIX + "name-scheme"
DERIVED_LABEL = PREFIX + "derived"
RUNTIME_REF = PREFIX + "runtime-ref"
RESOURCES = PREFIX + "resources"


def old(key: str) -> str:
    """The annotation ``key`` as earlier versions spelt it."""
    return OLD_PREFIX + key.removeprefix(PREFIX)


class PatchRecord(Record):
    """``resources`` that one manager's patch set on one container; ``entry``, the patch's place in
    ``runtimePatches`` as written when the render dropped the patch (nothing but its manager was left
    of it), so that ``restore`` puts it back there."""

    __slots__ = ("container", "container_list", "entry", "job", "manager", "resources")

    def __init__(
        self,
        manager: str,
        job: str,
        container_list: str,
        container: str,
        resources: dict[str, Any],
        entry: int | None = None,
    ) -> None:
        self.manager: Final = manager
        self.job: Final = job
        self.container_list: Final = container_list
        self.container: Final = container
        self.resources: Final = resources
        self.entry: Final = entry

    def dropped_at(self, entry: int) -> PatchRecord:
        return PatchRecord(self.manager, self.job, self.container_list, self.container, self.resources, entry)

    def to_python(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "manager": self.manager,
            "replicatedJob": self.job,
            "list": self.container_list,
            "container": self.container,
            "resources": self.resources,
        }
        if self.entry is not None:
            out["entry"] = self.entry
        return out


def says_something(record: PatchRecord) -> bool:
    """Whether a record is kept: ``resources`` that say nothing (``{}``, only empty maps) go for good."""
    return any(v != {} for v in record.resources.values())


def restored_places(records: list[PatchRecord], dropped: list[int]) -> list[PatchRecord]:
    """The records that say something, each dropped patch's place counted among the patches ``restore``
    puts back: those left in runtimePatches, and the dropped ones with such a record (a dropped patch
    without one is gone for good, and takes no place)."""
    kept = [r for r in records if says_something(r)]
    back = {r.entry for r in kept if r.entry is not None}
    gone = sorted(set(dropped) - back)
    return [r if r.entry is None else r.dropped_at(r.entry - bisect.bisect_left(gone, r.entry)) for r in kept]


# ``json.dumps(value, sort_keys=..., separators=(",", ":"), ensure_ascii=False)``, each encoder made once.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
_IN_ORDER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dump(value: Any) -> str:
    """Canonical JSON: keys sorted, for hashing and comparing."""
    return _CANONICAL(value)


def record_text(value: Any) -> str:
    """JSON that keeps key order: a re-render must put resources back exactly as they were written."""
    return _IN_ORDER(value)


class ProvenanceError(ValueError):
    """An annotation of this function that no longer parses; the path names it."""


def parse_records(text: str) -> list[PatchRecord]:
    try:
        raw = json.loads(text)
        return [
            PatchRecord(r["manager"], r["replicatedJob"], r["list"], r["container"], dict(r["resources"]), _entry_of(r))
            for r in raw
        ]
    except (ValueError, KeyError, TypeError) as err:
        raise ProvenanceError(f"annotation {RESOURCES} is not what this function wrote: {err}") from None


def _entry_of(record: dict[str, Any]) -> int | None:
    entry = record.get("entry")
    if entry is None:
        return None
    if type(entry) is not int or entry < 0:
        raise ValueError(f"entry {entry!r} is not a place in runtimePatches")
    return entry


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


_TRAINJOB_KEYS = (RUNTIME_REF, RESOURCES, old(RUNTIME_REF), old(RESOURCES))


def has_provenance(trainjob: Node) -> bool:
    annotations = yn.get_path(trainjob, "metadata", "annotations")
    return any(yn.get(annotations, key) is not None for key in _TRAINJOB_KEYS)


def dependency(kind: str, namespace: str, name: str) -> str:
    """A runtime as ``config.kubernetes.io/depends-on`` names it: ``group/namespaces/ns/Kind/name``,
    or ``group/Kind/name`` for a cluster-scoped one (kpt's "Dependency ordering" docs)."""
    if kind == CLUSTER_RUNTIME_KIND:
        return f"{TRAINER_GROUP}/{kind}/{name}"
    return f"{TRAINER_GROUP}/namespaces/{namespace}/{kind}/{name}"


def with_dependency(current: str | None, dependency: str) -> str:
    entries = [e for e in (current or "").split(",") if e.strip()]
    return ",".join(entries if dependency in (e.strip() for e in entries) else [*entries, dependency])


def without_dependency(current: str, dependency: str) -> str:
    return ",".join(e for e in current.split(",") if e.strip() and e.strip() != dependency)


def recheck_as_written(trainjob: Node, rewritten: Node | None, failed: bool) -> bool:
    """Whether a TrainJob checked with its records undone (``restore``) must be checked again as
    written: it goes out as written (not rewritten, not refused), so the runtime its written
    runtimeRef names is what the cluster gets. Records are the input's too, anyone can write them:
    they may ask for a check, never stand in for one (the trust model, krm/trust.py); a record
    naming an absent runtime made a TrainJob on a 512Gi runtime pass a 32Gi cap unchecked."""
    return rewritten is None and not failed and has_provenance(trainjob)


def _first(annotations: Node | None, key: str) -> str | None:
    found = yn.scalar(yn.get(annotations, key))
    return found if found is not None else yn.scalar(yn.get(annotations, old(key)))


def restore(trainjob: MappingNode) -> bool:
    """Undo a previous render on ``trainjob`` in place (what it recorded under either prefix, and the
    ``depends-on`` entry it added for its derived runtime). True when there was one to undo."""
    annotations = yn.get_path(trainjob, "metadata", "annotations")
    ref_text = _first(annotations, RUNTIME_REF)
    records_text = _first(annotations, RESOURCES)
    if ref_text is None and records_text is None:
        return False
    spec = yn.ensure_map(trainjob, "spec")
    if ref_text is not None:
        _forget_dependency(trainjob, annotations, yn.get(spec, "runtimeRef"))
        yn.set_key(spec, "runtimeRef", parse_runtime_ref(ref_text))
    for record in parse_records(records_text) if records_text is not None else []:
        patches = yn.get(spec, "runtimePatches")
        patch = next(
            (
                p
                for p in (patches.value if isinstance(patches, SequenceNode) else [])
                if isinstance(p, MappingNode) and yn.scalar(yn.get(p, "manager")) == record.manager
            ),
            None,
        )
        if patch is None and record.entry is not None:
            # The render dropped the patch (materialize.strip_resources): back in its place.
            patch = MappingNode(yn.MAP_TAG, [(yn.str_node("manager"), yn.str_node(record.manager))], flow_style=False)
            listed = _ensure_seq(spec, "runtimePatches")
            listed.value.insert(min(record.entry, len(listed.value)), patch)
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
    for key in _TRAINJOB_KEYS:
        yn.delete_key(annotations, key)
    return True


def _forget_dependency(trainjob: MappingNode, annotations: Node | None, derived_ref: Node | None) -> None:
    """Remove the ``depends-on`` entry naming the derived runtime the TrainJob points at."""
    current = yn.scalar(yn.get(annotations, DEPENDS_ON))
    name = yn.scalar(yn.get(derived_ref, "name"))
    if current is None or name is None or not isinstance(annotations, MappingNode):
        return
    kind = yn.scalar(yn.get(derived_ref, "kind")) or CLUSTER_RUNTIME_KIND
    namespace = yn.scalar(yn.get_path(trainjob, "metadata", "namespace")) or ""
    left = without_dependency(current, dependency(kind, namespace, name))
    if left:
        yn.set_key(annotations, DEPENDS_ON, yn.str_node(left))
    else:
        yn.delete_key(annotations, DEPENDS_ON)
