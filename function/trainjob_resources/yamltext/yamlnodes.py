"""PyYAML node trees: the bounded reader, accessors and edits, and the writer.

Items are kept as composed nodes, not as Python values, so that what the function passes on is
what the user wrote: scalar styles (``"true"``, ``'64Gi'``, block text) survive, and only the
fields the function edits change. Reading is bounded (size, nesting depth, alias expansion) and
rejects duplicate mapping keys, as kustomize's kyaml does.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Iterator
from typing import Any

import yaml
from yaml._yaml import CParser
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import goyaml

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
NULL_TAG = "tag:yaml.org,2002:null"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
MERGE_TAG = "tag:yaml.org,2002:merge"

MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 200
MAX_NODES = 2_000_000
MAX_EXPANDED_NODES = 4_000_000


# libyaml parses and emits in C but asks PyYAML's Python resolver for the tag of every plain
# scalar, and walks (empty) path resolvers for every node: most of the time of a compose. The
# answer depends only on the scalar's text, and Kubernetes objects repeat a few thousand texts.
_plain_tags: dict[str, str] = {}


def _plain_tag(value: str) -> str:
    tag = _plain_tags.get(value)
    if tag is None:
        tag = yaml.resolver.Resolver.resolve(_RESOLVER, ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        if len(_plain_tags) < 100_000:
            _plain_tags[value] = tag
    return tag


# The texts read the same, as a value and as a key, by PyYAML and go-yaml (goyaml), with their
# tag; and the others' reasons (as a value, as a key), None where that reading is not disputed.
_undisputed_tags: dict[str, str] = {}
_disputed: dict[str, tuple[str | None, str | None]] = {}


# go-yaml v3's writer (kyaml's, so kustomize's) writes an empty null in a flow collection as ''
# (``{name: }`` becomes ``{name: ''}``), which every reader then reads as a string: refused there.
_FLOW_NULL = (
    "an empty value in a flow collection is null to kubectl and this function, but kustomize (go-yaml v3) "
    "writes it back as '' (a string); write null or ''"
)


_NULL_KEY = (
    "an empty key is null to this function, has no name to sigs.k8s.io/yaml (kubectl refuses it) and is '' "
    "to kustomize; name the key"
)


def _disputes_of(value: str) -> tuple[str | None, str | None] | None:
    if not value:
        return None  # disputed in flow collections only (_Composer notes it there)
    known = _disputed.get(value)
    if known is not None:
        return known
    if value[0] not in goyaml.MAY_RESOLVE and _plain_tag(value) == STR_TAG:
        found: tuple[str | None, str | None] | None = None  # a string to every reader: most names
    else:
        found = _disputes_computed(value)
    if found is None:
        if len(_undisputed_tags) < 100_000:
            _undisputed_tags[value] = _read_tag(value)
        return None
    if len(_disputed) < 100_000:
        _disputed[value] = found
    return found


def _disputes_computed(value: str) -> tuple[str | None, str | None] | None:
    ours = scalar_value(ScalarNode(_plain_tag(value), value))
    found = (goyaml.value_dispute(value, ours), goyaml.key_dispute(value, ours))
    return None if found == (None, None) else found


class _FastResolver:
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                tag = _plain_tags.get(value)  # the common case, without a call
                return tag if tag is not None else _plain_tag(value)
            return STR_TAG
        return MAP_TAG if kind is MappingNode else SEQ_TAG


class _Composer(_FastResolver, CParser):
    """libyaml's composer and nothing else: composing builds no Python values, so the Loader's
    constructor (set up on every call) is not needed. It notes each disputed plain scalar it
    resolves (goyaml), as (text, whether it is a mapping key)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.disputes: list[tuple[str, bool]] = []
        self.typed_keys = False
        self._at: tuple[Any, Any] = (None, None)

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        # libyaml's composer descends with (the mapping, None) for a key, (the mapping, the key)
        # for a value, (the sequence, its index) for an entry; kept as given (read only for the
        # few plain scalars that are disputed, or empty).
        self._at = (current_node, current_index)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                tag = _undisputed_tags.get(value)  # the common case, without a call
                if tag is None:
                    return self._resolve_plain(value)
                if tag is not STR_TAG and self._at[1] is None and self._at[0] is not None:
                    self.typed_keys = True  # a key read as a number or boolean: see _refuse_colliding_keys
                return tag
            return STR_TAG
        return MAP_TAG if kind is MappingNode else SEQ_TAG

    def _resolve_plain(self, value: str) -> str:
        parent, index = self._at
        key = index is None and parent is not None
        if not value:
            if key or (parent is not None and parent.flow_style):
                self.disputes.append((value, key))
            return NULL_TAG
        disputes = _disputes_of(value)
        if disputes is not None and disputes[key] is not None:
            self.disputes.append((value, key))
        return _read_tag(value)


