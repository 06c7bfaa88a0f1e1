"""The JobSet half of `runtime-patches-immutable` without a cluster: a runtimePatches change on a TrainJob
suspended before or by the sync is an error exactly while its JobSet has active jobs. Against the webhook
itself on both Trainer releases: tests/cluster/test_check_jobset_active.py."""

from __future__ import annotations

from typing import Any

import pytest
from trainjob_resources.live.findings import Live, Render
from trainjob_resources.live.jobset_active import active_jobs
from trainjob_resources.live.patches_immutable import runtime_patches_immutable

from tests.kit import build


def pin(zone: str) -> dict[str, Any]:
    selector = build.replicated_job("node", {"nodeSelector": {"zone": zone}})
    return build.runtime_patch(selector, manager="example.com/pin")


def jobset(name: str, **active: Any) -> dict[str, Any]:
    rows = [{"name": job, "active": count, "ready": 0, "succeeded": 0, "failed": 0} for job, count in active.items()]
    status = {"replicatedJobsStatus": rows}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": name}, "status": status}


def found(was: bool, becomes: bool, zone: str, jobsets: dict[str, Any] | None, release: str = "v2.3.0") -> list[str]:
    live = Live()
    live.trainer = (release, "test")
    live.trainjobs = [build.trainjob("j", "r", [pin("a")], namespace="n", suspend=was)]
    live.jobsets = jobsets
    render = Render([build.trainjob("j", "r", [pin(zone)], namespace="n", suspend=becomes)], [], {})
    return [f"{f.severity}: {f.message}" for f in runtime_patches_immutable(render, live)]


@pytest.mark.parametrize("release", ["v2.3.0", "v2.2.1", "v2.2.0"])
@pytest.mark.parametrize("was", [False, True])
def test_a_change_while_suspended_is_refused_while_the_jobset_has_active_jobs(release: str, was: bool) -> None:
    active = {"n/j": jobset("j", initializer=0, node=2)}
    [error] = found(was, True, "b", active, release)
    assert error.startswith("error: ") and "JobSet's ReplicatedJob node is still active" in error, error
    assert ("this suspended TrainJob" in error) == was, error
    assert found(was, True, "b", {"n/j": jobset("j", node=0)}, release) == []
    assert found(was, True, "b", {}, release) == []  # no JobSet: client.IgnoreNotFound
    assert found(was, True, "a", active, release) == []  # nothing changed
    [unserved] = found(was, True, "b", None, release)  # the webhook's Get: no matches for kind "JobSet"
    assert unserved.startswith("error: ") and "serves no JobSets" in unserved, unserved
    assert found(was, True, "a", None, release) == []


def test_resuming_with_a_change_is_refused_on_v2_2_1_and_later_while_active_and_always_on_v2_2_0() -> None:
    active = {"n/j": jobset("j", node=1)}
    assert "JobSet's ReplicatedJob node" in found(True, False, "b", active)[0]
    assert found(True, False, "b", {}) == []
    assert "can only be modified when the TrainJob is suspended" in found(True, False, "b", {}, "v2.2.0")[0]


def test_a_running_trainjob_kept_running_is_refused_by_the_suspend_rule_whatever_its_jobset() -> None:
    [error] = found(False, False, "b", {})
    assert "suspended before or after the update" in error, error


def test_active_jobs_reads_positive_integer_counts_only() -> None:
    assert active_jobs(jobset("j", a=1, b=0, c=3)) == ["a", "c"]
    odd = {"status": {"replicatedJobsStatus": [{"name": "x", "active": True}, {"name": "y", "active": "1"}, 5]}}
    assert active_jobs(odd) == [] and active_jobs(None) == [] and active_jobs({"status": []}) == []
