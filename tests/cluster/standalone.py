"""The standalone kustomize that `make cluster` builds (tests/cluster/build.sh), for tests.

Tests take a tool by role, not by version, so that a bump of the pinned versions in build.sh needs no
test edit: ``kustomize("newest")`` and ``kustomize("oldest")`` are the newest and the oldest kustomize
paths.json lists. In CI (CI=true) a missing binary fails the test; elsewhere it skips with the reason.
"""

from __future__ import annotations

import os

import pytest

from tests.cluster.controlplane import tool_paths

KUSTOMIZE_ROLES = ("newest", "oldest")


def unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must provide it)")
    pytest.skip(reason)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.lstrip("v").split("."))


def kustomize_or_none(role: str) -> tuple[str, str] | None:
    """(version, path) of the newest or oldest standalone kustomize built, or None."""
    paths = tool_paths()
    built: dict[str, str] = (paths or {}).get("kustomize") or {}
    if not built:
        return None
    versions = sorted(built, key=_version_key)
    version = versions[-1] if role == "newest" else versions[0]
    return version, built[version]


def kustomize(role: str = "newest") -> str:
    """The path of the newest or oldest standalone kustomize `make cluster` built (skip/fail when absent)."""
    found = kustomize_or_none(role)
    if found is None:
        unavailable("no standalone kustomize built (run `make cluster`; kubectl's cannot run exec functions)")
        raise AssertionError("unreachable")
    return found[1]