def _read_tag(value: str) -> str:
    """The tag a plain scalar is read with: PyYAML's, but a timestamp is a string (as go-yaml v2
    decodes one, and kyaml keeps its text), so that it is written back quoted, never tagged."""
    tag = _plain_tag(value)
    return STR_TAG if tag in (_TIMESTAMP_TAG, STR_TAG) else tag  # this module's STR_TAG: compared by identity


class _Dumper(_FastResolver, yaml.CSafeDumper):
    """The writer. A text go-yaml reads otherwise than PyYAML (``y``, ``0o17``, ``1e3``) is never
    written plain: to the emitter it resolves to no tag it has, so a string is quoted."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode and implicit[0] and value not in _undisputed_tags:
            disputes = _disputes_of(value)
            if disputes is not None and disputes[0] is not None:
                return _DISPUTED_TAG
        return super().resolve(kind, value, implicit)


_DISPUTED_TAG = "tag:trainjob-resources.io,2026:disputed"  # no node has it


_RESOLVER = yaml.resolver.Resolver()
assert not _RESOLVER.yaml_path_resolvers, "the fast resolver assumes no path resolvers"


class YamlInputError(ValueError):
    """Input that cannot be read as YAML within the documented bounds."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(message + where)
        self.message = message
        self.line = line
        self.column = column

    def moved(self, lines: int) -> YamlInputError:
        """The same error for a text that starts ``lines`` lines into its file."""
        if self.line is None or not lines:
            return self
        return YamlInputError(self.message, self.line + lines, self.column)


class RefusedYamlError(YamlInputError):
    """YAML that PyYAML and go-yaml read differently (a tag, a directive, a disputed plain scalar):
    refused, so that the function decides on what kubectl and kustomize read. ``path`` is the field's
    path in the document, where there is one."""

    def __init__(self, message: str, line: int | None, column: int | None, path: str | None = None) -> None:
        super().__init__(message, line, column)
        self.path = path


class DuplicateKeyError(ValueError):
    """A mapping that names one key twice; ``path`` is relative to the node checked."""

    def __init__(self, key: str, path: str, line: int) -> None:
        super().__init__(f"duplicate mapping key {key!r} (line {line})")
        self.key = key
        self.path = path
        self.line = line


class _Constructor(yaml.constructor.SafeConstructor):
    """Builds plain values; timestamps stay strings, as in JSON and the Kubernetes API."""


_Constructor.add_constructor(_TIMESTAMP_TAG, _Constructor.construct_yaml_str)  # type: ignore[type-var]
_SCALAR_CONSTRUCTOR = _Constructor()  # its scalar methods keep no state


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_INDICATORS = bytes(b for b in range(256) if b not in b"[]{},:-?")


def _flow_depth_bound(encoded: bytes) -> int:
    """Deepest bracket nesting, counting brackets inside strings too (so an upper bound)."""
    brackets = encoded.translate(None, _NOT_BRACKETS).replace(b"{", b"[").replace(b"}", b"]")
    depth = 0
    while brackets and depth <= MAX_DEPTH:
        innermost_removed = brackets.replace(b"[]", b"")
        if len(innermost_removed) == len(brackets):
            return MAX_DEPTH + 1  # unbalanced (brackets in strings): no bound from this
        brackets = innermost_removed
        depth += 1
    return depth


def _block_depth_bound(text: str, width: int) -> bool:
    """Whether some line starts with ``width`` or more indentation or block indicators (only a
    line at least that long can: most texts have none, and finding that out is cheaper)."""
    if width <= 0:
        return True
    if max(map(len, text.split("\n"))) < width:
        return False
    return re.search(rf"^[ \t\-?:]{{{width}}}", text, re.MULTILINE) is not None


def _node_bound(encoded: bytes) -> int:
    """An upper bound on the nodes of a document: every node but the root is next to one of
    ``[]{},:-?`` and no indicator serves more than three (``a: b`` is a mapping, a key and a value)."""
    return 4 * len(encoded.translate(None, _NOT_INDICATORS)) + 1


