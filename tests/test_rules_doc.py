"""docs/rules.md lists every registered rule, in registry order, with what it declares."""

from __future__ import annotations

import re
from pathlib import Path

from trainjob_resources.checks.rules.registry import RULES

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_the_rules_doc_lists_every_rule_in_registry_order() -> None:
    table = DOC.read_text().split("## The registry", 1)[1].split("## Adding a rule", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| ([^|]+) \| ([^|]+) \|", table, flags=re.MULTILINE)
    assert [name for name, _, _ in rows] == [rule.name for rule in RULES]
    for (name, stages, scope), rule in zip(rows, RULES, strict=True):
        assert stages.strip() == ", ".join(s.name for s in rule.stages), name
        assert scope.strip() == rule.scope, name


def test_every_rule_module_is_registered() -> None:
    folder = Path(__file__).resolve().parents[1] / "function" / "trainjob_resources" / "checks" / "rules"
    support = {"__init__", "framework", "reads", "registry", "stages"}
    modules = {p.stem for p in folder.glob("*.py")} - support
    registered = {rule.check.__module__.rsplit(".", 1)[1] for rule in RULES}
    assert modules == registered
