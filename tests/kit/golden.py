"""One golden checker with one update switch, for every golden of the suite.

``assert_golden(path, actual)`` compares ``actual`` with the file's text; when updating, it writes
``actual`` to the file instead (only if it differs) and the test goes on. Updating is on under pytest's
``--update-goldens`` option or with ``UPDATE_GOLDENS=1`` in the environment; ``make goldens`` runs the
tests that own a golden that way. Review the diff: a golden changes only when the behaviour is meant to.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

UPDATE_OPTION = "--update-goldens"
UPDATE_ENV = "UPDATE_GOLDENS"
_updating = [os.environ.get(UPDATE_ENV) == "1"]
rewritten: list[Path] = []


def updating() -> bool:
    return _updating[0]


def assert_golden(path: Path, actual: str) -> None:
    if updating():
        if not path.is_file() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
            rewritten.append(path)
        return
    assert actual == path.read_text(encoding="utf-8"), f"{path} differs (`make goldens` rewrites it: review the diff)"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("goldens").addoption(
        UPDATE_OPTION,
        action="store_true",
        help=f"rewrite each golden file a test compares with, instead of comparing ({UPDATE_ENV}=1 does the same)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(UPDATE_OPTION):
        _updating[0] = True


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # an xdist worker: its controller reports (pytest_testnodedown)
        output["goldens_rewritten"] = [str(path) for path in rewritten]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On xdist's controller: the goldens a worker rewrote."""
    output: dict[str, Any] = getattr(node, "workeroutput", None) or {}
    rewritten.extend(Path(path) for path in output.get("goldens_rewritten", ()))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if updating():
        terminalreporter.write_sep("=", f"goldens rewritten: {len(rewritten)}")
        for path in rewritten:
            terminalreporter.write_line(str(path))