def _exact_bounds(text: str) -> None:
    """Count nesting and nodes on the parser's events, before any node is built."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            nodes += 1
            if depth > MAX_DEPTH:
                raise YamlInputError(f"nesting deeper than {MAX_DEPTH} levels", *_position(event.start_mark))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
        if nodes > MAX_NODES:
            raise YamlInputError(f"more than {MAX_NODES} YAML nodes", *_position(event.start_mark))


def _position(mark: Any) -> tuple[int | None, int | None]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (None, None)


def decode(data: bytes) -> str:
    """UTF-8 text of the input (a BOM is dropped), or a YamlInputError."""
    if len(data) > MAX_INPUT_BYTES:
        raise YamlInputError(f"input is larger than {MAX_INPUT_BYTES} bytes, the limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise YamlInputError(f"input is not valid UTF-8: byte offset {err.start}: {err.reason}") from None
    return text.removeprefix("\ufeff")


def well_formed(text: str) -> bool:
    """Whether ``text`` parses as YAML, checked by libyaml alone: no node or event objects are made."""
    try:
        yaml.CSafeLoader(text).raw_parse()
    except yaml.YAMLError:
        return False
    return True


def compose(text: str) -> Node | None:
    """The single document of ``text`` as a node tree, within the depth, node and alias bounds."""
    try:
        encoded = text.encode()
        flow_depth = _flow_depth_bound(encoded)
        # No byte is more than one indicator: a text this short is under the node bound unread.
        many = 4 * len(encoded) + 1 > MAX_NODES and _node_bound(encoded) > MAX_NODES
        if many or _block_depth_bound(text, MAX_DEPTH - flow_depth):
            _exact_bounds(text)
        del encoded
        if ("!" in text and _MAY_TAG.search(text)) or ("%" in text and _MAY_DIRECTIVE.search(text)):
            _check_tags(text)
        loader = _Composer(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        if mark is not None:
            raise YamlInputError(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
        raise YamlInputError(f"invalid YAML: {problem}") from None
    except yaml.YAMLError as err:
        raise YamlInputError(f"invalid YAML: {err}") from None
    if node is not None and loader.disputes:
        _refuse_disputed(node, set(loader.disputes))
    if node is not None and ">" in text and _MAY_FOLD.search(text):
        _refuse_changing_folds(node)
    if node is not None and loader.typed_keys:
        _refuse_colliding_keys(node)
    if node is not None and "&" in text:
        _check_expansion(node)
    return node


# A tag starts with ``!`` after a space, a line start or a flow indicator; a directive is a line
# starting with ``%``. Most texts have neither, and are not parsed twice.
_MAY_TAG = re.compile(r"(?:^|[\s\[\]{},:])!", re.MULTILINE)
_MAY_DIRECTIVE = re.compile(r"^%", re.MULTILINE)
_CORE = "tag:yaml.org,2002:"
_SCALAR_CORE_TAGS = frozenset(_CORE + name for name in ("int", "float", "bool", "null"))
_GO_READS = "go-yaml (kubectl, kustomize, Argo CD)"
_TAG_REASONS = {
    "binary": f"{_GO_READS} decodes it to the string it encodes, PyYAML to bytes; write the string",
    "timestamp": "go-yaml v3 (kustomize) reads a time, v2 (kubectl, Argo CD) and PyYAML the text; write the text",
    "merge": "PyYAML and go-yaml merge differently; write the fields out",
}


def _tag_name(tag: str) -> str:
    return "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag


def _check_tags(text: str) -> None:
    """Refuse a ``%YAML`` or ``%TAG`` directive and any tag but the core schema's: go-yaml reads or
    writes them otherwise than PyYAML (``!!binary``, ``!!set``, ``!foo``, ``!``: kyaml drops a
    non-specific tag and reads ``! 12`` as a number). ``!!str`` is allowed anywhere, ``!!map`` and
    ``!!seq`` on their collections, ``!!int``, ``!!float``, ``!!bool`` and ``!!null`` on a plain
    scalar, quoted or not, whose text every reader reads as that kind and value (_core_tag_agrees)."""
    expecting_key: list[bool | None] = []  # per open collection: a mapping's next node is a key; None: a sequence
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        line, column = _position(event.start_mark)
        is_key = False
        if isinstance(event, yaml.NodeEvent) and expecting_key and expecting_key[-1] is not None:
            is_key = bool(expecting_key[-1])
            expecting_key[-1] = not is_key
        if isinstance(event, yaml.CollectionStartEvent):
            expecting_key.append(True if isinstance(event, yaml.MappingStartEvent) else None)
        elif isinstance(event, yaml.CollectionEndEvent):
            expecting_key.pop()
        if isinstance(event, yaml.DocumentStartEvent) and (event.version or event.tags):
            directive = "%YAML" if event.version else "%TAG"
            raise RefusedYamlError(
                f"the {directive} directive is refused: go-yaml reads a document by its own rules "
                "(kyaml and sigs.k8s.io/yaml ignore %YAML; tag handles change what a tag means); remove it",
                line,
                column,
            )
        tag = getattr(event, "tag", None)
        if tag is None or isinstance(event, yaml.AliasEvent):
            continue
        if isinstance(event, yaml.MappingStartEvent) and tag == MAP_TAG:
            continue
        if isinstance(event, yaml.SequenceStartEvent) and tag == SEQ_TAG:
            continue
        if isinstance(event, yaml.ScalarEvent):
            if tag == STR_TAG:
                continue
            if tag in _SCALAR_CORE_TAGS and _core_tag_agrees(tag, event.value, is_key):
                continue
        reason = _TAG_REASONS.get(tag.removeprefix(_CORE)) if tag.startswith(_CORE) else None
        if reason is None and tag in _SCALAR_CORE_TAGS:
            reason = (
                "go-yaml and PyYAML convert a tagged text differently, and the tag would be written out; "
                "write the value plainly"
            )
        if reason is None:
            reason = f"{_GO_READS} does not read it as PyYAML does; write the value plainly"
        raise RefusedYamlError(f"the tag {_tag_name(tag)} is refused: {reason}", line, column)


_CORE_KINDS = {"int": (int,), "float": (int, float), "bool": (bool,), "null": (type(None),)}


def _core_tag_agrees(tag: str, text: str, is_key: bool) -> bool:
    """Whether ``!!int``, ``!!float``, ``!!bool`` or ``!!null`` on ``text`` (quoted or not) gives one
    value to every reader: go-yaml resolves the text as if plain and requires the tag's kind (an
    integer for ``!!float``: resolve.go), PyYAML constructs the tag's kind from the text. ``!!int "5"``
    (PyYAML's own ``default_style='"'`` writes it) is 5 to all; ``!!int 0o17``, ``!!bool yes`` and
    ``!!int ""`` are not."""
    if not text:
        # !!null "": null to every reader (but no key: see _NULL_KEY); !!int "" is null to go-yaml
        return tag == NULL_TAG and not is_key
    disputes = _disputes_of(text)
    if disputes is not None and disputes[is_key] is not None:
        return False
    theirs = goyaml.v2_value(text)
    kinds = _CORE_KINDS[tag.removeprefix(_CORE)]
    if not isinstance(theirs, kinds) or (isinstance(theirs, bool) and bool not in kinds):
        return False
    ours = scalar_value(ScalarNode(tag, text))
    if is_key:  # a key's names (json.dumps's of ours, sigs.k8s.io/yaml's of theirs) must be its text
        converted = float(theirs) if tag.endswith(":float") and theirs is not None else theirs
        return goyaml.json_key(converted) == text and goyaml.python_key(ours) == text
    return goyaml.same(ours, theirs)


# A folded block scalar's indicator: ``>`` (chomping, indentation), at a line's end or before a comment.
_MAY_FOLD = re.compile(r"(?:^|[ \t])>[-+0-9]*[ \t]*(?:#[^\n]*)?$", re.MULTILINE)


def _values_with_paths(root: Node) -> Iterator[tuple[Node, str]]:
    """Every node below ``root`` that is a value (no key), once, with its field path."""
    seen: set[int] = set()
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node, path
        if isinstance(node, MappingNode):
            stack.extend((v, _join(path, str(k.value) if isinstance(k, ScalarNode) else "?")) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node.value))


def _refuse_colliding_keys(root: Node) -> None:
    """Refuse a mapping with two keys that are one to Python (``true`` and ``1``, ``1`` and ``1.0``:
    True == 1 == 1.0) but two names to go-yaml ("true", "1"): the function's plain value would
    hold one of them (found by tests/test_yaml_oracle.py)."""
    for node, path in _values_with_paths(root):
        if not isinstance(node, MappingNode):
            continue
        typed = [k for k, _ in node.value if isinstance(k, ScalarNode) and k.tag not in (STR_TAG, MERGE_TAG)]
        if len(typed) < 2:
            continue
        seen: dict[Any, ScalarNode] = {}
        for key in typed:
            value = scalar_value(key)
            try:
                first = seen.setdefault(value, key)
            except TypeError:
                continue
            if (
                first is not key and first.value != key.value
            ):  # the same text twice: a duplicate key (check_duplicate_keys)
                mark = key.start_mark
                raise RefusedYamlError(
                    f"the mapping keys {first.value} and {key.value}{' at ' + path if path else ''} are refused: "
                    "they are one key to this function (true == 1 == 1.0 in Python) and two to go-yaml; quote them",
                    mark.line + 1,
                    mark.column + 1,
                    path or None,
                )


def _refuse_changing_folds(root: Node) -> None:
    """Refuse a folded block scalar (``>``) of more than one line: go-yaml v3's writer, which kustomize
    writes every object with, writes such a value back as another string (a line break added before a
    more-indented line or after kept blank lines: found by tests/test_yaml_oracle.py), so what kubectl
    gets from kustomize is not what was checked. A one-line fold, the common case, is kept."""
    found = [
        (node.start_mark.line, node.start_mark.column, path)
        for node, path in _values_with_paths(root)
        if isinstance(node, ScalarNode) and node.style == ">" and "\n" in node.value[:-1]
    ]
    if found:
        line, column, path = min(found)
        at = f" at {path}" if path else ""
        raise RefusedYamlError(
            f"the folded block scalar (>){at} is refused: it has line breaks, which kustomize (go-yaml v3) "
            "writes back as another string; write it as a literal block (|) or quoted",
            line + 1,
            column + 1,
            path or None,
        )


def _refuse_disputed(root: Node, disputes: set[tuple[str, bool]]) -> None:
    """Raise for the first plain scalar of ``disputes`` (text, is a key) in document order."""
    found: list[tuple[int, int, str, ScalarNode, bool]] = []
    seen: set[int] = set()
    stack: list[tuple[Node, str, bool]] = [(root, "", False)]
    while stack:
        node, path, in_flow = stack.pop()
        if isinstance(node, ScalarNode):
            if not node.style and (node.value, False) in disputes and (node.value or in_flow):
                found.append((node.start_mark.line, node.start_mark.column, path, node, False))
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        flow = bool(getattr(node, "flow_style", False))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, ScalarNode) else "?"
                disputed = isinstance(key, ScalarNode) and not key.style and (key.value, True) in disputes
                if disputed:
                    found.append((key.start_mark.line, key.start_mark.column, _join(path, str(name)), key, True))
                stack.append((key, path, flow))
                stack.append((value, _join(path, str(name)), flow))
        elif isinstance(node, SequenceNode):
            stack.extend((v, f"{path}[{i}]", flow) for i, v in enumerate(node.value))
    if not found:
        return
    line, column, path, scalar_node, is_key = min(found, key=lambda f: (f[0], f[1]))
    at = f" at {path}" if path else ""
    if not scalar_node.value:
        reason = _NULL_KEY if is_key else _FLOW_NULL
        what = "empty mapping key" if is_key else "empty value"
        raise RefusedYamlError(f"the {what}{at} is refused: {reason}", line + 1, column + 1, path or None)
    reasons = _disputes_of(scalar_node.value)
    assert reasons is not None
    what = "mapping key" if is_key else "plain scalar"
    raise RefusedYamlError(
        f"the {what} {scalar_node.value}{at} is refused: {reasons[is_key]}; quote it",
        line + 1,
        column + 1,
        path or None,
    )


def _check_expansion(root: Node) -> None:
    """Reject alias bombs and recursive aliases: the tree, aliases expanded, must be finite and stay
    under MAX_EXPANDED_NODES."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, ScalarNode):
            sizes[id(node)] = 1
            continue
        children = _children(node)
        if not children_done:
            if id(node) in open_nodes:
                # Only a descendant can push a node again before its own sizing finishes.
                mark = node.start_mark
                raise YamlInputError(
                    "recursive alias: an anchored node contains itself", mark.line + 1, mark.column + 1
                )
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total = 1 + sum(sizes[id(c)] for c in children)
        if total > MAX_EXPANDED_NODES:
            mark = node.start_mark
            raise YamlInputError(
                f"aliases expand to more than {MAX_EXPANDED_NODES} nodes", mark.line + 1, mark.column + 1
            )
        sizes[id(node)] = total


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def check_duplicate_keys(root: Node, collections: Iterable[Node] | None = None) -> None:
    """Raise DuplicateKeyError for the first mapping below ``root`` that repeats a key.
    ``collections``, when the caller has it, is every collection of the tree, ``root`` included."""
    if collections is not None:
        if not any(_repeats_here(node) for node in collections if node.__class__ is MappingNode):
            return
    elif not _repeats_a_key(root):
        return
    seen: set[int] = set()
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            keys: set[str] = set()
            if len({k.value for k, _ in node.value if isinstance(k, ScalarNode)}) == len(node.value):
                stack.extend(
                    (v, _join(path, k.value)) for k, v in node.value if isinstance(v, MappingNode | SequenceNode)
                )
                continue
            for key, value in node.value:
                if isinstance(key, ScalarNode):
                    if key.tag == MERGE_TAG:
                        continue
                    # By text: ``1`` and ``"1"`` are one key to sigs.k8s.io/yaml and kyaml (and to
                    # ``get``); a key whose text is not its JSON name is refused when composed.
                    ident = key.value
                    if ident in keys:
                        raise DuplicateKeyError(key.value, _join(path, key.value), key.start_mark.line + 1)
                    keys.add(ident)
                    stack.append((value, _join(path, key.value)))
                else:
                    stack.append((value, path))
        elif isinstance(node, SequenceNode):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node.value))


