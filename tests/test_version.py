"""The version is written once, as the package's ``__version__``: pyproject.toml reads it (setuptools'
dynamic ``attr``), ``--version`` prints it, .ci/image.sh tags the image with it, and every copy a user
reads (the image tag and the Argo CD plugin's name in the docs and examples) says the same."""

from __future__ import annotations

import ast
import re
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from trainjob_resources import __version__
from trainjob_resources.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_INIT = ROOT / "function" / "trainjob_resources" / "__init__.py"
# Where a user reads the version: the image's tag, and the Argo CD plugin's versioned name.
COPIES = (
    re.compile(r"ghcr\.io/trainjob-resources/trainjob-resources:(\d[\w.+-]*)"),
    re.compile(r"trainjob-resources-v(\d[\w.+-]*)"),
)
SKIPPED_FOLDERS = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis", "build", "dist"}
TEXT_SUFFIXES = {".md", ".yaml", ".yml", ".py", ".sh", ".txt", ".toml", ".json", ".cfg", ""}


def test_the_version_is_a_literal_in_the_package() -> None:
    """setuptools reads ``attr`` without importing the package when it is a plain string assignment."""
    tree = ast.parse(PACKAGE_INIT.read_text())
    values = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    assert values == [__version__]
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", __version__), __version__


def test_pyproject_reads_the_version_from_the_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"], "the version is written once, in the package's __init__.py"
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "trainjob_resources.__version__"}


def test_the_installed_distribution_has_the_packages_version() -> None:
    installed = metadata.version("trainjob-resources")
    assert installed == __version__, (
        f"the installed metadata says {installed}, the package {__version__}: reinstall (make .venv/.installed-test)"
    )


def test_version_flag_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"trainjob-resources {__version__}\n"


def test_the_ci_image_is_tagged_with_it() -> None:
    """.ci/image.sh's own line that reads the version, run as written from the repository's root."""
    (line,) = [s for s in (ROOT / ".ci" / "image.sh").read_text().splitlines() if s.startswith("version=")]
    done = subprocess.run(
        ["bash", "-c", f'set -euo pipefail; {line}; printf %s "$version"'],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == __version__


def _text_files() -> list[Path]:
    found: list[Path] = []
    for path in sorted(ROOT.rglob("*")):
        relative = path.relative_to(ROOT).parts
        if any(part in SKIPPED_FOLDERS or part.endswith(".egg-info") for part in relative):
            continue
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name == "Dockerfile"):
            found.append(path)
    return found


def test_every_copy_a_user_reads_says_the_packages_version() -> None:
    seen: dict[str, set[str]] = {}
    for path in _text_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for pattern in COPIES:
            for match in pattern.finditer(text):
                seen.setdefault(match.group(1).rstrip("."), set()).add(str(path.relative_to(ROOT)))
    assert seen, "no copy of the version found: the patterns no longer match the docs"
    assert set(seen) == {__version__}, {v: sorted(p) for v, p in seen.items() if v != __version__}
    for path in ("kustomization-examples/argocd-cmp/plugin.yaml", "deploy/argocd-cmp/plugin.yaml"):
        plugin = yaml.safe_load((ROOT / path).read_text())
        # Argo CD 4.0 refuses spec.version (its upgrade notes 3.6 -> 4.0): the version is in the name.
        assert "version" not in plugin["spec"], path
        assert plugin["metadata"]["name"] == f"trainjob-resources-v{__version__}", path
