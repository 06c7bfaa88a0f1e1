"""One resource of a ResourceList (``Item``): accessors over its node tree, the edits that change
it, the file and line a field was read from, and its original text, kept so that an untouched item
goes out as those bytes and its tree can be dropped (``settle``)."""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..values import fieldpath
from ..values.keys import INDEX_ANNOTATIONS, ORIGIN, PATH_ANNOTATIONS
from ..values.violations import Severity
from ..yamltext import layout, textedit
from ..yamltext import yamlnodes as yn
from . import policy_inputs
from .results import Field, FileRef, ResourceRef, Result

# Item.state(): its text, problem, checked.
ItemState = tuple[str, str | None, bool]


class Item:
    """One resource of the list. Its node tree is what accessors read and edits change; an item
    read from a block ResourceList also keeps its original text (``source``), so that when it is
    not changed it goes out as those bytes and its tree can be dropped (``settle``)."""

    __slots__ = (
        "_meta",
        "_node",
        "_value",
        "checked",
        "dash",
        "dirty",
        "hint",
        "index",
        "kept",
        "line",
        "lines_from",
        "origin",
        "problem",
        "renamed_by_build",
        "source",
        "written",
    )

    def __init__(
        self,
        node: Node | None = None,
        source: str | None = None,
        line: int = 0,
        dash: int = 0,
        index: int = 0,
        hint: tuple[str, str] | None = None,
    ) -> None:
        self._node = node
        self.index = index  # its position in the input's items, for messages
        self.hint = hint  # (apiVersion, kind) read off the text of an item not composed yet
        self.checked = hint is None  # whether read()'s checks (duplicate keys, kind) have run
        self.source = source  # the item's text as an entry of the items sequence, when read from text
        self.line = line  # where that text starts in the whole input, for messages
        self.dash = dash  # the column of the item's ``-`` in the input
        self.dirty = source is None
        self._value: Any = None
        self._meta: tuple[str, str, str, str, dict[str, str]] | None = None
        self.problem: str | None = None  # why read() found it unusable; such an item must pass through untouched
        # The line (0-based) of its own file where the text its node was composed from starts, when
        # it was read from a file (``render``): its fields' lines in that file are then known.
        self.origin: int | None = None
        # The tree whose marks give its fields' lines in that file, when it is not ``node``: the document
        # a kustomize build read it from (render's overlays, ``repo.inputs._name_origins``).
        self.lines_from: Node | None = None
        # Its previousNames were set by a kustomize build that render ran (``repo.kustomize.restore``),
        # not read from input: the trust model (``trust``) believes those wherever the object came from.
        self.renamed_by_build = False
        # Its serialization (``yamlnodes.serialize`` of its node), where the one who made it wrote
        # it with the node (a derived runtime); dropped when it is touched.
        self.written: str | None = None
        # ``settle`` keeps its tree (``check`` reads every TrainJob as rendered, which would compose its text again).
        self.kept = False

    @property
    def node(self) -> Node:
        """Its tree, composed from its text when first asked for. A TrainJob read lazily whose text
        turns out not to parse on its own raises NotSplittable (read the whole input again)."""
        if self._node is None:
            assert self.source is not None
            self._node, self._value = compose_item(self.source, self.line, self.dash, lazy=not self.checked)
        return self._node

    @node.setter
    def node(self, node: Node) -> None:
        self._node = node
        self.touched()

    def settle(self) -> None:
        """Done with this item: drop its tree if its text can stand for it, else write the text now."""
        if self.source is None or self.kept:
            return
        if self.dirty:
            if self.hint is None:  # a TrainJob read lazily is not asked for its fields again when done
                self._fields()
            self.source = self.text()
            self.dirty = False
        self._node = None
        self._value = None

    def state(self) -> ItemState:
        """What processing left of an item read from text and settled, as plain data: ``restore``
        gives it to this item in another process (its fields are read again from its text when
        they are asked for)."""
        assert self.source is not None and not self.dirty, "settled, and held as its text"
        return (self.source, self.problem, self.checked)

    def restore(self, state: ItemState) -> None:
        self.source, self.problem, self.checked = state
        self._node = None
        self._value = None
        self._meta = None
        self.dirty = False

    def text(self) -> str:
        """The item as an entry of the items sequence: as read, with its edits written into that text
        where it was read from text (comments and layout kept), else serialized."""
        if self.source is not None and not self.dirty:
            return self.source
        node = self.node
        if self.source is not None and isinstance(node, MappingNode):
            edited = textedit.render(document_of(self.source, self.dash), node)
            if edited is not None:
                return edited[: self.dash] + "-" + edited[self.dash + 1 :]
        return layout.entry(self.serialized(), self.dash)

    def serialized(self) -> str:
        """Its node serialized (``yamlnodes.serialize``)."""
        return self.written if self.written is not None else yn.serialize(self.node)

    def _fields(self) -> tuple[str, str, str, str, dict[str, str]]:
        if self._meta is None:
            node = self.node
            metadata = yn.get(node, "metadata")
            annotations = {k: yn.scalar(v) or "" for k, v in yn.items_of(yn.get(metadata, "annotations"))}
            self._meta = (
                yn.scalar(yn.get(node, "apiVersion")) or "",
                yn.scalar(yn.get(node, "kind")) or "",
                yn.scalar(yn.get(metadata, "name")) or "",
                yn.scalar(yn.get(metadata, "namespace")) or "",
                annotations,
            )
        return self._meta

    @property
    def api_version(self) -> str:
        if self._meta is None and self.hint is not None:
            return self.hint[0]
        return self._fields()[0]

    @property
    def kind(self) -> str:
        if self._meta is None and self.hint is not None:
            return self.hint[1]
        return self._fields()[1]

    def verify(self) -> Result | None:
        """Run read()'s checks on an item read lazily; the error result if it is unusable."""
        if self.checked:
            return None
        node = self.node  # composed while unchecked: NotSplittable if its text does not parse
        self.checked = True
        return flag(self, self.index, node, self.line)

    @property
    def group(self) -> str:
        version = self.api_version
        return version.split("/", 1)[0] if "/" in version else ""

    @property
    def name(self) -> str:
        return self._fields()[2]

    @property
    def namespace(self) -> str:
        return self._fields()[3]

    def annotation(self, key: str) -> str | None:
        return self._fields()[4].get(key)

    def annotations(self) -> dict[str, str]:
        return dict(self._fields()[4])

    def set_annotation(self, key: str, value: str) -> None:
        assert isinstance(self.node, MappingNode)
        metadata = yn.ensure_map(self.node, "metadata")
        yn.set_key(yn.ensure_map(metadata, "annotations"), key, yn.str_node(value))
        meta = self._meta
        self.touched()
        if meta is not None:  # what was read of the metadata holds, but for this annotation
            meta[4][key] = value
            self._meta = meta

    def remove_annotation(self, key: str) -> None:
        annotations = yn.get_path(self.node, "metadata", "annotations")
        if isinstance(annotations, MappingNode):
            yn.delete_key(annotations, key)
            self.touched()

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(self.api_version, self.kind, self.name, self.namespace)

    @property
    def file(self) -> FileRef | None:
        return self.file_of(None)

    def file_of(self, field_path: str | None) -> FileRef | None:
        """The item's file, with the line of ``field_path`` (or of the object) where it is known."""
        path = next((p for p in map(self.annotation, PATH_ANNOTATIONS) if p), None)
        if path is None:
            origin = _origin_path(self.annotation(ORIGIN))
            return None if origin is None else FileRef(origin, None, None)
        raw_index = next((i for i in map(self.annotation, INDEX_ANNOTATIONS) if i), None)
        index = int(raw_index) if raw_index is not None and raw_index.isdigit() else None
        line = None
        if self.origin is not None:
            found = _line_of(self.lines_from if self.lines_from is not None else self.node, field_path or "")
            line = None if found is None else self.origin + found + 1
        return FileRef(path, index, line)

    def value(self) -> Any:
        """The item as plain Python data, built once and dropped on edit."""
        if self._value is None:
            self._value = yn.to_python(self.node)
        return self._value

    def touched(self) -> None:
        """Call after editing ``node`` directly."""
        self.written = None
        self._value = None
        self._meta = None
        self.dirty = True

    def result(
        self,
        message: str,
        severity: Severity = "error",
        field_path: str | None = None,
        current_value: object = None,
        proposed_value: object = None,
        rule: str = "",
    ) -> Result:
        field = Field(field_path, current_value, proposed_value) if field_path is not None else None
        return Result(message, severity, self.ref, field, self.file_of(field_path), rule)


