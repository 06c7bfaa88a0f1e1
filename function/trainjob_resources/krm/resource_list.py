"""The KRM Functions Specification's I/O: ResourceList in, ResourceList with results out.

A small SDK in the style of kpt's: ``ResourceList``, ``Item`` accessors over node trees, and
``Result``. Pure: bytes in, bytes out; the CLI layer owns stdin, stdout and exit codes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Final

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..values import fieldpath
from ..values.keys import INDEX_ANNOTATIONS, ORIGIN, PATH_ANNOTATIONS, RESOURCE_LIST_VERSIONS
from ..values.records import MutableRecord, Record
from ..values.text import bounded
from ..values.violations import Severity
from ..yamltext import layout, textedit
from ..yamltext import yamlnodes as yn
from . import trust

MAX_ITEMS = 100_000
MAX_RESULTS = 10_000


class ResourceListError(ValueError):
    """Input that is not a ResourceList this function can read; nothing can be returned."""


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

    @property
    def node(self) -> Node:
        """Its tree, composed from its text when first asked for. A TrainJob read lazily whose text
        turns out not to parse on its own raises NotSplittable (read the whole input again)."""
        if self._node is None:
            assert self.source is not None
            self._node, self._value = _compose_item(self.source, self.line, self.dash, lazy=not self.checked)
        return self._node

    @node.setter
    def node(self, node: Node) -> None:
        self._node = node
        self.touched()

    def settle(self) -> None:
        """Done with this item: drop its tree if its text can stand for it, else write the text now."""
        if self.source is None:
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
            edited = textedit.render(_document_of(self.source, self.dash), node)
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
        return _flag(self, self.index, node, self.line)

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


class ResourceList(MutableRecord):
    __slots__ = ("api_version", "function_config", "items", "json_format", "layout", "results")

    def __init__(
        self,
        items: list[Item],
        function_config: Item | None = None,
        api_version: str = RESOURCE_LIST_VERSIONS[0],
        results: list[Result] | None = None,
        json_format: bool = False,
        layout: layout.Layout | None = None,
    ) -> None:
        self.items = items
        self.function_config = function_config
        self.api_version = api_version
        self.results = [] if results is None else results
        self.json_format = json_format
        self.layout = layout  # the input's text, when the output can reuse it

    def has_errors(self) -> bool:
        return any(r.severity == "error" for r in self.results)


# Kinds whose node trees stay in memory after reading: what the bundle index looks at again.
_KEPT_GROUPS = {"trainer.kubeflow.org"}
_KEPT_CORE_KINDS = {"LimitRange", "ResourceQuota"}


def read(data: bytes, by_items: bool = True) -> ResourceList:
    """Parse a ResourceList (YAML or JSON). Raises ResourceListError or yn.YamlInputError.

    A block-style list is read item by item from its text (see layout.py); anything else, or an
    item that does not read on its own, is read as one whole document. A TrainJob's text is parsed
    only when it is processed (a check of every one up front would parse it twice): when one of
    them does not parse on its own, its first reading, or ``write``, raises NotSplittable, and the
    caller starts again from ``read(data, by_items=False)``, as if the check had been made here."""
    text = yn.decode(data)
    shape = layout.split(text) if by_items else None
    if shape is not None:
        try:
            return _read_by_items(text, shape)
        except (yn.YamlInputError, NotSplittable):
            pass  # the whole document says precisely what is wrong, and where
    return _read_whole(text)


class NotSplittable(Exception):
    """The text layout did not hold up: read the whole document instead."""


def _check_root(root: Node | None) -> tuple[MappingNode, str]:
    if root is None or (isinstance(root, ScalarNode) and root.tag == yn.NULL_TAG and not root.value):
        raise ResourceListError("input is empty: expected a ResourceList (config.kubernetes.io/v1)")
    if not isinstance(root, MappingNode):
        raise ResourceListError("input is not a ResourceList: the document is not a mapping")
    kind = yn.scalar(yn.get(root, "kind"))
    api_version = yn.scalar(yn.get(root, "apiVersion"))
    if kind != "ResourceList" or api_version not in RESOURCE_LIST_VERSIONS:
        raise ResourceListError(
            f"input is not a ResourceList: got apiVersion {api_version!r}, kind {kind!r}; "
            f"expected kind 'ResourceList' and apiVersion one of {', '.join(RESOURCE_LIST_VERSIONS)}"
        )
    seen_keys: set[str] = set()
    for key, _ in root.value:
        line = key.start_mark.line + 1
        if not isinstance(key, ScalarNode) or key.tag == yn.MERGE_TAG:
            raise ResourceListError(f"ResourceList: only plain keys are supported (line {line})")
        if key.value in seen_keys:
            raise ResourceListError(f"ResourceList: duplicate mapping key {key.value!r} (line {line})")
        seen_keys.add(key.value)
    return root, api_version


def _function_config(root: MappingNode, items_node: Node | None) -> Item | None:
    try:
        yn.check_duplicate_keys(MappingNode(yn.MAP_TAG, [p for p in root.value if p[1] is not items_node]))
    except yn.DuplicateKeyError as err:
        raise ResourceListError(f"ResourceList: {err}") from None
    config_node = yn.get(root, "functionConfig")
    if isinstance(config_node, MappingNode):
        merged = yn.merge_key_path(config_node)
        if merged is not None:
            raise ResourceListError(
                f"ResourceList.functionConfig has a YAML merge key (<<) at {merged}: write the fields out"
            )
        return Item(config_node)
    if not yn.is_null(config_node):
        raise ResourceListError("ResourceList.functionConfig must be a mapping")
    return None


def _flag(item: Item, index: int, node: Node, line: int) -> Result | None:
    problem = _item_problem(node, line, item.source)
    if problem is None:
        return None
    message, path = problem
    item.problem = message
    ref = item.ref if isinstance(node, MappingNode) else None
    return Result(f"items[{index}] {message}", "error", ref, Field(path) if path is not None else None, item.file)


def _read_by_items(text: str, shape: layout.Layout) -> ResourceList:
    root, api_version = _check_root(yn.compose(shape.root_text()))
    if len(shape.chunks) > MAX_ITEMS:
        raise ResourceListError(f"ResourceList has {len(shape.chunks)} items; the limit is {MAX_ITEMS}")
    items: list[Item] = []
    results: list[Result] = []
    for i, chunk in enumerate(shape.chunks):
        hint = _lazy_hint(chunk.text, shape.dash)
        item = Item(source=chunk.text, line=chunk.line, dash=shape.dash, index=i, hint=hint)
        items.append(item)
        if hint is not None:
            continue  # a TrainJob: composed, checked and settled one at a time when processed
        problem = _flag(item, i, item.node, chunk.line)
        if problem is not None:
            results.append(problem)
        keep = item.problem is None and (item.group in _KEPT_GROUPS or item.kind in _KEPT_CORE_KINDS)
        if not keep:
            item.settle()  # read again when needed; until then only its text is held
    try:
        function_config = _function_config(root, yn.get(root, "items"))
    except ResourceListError:
        _check_unread(items)  # a TrainJob that does not parse is what the whole document reports first
        raise
    return ResourceList(items, function_config, api_version, results, layout=shape)


def _check_unread(items: list[Item]) -> None:
    """NotSplittable if an item never composed (a TrainJob read lazily) does not parse on its own."""
    for item in items:
        if not item.checked and item.source is not None and not yn.well_formed(_document_of(item.source, item.dash)):
            raise NotSplittable


def _read_whole(text: str) -> ResourceList:
    root, api_version = _check_root(yn.compose(text))
    items_node = yn.get(root, "items")
    items: list[Item] = []
    results: list[Result] = []
    if isinstance(items_node, SequenceNode):
        if len(items_node.value) > MAX_ITEMS:
            raise ResourceListError(f"ResourceList has {len(items_node.value)} items; the limit is {MAX_ITEMS}")
        anchors = "&" in text
        for i, node in enumerate(items_node.value):
            item = Item(node, index=i)
            items.append(item)
            problem = _flag(item, i, node, 0)
            if problem is not None:
                results.append(problem)
            if anchors:
                # An alias may share a node between items; editing one item must not change another.
                item.node = yn.deep_copy(node)
    elif not yn.is_null(items_node):
        raise ResourceListError("ResourceList.items must be a list")
    function_config = _function_config(root, items_node)
    return ResourceList(items, function_config, api_version, results, json_format=text.lstrip().startswith("{"))


_HINT_VALUE = re.compile(r"[ ]*([^\s#'\"]+)[ ]*(?:[ ]#.*)?")  # a plain value; a comment needs a space before


def _lazy_hint(text: str, dash: int) -> tuple[str, str] | None:
    """(apiVersion, kind) of a TrainJob, read off its text: such items are read later, one at a time.
    The item's top-level ``apiVersion:`` and ``kind:`` lines (on its ``-`` line or at its keys'
    column), each once and plain, are found with ``str.find``: most lines are deeper."""
    pad = " " * dash
    found: list[tuple[str, str]] = []
    for key in ("apiVersion", "kind"):
        starts = [len(first) for first in (f"{pad}- {key}:", f"{pad}  {key}:") if text.startswith(first)]
        for needle in (f"\n{pad}- {key}:", f"\n{pad}  {key}:"):
            at = text.find(needle)
            while at >= 0:
                starts.append(at + len(needle))
                at = text.find(needle, at + 1)
        for start in starts:
            end = text.find("\n", start)
            value = _HINT_VALUE.fullmatch(text, start, len(text) if end < 0 else end)
            if value is not None:
                found.append((key, value.group(1)))
    fields = dict(found)
    if len(found) != 2 or fields.get("kind") != "TrainJob":
        return None
    if not fields.get("apiVersion", "").startswith("trainer.kubeflow.org/"):
        return None
    return fields["apiVersion"], "TrainJob"


def _document_of(source: str, dash: int) -> str:
    """An item's text as a document of its own: its ``-`` becomes a space, so columns stay as they were."""
    return source[:dash] + " " + source[dash + 1 :]


