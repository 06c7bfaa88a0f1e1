"""The build's marks, put on and taken off: kustomize drops local-config objects from its output,
but under kustomize this function sees them (kustomize removes them after its transformers), so in
the private copy (``private_copy``) the annotation's key is renamed to the build's local mark
(``Marks``) and restored on the built objects (``restore``) before render applies the function. The
same holds for the annotation a kustomization adds (commonAnnotations, patches, in the kustomization
or in a component): there the key is renamed in the copies of the kustomizations and of their patch
files, as an annotation's key and as a JSON pointer's path to it, never in data (``relabeled``).
Each runtime's name in its file is kept in the build's name mark and turned into the previousNames
annotation (``marked``, ``restore``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..krm import trust
from ..trainer.api import RUNTIME_KINDS, TRAINER_GROUP
from ..values.keys import LOCAL_CONFIG
from .kustomize import PREVIOUS_KINDS, PREVIOUS_NAMES, Marks
from .sources import shown

if TYPE_CHECKING:
    from yaml.nodes import MappingNode, Node

    from ..krm.resource_list import Item


_POINTER = "/metadata/annotations/" + LOCAL_CONFIG.replace("~", "~0").replace("/", "~1")


def relabeled(text: str, mark: str) -> str:
    """A kustomization's patch as render builds it: the local-config annotation's key renamed to
    ``mark`` (the build's, Marks.local), so that the objects it marks are not dropped. Only where
    the key is an annotation's: a strategic-merge patch's ``metadata.annotations`` (a List's items'
    too), and a JSON 6902 operation's ``path``/``from`` to it or its ``value`` holding it; never a
    value, a ConfigMap's data or a pod template's annotations. Documents that do not change are
    kept byte for byte; one that is not YAML too (kustomize reports it)."""
    from ..yamltext import yamlnodes as yn
    from ..yamltext.documents import split_documents

    if "local-config" not in text and "\\" not in text:  # a double-quoted key may spell it with escapes
        return text
    chunks: list[str] = []
    changed = False
    for _, chunk in split_documents(text):
        try:
            node = yn.compose(chunk)
        except yn.YamlInputError:
            node = None
        if node is not None and _relabel_patch(node, mark):
            chunks.append("---\n" + yn.serialize(node))
            changed = True
        else:
            chunks.append(chunk)
    return "".join(chunks) if changed else text


def _relabel_patch(node: Node, mark: str) -> bool:
    """``relabeled`` on one patch document: a strategic-merge patch (a mapping, or a List of them)
    or a JSON 6902 patch (a sequence of operations, api/filters/patchjson6902/patchjson6902.go);
    whether it changed."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    if isinstance(node, Mapping):
        changed = _rename_key(yn.get_path(node, "metadata", "annotations"), mark)
        if yn.scalar(yn.get(node, "kind")) == "List":
            items = yn.get(node, "items")
            for item in items.value if isinstance(items, SequenceNode) else []:
                changed = _rename_key(yn.get_path(item, "metadata", "annotations"), mark) or changed
        return changed
    if not isinstance(node, SequenceNode):
        return False
    pointer = "/metadata/annotations/" + mark.replace("~", "~0").replace("/", "~1")
    changed = False
    for op in node.value:
        if not isinstance(op, Mapping):
            continue
        for key in ("path", "from"):
            target = yn.get(op, key)
            if isinstance(target, ScalarNode) and target.value == _POINTER:
                target.value = pointer
                changed = True
        path = yn.scalar(yn.get(op, "path"))
        value = yn.get(op, "value")
        if path == "/metadata/annotations":
            changed = _rename_key(value, mark) or changed
        elif path == "/metadata":
            changed = _rename_key(yn.get(value, "annotations"), mark) or changed
        elif path in ("", "/"):
            changed = _rename_key(yn.get_path(value, "metadata", "annotations"), mark) or changed
    return changed


def _rename_key(annotations: Node | None, mark: str) -> bool:
    """The local-config key of an annotations mapping renamed to ``mark``; whether there was one."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode

    changed = False
    if isinstance(annotations, Mapping):
        for key, _ in annotations.value:
            if isinstance(key, ScalarNode) and key.value == LOCAL_CONFIG:
                key.value, key.style = mark, None
                changed = True
    return changed


def relabel_kustomization(node: MappingNode, mark: str) -> None:
    """``relabeled`` on a kustomization: its commonAnnotations' key and its inline patches."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    _rename_key(yn.get(node, "commonAnnotations"), mark)
    for field_name in ("patches", "patchesJson6902", "patchesStrategicMerge"):
        value = yn.get(node, field_name)
        for entry in value.value if isinstance(value, SequenceNode) else []:
            patch = yn.get(entry, "patch") if isinstance(entry, Mapping) else entry
            if isinstance(patch, ScalarNode) and isinstance(patch.value, str):
                patch.value = relabeled(patch.value, mark)


def marked(data: bytes, marks: Marks) -> bytes:
    """A resource file as kustomize builds it for render: each object's local-config annotation
    key renamed to the build's local mark, each runtime's name kept in its name mark. Only documents
    that change are written anew; a file that is not YAML is left as it is (kustomize reports it)."""
    from ..yamltext import yamlnodes as yn
    from ..yamltext.documents import split_documents

    if b"local-config" not in data and b"TrainingRuntime" not in data:
        return data
    try:
        text = yn.decode(data)
    except yn.YamlInputError:
        return data
    chunks: list[str] = []
    changed = False
    for _, chunk in split_documents(text):
        try:
            node = yn.compose(chunk) if "local-config" in chunk or "TrainingRuntime" in chunk else None
        except yn.YamlInputError:
            node = None
        if node is not None and any([_mark(obj, marks) for obj in _objects_of(node)]):
            chunks.append("---\n" + yn.serialize(node))
            changed = True
        else:
            chunks.append(chunk)
    return "".join(chunks).encode() if changed else data


def _objects_of(node: Node) -> list[Node]:
    from yaml.nodes import SequenceNode

    from ..yamltext import yamlnodes as yn

    if yn.scalar(yn.get(node, "kind")) == "List":
        items = yn.get(node, "items")
        return list(items.value) if isinstance(items, SequenceNode) else []
    return [node]


def _mark(obj: Node, marks: Marks) -> bool:
    """Marks one object (see ``marked``); whether it changed."""
    from yaml.nodes import MappingNode

    from ..yamltext import yamlnodes as yn

    if not isinstance(obj, MappingNode):
        return False
    metadata = yn.get(obj, "metadata")
    if not isinstance(metadata, MappingNode):
        return False
    annotations = yn.get(metadata, "annotations")
    changed = _rename_key(annotations, marks.local)
    api_version = yn.scalar(yn.get(obj, "apiVersion")) or ""
    name = yn.scalar(yn.get(metadata, "name"))
    kind = yn.scalar(yn.get(obj, "kind"))
    if kind in RUNTIME_KINDS and api_version.split("/")[0] == TRAINER_GROUP and name:
        if annotations is None or yn.is_null(annotations):
            yn.delete_key(metadata, "annotations")
            annotations = yn.ensure_map(metadata, "annotations")
        if isinstance(annotations, MappingNode) and yn.get(annotations, marks.name) is None:
            yn.set_key(annotations, marks.name, yn.str_node(name))
            changed = True
    return changed


def restore(items: Iterable[Item], marks: Marks, label: str) -> list[str]:
    """Undoes ``marked`` on the built objects: the local-config annotation back, and a renamed
    runtime's earlier name as kustomize's previousNames annotation (``Item.renamed_by_build``).
    The errors (render's refusals, as ``inputs.errors`` holds them) for marks the build did not get
    from render: any other ``internal.trainjob-resources.io/*`` annotation, and a previousNames that
    a plain build keeps (its older spelling: kustomize strips only its own)."""
    errors: list[str] = []
    for item in items:
        keys = [key for key in item.annotations() if key not in (marks.local, marks.name)]
        found = trust.forged_mark(keys) or trust.untrusted_previous_names(keys)
        if found is not None:
            message, path = found
            errors.append(f"error: {shown(label)}: {item.kind} {shown(item.name)}: {path}: {message}")
            continue
        value = item.annotation(marks.local)
        if value is not None:
            item.remove_annotation(marks.local)
            item.set_annotation(LOCAL_CONFIG, value)
        name = item.annotation(marks.name)
        if name is not None:
            item.remove_annotation(marks.name)
            if name != item.name:
                item.set_annotation(PREVIOUS_NAMES, name)
                item.set_annotation(PREVIOUS_KINDS, item.kind)
                item.renamed_by_build = True
    return errors
