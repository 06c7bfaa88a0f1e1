"""What a sync leaves in a live TrainJob, and what the next sync does to it: on the control plane with
upstream Kueue v0.17.0 beside each Trainer release, the function's output applied as each path's docs
say (client-side ``kubectl apply``, Argo CD's default; server-side as ``ServerSideApply=true`` does).

What the tests hold: a TrainJob read back has ``time`` on every ``runtimePatches`` entry (Trainer's
webhook), the CRD's defaults, and under Kueue an appended ``kueue.x-k8s.io/manager`` entry and
``suspend`` flipped; a client-side re-apply of a render that holds ``runtimePatches`` replaces the list
and drops Kueue's entry (a pending TrainJob is then admitted and stays suspended; a running one's
re-apply is refused), a server-side re-apply keeps it, and so does a client-side re-apply of a render
without ``runtimePatches`` (materialize drops an entry left with nothing but its manager).
docs/argocd-multi-team.md ("Syncing TrainJobs") and the apply advice of README and docs/lifecycle.md
follow from these.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.controlplane import DEFAULT_TRAINER, TRAINER_RELEASES, ControlPlane, Unavailable
from tests.cluster.test_check import MUST_EXIST, dump, render, write
from tests.cluster.test_kueue import condition, queues, shapes_runtime, sized, wait_for, workloads

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]

TRAINJOBS = "trainjobs.trainer.kubeflow.org"
KUEUE_MANAGER = "kueue.x-k8s.io/manager"
ARGOCD = "argocd-controller"
# Kueue's TrainJob webhook, like Trainer's, reads the runtime from its cache: a TrainJob applied right
# after its new runtime can be refused once.
KUEUE_NOT_YET = ("vtrainjob.kb.io", "not found")
REFUSED_WHILE_RUNNING = "RuntimePatches can only be modified when the TrainJob is suspended"


@pytest.fixture(scope="module", params=TRAINER_RELEASES)
def plane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """Kueue beside each Trainer release: the default's is the session's ``kueue_control_plane``."""
    if request.param == DEFAULT_TRAINER:
        yield request.getfixturevalue("kueue_control_plane")
        return
    try:
        cp = ControlPlane(kueue=True, trainer=request.param)
    except Unavailable as absent:
        pytest.skip(str(absent))
    cp.start()
    try:
        yield cp
    finally:
        cp.stop()


def not_yet(stderr: str) -> bool:
    """The apply was refused only because a webhook's cache has not seen the new runtime yet."""
    return MUST_EXIST in stderr or all(part in stderr for part in KUEUE_NOT_YET)


