"""Text fit for one line of a message: a tenant's names and values cannot forge lines, move the
terminal (ESC), reorder what is shown (bidi overrides) or fill a log with one value."""

from __future__ import annotations

import re

# C0, DEL, C1, the line and paragraph separators, and the bidi controls (embeddings, overrides,
# isolates, marks) and zero-width characters: escaped wherever a message shows user text.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")
MAX_SHOWN = 300  # characters of one user value in a message (names, paths, quantities, values)


def printable(text: object) -> str:
    """``text`` with every control, bidi and zero-width character written as an escape."""
    value = str(text)
    return _UNSAFE.sub(_escape, value) if _UNSAFE.search(value) else value


def bounded(text: object, limit: int = MAX_SHOWN) -> str:
    """``printable(text)`` cut at ``limit`` characters, saying how many more there were."""
    value = str(text)
    if len(value) > limit:
        value = f"{value[:limit]}… ({len(value) - limit} more characters)"
    return printable(value)


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


# What Markdown (CommonMark, GitHub's tables) reads as markup in a line of text: emphasis, code,
# links and images, raw HTML, entities, strikethrough, headings, table cells. Any ASCII punctuation
# may be backslash-escaped (CommonMark 0.31, "Backslash escapes"), so each is written escaped.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>!&~#|])")


def markdown_text(text: object, limit: int = MAX_SHOWN) -> str:
    """``bounded(text)`` as literal Markdown text, fit for a table cell: no markup, link, image or
    HTML of the user's survives, and no line break (escaped as ``\\n``)."""
    return _MARKDOWN.sub(r"\\\1", bounded(text, limit))


def code_span(text: object, limit: int = MAX_SHOWN, table: bool = False) -> str:
    """``bounded(text)`` as a Markdown code span: literal whatever it holds (a fence longer than its
    longest run of backticks, padded where it starts or ends with one; CommonMark "Code spans").
    ``table``: inside a GitHub table cell, where a pipe ends the cell even in a code span unless
    escaped (GFM "Tables")."""
    value = bounded(text, limit)
    fence = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    if not value or value[0] == "`" or value[-1] == "`" or (value[0] == " " and value[-1] == " "):
        value = f" {value} "
    span = f"{fence}{value}{fence}"
    return span.replace("|", "\\|") if table else span
