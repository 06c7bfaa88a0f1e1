"""explain's markdown and table output escape every name and value of the user's (issue 30, case 6):
a TrainJob named ``<img src=x>`` or ``[link](https://x)``, refused or explained, adds no markup,
link, HTML, table cell or line to a pull-request comment.

The oracle reads Markdown as CommonMark does in one line (backslash escapes, code spans) and keeps
only the markup left over: that skeleton must be the same whatever the names are.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainjob_resources.values.text import bounded, code_span, markdown_text

from tests.test_explain import data_loader, explain_documents

PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
MARKUP = frozenset("\\`*_[]<>!&~#|")
CONTROLS = "\n\t\r\u2028\x1b\u202e\x9b\u200b"  # C0, a line separator, a bidi override, an 8-bit CSI, zero-width
PIECES = [*"ab-.<>[]()|`*_!&~#\\/: ", *CONTROLS, "<img src=x>", "[link](https://x)", "www.x.io", "``"]
HOSTILE = st.lists(st.sampled_from(PIECES), min_size=1, max_size=20).map("".join)


def skeleton(markdown: str) -> list[list[str]]:
    """Per line, the markup CommonMark sees outside backslash escapes and code spans (a code span
    counts as one ``code`` token); in a table row, a pipe that is not escaped ends a cell even
    inside a code span (GFM), so it is markup there too."""
    out: list[list[str]] = []
    for line in markdown.split("\n"):
        tokens: list[str] = []
        table = line.startswith("|")
        i = 0
        while i < len(line):
            char = line[i]
            if char == "\\" and i + 1 < len(line) and line[i + 1] in PUNCTUATION:
                i += 2
                continue
            if char == "`":
                run = len(line[i:]) - len(line[i:].lstrip("`"))
                fence = "`" * run
                end = line.find(fence, i + run)
                while end >= 0 and line[end + run : end + run + 1] == "`":
                    end = line.find(fence, end + run + 1)
                if end < 0:
                    tokens.append(fence)
                    i += run
                    continue
                content = line[i + run : end]
                if table:
                    tokens += ["|" for at, c in enumerate(content) if c == "|" and content[at - 1 : at] != "\\"]
                tokens.append("code")
                i = end + run
                continue
            if char in MARKUP:
                tokens.append(char)
            i += 1
        out.append(tokens)
    return out


def named(name: str, typo: bool) -> list[dict[str, Any]]:
    documents = copy.deepcopy(data_loader())
    trainjob = next(d for d in documents if d["kind"] == "TrainJob")
    trainjob["metadata"]["name"] = name
    if typo:  # a container the runtime does not have: refused, so left out with its name
        text = json.dumps(trainjob).replace('"data-loader"', '"data-lodaer"')
        trainjob.clear()
        trainjob.update(json.loads(text))
    return documents


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(name=HOSTILE, typo=st.booleans())
def test_a_trainjobs_name_adds_no_markup_to_the_markdown(name: str, typo: bool) -> None:
    hostile = explain_documents(named(name, typo), "markdown").output
    refused = typo or hostile.startswith("No TrainJob could be explained")  # a name Kubernetes refuses
    # a plain word is shown as it is, anything else in a code span: the reference is shown alike
    reference = "plain-name" if re.fullmatch("[A-Za-z0-9][A-Za-z0-9-]*", name) else "plain.name"
    plain = explain_documents(named(reference, refused), "markdown").output
    assert skeleton(hostile) == skeleton(plain), hostile
    assert hostile.count("\n") == plain.count("\n")


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(name=HOSTILE, typo=st.booleans())
def test_a_trainjobs_name_adds_no_line_or_control_character_to_the_table(name: str, typo: bool) -> None:
    hostile = explain_documents(named(name, typo), "table").output
    refused = typo or hostile.startswith("No TrainJob could be explained")
    plain = explain_documents(named("plain-name", refused), "table").output
    assert hostile.count("\n") == plain.count("\n")
    assert not any(c in hostile for c in CONTROLS.replace("\n", ""))


@given(st.text(max_size=30))
def test_a_code_span_holds_any_text_literally(text: str) -> None:
    span = code_span(text)
    (tokens,) = skeleton(span)
    assert tokens == ["code"]
    fence = len(span) - len(span.lstrip("`"))
    inner = span[fence:-fence]
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
        inner = inner[1:-1]
    assert "\n" not in inner


@given(st.text(max_size=30))
def test_markdown_text_is_literal(text: str) -> None:
    """No markup but code spans, one per word GFM could autolink (tests/test_markdown_autolinks.py)."""
    (tokens,) = skeleton(markdown_text(text))
    linkable = [w for w in re.split(r"\s+", bounded(text)) if re.search(r"(?i)www\.|://|@|mailto:|xmpp:", w)]
    assert tokens == ["code"] * len(linkable)


def test_the_issue_case_a_refused_trainjob_named_with_an_image_and_a_link() -> None:
    name = "<img src=https://x/p.png>[link](https://x)|`x`"
    output = explain_documents(named(name, typo=True), "markdown").output
    assert "- ``" in output and "<img src" in output, "shown, in a code span"
    (line,) = [row for row in output.splitlines() if "img" in row]
    assert skeleton(line) == [["code"]]