def _compose_item(source: str, line: int, dash: int, lazy: bool = False) -> tuple[Node, Any]:
    """The item's tree and its plain value (``Item.value``), read in one walk after composing.
    ``lazy``: the text was never parsed before (a TrainJob read lazily), so it may not be YAML on
    its own, and then the whole document is read instead (NotSplittable)."""
    document = _document_of(source, dash)
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


def write(resource_list: ResourceList) -> bytes:
    """The output ResourceList: items, functionConfig and results, as YAML (or JSON for JSON input).
    Items read from text that were not changed go out as they came in, comments and all."""
    shown = shown_results(resource_list.results) if resource_list.results else []
    shape = resource_list.layout
    if shape is not None:
        _check_unread(resource_list.items)  # a TrainJob not processed goes out as its text
        entries = []
        for item in resource_list.items:
            if item.source is None:
                entries.append(layout.entry(item.serialized(), shape.dash))
            else:
                entries.append(item.text())
        results = _results_text(shown) if shown else None
        return shape.assemble(entries, results).encode()
    root = MappingNode(yn.MAP_TAG, [], flow_style=False)
    yn.set_key(root, "apiVersion", yn.str_node(resource_list.api_version))
    yn.set_key(root, "kind", yn.str_node("ResourceList"))
    yn.set_key(root, "items", SequenceNode(yn.SEQ_TAG, [i.node for i in resource_list.items], flow_style=False))
    if resource_list.function_config is not None:
        yn.set_key(root, "functionConfig", resource_list.function_config.node)
    if shown:
        yn.set_key(root, "results", _results_node(shown))
    if resource_list.json_format:
        value = yn.to_python(root)
        try:
            text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
        except ValueError:
            text = json.dumps(_finite(value), ensure_ascii=False, indent=2, allow_nan=False)
        return (text + "\n").encode()
    return yn.serialize(root).encode()


