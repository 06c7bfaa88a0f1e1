"""Every GitOps lifecycle scenario of tests/cluster/scenarios/ through every way of rendering, on the
control plane of each Trainer release (tests/cluster/SCENARIOS.md). A scenario that fails because of a
known open defect, or of what an older release does differently, is xfail(strict=True) with the reason:
it flips to a failure the day that changes."""

from __future__ import annotations

import pytest

from tests.cluster import standalone
from tests.cluster.controlplane import TRAINER_RELEASES, ControlPlane
from tests.cluster.lifecycle import VIAS, Check, kpt_binary, run_scenario, scenarios, summary

pytestmark = pytest.mark.cluster

SCENARIOS = {p.name: p for p in scenarios()}

# (scenario, via) -> the open defect that makes it fail today, on every release.
KNOWN: dict[tuple[str, str], str] = {
    ("name-prefix-overlay", "kpt"): (
        "the runner's limit, not the function's: kpt has no kustomize, so the runner hydrates the overlay first, "
        "and kustomize's output keeps no previousNames: the prefixed runtime cannot be matched to runtimeRef.name"
    ),
}


# (scenario, via, release) -> what that Trainer release does that fails the scenario though the function
# follows it (the runner gives it trainerVersion: lifecycle.trainer_env); none today.
KNOWN_ON: dict[tuple[str, str, str], str] = {}


def _cases() -> list[object]:
    cases: list[object] = []
    for release in TRAINER_RELEASES:
        for name in SCENARIOS:
            for via in VIAS:
                reason = KNOWN.get((name, via)) or KNOWN_ON.get((name, via, release))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                cases.append(pytest.param(release, name, via, id=f"{name}-{via}-{release}", marks=marks))
    return cases


def test_the_known_failures_name_real_cases() -> None:
    assert {s for s, _ in KNOWN} | {s for s, _, _ in KNOWN_ON} <= set(SCENARIOS)
    assert {v for _, v in KNOWN} | {v for _, v, _ in KNOWN_ON} <= set(VIAS)
    assert {r for _, _, r in KNOWN_ON} <= set(TRAINER_RELEASES)


@pytest.mark.parametrize(("trainer_control_plane", "scenario", "via"), _cases(), indirect=["trainer_control_plane"])
def test_scenario(trainer_control_plane: ControlPlane, scenario: str, via: str) -> None:
    if via == "kpt" and kpt_binary() is None:
        standalone.unavailable("kpt is not installed (google-cloud-cli-kpt)")
    kustomize = standalone.kustomize("newest")
    lines: list[Check] = []
    checks = run_scenario(
        SCENARIOS[scenario], via, trainer_control_plane, kustomize=kustomize, wave_delay=0.5, emit=lines.append
    )
    failed = [c.line() for c in checks if not c.ok]
    assert checks and not failed, f"{summary(checks)}:\n" + "\n".join(failed)
