"""The Makefile's loop (CONTRIBUTING.md): `make help` lists every target with its `## ` text, `make unit`
leaves out every marked test and nothing else, `make test` runs every test after `make lint`'s checks,
and the pre-commit hooks run those same checks."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text()
_RULE = re.compile(r"^([a-z][a-z-]*):(.*)$")


def rules() -> dict[str, tuple[list[str], list[str], str]]:
    """Each plain target: (its prerequisites, its recipe lines, its `## ` text joined)."""
    out: dict[str, tuple[list[str], list[str], str]] = {}
    lines = MAKEFILE.splitlines()
    doc: list[str] = []
    for at, line in enumerate(lines):
        if line.startswith("## "):
            doc.append(line[3:])
            continue
        rule = _RULE.match(line)
        if rule and ":=" not in line:
            recipe = []
            for following in lines[at + 1 :]:
                if not following.startswith("\t"):
                    break
                recipe.append(following.strip())
            out[rule.group(1)] = (rule.group(2).split(), recipe, " ".join(doc))
        doc = []
    return out


def variable(name: str) -> str:
    found = re.search(rf"^{name} :?= (.*)$", MAKEFILE, re.MULTILINE)
    assert found is not None, name
    return found.group(1)


def test_every_target_has_a_help_text() -> None:
    phony = re.search(r"^\.PHONY: (.*)$", MAKEFILE, re.MULTILINE)
    assert phony is not None
    targets = rules()
    assert set(phony.group(1).split()) == set(targets)
    assert [name for name, (_, _, doc) in targets.items() if not doc] == []
    assert variable(r"\.DEFAULT_GOAL") == "help"


def test_make_help_prints_each_target_with_its_text() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not on PATH")
    done = subprocess.run([make, "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True)
    printed = {}
    for line in done.stdout.splitlines():
        found = re.fullmatch(r"  make (\S+) +(.+)", line)
        assert found is not None, line
        printed[found.group(1)] = found.group(2)
    assert printed == {name: doc for name, (_, _, doc) in rules().items()}


def markers() -> set[str]:
    pytest_options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return {line.split(":", 1)[0] for line in pytest_options["markers"]}


def test_unit_leaves_out_every_marker_and_nothing_else() -> None:
    """A marker added to pyproject without a place in `make unit`'s expression fails here."""
    expression = variable("UNIT_MARKERS")
    terms = expression.split(" and ")
    assert all(t.startswith("not ") for t in terms), expression
    assert {t.removeprefix("not ") for t in terms} == markers()
    _, recipe, _ = rules()["unit"]
    (pytest_line,) = [line for line in recipe if "pytest" in line]
    assert '-m "$(UNIT_MARKERS)"' in pytest_line


def test_test_runs_lint_then_every_test() -> None:
    prerequisites, recipe, _ = rules()["test"]
    assert prerequisites[-2:] == ["cluster", "lint"], "CI's make test: the control plane, the checks, the tests"
    assert recipe == ["$(BIN)/python -m pytest $(XDIST)"], "make test runs every test: no -m, -k or paths"
    assert variable("XDIST") == "-n $(WORKERS) --dist loadfile", "the files on workers (tests/kit/workers.py)"


def lint_commands() -> list[list[str]]:
    _, recipe, _ = rules()["lint"]
    return [shlex.split(line.replace("$(BIN)/", ".venv/bin/")) for line in recipe]


def test_lint_is_ruff_check_ruff_format_check_and_mypy_strict() -> None:
    assert lint_commands() == [
        [".venv/bin/ruff", "check", "function", "tests", "bench"],
        [".venv/bin/ruff", "format", "--check", "function", "tests", "bench"],
        [".venv/bin/mypy", "--strict", "function"],
    ]


def test_the_pre_commit_hooks_run_make_lints_checks() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (repo,) = config["repos"]
    assert repo["repo"] == "local", "local hooks with the venv's tools: nothing fetched"
    hooks = repo["hooks"]
    assert {hook["language"] for hook in hooks} == {"system"}
    commands = []
    for hook in hooks:
        entry = shlex.split(hook["entry"])
        if hook.get("pass_filenames", True):
            # pre-commit passes the changed files its `files` pattern selects: the folders make lint checks
            folders = re.fullmatch(r"\^\(([a-z|]+)\)/", hook["files"])
            assert folders is not None, hook["files"]
            entry += folders.group(1).split("|")
        commands.append(entry)
    assert commands == lint_commands()


def test_the_docs_name_only_targets_the_makefile_has() -> None:
    targets = set(rules())
    for doc in ("README.md", "CONTRIBUTING.md"):
        named = set(re.findall(r"`make ([a-z][a-z-]*)", (ROOT / doc).read_text()))
        assert named, doc
        assert named <= targets, f"{doc} names {sorted(named - targets)}"
