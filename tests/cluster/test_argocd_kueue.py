"""Argo CD's own diff (tests/cluster/argocd, v3.6.2) of a TrainJob under Kueue v0.17.0, with the
argocd-cm (deploy/argocd-cm/argocd-cm.yaml) and the Application (the walkthrough's ApplicationSet:
ServerSideApply=true, ServerSideDiff=true) we ship, on each Trainer release.

The render is the function's (a TrainJob whose patch also sets an env, so ``runtimePatches`` stays),
with Argo CD's tracking annotation set as its repo-server sets it, applied as its ServerSideApply sync
applies it (field manager argocd-controller, --force-conflicts), then left to Trainer (``time``) and
Kueue (its entry, the Workload admitted, ``suspend`` false). docs/argocd-multi-team.md ("Syncing
TrainJobs") follows from these.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.argocd import TRACKING_ANNOTATION, ArgoCD, Compared, Generated, tracking_id
from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import render, write
from tests.cluster.test_kueue import shapes_runtime, sized, wait_for
from tests.cluster.test_kueue_apply import KUEUE_MANAGER, Scene, plane
from tests.test_argocd_multi_team import application

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

__all__ = ["plane"]  # the module-scoped control plane with Kueue, one per Trainer release

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CM = yaml.safe_load((ROOT / "deploy" / "argocd-cm" / "argocd-cm.yaml").read_text())
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
IMMUTABLE = "spec.runtimeRef: Invalid value: field is immutable"
RUNTIMES = "trainingruntimes.trainer.kubeflow.org"
IN_USE = "trainer.kubeflow.org/resource-in-use"
MARKS_RUNTIMES_IN_USE = {"v2.2.1"}


class Tracked(Scene):
    """A Scene whose render carries the tracking annotation Argo CD's repo-server sets for the
    walkthrough's Application of its namespace (``trainjobs-<namespace>``; the walkthrough's
    generation through the repo-server itself is test_argocd_generate's), re-rendered from an edited
    source."""

    def __init__(self, cp: ControlPlane, tmp_path: Path, name: str, *, cpu: str = "100") -> None:
        super().__init__(cp, tmp_path, name, cpu=cpu, env=True)
        self.app = application(f"teams/{self.ns}")
        self.base = shapes_runtime(self.ns)
        self.trainjob = sized("job", self.ns, self.ns, "team")
        loader(self.trainjob)["env"] = [{"name": "DATA", "value": "s3://bucket"}]
        self.rerender()

    def trainjobs(self) -> list[dict[str, Any]]:
        """The TrainJobs in git."""
        return [self.trainjob]

    def rerender(self) -> None:
        source = write(self.tmp_path / self.ns / "bundle.yaml", self.base, *self.trainjobs())
        manifests = [d for d in yaml.safe_load_all(render(str(source), cwd=self.tmp_path)) if d]
        for obj in manifests:
            annotations = obj["metadata"].setdefault("annotations", {})
            annotations[TRACKING_ANNOTATION] = tracking_id(self.app["metadata"]["name"], obj)
        self.manifests = manifests
        self.rendered = yaml.safe_dump_all(manifests, sort_keys=False)

    def generated(self) -> Generated:
        return Generated(
            manifests=self.manifests, error=None, revision=None, raw=json.dumps({"manifests": self.manifests})
        )

    def diff(self, argocd: ArgoCD, app: dict[str, Any] | None = None, *, cm: bool = True) -> Compared:
        return argocd.diff(app or self.app, self.generated(), self.cp.kubeconfig, argocd_cm=SHIPPED_CM if cm else None)

    def running(self) -> None:
        """Applied server-side as Argo CD syncs, then Kueue's entry, admission, and the job started."""
        self.apply(server_side=True)
        wait_for("admission", self.admitted)
        wait_for("Kueue's entry", lambda: self.managers() == ["example.com/team", KUEUE_MANAGER])
        assert wait_for("a running TrainJob", lambda: self.live()["spec"].get("suspend") is False)
        assert all("time" in p for p in self.live()["spec"]["runtimePatches"])
        self.reconciled()

    def derived(self, trainjob: str = "job") -> str:
        job = next(m for m in self.manifests if m["kind"] == "TrainJob" and m["metadata"]["name"] == trainjob)
        name: str = job["spec"]["runtimeRef"]["name"]
        return name

    def reconciled(self) -> None:
        """Trainer's runtime controller has seen the synced TrainJobs: v2.2.1 marks each runtime a TrainJob
        uses with its in-use finalizer (pkg/controller/trainingruntime_controller.go; v2.3.0 only removes
        it). Argo CD's diff taken before that, within a second of the sync, says the derived runtime is
        OutOfSync with no field named; a moment later, Synced."""
        if self.cp.trainer not in MARKS_RUNTIMES_IN_USE:
            return
        for trainjob in self.trainjobs():
            runtime = self.derived(trainjob["metadata"]["name"])
            wait_for(f"{runtime}'s in-use finalizer", lambda name=runtime: IN_USE in self.finalizers(name))

    def finalizers(self, runtime: str) -> list[str]:
        live = self.cp.get(RUNTIMES, runtime, self.ns) or {}
        found: list[str] = live.get("metadata", {}).get("finalizers", [])
        return found