def merge_key_path(root: Node) -> str | None:
    """The field path of the first YAML merge key (``<<``) below ``root``, or None. PyYAML lets a
    mapping's own key win over a merged one; go-yaml (kubectl, Argo CD) applies keys in order, so a
    merge after an explicit key wins there: the two readers see different objects."""
    seen: set[int] = set()
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in seen or isinstance(node, ScalarNode):
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, ScalarNode) else "?"
                if isinstance(key, ScalarNode) and key.tag == MERGE_TAG:
                    return _join(path, "<<")
                stack.append((value, _join(path, str(name))))
        elif isinstance(node, SequenceNode):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node.value))
    return None


def _repeats_here(node: MappingNode) -> bool:
    pairs = node.value
    if len(pairs) < 2:
        return False
    try:
        return len({k.value for k, _ in pairs}) != len(pairs)
    except TypeError:  # a key that is a collection: its value is a list
        return len({k.value if isinstance(k, ScalarNode) else id(k) for k, _ in pairs}) != len(pairs)


def _repeats_a_key(root: Node) -> bool:
    """Whether some mapping below ``root`` has two keys of the same text (no paths built: the
    common case, where none does, costs one pass over the mappings)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            if id(node) in seen:
                continue
            seen.add(id(node))
            pairs = node.value
            if len({k.value if isinstance(k, ScalarNode) else id(k) for k, _ in pairs}) != len(pairs):
                return True
            stack.extend(v for _, v in pairs if not isinstance(v, ScalarNode))
        elif isinstance(node, SequenceNode):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(v for v in node.value if not isinstance(v, ScalarNode))
    return False


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def to_python(node: Node) -> Any:
    """The plain Python value of a node, never failing and never changing the node.

    Merge keys are applied; timestamps stay strings; a scalar that its tag cannot construct (an
    integer of more digits than Python converts, ``!!int abc``), and any tag beyond YAML's plain
    ones (``!!binary``, ``!!python/...``, ``!custom``), give the scalar's text; other tagged
    mappings and sequences give a dict and a list; a key that is not a scalar gives its YAML text.
    """
    return _value(node, _Constructor(), {})


def scalar_value(node: ScalarNode) -> Any:
    """The plain Python value of one scalar, as ``to_python`` gives it."""
    return _value(node, _SCALAR_CONSTRUCTOR, {})


_SCALAR_TAGS = {
    "tag:yaml.org,2002:int": "construct_yaml_int",
    "tag:yaml.org,2002:float": "construct_yaml_float",
    "tag:yaml.org,2002:bool": "construct_yaml_bool",
}


def _value(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> Any:
    # Built here rather than by SafeConstructor: it is slow, raises on the tags and values above,
    # and applies merge keys by rewriting the node in place.
    if isinstance(node, ScalarNode):
        if node.tag == NULL_TAG:
            return None
        method = _SCALAR_TAGS.get(node.tag)
        if method is None:
            return node.value
        try:
            return getattr(constructor, method)(node)
        except (ArithmeticError, LookupError, ValueError, TypeError):
            return node.value
    known = memo.get(id(node))
    if known is not None:
        return known
    if isinstance(node, MappingNode):
        mapping: dict[Any, Any] = {}
        memo[id(node)] = mapping
        # Most mappings have plain string keys only: their values go straight in. At any other key
        # (a merge key among them) the mapping is built again below, merges first.
        for key, value in node.value:
            if key.__class__ is not ScalarNode or key.tag != STR_TAG:
                mapping.clear()
                break
            if key.value not in mapping:  # a repeated key (an error of its own) reads as ``get`` reads it: the first
                mapping[key.value] = (
                    value.value
                    if value.__class__ is ScalarNode and value.tag == STR_TAG
                    else _value(value, constructor, memo)
                )
        else:
            return mapping
        own: dict[Any, Any] = {}
        for key, value in node.value:
            # Most keys and values are plain strings: read those without a call.
            if key.__class__ is ScalarNode and key.tag == STR_TAG:
                name = key.value
            else:
                if isinstance(key, ScalarNode) and key.tag == MERGE_TAG:
                    merged = _merged(value, constructor, memo)
                    if merged is not None:
                        mapping.update(merged)
                        continue
                name = _key(key, constructor, memo)
            if name not in own:  # a repeated key (an error of its own) reads as ``get`` reads it: the first
                own[name] = (
                    value.value
                    if value.__class__ is ScalarNode and value.tag == STR_TAG
                    else _value(value, constructor, memo)
                )
        mapping.update(own)
        return mapping
    sequence: list[Any] = []
    memo[id(node)] = sequence
    sequence.extend(
        v.value if v.__class__ is ScalarNode and v.tag == STR_TAG else _value(v, constructor, memo) for v in node.value
    )
    return sequence


def _merged(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> dict[Any, Any] | None:
    """What a merge key's value contributes (earlier mappings of a list win), or None if it is no merge."""
    sources = [node] if isinstance(node, MappingNode) else node.value if isinstance(node, SequenceNode) else None
    if not sources or not all(isinstance(s, MappingNode) for s in sources):
        return None
    out: dict[Any, Any] = {}
    for source in sources:  # in PyYAML's order: the first mapping's keys, then what each next one adds
        for key, value in _value(source, constructor, memo).items():
            if key not in out:
                out[key] = value
    return out


