"""A failed test's report carries the errors of the API servers running in its process: kube-apiserver's
own log goes into the harness's (tests/cluster/harness/main.go) and is gone when the control plane stops."""

from __future__ import annotations

from typing import Any

import pytest

from tests import conftest
from tests.cluster.controlplane import RUNNING, klog_errors

TIMEOUT = 'E1207 10:02:13.402311     718 wrap.go:53] "Timeout or abort while handling" method="GET" URI="/openapi/v2"'
LOG = [
    "I1207 10:01:00.000001     718 server.go:150] Version: v1.36.3\n",
    "E1207 10:01:00.500000     718 options.go:205] The manifest file is empty, ignoring.\n",
    '{"level":"error","ts":"2026-12-07T10:01:01Z","msg":"Reconciler error","controller":"trainjob_controller"}\n',
    "W1207 10:01:02.000000     718 logging.go:55] [core] grpc: addrConn.createTransport failed\n",
    TIMEOUT + "\n",
]


def test_only_klogs_error_lines_are_kept_the_last_ones() -> None:
    assert klog_errors(LOG, 40) == [LOG[1].rstrip("\n"), TIMEOUT]
    assert klog_errors(LOG, 1) == [TIMEOUT]


class _Plane:
    trainer = "v9.9.9"

    def api_server_errors(self) -> list[str]:
        return [TIMEOUT]


class _Outcome:
    def __init__(self, report: pytest.TestReport) -> None:
        self.report = report

    def get_result(self) -> pytest.TestReport:
        return self.report


def _reported(outcome: str) -> list[tuple[str, str]]:
    report = pytest.TestReport("t.py::t", ("t.py", 0, "t"), {}, outcome, None, "call")  # type: ignore[arg-type]
    hook: Any = conftest.pytest_runtest_makereport(item=None, call=None)  # type: ignore[arg-type]
    next(hook)
    with pytest.raises(StopIteration):
        hook.send(_Outcome(report))
    return list(report.sections)


def test_a_failed_tests_report_carries_the_running_api_servers_errors() -> None:
    plane = _Plane()
    RUNNING.add(plane)  # type: ignore[arg-type]
    try:
        assert ("kube-apiserver errors (Trainer v9.9.9)", TIMEOUT) in _reported("failed")
        assert _reported("passed") == []
    finally:
        RUNNING.discard(plane)  # type: ignore[arg-type]
