"""Every relative link in the repository's Markdown (the README, CONTRIBUTING.md, docs/, the examples'
and the scenarios' READMEs, ...) names a file or folder of the repository, and every ``#anchor`` into a
Markdown file names one of its headings (issue 32: the README's reference moved into docs/, and nothing
may point at where it was)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Every Markdown page of the repository but generated ones (explain's golden markdown) and tool folders.
GENERATED = ROOT / "tests" / "testdata"
PAGES = sorted(
    page
    for page in ROOT.rglob("*.md")
    if not any(part.startswith(".") or part in ("build", "dist") for part in page.relative_to(ROOT).parts)
    and not page.is_relative_to(GENERATED)
)
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
# [text](target) and [text](target "title"); text may itself hold `code`
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def prose(text: str) -> str:
    """The text without fenced blocks (YAML comments start with #, commands hold brackets)."""
    return _FENCE.sub("", text)


def links(text: str) -> list[str]:
    """Link targets of the prose; a bracket inside inline code is not a link, but a link's text may be code."""
    found = []
    for line in prose(text).splitlines():
        for match in _LINK.finditer(line):
            before = line[: match.start()]
            if before.count("`") % 2:  # inside inline code
                continue
            found.append(match.group(1))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor, with GitHub's -1, -2 ... for repeats."""
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(prose(page.read_text())):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken(page: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for target in links(page.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            problems.append(f"{target}: no such file")
        elif not file.is_relative_to(root):
            problems.append(f"{target}: outside the repository")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            problems.append(f"{target}: {file.relative_to(root)} has no heading #{anchor}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_checker_reads_the_pages_links() -> None:
    assert {"README.md", "CONTRIBUTING.md", "docs/lifecycle.md", "kustomization-examples/README.md"} <= {
        str(page.relative_to(ROOT)) for page in PAGES
    }
    readme = links((ROOT / "README.md").read_text())
    assert len(readme) >= 20 and "docs/lifecycle.md#lifecycle-on-a-live-cluster" in readme
    assert sum("#" in target for page in PAGES for target in links(page.read_text())) >= 20


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n## `code` (error)\n\nSee [a](#code-error), [b](#nothing), [c](gone.md), "
        "[d](page.md#top), `[e](in-code.md)`, [f](https://example.com/x#y).\n\n```yaml\n[g](fenced.md)\n```\n"
    )
    assert links(page.read_text()) == ["#code-error", "#nothing", "gone.md", "page.md#top", "https://example.com/x#y"]
    assert broken(page, tmp_path) == ["#nothing: page.md has no heading #nothing", "gone.md: no such file"]


def test_slugs_follow_github() -> None:
    assert slug("`runtime-ref-immutable` (error)") == "runtime-ref-immutable-error"
    assert slug("Where the function differs from upstream on purpose") == (
        "where-the-function-differs-from-upstream-on-purpose"
    )
    assert (
        slug("6. `check`: what a sync will do to the live cluster") == "6-check-what-a-sync-will-do-to-the-live-cluster"
    )
