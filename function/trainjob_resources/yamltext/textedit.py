"""Write an edited node tree back into the text it was read from.

The function's edits to a TrainJob are small (its runtimeRef, two annotations, ``resources``
taken out of its patches). Rather than serializing the whole object again, its new text is the
old text with only the edited entries rewritten. Everything else (comments, quoting, flow style,
blank lines) stays as the user wrote it, and a re-render that changes nothing gives the same
bytes back.

``remember`` records, right after reading, the children of every collection. Edits replace,
remove or append children (a scalar is never changed in place), so the collections whose
children differ from those records are exactly the edited ones. ``render`` visits only them and
turns each difference into a text edit: a removed entry loses its lines (the comment lines above
it included; those above the next entry stay), a replaced or new entry is serialized at the
entry's column, an edited flow collection is serialized in place. ``copy`` gives an editable
version that still renders against the same text.

A layout it does not handle makes ``render`` return None, and the caller serializes the whole
node, as it would without this module: children reordered or inserted between read ones, a key
that is not a scalar, an emptied sequence that follows a comment, removing entries when the blank
lines after them would join a ``|+`` scalar, and an edit at the end of a text without a final line
break that may hold a block scalar.
"""

from __future__ import annotations

import re
from typing import Any, Final

from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from ..values.records import Record
from . import yamlnodes as yn

_READ = "_read_children"  # on a collection: its children as read
_ALL = "_read_collections"  # on a root: every collection below it (itself excluded), as read
_REPEATS = "_may_repeat_a_key"  # on a root: whether some mapping of it, as read, repeats a key's text


class _Unsupported(Exception):
    """A layout this module does not rewrite."""


def remember(root: Node) -> None:
    """Record the children of every collection below ``root`` as read, and whether a mapping among
    them may repeat a key (``may_repeat_a_key``): the walk is made anyway."""
    collections: list[CollectionNode] = []
    repeats = False
    stack = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, CollectionNode):
            continue
        children = node.value
        setattr(node, _READ, list(children))
        collections.append(node)
        if node.__class__ is MappingNode:
            if not repeats and len(children) > 1:
                try:
                    repeats = len({k.value for k, _ in children}) != len(children)
                except TypeError:  # a key that is a collection: yn.check_duplicate_keys decides
                    repeats = True
            for _, value in children:
                if value.__class__ is not ScalarNode:
                    stack.append(value)
        else:
            for value in children:
                if value.__class__ is not ScalarNode:
                    stack.append(value)
    setattr(root, _ALL, collections[1:])  # not the root itself: a cycle would outlive the tree (gc is off)
    setattr(root, _REPEATS, repeats)


def remember_value(root: Node) -> Any:
    """``remember(root)``, then ``yn.to_python(root)``."""
    remember(root)
    return yn.to_python(root)


def may_repeat_a_key(root: Node) -> bool:
    """False when ``remember`` found no mapping with two keys of the same text; True when it found
    one, or did not see ``root``."""
    return bool(getattr(root, _REPEATS, True))


def collections_of(root: Node) -> list[Node] | None:
    """Every collection of a tree ``remember`` saw (``root`` first), or None."""
    below: list[Node] | None = getattr(root, _ALL, None)
    return None if below is None else [root, *below]


def copy(node: Node) -> Node:
    """A deep copy that keeps what ``node`` was read from (marks and read children), so that
    ``render`` can still write only what changes after. A tree with edits already gets a plain
    copy, which ``render`` declines (its caller serializes it)."""
    below = getattr(node, _ALL, None)
    if below is None or not all(_as_read(c) for c in [node, *below]):
        return yn.deep_copy(node)
    copied = yn.deep_copy(node, keep_marks=True)
    remember(copied)  # as read: the tree it copies was
    return copied


def _as_read(node: Node) -> bool:
    read = getattr(node, _READ, None)
    return read is not None and node.value == read


def render(text: str, root: MappingNode) -> str | None:
    """``text`` (the document ``root`` was read from) with ``root``'s edits written in; None when
    an edit is laid out in a way this module does not rewrite."""
    collections: list[CollectionNode] | None = getattr(root, _ALL, None)
    if collections is None or root.flow_style or getattr(root, _READ, None) is None:
        return None
    # Only the collections whose own children changed need edits: their ancestors are as read.
    # Lists compare their items by identity first, and nodes have no other equality.
    edited = [c for c in [root, *collections] if c.value != getattr(c, _READ)]
    writer = _Writer(text)
    if not edited:
        return text
    edited.sort(key=lambda c: c.start_mark.index)
    try:
        for node in edited:
            if writer.covers(node.start_mark.index):
                continue  # inside an entry that an edit above removed or replaced
            writer.collection(node)
    except _Unsupported:
        return None
    if not text.endswith("\n") and ("|" in text or ">" in text) and any(end >= len(text) for _, end, _ in writer.edits):
        return None  # an edit at the end could give a block scalar there a final line break, or take it away
    # In text order; of two insertions at one place, the one recorded later (deeper) goes first.
    order = sorted(range(len(writer.edits)), key=lambda i: (writer.edits[i][0], writer.edits[i][1], -i))
    writer.edits = [writer.edits[i] for i in order]
    parts: list[str] = []
    at = 0
    for start, end, replacement in writer.edits:
        if start < at:
            return None  # overlapping edits: a layout this module misjudged
        parts.append(text[at:start])
        parts.append(replacement)
        at = end
    parts.append(text[at:])
    return "".join(parts)