class Scene:
    """A namespace with its queues (``cpu`` of quota), the runtime, and the TrainJob ``job``: its
    data-loader sized by a patch that (``env``) also sets an environment variable, so that the
    render keeps the patch; without ``env`` the patch sets only resources and the render drops it."""

    def __init__(self, cp: ControlPlane, tmp_path: Path, name: str, *, cpu: str, env: bool) -> None:
        self.cp = cp
        self.ns = f"{name}-{cp.trainer.replace('.', '-')}"
        cp.kubectl("create", "namespace", self.ns)
        cp.apply_server_side(dump(*queues(self.ns, self.ns, cpu, "1000Gi")))
        trainjob = sized("job", self.ns, self.ns, "team")
        if env:
            jobs = trainjob["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
            loader = jobs[0]["template"]["spec"]["template"]["spec"]["initContainers"][0]
            loader["env"] = [{"name": "DATA", "value": "s3://bucket"}]
        self.source = write(tmp_path / self.ns / "bundle.yaml", shapes_runtime(self.ns), trainjob)
        self.tmp_path = tmp_path

    @functools.cached_property
    def rendered(self) -> str:
        """The function's render of the bundle, when first asked for (a subclass that renders a bundle of
        its own sets it and never runs this one)."""
        return render(str(self.source), cwd=self.tmp_path)

    def apply(self, *, server_side: bool, check: bool = True) -> str:
        """Apply the render as the docs say (retried while the webhook's cache lacks the new runtime);
        the apply's stderr."""
        args = ["apply"]
        if server_side:  # as Argo CD's ServerSideApply=true runs it
            args += ["--server-side", f"--field-manager={ARGOCD}", "--force-conflicts"]
        started = time.monotonic()
        while True:
            done = self.cp.kubectl(*args, "-f", "-", input=self.rendered, check=False)
            if done.returncode == 0 or not not_yet(done.stderr) or time.monotonic() - started > 20:
                break
            time.sleep(0.2)
        assert done.returncode == 0 or not check, done.stderr
        return done.stderr

    def live(self) -> dict[str, Any]:
        live = self.cp.get(TRAINJOBS, "job", self.ns)
        assert live is not None
        return live

    def managers(self) -> list[str]:
        return [p["manager"] for p in self.live()["spec"].get("runtimePatches") or []]

    def admitted(self) -> bool:
        workload = workloads(self.cp, self.ns).get("job")
        return workload is not None and (condition(workload, "Admitted") or {}).get("status") == "True"

    def raise_quota(self) -> None:
        self.cp.apply_server_side(dump(*queues(self.ns, self.ns, "100", "1000Gi")))


def rendered_trainjob(scene: Scene) -> dict[str, Any]:
    import yaml

    return next(d for d in yaml.safe_load_all(scene.rendered) if d and d["kind"] == "TrainJob")


def test_a_trainjob_read_back_has_trainers_time_the_crds_defaults_and_kueues_entry(
    plane: ControlPlane, tmp_path: Path
) -> None:
    scene = Scene(plane, tmp_path, "readback", cpu="100", env=True)
    written = rendered_trainjob(scene)
    assert [p["manager"] for p in written["spec"]["runtimePatches"]] == ["example.com/team"]
    assert "suspend" not in written["spec"] and "managedBy" not in written["spec"]
    scene.apply(server_side=False)
    wait_for("admission", scene.admitted)
    live = wait_for("Kueue's entry", lambda: scene.managers() == ["example.com/team", KUEUE_MANAGER] and scene.live())
    patches = live["spec"]["runtimePatches"]
    assert all(isinstance(p.get("time"), str) and p["time"].endswith("Z") for p in patches), patches
    assert live["spec"]["managedBy"] == "trainer.kubeflow.org/trainjob-controller"
    assert live["spec"]["runtimeRef"]["apiGroup"] == "trainer.kubeflow.org"
    assert wait_for("unsuspended", lambda: scene.live()["spec"].get("suspend") is False)
    # Everything else of ours is as rendered.
    ours = {k: v for k, v in patches[0].items() if k != "time"}
    assert ours == written["spec"]["runtimePatches"][0]


def test_a_client_side_reapply_drops_kueues_entry_and_the_admitted_trainjob_stays_suspended(
    plane: ControlPlane, tmp_path: Path
) -> None:
    """Pending (no quota), re-applied client-side while pending: Kueue's entry is gone, and when quota
    frees, Kueue admits the Workload but never starts the TrainJob."""
    scene = Scene(plane, tmp_path, "csa-pending", cpu="1", env=True)
    scene.apply(server_side=False)
    wait_for("Kueue's entry", lambda: KUEUE_MANAGER in scene.managers())
    assert scene.live()["spec"]["suspend"] is True and not scene.admitted()
    scene.apply(server_side=False)
    assert scene.managers() == ["example.com/team"], "the JSON merge patch replaced the list"
    scene.raise_quota()
    wait_for("admission", scene.admitted)
    time.sleep(3)  # Kueue reconciles again and again; the TrainJob stays suspended
    assert scene.live()["spec"]["suspend"] is True
    assert KUEUE_MANAGER not in scene.managers()


def test_a_client_side_reapply_of_a_running_trainjob_is_refused(plane: ControlPlane, tmp_path: Path) -> None:
    scene = Scene(plane, tmp_path, "csa-running", cpu="100", env=True)
    scene.apply(server_side=False)
    wait_for("admission", scene.admitted)
    wait_for("a running TrainJob", lambda: scene.live()["spec"].get("suspend") is False)
    refused = scene.apply(server_side=False, check=False)
    assert REFUSED_WHILE_RUNNING in refused, refused
    assert KUEUE_MANAGER in scene.managers()


@pytest.mark.parametrize("pending", [True, False], ids=["pending", "running"])
def test_a_server_side_reapply_keeps_kueues_entry(plane: ControlPlane, tmp_path: Path, pending: bool) -> None:
    name = "ssa-pending" if pending else "ssa-running"
    scene = Scene(plane, tmp_path, name, cpu="1" if pending else "100", env=True)
    scene.apply(server_side=True)
    wait_for("Kueue's entry", lambda: KUEUE_MANAGER in scene.managers())
    scene.apply(server_side=True)
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]
    if pending:
        assert scene.live()["spec"]["suspend"] is True, "the re-apply left Kueue's suspend alone"
        scene.raise_quota()
    wait_for("admission", scene.admitted)
    assert wait_for("a running TrainJob", lambda: scene.live()["spec"].get("suspend") is False)
    scene.apply(server_side=True)
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]
    assert scene.live()["spec"]["suspend"] is False


def test_a_render_without_runtime_patches_survives_a_client_side_reapply(plane: ControlPlane, tmp_path: Path) -> None:
    """The patch set only resources: the render drops it, and the list with it, so a client-side apply
    leaves Kueue's entry alone and the TrainJob starts."""
    scene = Scene(plane, tmp_path, "csa-dropped", cpu="1", env=False)
    assert "runtimePatches" not in rendered_trainjob(scene)["spec"]
    scene.apply(server_side=False)
    wait_for("Kueue's entry", lambda: scene.managers() == [KUEUE_MANAGER])
    scene.apply(server_side=False)
    assert scene.managers() == [KUEUE_MANAGER]
    scene.raise_quota()
    wait_for("admission", scene.admitted)
    assert wait_for("a running TrainJob", lambda: scene.live()["spec"].get("suspend") is False)
    scene.apply(server_side=False)
    assert scene.managers() == [KUEUE_MANAGER]