def _origin_path(origin: str | None) -> str | None:
    """The file kustomize's origin annotation names (``buildMetadata: [originAnnotations]``): under
    kustomize's exec and container functions the only file an object has. For messages only; a URL
    (a remote base) is not a file."""
    if not origin:
        return None
    try:
        path = yn.scalar(yn.get(yn.compose(origin), "path"))
    except yn.YamlInputError:
        return None
    return path if path and "://" not in path else None


def _line_of(node: Node, field_path: str) -> int | None:
    """The line (0-based, as the node's marks count) of the deepest part of ``field_path`` that is in
    ``node``: the key's line for a map entry, the entry's for a list element; None for a node built
    here (no marks)."""
    mark = getattr(node, "start_mark", None)
    line = mark.line if mark is not None else None
    current: Node | None = node
    for segment in fieldpath.segments(field_path):
        if isinstance(current, MappingNode) and isinstance(segment, str):
            pair = next((p for p in current.value if isinstance(p[0], ScalarNode) and p[0].value == segment), None)
            if pair is None:
                break
            key_mark = getattr(pair[0], "start_mark", None)
            if key_mark is not None:
                line = key_mark.line
            current = pair[1]
        elif isinstance(current, SequenceNode) and isinstance(segment, int) and segment < len(current.value):
            current = current.value[segment]
            entry_mark = getattr(current, "start_mark", None)
            if entry_mark is not None:
                line = entry_mark.line
        else:
            break
    return line


class NotSplittable(Exception):
    """The text layout did not hold up: read the whole document instead."""


def flag(item: Item, index: int, node: Node, line: int) -> Result | None:
    problem = policy_inputs.item_problem(node, line, item.source)
    if problem is None:
        return None
    message, path = problem
    item.problem = message
    ref = item.ref if isinstance(node, MappingNode) else None
    return Result(f"items[{index}] {message}", "error", ref, Field(path) if path is not None else None, item.file)


def document_of(source: str, dash: int) -> str:
    """An item's text as a document of its own: its ``-`` becomes a space, so columns stay as they were."""
    return source[:dash] + " " + source[dash + 1 :]


def compose_item(source: str, line: int, dash: int, lazy: bool = False) -> tuple[Node, Any]:
    """The item's tree and its plain value (``Item.value``), read in one walk after composing.
    ``lazy``: the text was never parsed before (a TrainJob read lazily), so it may not be YAML on
    its own, and then the whole document is read instead (NotSplittable)."""
    document = document_of(source, dash)
    try:
        node = yn.compose(document)
    except yn.YamlInputError as err:
        if lazy and not yn.well_formed(document):
            raise NotSplittable from None
        if err.line is None:
            raise
        raise yn.YamlInputError(str(err).rsplit(" (line", 1)[0], err.line + line, err.column) from None
    if node is None:
        raise NotSplittable
    return node, textedit.remember_value(node)
