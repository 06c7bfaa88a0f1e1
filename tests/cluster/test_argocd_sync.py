"""Argo CD's own sync (tests/cluster/argocd ``sync``: gitops-engine's sync context as the application
controller drives it, the Application's sync options, its kubectl apply code) of TrainJobs under Kueue
v0.17.0, on each Trainer release.

The render is the function's, with Argo CD's tracking set as its repo-server sets it (test_argocd_kueue's
Tracked; generation through the repo-server itself is test_argocd_generate's). Each test syncs, lets
Trainer stamp ``time`` and Kueue add its entry and admit, then syncs again with git unchanged, as
self-heal (only what is OutOfSync, nothing when Synced) or as a full sync (a manual sync, or auto-sync
on a new revision). docs/argocd-multi-team.md ("Syncing TrainJobs") follows from these.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.argocd import ArgoCD, Synced
from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_argocd_kueue import SHIPPED_CM, Tracked, changed, client_side, loader
from tests.cluster.test_check import dump
from tests.cluster.test_kueue import queues, wait_for
from tests.cluster.test_kueue_apply import KUEUE_MANAGER, REFUSED_WHILE_RUNNING, plane

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

__all__ = ["plane"]  # the module-scoped control plane with Kueue, one per Trainer release

TEAM = "example.com/team"
# The control plane runs no garbage collector: a foreground deletion (Argo CD's default prune
# propagation) waits for it forever, so the pruning test deletes in the background.
BACKGROUND = "PrunePropagationPolicy=background"


class Synchronized(Tracked):
    """A Tracked scene (its namespace, queues, base runtime and TrainJob ``job``) synced by Argo CD; more
    TrainJobs can join git (``others``)."""

    def __init__(self, cp: ControlPlane, tmp_path: Path, name: str, *, cpu: str = "100") -> None:
        self.others: list[dict[str, Any]] = []
        self.with_job = True
        super().__init__(cp, tmp_path, name, cpu=cpu)

    def quota(self, cpu: str) -> None:
        self.cp.apply_server_side(dump(*queues(self.ns, self.ns, cpu, "1000Gi")))

    def trainjobs(self) -> list[dict[str, Any]]:
        return ([self.trainjob] if self.with_job else []) + self.others

    def sync(
        self,
        argocd: ArgoCD,
        app: dict[str, Any] | None = None,
        *,
        cm: bool = True,
        prune: bool = False,
        self_heal: bool = False,
    ) -> Synced:
        return argocd.sync(
            app or self.app,
            self.generated(),
            self.cp.kubeconfig,
            argocd_cm=SHIPPED_CM if cm else None,
            prune=prune,
            self_heal=self_heal,
        )

    def running(self) -> None:
        wait_for("admission", self.admitted)
        wait_for("Kueue's entry", lambda: self.managers() == [TEAM, KUEUE_MANAGER])
        assert wait_for("a running TrainJob", lambda: self.live()["spec"].get("suspend") is False)
        assert all("time" in p for p in self.live()["spec"]["runtimePatches"])


def succeeded(synced: Synced) -> None:
    results = [(r.kind, r.name, r.status, r.message) for r in synced.resources]
    assert synced.phase == "Succeeded", (synced.message, results)
    assert all(r.status == "Synced" for r in synced.resources), synced.resources


def waves(synced: Synced) -> dict[str, int]:
    """Each resource's wave as gitops-engine ran it (Kind/name -> wave)."""
    return {resource: wave.wave for wave in synced.waves for resource in wave.resources}


def steps(synced: Synced) -> dict[str, int]:
    """Each resource's step: which run of a wave (0, 1, ...) it was applied or pruned in."""
    return {resource: i for i, wave in enumerate(synced.waves) for resource in wave.resources}


@pytest.mark.parametrize("pending", [True, False], ids=["pending", "running"])
def test_server_side_sync_and_resyncs_with_git_unchanged_keep_the_trainjob(
    argocd: ArgoCD, plane: ControlPlane, tmp_path: Path, pending: bool
) -> None:
    """The walkthrough's Application (ServerSideApply=true, ServerSideDiff=true) and deploy/argocd-cm."""
    scene = Synchronized(plane, tmp_path, "sync-ssa-p" if pending else "sync-ssa-r", cpu="1" if pending else "100")
    derived = scene.derived()
    first = scene.sync(argocd)
    succeeded(first)
    assert waves(first) == {
        f"TrainingRuntime/{derived}": -1,
        f"ClusterTrainingRuntime/{scene.ns}": 0,
        "TrainJob/job": 0,
    }
    assert [w.wave for w in first.waves] == [-1, 0], "the derived runtime's wave, then the TrainJob's"
    scene.reconciled()

    wait_for("Kueue's entry", lambda: scene.managers() == [TEAM, KUEUE_MANAGER])
    if not pending:
        scene.running()
    compared = scene.diff(argocd)
    assert compared.status == "Synced", changed(compared)

    healed = scene.sync(argocd, self_heal=True)
    assert healed.skipped and healed.before.status == "Synced", changed(healed.before)

    again = scene.sync(argocd)  # a full sync, git unchanged
    succeeded(again)
    assert scene.managers() == [TEAM, KUEUE_MANAGER]
    assert scene.live()["spec"]["suspend"] is pending
    assert scene.diff(argocd).status == "Synced"
    if pending:
        scene.quota("100")
        scene.running()
        succeeded(scene.sync(argocd))
        assert scene.managers() == [TEAM, KUEUE_MANAGER]
        assert scene.live()["spec"]["suspend"] is False
        assert scene.diff(argocd).status == "Synced"


