"""What the reader refuses: input past its bounds (size, nesting depth, nodes, alias expansion),
duplicate mapping keys, as kustomize's kyaml does, and YAML that PyYAML and go-yaml read differently (tags,
directives, disputed plain scalars, folds that change, colliding keys); and the errors that say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import goyaml
from .yamltags import (
    _FLOW_NULL,
    _NULL_KEY,
    MAP_TAG,
    MERGE_TAG,
    NULL_TAG,
    SEQ_TAG,
    STR_TAG,
    _children,
    _disputes_of,
    _join,
    scalar_value,
)

MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 200
MAX_NODES = 2_000_000
MAX_EXPANDED_NODES = 4_000_000


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