class _ReadEntries(Record):
    """A block collection's entries as read (their keys or items, and values), whether it is a
    mapping, what is appended after them, and the column they start at."""

    __slots__ = ("appended", "column", "ids", "mapping", "values")

    def __init__(self, ids: list[Node], values: list[Node], mapping: bool, appended: list[Any], column: int) -> None:
        self.ids: Final = ids
        self.values: Final = values
        self.mapping: Final = mapping
        self.appended: Final = appended
        self.column: Final = column


class _Writer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.replaced: list[tuple[int, int]] = []  # the text that edits removed or replaced
        self.edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in text order

    # Positions in the text as read.

    def content_end(self, node: Node) -> int:
        """Just after the last character of ``node``'s own text. A block collection's end mark is
        at the next token, past any comments, so its last child (as read) decides."""
        last = _last_read(node)
        if isinstance(last, CollectionNode) and not last.flow_style:
            raise _Unsupported  # a block collection read without children
        return int(last.end_mark.index)

    def line_end(self, node: Node) -> int:
        """The end of the line where ``node``'s text ends: a comment there goes with it."""
        end = self.content_end(node)
        newline = self.text.find("\n", max(end - 1, node.start_mark.index))
        return len(self.text) if newline < 0 else newline

    def dash_of(self, entry: Node) -> int:
        """Where the ``-`` of a block sequence entry is."""
        at = entry.start_mark.index - 1
        while at >= 0 and self.text[at] in " \n":
            at -= 1
        if at < 0 or self.text[at] != "-":
            raise _Unsupported
        return at

    # Edits.

    def edit(self, start: int, end: int, replacement: str) -> None:
        self.edits.append((start, end, replacement))
        if end > start:
            self.replaced.append((start, end))

    def covers(self, position: int) -> bool:
        return any(start <= position < end for start, end in self.replaced)

    def collection(self, node: CollectionNode) -> None:
        """Record the edits of a collection whose own children changed."""
        if node.flow_style:
            self.edit(node.start_mark.index, self.content_end(node), _flow_text(node))
            return
        read = getattr(node, _READ)
        if isinstance(node, MappingNode):
            if not all(isinstance(k, ScalarNode) for k, _ in node.value):
                raise _Unsupported
            values = [v for _, v in read]
            self.entries(node, [k for k, _ in read], values, [k for k, _ in node.value], node.value)
        else:
            self.entries(node, list(read), list(read), list(node.value), node.value)

    def entries(
        self,
        node: CollectionNode,
        read_ids: list[Node],
        read_values: list[Node],
        ids: list[Node],
        now: list[Any],
    ) -> None:
        """Align the children now with the children as read (by node identity: a mapping's key, a
        sequence's item) and record an edit for each difference."""
        mapping = isinstance(node, MappingNode)
        index = {id(n): i for i, n in enumerate(read_ids)}
        kept: dict[int, Any] = {}
        appended: list[Any] = []
        last = -1
        for identity, child in zip(ids, now, strict=True):
            i = index.get(id(identity))
            if i is None:
                appended.append(child)
                continue
            if appended or i <= last:
                raise _Unsupported  # new children between read ones, or children reordered
            kept[i] = child
            last = i
        column = read_ids[0].start_mark.column if mapping else node.start_mark.column
        count = len(read_ids)
        i = 0
        while i < count:
            if i not in kept:
                run_end = i
                while run_end + 1 < count and run_end + 1 not in kept:
                    run_end += 1
                self.remove(_ReadEntries(read_ids, read_values, mapping, appended, column), i, run_end)
                if run_end == count - 1:
                    return  # what was appended went where the removed entries were
                i = run_end + 1
                continue
            child = kept[i]
            was = read_values[i]
            value = child[1] if mapping else child
            if value is not was:  # a key with a new value
                self.edit(read_ids[i].start_mark.index, self.line_end(was), _entry_text(child, mapping, column))
            i += 1
        if appended:
            at = self.line_end(read_values[-1])
            pad = "\n" + " " * column
            self.edit(at, at, "".join(pad + _entry_text(c, mapping, column) for c in appended))

    def remove(self, read: _ReadEntries, first: int, last: int) -> None:
        """Remove the entries ``first``..``last`` as read, with the comment lines above them."""
        read_ids, read_values, mapping, appended, column = (
            read.ids,
            read.values,
            read.mapping,
            read.appended,
            read.column,
        )

        def start_of(i: int) -> int:
            return read_ids[i].start_mark.index if mapping else self.dash_of(read_ids[i])

        if first > 0:
            start = self.line_end(read_values[first - 1])
            end = self.line_end(read_values[last])
            if _BLANK_LINE.match(self.text, end) and self.ends_in_kept_block(read_values[first - 1]):
                raise _Unsupported  # the blank lines after the removed entries would join that scalar's text
            if last == len(read_ids) - 1 and appended:
                pad = "\n" + " " * column
                self.edit(start, end, "".join(pad + _entry_text(c, mapping, column) for c in appended))
            else:
                self.edit(start, end, "")
        elif last + 1 < len(read_ids):
            # The next entry moves up to where the first was; comment lines above it stay.
            lead = self.text[self.line_end(read_values[last]) : start_of(last + 1)]
            self.edit(start_of(0), start_of(last + 1), lead[1:].lstrip(" "))
        else:  # every entry as read is gone
            start, end = start_of(0), self.line_end(read_values[-1])
            texts = [_entry_text(c, mapping, column) for c in appended]
            if texts:
                self.edit(start, end, ("\n" + " " * column).join(texts))
                return
            # An empty flow collection cannot start a line at the parent's column (``key:\n[]``):
            # it goes on the line of the ``key:`` or ``-`` it belongs to.
            before = start
            while before > 0 and self.text[before - 1] in " \n":
                before -= 1
            if before == 0:  # the document itself
                self.edit(start, end, "{}" if mapping else "[]")
            elif self.text[before - 1] in ":-":
                self.edit(before, end, " {}" if mapping else " []")
            elif mapping:  # after a comment: in place, deeper than its parent as a block mapping is
                self.edit(start, end, "{}")
            else:  # a sequence may be at its parent's column
                raise _Unsupported

    def ends_in_kept_block(self, node: Node) -> bool:
        """Whether ``node``'s text ends with a block scalar that keeps its trailing lines (``|+``)."""
        node = _last_read(node)
        if not isinstance(node, ScalarNode) or node.style not in ("|", ">"):
            return False
        start = node.start_mark.index
        header = self.text[start : self.text.find("\n", start)]
        return "+" in header.split("#", 1)[0]


