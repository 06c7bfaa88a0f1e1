"""``running-suspended`` (live/running_suspended.py), the pure part beside its control-plane test
(tests/cluster/test_check_differential_kueue.py): git's ``suspend: true`` re-sent to a queued TrainJob Kueue
started, an error where a client-side apply drops Kueue's entry, a warning where Kueue restarts it."""

from __future__ import annotations

import json
from typing import Any

from trainjob_resources.live.findings import Live, Render
from trainjob_resources.live.patches_immutable import LAST_APPLIED
from trainjob_resources.live.running_suspended import KUEUE_MANAGER, running_suspended

from tests.kit import build

QUEUED = {"kueue.x-k8s.io/queue-name": "team"}


def pin(zone: str, manager: str = "example.com/pin") -> dict[str, Any]:
    return build.runtime_patch(build.replicated_job("node", {"nodeSelector": {"zone": zone}}), manager=manager)


def started(patches: list[dict[str, Any]], last_applied: dict[str, Any] | None = None) -> dict[str, Any]:
    """The live TrainJob once Kueue admitted it: suspend false, Kueue's entry after the render's."""
    live = build.trainjob("j", "r", [*patches, pin("x", KUEUE_MANAGER)], "ns", labels=QUEUED, suspend=False)
    if last_applied is not None:
        live["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(last_applied)}
    return live


def found(
    render: dict[str, Any], live_trainjob: dict[str, Any], jobsets: dict[str, dict[str, Any]] | None = None
) -> list[tuple[str, str]]:
    live = Live()
    live.trainjobs = [live_trainjob]
    live.jobsets = {} if jobsets is None else jobsets
    return [(f.severity, f.object) for f in running_suspended(Render([render], [], {}), live)]


def test_a_client_side_resync_that_sends_the_list_drops_kueues_entry_and_the_trainjob_stays_stopped() -> None:
    render = build.trainjob("j", "r", [pin("a")], "ns", labels=QUEUED, suspend=True)
    assert found(render, started([pin("a")], render)) == [("error", "TrainJob/ns/j")]
    # A render without the list whose last apply had it: null deletes the list, Kueue's entry with it.
    bare = build.trainjob("j", "r", None, "ns", labels=QUEUED, suspend=True)
    assert found(bare, started([], render)) == [("error", "TrainJob/ns/j")]


def test_kueue_restarts_it_where_its_entry_stays_server_side_or_without_the_list() -> None:
    render = build.trainjob("j", "r", [pin("a")], "ns", labels=QUEUED, suspend=True)
    assert found(render, started([pin("a")])) == [("warning", "TrainJob/ns/j")]  # server-side
    bare = build.trainjob("j", "r", None, "ns", labels=QUEUED, suspend=True)
    assert found(bare, started([], bare)) == [("warning", "TrainJob/ns/j")]


def test_nothing_where_git_does_not_suspend_it_kueue_has_not_started_it_or_the_sync_cannot_update_it() -> None:
    render = build.trainjob("j", "r", [pin("a")], "ns", labels=QUEUED, suspend=True)
    live = started([pin("a")], render)
    assert found(build.trainjob("j", "r", [pin("a")], "ns", labels=QUEUED), live) == []
    assert found(render, {**live, "spec": {**live["spec"], "suspend": True}}) == []  # pending
    without_queue = {**live, "metadata": {**live["metadata"], "labels": {}}}
    assert found({**render, "metadata": {**render["metadata"], "labels": {}}}, without_queue) == []
    no_entry = {**live, "spec": {**live["spec"], "runtimePatches": [pin("a")]}}
    assert found(render, no_entry) == []  # Kueue's webhook never saw it
    moved = build.trainjob("j", "other", [pin("a")], "ns", labels=QUEUED, suspend=True)
    assert found(moved, live) == []  # runtime-ref-immutable refuses the update first


def test_nothing_where_the_update_is_refused_while_its_jobset_is_active_runtime_patches_immutable_says_so() -> None:
    render = build.trainjob("j", "r", [pin("a")], "ns", labels=QUEUED, suspend=True)
    live = started([pin("a")], render)

    def jobset(active: int) -> dict[str, dict[str, Any]]:
        return {"ns/j": {"status": {"replicatedJobsStatus": [{"name": "node", "active": active}]}}}

    assert found(render, live, jobset(1)) == []
    assert found(render, live, jobset(0)) == [("error", "TrainJob/ns/j")]
    live_without_jobsets = Live()
    live_without_jobsets.trainjobs = [live]
    live_without_jobsets.jobsets = None  # the cluster serves none: the webhook refuses every such change
    assert running_suspended(Render([render], [], {}), live_without_jobsets) == []
