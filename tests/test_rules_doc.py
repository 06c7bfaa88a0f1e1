"""docs/rules.md is written from the registry (``python -m tests.rules_doc``), every rule module is
registered, and the page's worked example passes our own ruff and mypy as a rule module."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trainjob_resources.rules.registry import RULES

from tests.rules_doc import DOC, EXAMPLE, ROOT, render

PACKAGE = ROOT / "function" / "trainjob_resources"


def test_the_rules_doc_is_written_from_the_registry() -> None:
    assert DOC.read_text() == render(), "docs/rules.md is stale: run `python -m tests.rules_doc` (or make goldens)"


def test_every_rule_module_is_registered() -> None:
    # The framework, and the policy stage's shared parts (its namespace objects, arithmetic, and the stage as a whole).
    support = {
        "__init__",
        "framework",
        "reads",
        "registry",
        "stages",
        "namespace_objects",
        "policy_math",
        "policy_stage",
    }
    modules = {p.stem for p in (PACKAGE / "rules").glob("*.py")} - support
    registered = {rule.check.__module__.rsplit(".", 1)[1] for rule in RULES}
    assert modules == registered


@pytest.mark.slow
def test_the_worked_example_passes_ruff_and_mypy_as_a_rule_module(tmp_path: Path) -> None:
    copy = tmp_path / "trainjob_resources"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / "rules" / "zero_memory.py"
    shutil.copy(EXAMPLE, module)
    bin_dir = Path(sys.executable).parent
    config = ["--config", str(ROOT / "pyproject.toml")]
    for command in (
        [str(bin_dir / "ruff"), "check", *config, str(module)],
        [str(bin_dir / "ruff"), "format", "--check", *config, str(module)],
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            "3.11",
            "--cache-dir",
            str(tmp_path / "cache"),
            str(module),
        ],
    ):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{command[0]} {command[1]}: {done.stdout}{done.stderr}"