_BLANK_LINE = re.compile(r"\n[ ]*\n")


def _last_read(node: Node) -> Node:
    """The node whose text ends ``node``'s text, as read."""
    while isinstance(node, CollectionNode) and not node.flow_style:
        read = getattr(node, _READ, None)
        if not read:
            return node
        node = read[-1][1] if isinstance(node, MappingNode) else read[-1]
    return node


# Serializing what is new. The same few new entries (a runtimeRef, provenance annotations) come
# back for many TrainJobs: their text is kept by content.
_texts: dict[Any, str] = {}


def _entry_text(child: Any, mapping: bool, column: int) -> str:
    """A new ``key: value`` pair or ``- item``, written at ``column`` (its first line goes where
    the caller is)."""
    if not mapping:
        return _indent(_serialized(SequenceNode(yn.SEQ_TAG, [child], flow_style=False)), column)
    key, value = child
    fresh = ScalarNode(key.tag, key.value, style=key.style)
    wrapper = MappingNode(yn.MAP_TAG, [(fresh, value)], flow_style=False)
    flat = None  # the common case (annotations) is keyed without a walk
    if isinstance(value, ScalarNode):
        flat = (key.tag, key.value, key.style, value.tag, value.value, value.style)
    return _indent(_serialized(wrapper, flat), column)


def _flow_text(node: CollectionNode) -> str:
    return _serialized(node).rstrip("\n")


def _serialized(node: Node, signature: Any = None) -> str:
    if signature is None:
        signature = yn.signature(node)
        if signature is None:
            return yn.serialize(node)
    text = _texts.get(signature)
    if text is None:
        text = yn.serialize(node)
        if len(_texts) < 10_000:
            _texts[signature] = text
    return text


def _indent(serialized: str, column: int) -> str:
    """YAML written at column 0, moved to ``column``: each line after the first is indented."""
    serialized = serialized.rstrip("\n")
    if "\n" not in serialized:
        return serialized
    lines = serialized.split("\n")
    pad = " " * column
    return "\n".join([lines[0], *(pad + line if line else line for line in lines[1:])])
