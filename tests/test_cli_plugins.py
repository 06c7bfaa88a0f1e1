"""The CLI runs without pydantic plugins and without looking for them (cli.without_pydantic_plugins).

The stand-in loader module is only right while pydantic's one use of its plugin loader is
``get_plugins()``: these tests read the installed pydantic to check that, so an upgrade that changes
it fails here rather than in a render.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest
from trainjob_resources.cli import main as cli

from tests.goldens import TESTDATA

PYDANTIC = Path(importlib.util.find_spec("pydantic").origin or "").parent  # type: ignore[union-attr]
LOADER = PYDANTIC / "plugin" / "_loader.py"


def test_pydantic_uses_its_plugin_loader_only_for_get_plugins() -> None:
    users: dict[str, list[str]] = {}
    for path in sorted(PYDANTIC.rglob("*.py")):
        lines = [line.strip() for line in path.read_text().splitlines() if "_loader" in line]
        if path != LOADER and lines:
            users[path.relative_to(PYDANTIC).as_posix()] = lines
    assert users == {"plugin/_schema_validator.py": ["from ._loader import get_plugins"]}


def test_the_stand_in_is_called_as_the_real_loader_is_and_answers_as_a_disabled_one() -> None:
    spec = importlib.util.spec_from_file_location("real_pydantic_plugin_loader", LOADER)
    assert spec is not None and spec.loader is not None
    real = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(real)
    assert inspect.signature(real.get_plugins).parameters == {}
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("PYDANTIC_DISABLE_PLUGINS", "__all__")
        assert tuple(real.get_plugins()) == ()


SCRIPT = """\
import sys
from trainjob_resources.cli import main as cli
code = cli.main([])
print("importlib.metadata imported:", "importlib.metadata" in sys.modules, file=sys.stderr)
sys.exit(code)
"""


def test_a_render_neither_imports_importlib_metadata_nor_changes_its_output() -> None:
    case = TESTDATA / "success" / "data-loader-64gi"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=(case / "input.yaml").read_bytes(),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert b"importlib.metadata imported: False" in done.stderr
    assert done.stdout.decode() == (case / "expected.yaml").read_text()


def test_the_stand_in_has_no_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, cli.PYDANTIC_PLUGIN_LOADER, raising=False)
    cli.without_pydantic_plugins()
    assert tuple(sys.modules[cli.PYDANTIC_PLUGIN_LOADER].get_plugins()) == ()


def test_a_loader_already_imported_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    imported = types.ModuleType(cli.PYDANTIC_PLUGIN_LOADER)
    monkeypatch.setitem(sys.modules, cli.PYDANTIC_PLUGIN_LOADER, imported)
    cli.without_pydantic_plugins()
    assert sys.modules[cli.PYDANTIC_PLUGIN_LOADER] is imported