@pytest.mark.parametrize("pending", [True, False], ids=["pending", "running"])
def test_argocds_default_client_side_sync_leaves_a_trainjob_stuck_or_refused(
    argocd: ArgoCD, plane: ControlPlane, tmp_path: Path, pending: bool
) -> None:
    """The Application without sync or compare options: Argo CD's client-side apply and legacy diff."""
    scene = Synchronized(plane, tmp_path, "sync-csa-p" if pending else "sync-csa-r", cpu="1" if pending else "100")
    app = client_side(scene.app)
    succeeded(scene.sync(argocd, app, cm=False))
    scene.reconciled()
    wait_for("Kueue's entry", lambda: scene.managers() == [TEAM, KUEUE_MANAGER])
    if not pending:
        scene.running()

    # With deploy/argocd-cm the client-side diff is Synced, so self-heal does nothing ...
    assert scene.sync(argocd, app, self_heal=True).skipped
    # ... but a full sync re-applies the TrainJob: the list is replaced, Kueue's entry dropped.
    full = scene.sync(argocd, app)
    if pending:
        succeeded(full)
        assert scene.managers() == [TEAM], "the client-side apply replaced runtimePatches"
        scene.quota("100")
        wait_for("admission", scene.admitted)
        time.sleep(3)  # Kueue reconciles again and again; the TrainJob stays suspended
        assert scene.live()["spec"]["suspend"] is True
        assert KUEUE_MANAGER not in scene.managers()
        return
    assert full.phase == "Failed", full.message
    refused = full.result("TrainJob", "job")
    assert refused.status == "SyncFailed" and REFUSED_WHILE_RUNNING in refused.message, refused

    # Without argocd-cm, Argo CD's defaults: OutOfSync on Trainer's stamp and Kueue's entry, so
    # self-heal re-applies the TrainJob, and is refused the same way.
    healed = scene.sync(argocd, app, cm=False, self_heal=True)
    assert not healed.skipped
    assert changed(healed.before) == {("TrainJob", "job"): ["spec.runtimePatches[0].time", "spec.runtimePatches[1]"]}
    assert healed.phase == "Failed" and REFUSED_WHILE_RUNNING in healed.result("TrainJob", "job").message
    assert [r.name for r in healed.resources] == ["job"], "self-heal syncs only what is OutOfSync"
    assert scene.managers() == [TEAM, KUEUE_MANAGER] and scene.live()["spec"]["suspend"] is False


def test_a_sync_with_prune_after_a_trainjob_leaves_git(argocd: ArgoCD, plane: ControlPlane, tmp_path: Path) -> None:
    """Two TrainJobs with their own derived runtimes; ``job`` leaves git."""
    scene = Synchronized(plane, tmp_path, "sync-prune")
    other = copy.deepcopy(scene.trainjob)
    other["metadata"]["name"] = "other"
    loader(other)["resources"] = {"requests": {"memory": "4Gi"}}  # 3Gi in job's
    scene.others.append(other)
    scene.rerender()
    app = copy.deepcopy(scene.app)
    app["spec"]["syncPolicy"]["syncOptions"].append(BACKGROUND)
    derived, others = scene.derived("job"), scene.derived("other")
    assert derived != others
    first = scene.sync(argocd, app)
    succeeded(first)
    assert waves(first)[f"TrainingRuntime/{derived}"] == waves(first)[f"TrainingRuntime/{others}"] == -1
    assert waves(first)["TrainJob/job"] == waves(first)["TrainJob/other"] == 0
    scene.reconciled()
    scene.running()

    scene.with_job = False
    scene.rerender()
    compared = scene.diff(argocd, app)
    assert compared.status == "OutOfSync"
    to_prune = {(r.kind, r.name) for r in compared.resources if r.requires_pruning}
    assert to_prune == {("TrainJob", "job"), ("TrainingRuntime", derived)}, to_prune

    # Without prune (a sync's default; automated.prune is off unless set): nothing is deleted.
    kept = scene.sync(argocd, app)
    assert kept.phase == "Succeeded", kept.message
    assert {r.name: r.status for r in kept.resources if r.status != "Synced"} == {
        "job": "PruneSkipped",
        derived: "PruneSkipped",
    }
    assert scene.cp.get("trainjobs.trainer.kubeflow.org", "job", scene.ns) is not None

    pruned = scene.sync(argocd, app, prune=True)
    assert pruned.phase == "Succeeded", pruned.message
    assert {r.name: r.status for r in pruned.resources if r.status != "Synced"} == {
        "job": "Pruned",
        derived: "Pruned",
    }
    # In reverse wave order: the TrainJob (wave 0) first, then its runtime (wave -1). gitops-engine
    # swaps the prune waves on each pass: the TrainJob is pruned in wave -1; on the next pass, the
    # TrainJob gone, the runtime is the only prune left and keeps its wave -1, run before wave 0.
    assert waves(pruned)["TrainJob/job"] == waves(pruned)[f"TrainingRuntime/{derived}"] == -1
    order = steps(pruned)
    assert order["TrainJob/job"] < order[f"TrainingRuntime/{derived}"], pruned.waves
    assert scene.cp.get("trainjobs.trainer.kubeflow.org", "job", scene.ns) is None
    assert scene.cp.get("trainingruntimes.trainer.kubeflow.org", derived, scene.ns) is None
    assert scene.cp.get("trainingruntimes.trainer.kubeflow.org", others, scene.ns) is not None
    live_other = scene.cp.get("trainjobs.trainer.kubeflow.org", "other", scene.ns)
    assert live_other is not None and live_other["spec"]["suspend"] is False
    assert scene.diff(argocd, app).status == "Synced"
