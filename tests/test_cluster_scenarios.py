"""Every GitOps lifecycle scenario of tests/cluster/scenarios/ through every way of rendering, on the one
control plane of the test session (tests/cluster/SCENARIOS.md). A scenario that fails because of a known
open defect is xfail(strict=True) with the defect: it flips to a failure the day the defect is fixed."""

from __future__ import annotations

import pytest

from tests.cluster import standalone
from tests.cluster.controlplane import ControlPlane
from tests.cluster.lifecycle import VIAS, Check, kpt_binary, run_scenario, scenarios, summary

pytestmark = pytest.mark.cluster

SCENARIOS = {p.name: p for p in scenarios()}

# (scenario, via) -> the open defect that makes it fail today.
KNOWN: dict[tuple[str, str], str] = {
    ("name-prefix-overlay", "kpt"): (
        "the runner's limit, not the function's: kpt has no kustomize, so the runner hydrates the overlay first, "
        "and kustomize's output keeps no previousNames: the prefixed runtime cannot be matched to runtimeRef.name"
    ),
}


def _cases() -> list[object]:
    cases: list[object] = []
    for name in SCENARIOS:
        for via in VIAS:
            reason = KNOWN.get((name, via))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(name, via, id=f"{name}-{via}", marks=marks))
    return cases


def test_the_known_failures_name_real_cases() -> None:
    assert {s for s, _ in KNOWN} <= set(SCENARIOS)
    assert {v for _, v in KNOWN} <= set(VIAS)


@pytest.mark.parametrize(("scenario", "via"), _cases())
def test_scenario(control_plane: ControlPlane, scenario: str, via: str) -> None:
    if via == "kpt" and kpt_binary() is None:
        standalone.unavailable("kpt is not installed (google-cloud-cli-kpt)")
    kustomize = standalone.kustomize("newest")
    lines: list[Check] = []
    checks = run_scenario(
        SCENARIOS[scenario], via, control_plane, kustomize=kustomize, wave_delay=0.5, emit=lines.append
    )
    failed = [c.line() for c in checks if not c.ok]
    assert checks and not failed, f"{summary(checks)}:\n" + "\n".join(failed)