_LINE_BREAKS = re.compile("[\n\r\x85\u2028\u2029]")


def _results_text(results: list[Result]) -> str:
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
            out.append(yn.serialize(_results_node([row])))
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


def _results_node(results: list[Result] | list[dict[str, Any]]) -> SequenceNode:
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


def _finite(value: Any) -> Any:
    """``value`` with infinities and NaN (``.inf``, ``1.0e+400``), which JSON cannot hold, as YAML's spelling."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    if isinstance(value, dict):
        return {_finite(k) if isinstance(k, float) else k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


# The objects the function reads to decide (TrainJobs, runtimes, the namespace policy, its config):
# each must read the same in PyYAML and in go-yaml, and none may hide in another object's items.
POLICY_INPUTS = frozenset(
    {
        ("trainer.kubeflow.org", "TrainJob"),
        ("trainer.kubeflow.org", "TrainingRuntime"),
        ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
        ("", "LimitRange"),
        ("", "ResourceQuota"),
        ("fn.trainjob-resources.io", "TrainJobResources"),
    }
)


def is_policy_input(node: Node, api_version: str | None = None, kind: str | None = None) -> bool:
    api_version = yn.scalar(yn.get(node, "apiVersion")) if api_version is None else api_version
    kind = yn.scalar(yn.get(node, "kind")) if kind is None else kind
    group = (api_version or "").rpartition("/")[0] if "/" in (api_version or "") else ""
    return (group, kind or "") in POLICY_INPUTS


def merge_problem(node: Node) -> tuple[str, str] | None:
    """A YAML merge key in an object the function decides on: refused (PyYAML and go-yaml disagree)."""
    path = yn.merge_key_path(node)
    if path is None:
        return None
    return (
        f"has a YAML merge key (<<) at {path}: kubectl and Argo CD (go-yaml) let a later merge override "
        "an explicit key, PyYAML does not, so the policy would be checked on another object than the "
        "cluster gets; write the fields out",
        path,
    )


def list_items(node: Node) -> tuple[list[Node], str | None]:
    """The objects kubectl applies for one document: an object with an ``items`` field (any kind) is
    a list to kubectl's and Argo CD's decoders (apimachinery's unstructured JSON scheme checks for
    ``items``, not the kind), and only its items are applied. An item with neither apiVersion nor
    kind gets the list's from kubectl (kind minus ``List``) and none from Argo CD: refused."""
    items = yn.get(node, "items")
    if items is None:
        return [node], None
    if yn.is_null(items):
        return [], None
    if not isinstance(items, SequenceNode):
        return [], "has an items field that is not a list (kubectl reads any object with items as a list)"
    kind = yn.scalar(yn.get(node, "kind")) or ""
    for entry in items.value:
        if isinstance(entry, MappingNode) and yn.get(entry, "kind") is None and yn.get(entry, "apiVersion") is None:
            return [], (
                f"has an item with neither apiVersion nor kind: kubectl would apply it as a "
                f"{kind.removesuffix('List') or '(no kind)'} (the list's kind without List), Argo CD as nothing; "
                "give it its apiVersion and kind"
            )
    return list(items.value), None


