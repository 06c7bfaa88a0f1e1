"""The suite's CPU budget (CONTRIBUTING: a test costing more than about half a second of CPU is `slow`).

Each test's CPU time is measured (user + system, of this process and of the child processes it waited
for: getrusage's SELF and CHILDREN), setup, call and teardown together, less the setup and the
teardown of fixtures shared by several tests (module or session scope), which no single test owns. A
test over the budget that carries none of the markers that keep a test out of `make unit` is named at the
end of the run and the run exits non-zero. CPU time, not wall time: another process on the machine barely changes it.

Under pytest-xdist (``-n``) each worker measures the tests it runs and hands the figures to the controller,
which judges and reports the whole run.

``--cpu-budget=SECONDS`` sets the budget (``0`` turns the check off, e.g. under a debugger or a tracer);
``--cpu-durations=N`` lists the N costliest tests, as ``--durations`` does with wall time.
"""

from __future__ import annotations

import resource
from collections.abc import Generator
from typing import Any

import pytest

# The rule is ~0.5 s; the check fails a test at three times that, so that it does not flap on a busy
# machine: `make unit` took 136 s of CPU under a load average of 14 on two cores against 87.5 s on quiet
# ones (a busy machine's caches inflate CPU time ~1.6x), and in two such runs the costliest test left
# unmarked took 0.94 and 0.96 s. The first test to import a lazily loaded module also pays for it.
DEFAULT_BUDGET = 1.5
# A test carrying one of these is out of `make unit` (the Makefile's UNIT_MARKERS) and has no budget.
EXEMPT_MARKERS = ("slow", "cluster", "kubectl", "kpt", "image", "yamloracle")

_spent: dict[str, float] = {}
_exempt: set[str] = set()
# CPU spent setting up shared fixtures so far, and how many shared setups are under way (one may ask
# for another): only the outermost one counts.
_shared_setup: list[float] = [0.0]
_shared_depth: list[int] = [0]
# When the teardown of each shared fixture being torn down began (CPU seconds), by id of its FixtureDef.
_teardowns: dict[int, float] = {}


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cpu budget")
    group.addoption(
        "--cpu-budget",
        type=float,
        default=DEFAULT_BUDGET,
        metavar="SECONDS",
        help=f"fail the run if a test not marked slow costs more CPU (default {DEFAULT_BUDGET}; 0: off)",
    )
    group.addoption("--cpu-durations", type=int, default=0, metavar="N", help="list the N costliest tests by CPU time")


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Generator[None, None, None]:
    if fixturedef.scope == "function":
        yield
        return
    start = cpu_seconds()
    _shared_depth[0] += 1
    try:
        yield
    finally:
        _shared_depth[0] -= 1
        if _shared_depth[0] == 0:
            _shared_setup[0] += cpu_seconds() - start
    # Its teardown too (a control plane's whole life, once its processes are waited for) is no test's: it
    # falls in the teardown of whichever test ran last before it, on an xdist worker any test. Finalizers
    # run last added first, so this one starts the clock just before the fixture's own teardown.
    fixturedef.addfinalizer(lambda: _teardowns.__setitem__(id(fixturedef), cpu_seconds()))


def pytest_fixture_post_finalizer(fixturedef: pytest.FixtureDef[Any]) -> None:
    started = _teardowns.pop(id(fixturedef), None)
    if started is not None:
        _shared_setup[0] += cpu_seconds() - started


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    shared_before, start = _shared_setup[0], cpu_seconds()
    yield
    _spent[item.nodeid] = cpu_seconds() - start - (_shared_setup[0] - shared_before)
    if any(item.get_closest_marker(marker) for marker in EXEMPT_MARKERS):
        _exempt.add(item.nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """On xdist's controller: the CPU each test cost on the worker that ran it."""
    output: dict[str, Any] = getattr(node, "workeroutput", None) or {}
    _spent.update(output.get("cpu_spent", {}))
    _exempt.update(output.get("cpu_exempt", ()))


def offenders(budget: float) -> list[tuple[str, float]]:
    over = [(nodeid, spent) for nodeid, spent in _spent.items() if spent > budget and nodeid not in _exempt]
    return sorted(over, key=lambda found: -found[1])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # an xdist worker: its controller judges the whole run (pytest_testnodedown)
        output["cpu_spent"], output["cpu_exempt"] = dict(_spent), sorted(_exempt)
        return
    budget = session.config.getoption("--cpu-budget")
    if budget and offenders(budget) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    count = config.getoption("--cpu-durations")
    if count:
        terminalreporter.write_sep("=", f"{count} costliest tests by CPU time (process and children)")
        for nodeid, spent in sorted(_spent.items(), key=lambda found: -found[1])[:count]:
            terminalreporter.write_line(f"{spent:8.2f}s  {nodeid}")
    budget = config.getoption("--cpu-budget")
    over = offenders(budget) if budget else []
    if over:
        terminalreporter.write_sep("=", f"over the CPU budget of {budget:g} s: mark them slow (CONTRIBUTING)", red=True)
        for nodeid, spent in over:
            terminalreporter.write_line(f"{spent:8.2f}s CPU  {nodeid}")
