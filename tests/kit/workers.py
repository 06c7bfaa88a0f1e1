"""The suite on several workers (pytest-xdist: ``make test`` runs ``-n WORKERS --dist loadfile``).

The cluster tests mostly wait (Trainer's and Kueue's reconciles, Argo CD's syncs, kubectl), so `make test`
runs the test files on several worker processes to overlap the waiting. Each worker has its own session
fixtures: its own control planes (tests/conftest.py), started when one of its tests first asks, on ports
envtest picks free and in a temporary folder of its own; nothing cluster-side is shared between workers.

Under ``--dist loadfile`` this plugin's scheduler replaces xdist's: each file is one unit of work, so a
file's module-scoped fixtures start once, on one worker, and its tests run in the order they are written;
but a file in ``SPLIT_FILES`` goes test by test, so that a file longer than a worker's share of the run does
not hold the run's end (its tests are independent of each other, each on its own namespace). The units go
out in the order of the collection (not xdist's default, most tests first), which each worker puts
heaviest first (``arrange``): ``SPLIT_FILES``, then the files that drive a real program, then the rest. A
worker that ends on a long file while the others idle is what makes a parallel run long.

A run without ``-n``, or with another ``--dist``, is left as it is.
"""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

# Files whose tests are spread over the workers one by one: each is long enough on its own to end the run
# after the other workers are done (tests/cluster/test_argocd_sync.py: 34 min of the serial run's 49 on the
# merged main of 2026-12-07; on four workers under load 29 the sum of its tests' times was 1,520 s, and
# tests/test_cluster_scenarios.py's 826 s, which held one worker alone for the run's last minutes).
SPLIT_FILES = ("tests/cluster/test_argocd_sync.py", "tests/test_cluster_scenarios.py")
# A file with a test carrying one of these drives a real program, and mostly waits on it.
WAITING_MARKERS = ("cluster", "kubectl", "kpt", "image", "yamloracle")


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class FileScheduling(LoadScopeScheduling):
    """xdist's loadfile, but ``SPLIT_FILES`` test by test and the units in the collection's order."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        # LoadScopeScheduling.schedule() reads it: False keeps the collection's order.
        config.option.loadscopereorder = False

    def _split_scope(self, nodeid: str) -> str:
        file = _file(nodeid)
        return nodeid if file in SPLIT_FILES else file


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
    if config.getoption("dist") != "loadfile":
        return None
    return FileScheduling(config, log)


def rank(file: str, items: list[pytest.Item]) -> int:
    """0 for a file split test by test, 1 for one that drives a real program, 2 for the rest."""
    if file in SPLIT_FILES:
        return 0
    if any(item.get_closest_marker(marker) for item in items for marker in WAITING_MARKERS):
        return 1
    return 2


def heaviest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The items file by file, by ``rank`` (a stable sort: in collection order within a rank)."""
    by_file: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_file.setdefault(_file(item.nodeid), []).append(item)
    ordered = sorted(by_file.items(), key=lambda entry: rank(*entry))
    return [item for _, members in ordered for item in members]


# trylast: after tests/conftest.py's hook, which puts on the markers a test's fixtures imply.
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the items heaviest first; elsewhere nothing. Every worker collects and sorts the
    same way: xdist checks that their collections are equal. (A worker cannot tell the ``--dist`` mode: its
    config says ``no``, xdist/remote.py's setup_config; under another mode the order is only an order.)"""
    if hasattr(config, "workerinput"):
        items[:] = heaviest_first(items)