def _key(node: Node, constructor: _Constructor, memo: dict[int, Any]) -> Any:
    if isinstance(node, ScalarNode):
        return _value(node, constructor, memo)
    return serialize(deep_copy(node)).strip()


_representer = yaml.representer.SafeRepresenter(default_flow_style=False, sort_keys=False)


def from_python(value: Any) -> Node:
    """A fresh node tree for a plain Python value, in block style; strings that would read as
    another type unquoted get double quotes (``cpu: "2"``), as kyaml writes them."""
    _representer.represented_objects = {}
    node: Node = _representer.represent_data(value)
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ScalarNode):
            if current.tag == STR_TAG and needs_quotes(current.value):
                current.style = '"'
        else:
            stack.extend(n for pair_or_node in current.value for n in _flatten(pair_or_node))
    return node


def text_node(value: str) -> ScalarNode:
    """A string scalar, double-quoted only where plain text would read as another type (as
    ``from_python`` writes it)."""
    return ScalarNode(STR_TAG, value, style='"' if needs_quotes(value) else None)


# go-yaml v2's resolver (resolve.go), which kubectl, Argo CD and sigs.k8s.io/yaml read with: YAML
# 1.1 booleans and nulls, integers as Go's strconv.ParseInt(s, 0, 64) reads them once ``_`` are
# taken out (0x, 0o, 0b, leading 0), and its yamlStyleFloat. PyYAML's resolver (1.1 too) reads
# ``y``, ``n``, ``1e3``, ``0o17`` and ``1_0`` as strings; written plain, the cluster would not.
_YAML11_WORDS = frozenset(
    (
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
        "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL", ".inf", ".Inf", ".INF",
        "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", "<<",
    )
)  # fmt: skip
_YAML11_NUMBER = re.compile(
    r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
)


