"""The pure parts of check's sync findings (issue 49), beside their control-plane tests
(tests/cluster/test_check_sync.py): which runtimePatches entries each apply mode changes, the release rule
of the webhook, and which derived runtimes a prune deletes."""

from __future__ import annotations

import json
from typing import Any

from trainjob_resources.derive.provenance import DERIVED_LABEL
from trainjob_resources.live.findings import Live, Render
from trainjob_resources.live.in_use import pruned
from trainjob_resources.live.patches_immutable import LAST_APPLIED, changed_entries, refuses

from tests.kit import build

TRACKING = "argocd.argoproj.io/tracking-id"


def pin(zone: str, manager: str = "example.com/pin") -> dict[str, Any]:
    return build.runtime_patch(build.replicated_job("node", {"nodeSelector": {"zone": zone}}), manager=manager)


def owned(manager: str, operation: str, entries: list[str]) -> dict[str, Any]:
    keys = {f"k:{json.dumps({'manager': m}, separators=(',', ':'))}": {} for m in entries}
    return {"manager": manager, "operation": operation, "fieldsV1": {"f:spec": {"f:runtimePatches": keys}}}


def test_the_webhook_refuses_a_change_unless_suspended_before_or_after_and_v2_2_0_looks_after_only() -> None:
    assert refuses(False, False, "v2.3.0") and refuses(False, False, None)
    assert not refuses(True, False, "v2.2.1") and not refuses(False, True, "v2.3.0")
    assert refuses(True, False, "v2.2.0") and not refuses(False, True, "v2.2.0")


def test_an_edited_entry_is_a_change_in_both_modes_and_an_unchanged_one_none() -> None:
    live = build.trainjob("j", "r", [{**pin("a"), "time": "2026-01-01T00:00:00Z"}])
    assert changed_entries(build.trainjob("j", "r", [pin("a")]), live) == []  # time is the webhook's
    assert changed_entries(build.trainjob("j", "r", [pin("b")]), live) == ["example.com/pin"]


def test_a_dropped_entry_is_removed_by_a_client_side_apply_and_by_a_server_side_one_where_only_appliers_own_it() -> (
    None
):
    kueue = pin("x", manager="kueue.x-k8s.io/manager")
    live = build.trainjob("j", "r", [pin("a"), kueue])
    render = build.trainjob("j", "r", [pin("a")])
    # Server-side: Kueue's entry is Kueue's (an update), the team's entry dropped from git is the applier's.
    live["metadata"]["managedFields"] = [
        owned("argocd-controller", "Apply", ["example.com/pin"]),
        owned("kueue", "Update", ["kueue.x-k8s.io/manager"]),
    ]
    assert changed_entries(render, live) == []
    assert changed_entries(build.trainjob("j", "r", []), live) == ["example.com/pin"]
    # Client-side: a JSON merge patch replaces the whole list.
    live["metadata"]["annotations"] = {LAST_APPLIED: "{}"}
    assert changed_entries(render, live) == ["kueue.x-k8s.io/manager"]


def test_a_client_side_apply_leaves_the_list_alone_where_neither_the_render_nor_the_last_apply_has_it() -> None:
    """The three-way JSON merge patch only mentions runtimePatches where the render has it (replace) or the
    last-applied configuration had it (delete); tests/cluster/test_check_differential_kueue.py found this."""
    live = build.trainjob("j", "r", [pin("x", manager="kueue.x-k8s.io/manager")])
    live["metadata"]["annotations"] = {LAST_APPLIED: json.dumps({"spec": {"runtimeRef": {"name": "r"}}})}
    assert changed_entries(build.trainjob("j", "r"), live) == []
    assert changed_entries(build.trainjob("j", "r", []), live) == ["kueue.x-k8s.io/manager"]
    live["metadata"]["annotations"] = {LAST_APPLIED: json.dumps({"spec": {"runtimePatches": [pin("a")]}})}
    assert changed_entries(build.trainjob("j", "r"), live) == ["kueue.x-k8s.io/manager"]


def derived(name: str, namespace: str, app: str | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {DERIVED_LABEL: "true"}}
    if app:
        meta["annotations"] = {TRACKING: f"{app}:trainer.kubeflow.org/TrainingRuntime:{namespace}/{name}"}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": meta}


def test_a_prune_deletes_derived_runtimes_where_the_render_writes_and_its_applications_elsewhere() -> None:
    live = Live()
    for runtime in (derived("here", "a", None), derived("ours", "b", "team"), derived("theirs", "c", "other")):
        live.runtimes[("TrainingRuntime", runtime["metadata"]["namespace"], runtime["metadata"]["name"])] = runtime
    job = build.trainjob("stays", "plain", namespace="a")
    job["metadata"]["annotations"] = {TRACKING: "team:trainer.kubeflow.org/TrainJob:a/stays"}
    live.trainjobs.append(job)
    names = {key[2] for key in pruned(Render([build.trainjob("stays", "plain", namespace="a")], [], {}), live)}
    assert names == {"here", "ours"}


def cluster_derived(name: str, app: str | None) -> dict[str, Any]:
    runtime = derived(name, "", app)
    del runtime["metadata"]["namespace"]
    runtime["kind"] = "ClusterTrainingRuntime"
    if app:
        runtime["metadata"]["annotations"] = {TRACKING: f"{app}:trainer.kubeflow.org/ClusterTrainingRuntime:{name}"}
    return runtime


def test_a_prune_deletes_derived_cluster_runtimes_only_where_the_render_writes_cluster_scope_or_tracks_them() -> None:
    """Another team's derived ClusterTrainingRuntime is no object of this render's application: found on
    the control plane, where check of a namespaced render counted every live one as pruned."""
    live = Live()
    for runtime in (cluster_derived("untracked", None), cluster_derived("ours", "team"), cluster_derived("x", "other")):
        live.runtimes[("ClusterTrainingRuntime", "", runtime["metadata"]["name"])] = runtime
    job = build.trainjob("stays", "plain", namespace="a")
    job["metadata"]["annotations"] = {TRACKING: "team:trainer.kubeflow.org/TrainJob:a/stays"}
    live.trainjobs.append(job)
    namespaced = Render([build.trainjob("stays", "plain", namespace="a")], [], {})
    assert {key[2] for key in pruned(namespaced, live)} == {"ours"}
    written = cluster_derived("kept", None)
    with_cluster_scope = Render([build.trainjob("stays", "plain", namespace="a"), written], [], {})
    assert {key[2] for key in pruned(with_cluster_scope, live)} == {"untracked", "ours", "x"}
