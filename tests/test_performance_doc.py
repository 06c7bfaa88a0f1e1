"""docs/performance.md's targets are bench/run.py's, and every module it names exists (issue 47: the
speed code's table names where each piece lives)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_architecture_doc import missing, named_paths

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "performance.md"


def targets() -> dict[str, float]:
    """``TARGETS`` of bench/run.py, read without importing it (it imports the bench's own modules)."""
    for node in ast.parse((ROOT / "bench" / "run.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TARGETS" for t in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return value
    raise AssertionError("bench/run.py has no TARGETS")


def documented_targets(text: str) -> dict[str, float]:
    """The ``## Targets`` table: its first column and its last (the limit)."""
    section = text[text.index("## Targets") : text.index("\n## ", text.index("## Targets") + 1)]
    return {
        row[0]: float(row[-1])
        for row in (re.split(r"\s*\|\s*", line.strip("| ")) for line in section.splitlines())
        if len(row) >= 3 and re.fullmatch(r"[A-Za-z0-9_]+", row[0]) and re.fullmatch(r"[\d.]+", row[-1])
    }


def test_the_documented_targets_are_the_bench_s() -> None:
    assert documented_targets(DOC.read_text()) == targets()


def test_every_module_the_page_names_exists() -> None:
    text = DOC.read_text()
    assert len(named_paths(text)) >= 20
    assert missing(text) == []


def test_the_target_reader_reads_a_changed_limit() -> None:
    text = (
        "## Targets\n\n| target | definition | limit |\n| --- | --- | ---: |\n"
        "| P1 | x | 1.0 |\n| P2 | y | 0.5 |\n\n## Next\n"
    )
    assert documented_targets(text) == {"P1": 1.0, "P2": 0.5}