def doc_command(path: Path, before: str) -> list[str]:
    """The backquoted command a doc gives right after ``before``, as words."""
    text = " ".join(path.read_text().split())
    found = re.search(re.escape(before) + r" `([^`]+)`", text)
    assert found is not None, f"{path.name} no longer says {before!r}"
    return found.group(1).split()


@pytest.mark.parametrize(
    ("doc", "before"),
    [("README.md", "Pipe it to"), ("kustomization-examples/README.md", "trainingruntime.go`), and")],
    ids=["render-pipe", "kustomize-k"],
)
def test_the_apply_the_docs_give_keeps_kueues_entry(plane: ControlPlane, tmp_path: Path, doc: str, before: str) -> None:
    """README's ``render | kubectl apply --server-side -f -`` and kustomization-examples' ``kubectl apply
    --server-side -k``, run as written, twice, on a TrainJob whose render keeps a patch: Kueue's entry
    survives, the TrainJob starts, and the re-apply while it runs is accepted."""
    command = doc_command(ROOT / doc, before)
    assert command[:3] == ["kubectl", "apply", "--server-side"], command
    scene = Scene(plane, tmp_path, f"doc-{'k' if '-k' in command else 'f'}", cpu="100", env=True)
    folder = tmp_path / scene.ns / "applied"
    folder.mkdir()
    (folder / "rendered.yaml").write_text(scene.rendered)
    # The render's order (each runtime before its TrainJobs); kustomize's legacy order would put
    # TrainJob first (kustomization-examples/README.md, "Apply order").
    (folder / "kustomization.yaml").write_text("resources:\n- rendered.yaml\nsortOptions:\n  order: fifo\n")
    target = str(folder) if command[-1] == "-k" else "-"

    def run() -> None:
        args = [*command[1:], target] if target != "-" else command[1:]
        started = time.monotonic()
        while True:
            done = plane.kubectl(*args, input=scene.rendered if target == "-" else None, check=False)
            if done.returncode == 0 or not not_yet(done.stderr) or time.monotonic() - started > 20:
                break
            time.sleep(0.2)
        assert done.returncode == 0, done.stderr

    run()
    wait_for("admission", scene.admitted)
    wait_for("Kueue's entry", lambda: scene.managers() == ["example.com/team", KUEUE_MANAGER])
    assert wait_for("a running TrainJob", lambda: scene.live()["spec"].get("suspend") is False)
    run()
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]
    assert scene.live()["spec"]["suspend"] is False


# What kubectl-based programs print when a request got no answer from the API server.
UNANSWERED = "Unable to connect to the server"


def test_kpt_live_apply_as_the_kpt_example_says_keeps_kueues_entry(
    plane: ControlPlane, tmp_path: Path, kpt: str
) -> None:
    """kustomization-examples/kpt's ``kpt live apply --server-side``, twice, on a package holding the
    render: Kueue's entry survives and the re-apply of the running TrainJob is accepted (kpt's default,
    client-side, is refused there: "RuntimePatches can only be modified when the TrainJob is
    suspended")."""
    command = doc_command(ROOT / "kustomization-examples" / "kpt" / "README.md", "Apply with")
    assert command == ["kpt", "live", "apply", "--server-side"], command
    scene = Scene(plane, tmp_path, "doc-kpt", cpu="100", env=True)
    package = tmp_path / scene.ns / "package"
    package.mkdir()
    (package / "rendered.yaml").write_text(scene.rendered)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "KUBECONFIG": plane.kubeconfig}

    def kpt_run(*args: str) -> None:
        for _ in range(2):
            done = subprocess.run([kpt, *args], env=env, capture_output=True, text=True, timeout=300, check=False)
            # Run once more only where the API server reset a request before kpt applied anything (once in
            # CI, at load 9, after 60 s: "stream error: ...; INTERNAL_ERROR; received from peer"; its timeout
            # filter resets a request that outlives its 60 s once its header is written, k8s.io/apiserver
            # pkg/server/filters/timeout.go).
            if done.returncode == 0 or done.stdout or UNANSWERED not in done.stderr:
                break
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    kpt_run("live", "install-resource-group")
    kpt_run("live", "init", str(package), "--namespace", scene.ns)
    kpt_run(*command[1:], str(package))
    wait_for("admission", scene.admitted)
    wait_for("Kueue's entry", lambda: scene.managers() == ["example.com/team", KUEUE_MANAGER])
    assert wait_for("a running TrainJob", lambda: scene.live()["spec"].get("suspend") is False)
    kpt_run(*command[1:], str(package))
    assert scene.managers() == ["example.com/team", KUEUE_MANAGER]
    assert scene.live()["spec"]["suspend"] is False
