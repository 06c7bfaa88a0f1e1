"""docs/architecture.md and CONTRIBUTING.md name only modules and folders that exist, and the
architecture page's layer table is the layer order tests/test_layers.py enforces (issue 47: the pages
that describe the code stay true to it)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "function" / "trainjob_resources"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
PAGES = (ARCHITECTURE, ROOT / "CONTRIBUTING.md")
# `rules/registry.py`, `repo/`, `tests/test_layers.py`, `.ci/image.sh`: a path in inline code
_PATH = re.compile(r"`(\.?[\w.-]+(?:/[\w.-]+)*(?:\.py|\.sh|/))`")
_ROW = re.compile(r"^\| `([\w.]+)/?` \|", re.MULTILINE)


def named_paths(text: str) -> list[str]:
    """Every file or folder path the page names in inline code: ``name.py``, ``a/b.py``, ``folder/``."""
    return _PATH.findall(text)


def missing(text: str, roots: tuple[Path, ...] = (PACKAGE, ROOT)) -> list[str]:
    """The named paths that exist under none of ``roots`` (the package's folder, then the repository's)."""
    return [path for path in named_paths(text) if not any((root / path).exists() for root in roots)]


def test_every_module_and_folder_the_pages_name_exists() -> None:
    for page in PAGES:
        assert missing(page.read_text()) == [], page.name


def test_the_pages_name_the_layers_and_their_modules() -> None:
    """Not vacuous: each page names the layers and a fair number of modules."""
    for page in PAGES:
        names = set(named_paths(page.read_text()))
        assert {"values/", "repo/", "live/", "cli/", "process.py", "rules/registry.py"} <= names, page.name
        assert len(names) >= 15, page.name


def test_the_checker_finds_a_module_that_is_gone(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "memo.py").write_text("")
    text = "`checks/memo.py`, `checks/gone.py`, `checks/`, `nowhere/`, `a b.py`, `memo`, `x = 1`"
    assert named_paths(text) == ["checks/memo.py", "checks/gone.py", "checks/", "nowhere/"]
    assert missing(text, (tmp_path,)) == ["checks/gone.py", "nowhere/"]


def test_the_layer_table_is_the_enforced_order() -> None:
    text = ARCHITECTURE.read_text()
    section = text[text.index("## Layers") : text.index("\n## ", text.index("## Layers") + 1)]
    rows = [name.removesuffix(".py") for name in _ROW.findall(section)]
    assert rows == [layer for layer in LAYERS if layer != "__main__"]


def test_readme_and_contributing_link_the_architecture_page() -> None:
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()
    assert "(docs/architecture.md)" in (ROOT / "CONTRIBUTING.md").read_text()