def _has_merge_key(collections: list[Node]) -> bool:
    """Whether a tree's collections (every one, as read) hold a merge key: one pass, no paths built."""
    merge = yn.MERGE_TAG
    return any(key.tag == merge for node in collections if node.__class__ is MappingNode for key, _ in node.value)


def _may_merge(text: str | None) -> bool:
    """Whether a node composed from ``text`` may hold a merge key: one is written ``<<``, or tagged
    ``merge`` (``!!merge``, ``!<tag:yaml.org,2002:merge>``), or through ``%`` (an escape in a tag,
    a directive's handle)."""
    return text is None or "<<" in text or "merge" in text or "%" in text


def _item_problem(node: Node, line: int = 0, text: str | None = None) -> tuple[str, str | None] | None:
    """What makes an item unusable (it is still passed through), with the field at fault.
    ``line`` is where the item's text starts in the whole input; ``text``, when known, is the
    text ``node`` was composed from."""
    if not isinstance(node, MappingNode):
        return f"is not a mapping (line {node.start_mark.line + line + 1}); it is passed through unchanged", None
    collections = textedit.collections_of(node)
    if textedit.may_repeat_a_key(node):
        try:
            yn.check_duplicate_keys(node, collections)
        except yn.DuplicateKeyError as err:
            return f"duplicate mapping key {err.key!r} (line {err.line + line})", err.path
    if is_policy_input(node) and (collections is None or (_may_merge(text) and _has_merge_key(collections))):
        found = merge_problem(node)
        if found is not None:
            return found
    if yn.get(node, "items") is not None:
        entries, problem = list_items(node)
        if problem is None:
            hidden = [e for e in entries if isinstance(e, MappingNode) and is_policy_input(e)]
            if hidden:
                what = yn.scalar(yn.get(hidden[0], "kind"))
                problem = (
                    f"has an items list holding a {what}: kubectl and Argo CD apply the items of any object with "
                    "an items field, and the function checks only objects of their own; list it as an item"
                )
        if problem is not None:
            return problem, "items"
    if not yn.scalar(yn.get(node, "kind")) or not yn.scalar(yn.get(node, "apiVersion")):
        return "has no apiVersion or kind; it is passed through unchanged", None
    annotations = yn.get_path(node, "metadata", "annotations")
    if isinstance(annotations, MappingNode):
        return trust.forged_mark(k.value for k, _ in annotations.value if isinstance(k, ScalarNode))
    return None
