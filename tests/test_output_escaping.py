"""Every output format of every command shows a hostile name or message as inert text (issue 47):
no control (C0, DEL, C1: an 8-bit CSI U+009B), bidi (a right-to-left override U+202E), zero-width or
line-separator character reaches a terminal or a Markdown comment, no markup, link or table cell is
added, and JSON reads back the same value. The formats are the registry's (``cli/formats.py``): a
format added there is tested here without a change. The oracle for Markdown is GitHub's cmark-gfm
(``cmarkgfm``); the one escaping module is ``values/text.py``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import example, given, settings
from hypothesis import strategies as st
from trainjob_resources.cli import formats
from trainjob_resources.krm.resource_list import Field, FileRef, ResourceRef, Result
from trainjob_resources.live.report import Finding, object_name
from trainjob_resources.report.change_report import compare
from trainjob_resources.report.explain import LeftOut
from trainjob_resources.yamltext.yamlnodes import from_python

C0 = [chr(i) for i in range(0x20)] + ["\x7f"]
C1 = [chr(i) for i in range(0x80, 0xA0)]
BIDI = [*"\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]
ZERO_WIDTH = [*"\u00ad\u180e\u200b\u200c\u200d\u2060\ufeff", "\u2028", "\u2029"]
MARKDOWN = [*"\\`*_[]<>!&~#|()", "www.", "://", "@", "<img src=x>", "[l](https://x)", "&#64;", "``"]
PIECES = st.sampled_from([*C0, *C1, *BIDI, *ZERO_WIDTH, *MARKDOWN, "a", "Z", "0", "-", ".", "/", " ", "é"])
HOSTILE = st.lists(PIECES, min_size=1, max_size=12).map("".join)
# What no shown output may hold but its own line breaks.
UNSAFE_SHOWN = re.compile("[" + re.escape("".join([*C0, *C1, *BIDI, *ZERO_WIDTH]).replace("\n", "")) + "]")
REFERENCE = "plain.name"  # a name shown in a code span, as every hostile one is


def outputs(command: str, text: str) -> dict[str, str]:
    """``command``'s output in each of its formats, ``text`` as every name and message it shows."""
    return {name: RENDER[command](formats.renderer(command, name), text) for name in formats.RENDERERS[command]}


def _explain(render: Callable[..., str], text: str) -> str:
    return render([], [LeftOut(text, text, text)])


def _against(render: Callable[..., str], text: str) -> str:
    return render(compare([], [], [LeftOut(text, "team-a", text)], [LeftOut(text, text, text)]))


def _check(render: Callable[..., str], text: str) -> str:
    return render([Finding("runtime-missing", "error", object_name("TrainJob", text, text), text)])


def _render(render: Callable[..., str], text: str) -> str:
    return render([from_python(_object(text))])


def _object(text: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {text: text}}


RENDER: dict[str, Callable[[Callable[..., str], str], str]] = {
    "render": _render,
    "explain": _explain,
    "explain --against": _against,
    "check": _check,
}


def gfm(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def tags(html: str) -> Counter[str]:
    """The elements of ``html`` but code spans (where a hostile name goes, whole)."""
    return Counter(tag for tag in re.findall(r"<(/?[a-z0-9]+)", html) if tag.strip("/") != "code")


def test_every_command_with_formats_is_tested() -> None:
    assert set(RENDER) == set(formats.RENDERERS)


@pytest.mark.parametrize("command", ["explain", "explain --against", "check"])
@settings(max_examples=80, deadline=None)
@given(text=HOSTILE)
@example(text="\u202eevil")
@example(text="\x9b31mred")
@example(text="a\x1b[2Jb\u2028c")
@example(text="\u200bwww.x.io|[l](https://x)")
def test_reports_show_every_text_inert(command: str, text: str) -> None:
    hostile, plain = outputs(command, text), outputs(command, REFERENCE)
    for name, output in hostile.items():
        assert not UNSAFE_SHOWN.search(output), (name, output)
        assert output.count("\n") == plain[name].count("\n"), (name, output)
        if name == "markdown":
            assert tags(gfm(output)) == tags(gfm(plain[name])), output


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("command", ["explain", "explain --against", "check"])
@settings(max_examples=100, deadline=None)
@given(text=HOSTILE)
def test_json_reports_read_back_the_same_text(command: str, text: str) -> None:
    output = outputs(command, text)["json"]
    assert not UNSAFE_SHOWN.search(output)
    strings = _strings(json.loads(output))
    assert any(text in s for s in strings), (text, strings)


@settings(max_examples=100, deadline=None)
@given(text=HOSTILE)
def test_render_keeps_the_users_data_whole(text: str) -> None:
    """render's stdout is the manifests (kubectl's input), not a report: every value as written."""
    import yaml

    for name, output in outputs("render", text).items():
        value = json.loads(output)["items"][0] if name == "json" else yaml.safe_load(output)
        assert value == _object(text), (name, output)


@settings(max_examples=150, deadline=None)
@given(text=HOSTILE)
@example(text="\u202eevil")
@example(text="\x9b31mred")
def test_render_results_show_every_text_inert(text: str) -> None:
    """render's stderr lines and the KRM results (``Result.display``, ``Result.to_python``)."""
    result = Result(
        text,
        "error",
        ResourceRef("v1", text, text, text),
        Field(text, current_value=text, proposed_value=text),
        FileRef(text, 0, 3),
    )
    line = result.display()
    assert not UNSAFE_SHOWN.search(line) and "\n" not in line, line
    assert not any(UNSAFE_SHOWN.search(s) or "\n" in s for s in _strings(result.to_python()))


def test_an_internal_errors_line_is_inert(capsys: pytest.CaptureFixture[str]) -> None:
    """Our own bug's message may quote the user's text: shown escaped."""
    from trainjob_resources.cli.guard import guarded

    def broken() -> int:
        raise ValueError("\x1b]0;title\x07\u202eevil\x9b2J\nforged line")

    assert guarded("trainjob-resources render", broken) == 1
    err = capsys.readouterr().err
    assert "internal error" in err and err.count("\n") == 1 and not UNSAFE_SHOWN.search(err), err