def loader(trainjob: dict[str, Any]) -> dict[str, Any]:
    """The data-loader's entry in the TrainJob's patch (test_kueue.sized)."""
    jobs = trainjob["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    container: dict[str, Any] = jobs[0]["template"]["spec"]["template"]["spec"]["initContainers"][0]
    assert container["name"] == "loader", container
    return container


def client_side(app: dict[str, Any]) -> dict[str, Any]:
    """The Application without our sync and compare options: Argo CD's default, client-side diff."""
    plain = copy.deepcopy(app)
    plain["metadata"].pop("annotations", None)
    plain["spec"].pop("syncPolicy", None)
    return plain


def changed(compared: Compared) -> dict[tuple[str, str], list[str]]:
    return {(r.kind, r.name): r.changed for r in compared.resources if r.status == "OutOfSync"}


def test_a_running_trainjob_under_kueue_is_synced_with_what_we_ship_and_survives_a_self_heal(
    argocd: ArgoCD, plane: ControlPlane, tmp_path: Path
) -> None:
    scene = Tracked(plane, tmp_path, "argo-kueue")
    scene.running()

    shipped = scene.diff(argocd)
    assert shipped.server_side_diff and shipped.error is None, shipped.error
    assert shipped.status == "Synced", changed(shipped)

    # Why argocd-cm is needed: Argo CD's default (client-side) diff without it sees Trainer's stamp and
    # Kueue's list element.
    default = scene.diff(argocd, client_side(scene.app), cm=False)
    assert not default.server_side_diff and default.status == "OutOfSync"
    expected = ["spec.runtimePatches[0].time", "spec.runtimePatches[1]"]
    assert changed(default) == {("TrainJob", "job"): expected}, changed(default)
    # With it, the client-side diff is Synced too.
    assert scene.diff(argocd, client_side(scene.app)).status == "Synced"

    # A self-heal (the same server-side apply again): Kueue's entry survives and the job keeps running.
    scene.apply(server_side=True)
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]
    assert scene.live()["spec"]["suspend"] is False
    assert scene.diff(argocd).status == "Synced"


def test_server_side_diff_without_our_argocd_cm(argocd: ArgoCD, plane: ControlPlane, tmp_path: Path) -> None:
    """What the server-side diff alone says of a running TrainJob under Kueue (recorded, docs say why
    argocd-cm still ships)."""
    scene = Tracked(plane, tmp_path, "argo-nocm")
    scene.running()
    alone = scene.diff(argocd, cm=False)
    assert alone.error is None, alone.error
    assert alone.status == "Synced", changed(alone)


def test_a_base_runtime_edit_leaves_the_trainjob_synced(argocd: ArgoCD, plane: ControlPlane, tmp_path: Path) -> None:
    scene = Tracked(plane, tmp_path, "argo-base")
    scene.running()
    derived = next(m["metadata"]["name"] for m in scene.manifests if m["kind"] == "TrainingRuntime")
    sidecar = scene.base["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    sidecar["initContainers"][1]["image"] = "busybox:1.37"
    scene.rerender()
    assert next(m for m in scene.manifests if m["kind"] == "TrainJob")["spec"]["runtimeRef"]["name"] == derived

    compared = scene.diff(argocd)
    assert compared.error is None, compared.error
    assert compared.status == "OutOfSync"
    out = changed(compared)
    assert ("TrainJob", "job") not in out, out
    image = "spec.template.spec.replicatedJobs"
    assert any(path.startswith(image) for path in out[("TrainingRuntime", derived)]), out

    scene.apply(server_side=True)
    assert scene.diff(argocd).status == "Synced"
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]
    assert scene.live()["spec"]["suspend"] is False


