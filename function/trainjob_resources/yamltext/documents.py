"""A YAML stream cut into its documents by their markers, without parsing them."""

from __future__ import annotations

import re
from collections.abc import Iterator

_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)
_NOT_CONTENT = re.compile(r"^(?:[ \t]*(?:#.*)?|%.*)$")


def _empty_document(chunk: str) -> bool:
    """Whether ``chunk`` is a ``---`` marker with neither content nor a directive: a null document."""
    if chunk.strip() == "---":
        return True
    if not chunk.startswith("---"):
        return False
    first, _, rest = chunk.partition("\n")
    if not _NOT_CONTENT.match(first[3:]) or first[3:].lstrip().startswith("%"):
        return False
    return all(_NOT_CONTENT.match(row) and not row.startswith("%") for row in rest.splitlines())


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """The documents of a YAML stream as (first line, text), without parsing them.

    A line starting with ``---`` or ``...`` is a document marker wherever it is (YAML forbids
    one inside content), so cutting there is exact; directives and comments before a marker
    stay with the document that follows.
    """
    cuts = [0]
    for match in _MARKER.finditer(text):
        if match.group() == "---":
            cuts.append(match.start())
        else:
            end = text.find("\n", match.end())
            cuts.append(len(text) if end < 0 else end + 1)
    cuts.append(len(text))
    start = line = 0
    for cut in cuts[1:]:
        chunk = text[start:cut]
        if cut < len(text) and all(_NOT_CONTENT.match(row) for row in chunk.splitlines()):
            continue
        if _empty_document(chunk):  # a marker and nothing else: no document to parse (1M of them cost seconds)
            line += chunk.count("\n")
            start = cut
            continue
        if chunk:
            yield line, chunk
            line += chunk.count("\n")
        start = cut