def yaml11_non_string(value: str) -> bool:
    """Whether go-yaml v2 reads ``value``, written plain, as something other than a string."""
    if value == "" or value in _YAML11_WORDS:
        return True
    if value[0] not in "0123456789+-.":
        return False
    return _YAML11_NUMBER.fullmatch(value.replace("_", "")) is not None


def only_yaml11_non_string(value: str) -> bool:
    """A string PyYAML writes plain (its resolver reads it back as a string) that go-yaml v2 does
    not: it must be quoted by hand; the others the writer quotes itself."""
    return yaml11_non_string(value) and _plain_tag(value) == STR_TAG


def needs_quotes(value: str) -> bool:
    """Whether a string must be quoted to read back as a string, in PyYAML and in go-yaml v2."""
    return _plain_tag(value) != STR_TAG or yaml11_non_string(value)


def _flatten(entry: Any) -> tuple[Node, ...]:
    return entry if isinstance(entry, tuple) else (entry,)


# Accessors and edits on mapping nodes. Keys are plain scalars in Kubernetes objects.


def get(node: Node | None, key: str) -> Node | None:
    if not isinstance(node, MappingNode):
        return None
    for k, v in node.value:
        if k.value == key and isinstance(k, ScalarNode):  # a collection's value is a list: never equal
            found: Node = v
            return found
    return None


