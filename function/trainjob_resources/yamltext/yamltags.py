"""What YAML text means: the core tags, what a plain scalar resolves to (cached, with the scalars
go-yaml reads otherwise: ``goyaml``), the composer and dumper that ask it, and the plain Python value
of a scalar (``scalar_value``).
"""

from __future__ import annotations

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


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class _Constructor(yaml.constructor.SafeConstructor):
    """Builds plain values; timestamps stay strings, as in JSON and the Kubernetes API."""


_Constructor.add_constructor(_TIMESTAMP_TAG, _Constructor.construct_yaml_str)  # type: ignore[type-var]
_SCALAR_CONSTRUCTOR = _Constructor()  # its scalar methods keep no state


def scalar_value(node: ScalarNode) -> Any:
    """The plain Python value of one scalar, as ``to_python`` gives it."""
    return _scalar_value(node, _SCALAR_CONSTRUCTOR)


_SCALAR_TAGS = {
    "tag:yaml.org,2002:int": "construct_yaml_int",
    "tag:yaml.org,2002:float": "construct_yaml_float",
    "tag:yaml.org,2002:bool": "construct_yaml_bool",
}


def _scalar_value(node: ScalarNode, constructor: _Constructor) -> Any:
    if node.tag == NULL_TAG:
        return None
    method = _SCALAR_TAGS.get(node.tag)
    if method is None:
        return node.value
    try:
        return getattr(constructor, method)(node)
    except (ArithmeticError, LookupError, ValueError, TypeError):
        return node.value
