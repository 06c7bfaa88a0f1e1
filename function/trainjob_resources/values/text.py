"""Text fit for one line of a message: a tenant's names and values cannot forge lines, move the
terminal (ESC, an 8-bit CSI), reorder what is shown (bidi overrides) or fill a log with one value.

The one escaping module: every place the function shows a value it did not write itself (a terminal
line, a table cell, Markdown) goes through ``printable`` or one of the functions built on it here.
"""

from __future__ import annotations

import re

# C0, DEL, C1, the line and paragraph separators, and the bidi controls (embeddings, overrides,
# isolates, marks) and zero-width characters: escaped wherever a message shows user text.
_BEYOND_C0 = "\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb"
_UNSAFE = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
_UNSAFE_IN_JSON = re.compile(f"[{_BEYOND_C0}]")  # JSON text escapes C0 in strings itself
MAX_SHOWN = 300  # characters of one user value in a message (names, paths, quantities, values)


def printable(text: object) -> str:
    """``text`` with every control, bidi and zero-width character written as an escape."""
    value = str(text)
    return _UNSAFE.sub(_escape, value) if _UNSAFE.search(value) else value


def json_text(text: str) -> str:
    """JSON text (``json.dumps``'s, with ``ensure_ascii=False``) with every character ``printable``
    escapes written as a ``\\uXXXX`` escape: a reader gets the same values, a terminal that shows the
    text gets no control, bidi or zero-width character. Outside strings JSON text is ASCII; inside
    them ``json.dumps`` escapes C0 itself."""
    if text.isascii() and "\x7f" not in text:
        return text
    return _UNSAFE_IN_JSON.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


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
# What GFM links without any markup ("Autolinks (extension)"; cmark-gfm extensions/autolink.c): a
# www. domain, a URL of a scheme (http, https, ftp...), an e-mail address, mailto: and xmpp:. The
# extension reads the text after escapes and entities are decoded, so escaping cannot stop it; a
# code span can (it is not text). A word (a run without white space) that holds any of these marks
# is written as a code span; tests/test_markdown_autolinks.py checks against cmark-gfm.
_LINKABLE = re.compile(r"(?i)www\.|://|@|mailto:|xmpp:")
_WORDS = re.compile(r"(\s+)")


def markdown_text(text: object, limit: int = MAX_SHOWN) -> str:
    """``bounded(text)`` as literal Markdown text, fit for a table cell: no markup, link, autolink,
    image or HTML of the user's survives, and no line break (escaped as ``\\n``)."""
    return markdown_literal(bounded(text, limit))


def markdown_literal(text: object) -> str:
    """``printable(text)``, whole, as literal Markdown text (``markdown_text`` without the cut)."""
    value = printable(text)
    if not _LINKABLE.search(value):
        return _MARKDOWN.sub(r"\\\1", value)
    return "".join(
        _span(word, table=True) if _LINKABLE.search(word) else _MARKDOWN.sub(r"\\\1", word)
        for word in _WORDS.split(value)
    )


def code_span(text: object, limit: int = MAX_SHOWN, table: bool = False) -> str:
    """``bounded(text)`` as a Markdown code span: literal whatever it holds (a fence longer than its
    longest run of backticks, padded where it starts or ends with one; CommonMark "Code spans").
    ``table``: inside a GitHub table cell, where a pipe ends the cell even in a code span unless
    escaped (GFM "Tables")."""
    return _span(bounded(text, limit), table)


def _span(value: str, table: bool) -> str:
    fence = "`" * (max((len(run) for run in re.findall("`+", value)), default=0) + 1)
    if not value or value[0] == "`" or value[-1] == "`" or (value[0] == " " and value[-1] == " "):
        value = f" {value} "
    span = f"{fence}{value}{fence}"
    return span.replace("|", "\\|") if table else span


# Words of letters, digits and dashes (a DNS label), or two of them as ``namespace/name``: no markup,
# and no dot or colon, so not a domain or URL GitHub would link either.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9][A-Za-z0-9-]*)?")


def markdown_name(name: str, table: bool = True) -> str:
    """A user's name in Markdown: as it is when plain (``node``, ``team-a/nightly-eval``), else a
    code span, where nothing is markup, a link or HTML."""
    return name if _PLAIN_NAME.fullmatch(name) else code_span(name, table=table)


def one_line(text: object, limit: int = 500) -> str:
    """A message of another program (an API server, a client library) as one line: its white space
    runs made one space, ``printable``, cut at ``limit`` characters."""
    value = printable(" ".join(str(text).split()))
    return value if len(value) <= limit else value[:limit] + "…"