def get_path(node: Node | None, *keys: str) -> Node | None:
    for key in keys:
        node = get(node, key)
    return node


def scalar(node: Node | None) -> str | None:
    """The text of a scalar node that is not null; None otherwise."""
    if isinstance(node, ScalarNode) and node.tag != NULL_TAG:
        return str(node.value)
    return None


def is_null(node: Node | None) -> bool:
    return node is None or (isinstance(node, ScalarNode) and node.tag == NULL_TAG)


def set_key(node: MappingNode, key: str, value: Node) -> None:
    """Replace ``key``'s value in place, or append the key."""
    for i, (k, _) in enumerate(node.value):
        if k.value == key and isinstance(k, ScalarNode):
            node.value[i] = (k, value)
            return
    node.value.append((ScalarNode(STR_TAG, key), value))


def delete_key(node: MappingNode, key: str) -> bool:
    before = len(node.value)
    node.value = [(k, v) for k, v in node.value if not (isinstance(k, ScalarNode) and k.value == key)]
    return len(node.value) != before


def ensure_map(node: MappingNode, key: str) -> MappingNode:
    """The mapping under ``key``, created (or replacing a null) when absent."""
    child = get(node, key)
    if isinstance(child, MappingNode):
        return child
    fresh = MappingNode(MAP_TAG, [], flow_style=False)
    set_key(node, key, fresh)
    return fresh


def str_node(value: str) -> ScalarNode:
    return ScalarNode(STR_TAG, value, style='"' if only_yaml11_non_string(value) else None)


def items_of(node: Node | None) -> Iterator[tuple[str, Node]]:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode):
                yield str(k.value), v


