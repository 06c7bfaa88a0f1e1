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
    if value.isascii() and value.isprintable():  # the common case, without the regex: none of _UNSAFE is
        return value
    return _UNSAFE.sub(_escape, value) if _UNSAFE.search(value) else value


def bounded(text: object, limit: int = MAX_SHOWN) -> str:
    """``printable(text)`` cut at ``limit`` characters, saying how many more there were."""
    value = str(text)
    if len(value) > limit:
        value = f"{value[:limit]}… ({len(value) - limit} more characters)"
    return printable(value)


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")