@pytest.mark.parametrize("options", [None, "Replace=true", "Force=true,Replace=true"], ids=str)
def test_a_changed_override_is_a_comparison_error_naming_the_immutable_field(
    argocd: ArgoCD, plane: ControlPlane, tmp_path: Path, options: str | None
) -> None:
    """The override changes, so the TrainJob's runtimeRef moves to a new derived runtime: Argo CD's
    server-side diff dry-runs the apply and the CRD refuses it. Sync options on the TrainJob do not
    change that (gitops-engine's diff never reads them)."""
    scene = Tracked(plane, tmp_path, f"argo-ovr-{(options or 'none').split(',')[0].split('=')[0].lower()}")
    scene.running()
    loader(scene.trainjob)["resources"] = {"requests": {"memory": "4Gi"}}  # 3Gi before
    if options is not None:
        scene.trainjob["metadata"].setdefault("annotations", {})[SYNC_OPTIONS] = options
    scene.rerender()
    trainjob = next(m for m in scene.manifests if m["kind"] == "TrainJob")
    assert trainjob["metadata"]["annotations"].get(SYNC_OPTIONS) == options, "the render keeps the sync options"

    compared = scene.diff(argocd)
    assert compared.status == "Unknown", changed(compared)
    assert compared.error is not None
    assert "error running server side apply in dryrun mode for resource TrainJob/job" in compared.error
    assert IMMUTABLE in compared.error, compared.error

    # The client-side diff (Argo CD's default) names the field instead.
    default = scene.diff(argocd, client_side(scene.app))
    assert default.status == "OutOfSync" and "spec.runtimeRef.name" in changed(default)[("TrainJob", "job")]
    if options is not None:
        return
    # Keeping the name: the TrainJob deleted first, Argo CD says OutOfSync (to create) and the sync
    # creates it anew, admitted and started.
    plane.delete("trainjobs.trainer.kubeflow.org", "job", scene.ns, wait=True)
    recreated = scene.diff(argocd)
    assert recreated.error is None and recreated.status == "OutOfSync", recreated.error
    assert not recreated.resource("TrainJob", "job").live
    scene.apply(server_side=True)
    assert wait_for("a running TrainJob", lambda: scene.live()["spec"].get("suspend") is False)
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]


def test_a_changed_override_with_a_new_trainjob_name_is_out_of_sync(
    argocd: ArgoCD, plane: ControlPlane, tmp_path: Path
) -> None:
    """The way through docs/argocd-multi-team.md gives: the changed override is a new run, under a new
    name. The server-side diff dry-runs nothing for a new object (gitops-engine's ServerSideDiff
    compares a creation shallowly), so Argo CD says OutOfSync: the new TrainJob and its runtime to
    create, the old TrainJob and its runtime to prune; applied server-side, the new one is admitted and starts."""
    scene = Tracked(plane, tmp_path, "argo-rename")
    scene.running()
    loader(scene.trainjob)["resources"] = {"requests": {"memory": "4Gi"}}  # 3Gi before
    scene.trainjob["metadata"]["name"] = "job-2"
    scene.rerender()

    compared = scene.diff(argocd)
    assert compared.error is None, compared.error
    assert compared.status == "OutOfSync"
    new = {(r.kind, r.name) for r in compared.resources if not r.live}
    assert ("TrainJob", "job-2") in new and any(kind == "TrainingRuntime" for kind, _ in new), new
    # The old TrainJob and its derived runtime, no longer in git, are found by their tracking annotation
    # (the controller's cluster cache) and listed to prune.
    to_prune = {(r.kind, r.name) for r in compared.resources if r.requires_pruning}
    assert ("TrainJob", "job") in to_prune and len(to_prune) == 2, to_prune
    assert all(r.live and r.status == "OutOfSync" for r in compared.resources if r.requires_pruning)

    scene.apply(server_side=True)
    job2 = plane.get("trainjobs.trainer.kubeflow.org", "job-2", scene.ns)
    assert job2 is not None
    assert wait_for(
        "job-2 running",
        lambda: (
            (plane.get("trainjobs.trainer.kubeflow.org", "job-2", scene.ns) or {}).get("spec", {}).get("suspend")
            is False
        ),
    )