def deep_copy(node: Node, keep_marks: bool = False) -> Node:
    """A copy that shares nothing with ``node`` (aliases become separate subtrees); with
    ``keep_marks``, each copied node keeps where its original was read."""
    return _copy(node, {}, keep_marks)


def _copy(node: Node, memo: dict[int, Node], keep_marks: bool) -> Node:
    # A module function, not a closure: a closure that calls itself is a reference cycle, and with
    # gc off (as the CLI runs) it would keep every copied node alive.
    known = memo.get(id(node))
    if known is not None:
        return known
    start, end = (node.start_mark, node.end_mark) if keep_marks else (None, None)
    out: Node
    if isinstance(node, ScalarNode):
        out = ScalarNode(node.tag, node.value, start, end, style=node.style)
    elif isinstance(node, MappingNode):
        pairs = [(_copy(k, memo, keep_marks), _copy(v, memo, keep_marks)) for k, v in node.value]
        out = MappingNode(node.tag, pairs, start, end, flow_style=node.flow_style)
    else:
        assert isinstance(node, SequenceNode)
        entries = [_copy(v, memo, keep_marks) for v in node.value]
        out = SequenceNode(node.tag, entries, start, end, flow_style=node.flow_style)
    memo[id(node)] = out
    return out


def signature(node: Node) -> Hashable | None:
    """What ``serialize`` writes of ``node`` depends on, as a hashable value: each node's class,
    tag, value or children, and style; None where a node is met twice (the writer anchors it)."""
    return _signature(node, set())


def _signature(node: Node, seen: set[int]) -> Hashable | None:
    if id(node) in seen:
        return None
    seen.add(id(node))
    if node.__class__ is ScalarNode:
        return (node.tag, node.value, node.style)
    if node.__class__ is MappingNode:
        children = [child for pair in node.value for child in pair]
    elif node.__class__ is SequenceNode:
        children = list(node.value)
    else:
        return None
    parts: list[Hashable] = [node.__class__ is MappingNode, node.tag, node.flow_style]
    for child in children:
        part = _signature(child, seen)
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)


class OutputLimitError(Exception):
    """``written_size`` stopped: the text, aliases expanded, passes ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit:,} bytes as written")
        self.limit = limit


class _ByteCount:
    """The emitter's stream for ``written_size``: counts the UTF-8 bytes it is given, and stops the
    emitter as soon as they pass ``limit``; keeps nothing."""

    __slots__ = ("limit", "size")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0

    def write(self, text: str) -> None:
        self.size += len(text) if text.isascii() else len(text.encode())
        if self.size > self.limit:
            raise OutputLimitError(self.limit)


def serialize(node: Node) -> str:
    """Block YAML the way kyaml writes it: two-space indent, no line folding, unicode kept."""
    text = _serialize(node)
    if "! " in text and (_spell_flow_nulls(node) | _plain_typed_scalars(node)):
        text = _serialize(node)
    return text


def written_size(node: Node, limit: int) -> int:
    """The UTF-8 bytes of ``serialize(node)`` (every alias of a scalar written out in full, as the
    emitter writes it), counted as the emitter writes them: ``OutputLimitError`` as soon as they
    pass ``limit``, so that a tree whose aliases expand to gigabytes costs what the limit allows.
    Applies what ``serialize`` would apply before its second pass (they change a tree only where
    its text would hold ``! ``)."""
    _spell_flow_nulls(node)
    _plain_typed_scalars(node)
    counter = _ByteCount(limit)
    _serialize(node, counter)
    return counter.size


def _plain_typed_scalars(root: Node) -> bool:
    """Write plain a quoted scalar whose tag its plain text resolves to (``!!int "5"``, which the
    reader accepts): libyaml writes one as ``! '5'``, the non-specific tag, which reads as a string."""
    changed = False
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.style and node.tag != STR_TAG and _plain_tag(node.value) == node.tag:
                node.style = None
                changed = True
            continue
        stack.extend(_children(node))
    return changed


def _serialize(node: Node, stream: _ByteCount | None = None) -> str:
    text: str | None = yaml.serialize(
        node,
        stream,
        Dumper=_Dumper,
        allow_unicode=True,
        width=1 << 30,
        indent=2,
        explicit_start=False,
    )
    return text or ""


def _spell_flow_nulls(root: Node) -> bool:
    """Spell empty nulls inside flow collections ``null``: libyaml writes them ``! ''``, which YAML
    parsers other than PyYAML (kyaml's among them) read as an empty string."""
    changed = False
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, in_flow = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if in_flow and node.tag == NULL_TAG and node.value == "":
                node.value = "null"
                changed = True
            continue
        in_flow = in_flow or (isinstance(node, MappingNode | SequenceNode) and bool(node.flow_style))
        stack.extend((child, in_flow) for child in _children(node))
    return changed
