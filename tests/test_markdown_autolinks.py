"""GFM autolinks (issue 46): a runtime named ``www.evil-phish.example`` or an extended resource
``www.evil-phish.example/login`` became a clickable link in ``explain --format markdown``, despite the
escaping: GFM's autolink extension reads text after escapes are decoded. Every markdown the function
writes goes through ``values.text.markdown_text`` (or ``code_span``), which writes a word that GFM
could link as a code span.

The oracle is GitHub's cmark-gfm: its Python bindings (``cmarkgfm``, PyPI) for generated texts, and
the Debian ``cmark-gfm`` binary where installed, on the installed command's output.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import example, given, settings
from hypothesis import strategies as st
from trainjob_resources.live.report import Finding
from trainjob_resources.live.report import render_markdown as check_markdown
from trainjob_resources.values.text import bounded, markdown_text

from tests.hostile import EXECUTABLE
from tests.kit import build

_PIECES = st.sampled_from(
    [*("www.", "WwW.", ".", "@", "://", "http", "https:", "ftp:", "mailto:", "xmpp:", "example", "com", "a", "Z"),
     *("0", "-", "_", "/", "(", ")", "*", "~", "`", "|", " ", ":", "<", ">", "&#64;", "\\", "[", "]", "!", "#"),
     *("+", "%", "?", "=")]
)  # fmt: skip
TEXTS = st.lists(_PIECES, min_size=1, max_size=16).map("".join)


def gfm(markdown: str) -> str:
    """The HTML GitHub's cmark-gfm makes of ``markdown`` (its extensions: autolink, table, ...)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def visible(rendered: str) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", rendered)).strip()


@settings(max_examples=300, deadline=None)
@given(TEXTS)
@example("www.evil-phish.example")
@example("www.evil-phish.example/login 1")
@example("cpu 1, www.evil-phish.example/login 2")
@example("team@evil-phish.example")
@example("https://evil-phish.example/login")
@example("x(www.a.b")
@example("mailto:a@b.c")
@example("a&#64;b.com")
def test_no_text_becomes_a_link_and_each_reads_as_written(text: str) -> None:
    written = markdown_text(text)
    paragraph = gfm(f"a {written} b")  # inside a line, as every caller writes it
    assert "<a " not in paragraph, (text, written, paragraph)
    if "|" not in text:  # a code span outside a table keeps the escape of a pipe
        assert visible(paragraph) == f"a {bounded(text)} b", (text, written, paragraph)
    cell = gfm(f"| a | b |\n| --- | --- |\n| {written} | x |\n")
    assert "<a " not in cell, (text, written, cell)
    assert cell.count("<td") == 2, (text, written, cell)


def test_check_markdown_names_no_link() -> None:
    finding = Finding(
        "trainer-version", "error", "TrainingRuntime team-a/www.evil-phish.example", "see https://evil.example"
    )
    assert "<a " not in gfm(check_markdown([finding]))


PHISH = "www.evil-phish.example"


def _app(cpu: int) -> str:
    """A namespaced runtime and a TrainJob whose names and an extended resource's are link-like."""
    trainer = {
        "name": "node",
        "image": "x",
        "resources": {"requests": {"cpu": cpu, PHISH + "/login": 1}, "limits": {PHISH + "/login": 1}},
    }
    runtime = build.trainer_runtime(PHISH, containers=[trainer])
    runtime["kind"], runtime["metadata"]["namespace"] = "TrainingRuntime", "team-a"
    return build.yaml_text(runtime, build.trainjob("tj", PHISH, namespace="team-a", kind="TrainingRuntime"))


def _oracles() -> list[object]:
    """cmarkgfm, and the Debian binary where installed."""
    binary = shutil.which("cmark-gfm")
    out: list[object] = [gfm]
    if binary is not None:
        out.append(
            lambda text: (
                subprocess.run(
                    [binary, "-e", "autolink", "-e", "table", "-e", "strikethrough", "-e", "tagfilter"],
                    input=text,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
        )
    return out


@pytest.mark.parametrize("against", [False, True])
def test_the_installed_explain_writes_no_link(tmp_path: Path, against: bool) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "all.yaml").write_text(_app(cpu=1))
    if against:
        (tmp_path / "base" / "app").mkdir(parents=True)
        (tmp_path / "base" / "app" / "all.yaml").write_text(_app(cpu=2))
    arguments = ["app", "--format", "markdown", *(["--against", "base"] if against else [])]
    done = subprocess.run(
        [str(EXECUTABLE), "explain", *arguments], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "www.evil-phish.example" in done.stdout
    for render in _oracles():
        rendered = render(done.stdout)  # type: ignore[operator]
        assert "www.evil-phish.example" in rendered
        assert "<a " not in rendered, rendered
