"""Fixtures for the real tools the suite drives: in CI a missing one fails the run, elsewhere it skips."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

KPT_FALLBACK = Path("/usr/lib/google-cloud-sdk/bin/kpt")


def _tool(name: str, fallback: Path | None = None) -> str:
    found = shutil.which(name)
    if found is None and fallback is not None and fallback.is_file() and os.access(fallback, os.X_OK):
        found = str(fallback)
    if found is None:
        reason = f"{name} is not on PATH; this test drives the real {name}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI must provide it)")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="session")
def kubectl() -> str:
    return _tool("kubectl")


@pytest.fixture(scope="session")
def kpt() -> str:
    return _tool("kpt", KPT_FALLBACK)
