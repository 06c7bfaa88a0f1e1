"""Fixtures for the real tools the suite drives: in CI a missing one fails the run, elsewhere it skips."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.cluster.argocd import ArgoCD
from tests.cluster.controlplane import (
    DEFAULT_KUEUE,
    DEFAULT_TRAINER,
    RUNNING,
    ControlPlane,
    Unavailable,
    require_paths,
)
from tests.engine import Engine, find_engine

# The test kit's plugins (tests/kit): the CPU budget of a test, the goldens' update switch, the scheduler
# of `make test`'s workers.
pytest_plugins = ("tests.kit.cpu_budget", "tests.kit.golden", "tests.kit.workers")

# Hypothesis's profiles, for every test file (not only for a run that happens to import the one that set
# them): no per-example deadline nor too_slow health check, wall-clock checks that a loaded machine fails
# (make test's four workers on two cores).
settings.register_profile(
    "default", max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "default"))

Planes = Callable[[str], ControlPlane]
KPT_FALLBACK = Path("/usr/lib/google-cloud-sdk/bin/kpt")
# A test that asks for a real tool's fixture carries that tool's marker (pyproject's markers), so that
# `make unit` (-m "not kubectl and ...") leaves it out without each test repeating the mark.
FIXTURE_MARKERS = {
    "kubectl": "kubectl",
    "kpt": "kpt",
    "engine": "image",
    "cluster_paths": "cluster",
    "control_plane": "cluster",
    "control_planes": "cluster",
    "trainer_control_plane": "cluster",
    "kueue_control_plane": "cluster",
    "kueue_planes": "cluster",
    "kueue_release_plane": "cluster",
    "argocd": "cluster",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in fixtures and item.get_closest_marker(marker) is None:
                item.add_marker(marker)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """A failed test's report carries the errors of the API servers running in its process (their
    logs go with them when they stop)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.failed:
        return
    for plane in list(RUNNING):
        errors = plane.api_server_errors()
        if errors:
            report.sections.append((f"kube-apiserver errors (Trainer {plane.trainer})", "\n".join(errors)))


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must provide it)")
    pytest.skip(reason)


def _tool(name: str, fallback: Path | None = None) -> str:
    found = shutil.which(name)
    if found is None and fallback is not None and fallback.is_file() and os.access(fallback, os.X_OK):
        found = str(fallback)
    if found is None:
        _unavailable(f"{name} is not on PATH; this test drives the real {name}")
        raise AssertionError("unreachable")
    return found


@pytest.fixture(scope="session")
def kubectl() -> str:
    return _tool("kubectl")


@pytest.fixture(scope="session")
def kpt() -> str:
    return _tool("kpt", KPT_FALLBACK)


@pytest.fixture(scope="session")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    """A container engine and the image the Dockerfile builds from this checkout (tests/engine.py)."""
    found = find_engine(tmp_path_factory.mktemp("engine"))
    if isinstance(found, str):
        _unavailable(found)
        raise AssertionError("unreachable")
    return found


@pytest.fixture(scope="session")
def cluster_paths() -> dict[str, Any]:
    """The parsed paths.json of `make cluster` (tests/cluster/controlplane.py's tool_paths())."""
    try:
        return require_paths()
    except Unavailable as absent:
        _unavailable(str(absent))
        raise AssertionError("unreachable") from absent


@pytest.fixture(scope="session")
def argocd() -> ArgoCD:
    """Argo CD's own code, run by the harness `make cluster` builds (tests/cluster/argocd.py)."""
    try:
        return ArgoCD.built()
    except Unavailable as absent:
        _unavailable(str(absent))
        raise AssertionError("unreachable") from absent


def _on_demand(start: Callable[[str], ControlPlane], what: str) -> Iterator[Planes]:
    """``plane(release)``: the control plane of a release, started the first time a test asks for it and kept
    for the rest of the run; a start that failed fails each test that asks again, at once."""
    planes: dict[str, ControlPlane | BaseException] = {}

    def plane(release: str) -> ControlPlane:
        if release not in planes:
            try:
                planes[release] = start(release)
            except Unavailable as absent:
                _unavailable(str(absent))
            except Exception as failed:
                planes[release] = failed
                raise
        started = planes[release]
        if isinstance(started, BaseException):
            raise RuntimeError(f"the {what} {release} control plane did not start: {started}")
        return started

    try:
        yield plane
    finally:
        for started in planes.values():
            if isinstance(started, ControlPlane):
                started.stop()


@pytest.fixture(scope="session")
def control_planes() -> Iterator[Planes]:
    """``control_planes("v2.2.1")``: the control plane of a Trainer release (controlplane.TRAINER_RELEASES),
    started the first time a test asks for that release and kept for the rest of the run."""
    yield from _on_demand(lambda trainer: ControlPlane(trainer=trainer).start(), "Trainer")


@pytest.fixture(scope="session")
def control_plane(control_planes: Planes) -> ControlPlane:
    """The local control plane with upstream Trainer's controllers and webhooks (tests/cluster/), once per
    run: the default (newest) release's."""
    return control_planes(DEFAULT_TRAINER)


@pytest.fixture
def trainer_control_plane(request: pytest.FixtureRequest, control_planes: Planes) -> ControlPlane:
    """The control plane of the release a test is parametrized with, for a test to run on each release:
    ``@pytest.mark.parametrize("trainer_control_plane", TRAINER_RELEASES, indirect=True)``."""
    return control_planes(getattr(request, "param", DEFAULT_TRAINER))


@pytest.fixture(scope="session")
def kueue_planes() -> Iterator[Planes]:
    """``kueue_planes("v0.19.2")``: a control plane with a Kueue release's controllers, scheduler and webhooks
    beside Trainer's (controlplane.KUEUE_RELEASES), one per release, apart from the others: no other test runs
    under Kueue's webhooks."""
    yield from _on_demand(lambda kueue: ControlPlane(kueue=kueue).start(), "Kueue")


@pytest.fixture(scope="session")
def kueue_control_plane(kueue_planes: Planes) -> ControlPlane:
    """The default Kueue release's control plane (tests/cluster/kueue)."""
    return kueue_planes(DEFAULT_KUEUE)


@pytest.fixture
def kueue_release_plane(request: pytest.FixtureRequest, kueue_planes: Planes) -> ControlPlane:
    """The control plane of the Kueue release a test is parametrized with:
    ``@pytest.mark.parametrize("kueue_release_plane", KUEUE_RELEASES, indirect=True)``."""
    return kueue_planes(getattr(request, "param", DEFAULT_KUEUE))
