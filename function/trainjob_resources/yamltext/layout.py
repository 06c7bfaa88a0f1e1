"""The text of a block-style ResourceList, cut into one chunk per item, and put back together.

kustomize and kpt send ``items:`` as a block sequence at a fixed column. Cutting the text at the
``- `` lines of that column gives each item's exact text: an item the function does not change is
passed on as those bytes (comments, quoting and spacing included) and its node tree need never be
held; only the items the function changes are written anew. Anything this cannot cut safely
(JSON, flow style, anchors, tabs, CRLF, an ``items`` key that is not a plain block) returns None,
and the caller reads the whole document instead.
"""

from __future__ import annotations

import re
from typing import Final

from ..values.records import Record

_ITEMS_KEY = re.compile(r"^items:[ ]*(?:#[^\n]*)?\n", re.MULTILINE)
_FIRST_CONTENT = re.compile(r"^( *)(\S)", re.MULTILINE)
_DOCUMENT_MARKER = r"(?:---|\.\.\.)(?:[ \n]|$)"


_DOCUMENT_MARKERS = re.compile(f"^{_DOCUMENT_MARKER}", re.MULTILINE)


class Chunk(Record):
    __slots__ = ("line", "text")

    def __init__(self, text: str, line: int) -> None:
        self.text: Final = text  # from this item's ``- `` line up to the next one (trailing comment lines included)
        self.line: Final = line  # 0-based line of the ``- `` line in the whole document


class Layout(Record):
    __slots__ = ("after", "before", "chunks", "dash", "lead")

    def __init__(self, before: str, lead: str, after: str, dash: int, chunks: list[Chunk]) -> None:
        self.before: Final = before  # the document up to the ``items:`` line
        self.lead: Final = lead  # comment lines between ``items:`` and the first item
        self.after: Final = after  # the document after the items
        self.dash: Final = dash  # the column of the items' ``-``
        self.chunks: Final = chunks

    def root_text(self) -> str:
        """The document without its items (``items: []``), for reading the other root keys. The
        comment lines before the first item stay in it: they go out as they came, so they must
        read as YAML too (a control character in them would not)."""
        return f"{self.before}items: []\n{self.lead}{self.after}"

    def assemble(self, entries: list[str], results: str | None) -> str:
        body = "".join(e if e.endswith("\n") else e + "\n" for e in entries)
        after = self.after if not self.after or self.after.endswith("\n") else self.after + "\n"
        return f"{self.before}items:{' []' if not entries else ''}\n{self.lead}{body}{after}{results or ''}"


_JSON_START = re.compile(r"\s*\{")
_ALIAS = re.compile(r"(?:^|[ \[{,])\*[^ \]},\n]")


def split(text: str) -> Layout | None:
    if "\r" in text or "\t" in text or "&" in text or _JSON_START.match(text):
        return None
    if "*" in text and _ALIAS.search(text):
        return None  # an alias (even an undefined one) makes items depend on each other
    keys = _items_keys(text)
    if len(keys) != 1:
        return None
    key_start, start = keys[0]
    first = _first_content(text, start)
    if first is None:
        return _empty(text, key_start, start)
    dash, char, at = first
    if char != "-" or not text.startswith(("- ", "-\n"), at + dash):
        return _empty(text, key_start, start) if dash == 0 and char != "-" else None
    end = _region_end(text, at, dash)
    if _DOCUMENT_MARKERS.search(text, end) is not None or _DOCUMENT_MARKERS.search(text, 0, key_start) is not None:
        return None
    line = text.count("\n", 0, start)
    region = text[start:end]
    starts = _item_starts(region, dash)
    if not starts or starts[0] != at - start:
        return None
    lead = region[: starts[0]]
    chunks: list[Chunk] = []
    line += lead.count("\n")
    for i, begin in enumerate(starts):
        finish = starts[i + 1] if i + 1 < len(starts) else len(region)
        text_of_item = region[begin:finish]
        chunks.append(Chunk(text_of_item, line))
        line += text_of_item.count("\n")
    return Layout(_without_results(text[:key_start]), lead, _without_results(text[end:]), dash, chunks)


def _items_keys(text: str) -> list[tuple[int, int]]:
    """Start and end of each match of ``_ITEMS_KEY``, as its ``finditer`` finds them (each is one
    line), tried only at the lines that start with ``items:``."""
    starts = [0] if text.startswith("items:") else []
    at = text.find("\nitems:")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\nitems:", at + 1)
    found = (_ITEMS_KEY.match(text, start) for start in starts)
    return [(m.start(), m.end()) for m in found if m is not None]


def _item_starts(region: str, dash: int) -> list[int]:
    """Where each line that is ``-`` at column ``dash`` (then a space or the line's end) starts."""
    needle = "\n" + " " * dash + "-"
    starts = [0] if region.startswith(needle[1:]) else []
    at = region.find(needle)
    while at >= 0:
        starts.append(at + 1)
        at = region.find(needle, at + 1)
    after = len(needle) - 1
    return [i for i in starts if region[i + after : i + after + 1] in (" ", "\n")]


def _first_content(text: str, start: int) -> tuple[int, str, int] | None:
    """Column, first character and offset of the first line after ``start`` that is not a comment."""
    for match in _FIRST_CONTENT.finditer(text, start):
        if match.group(2) != "#":
            return len(match.group(1)), match.group(2), match.start(2) - len(match.group(1))
    return None


def _region_end(text: str, at: int, dash: int) -> int:
    """Where the items' block ends: the first content line left of the dash, or at its column but
    not an item (a root key after ``items``)."""
    shallower = rf" {{0,{dash - 1}}}[^ \n#]|" if dash else ""
    end = re.compile(rf"^(?:{shallower} {{{dash}}}(?:[^ \n#-]|-[^ \n]))", re.MULTILINE).search(text, at)
    return len(text) if end is None else end.start()


def _empty(text: str, key_start: int, start: int) -> Layout:
    return Layout(_without_results(text[:key_start]), "", _without_results(text[start:]), 0, [])


_RESULTS_KEY = re.compile(r"^results:[^\n]*\n?", re.MULTILINE)
_NEXT_ROOT_KEY = re.compile(r"^[^ \n#-]", re.MULTILINE)


def _without_results(text: str) -> str:
    """The text less an earlier ``results:`` block: the output carries this run's results only."""
    found = _RESULTS_KEY.search(text)
    if found is None:
        return text
    following = _NEXT_ROOT_KEY.search(text, found.end())
    return text[: found.start()] + (text[following.start() :] if following else "")


def entry(mapping_text: str, dash: int) -> str:
    """A mapping written at column 0 (``key: value`` lines) as an item of the sequence at ``dash``."""
    lines = mapping_text.splitlines(keepends=True)
    pad = " " * dash
    inner = " " * (dash + 2)
    out = [f"{pad}- {lines[0]}"] if lines else [f"{pad}- {{}}\n"]
    out += [inner + line if line.strip() else line for line in lines[1:]]
    return "".join(out)
