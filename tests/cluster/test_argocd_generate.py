"""Argo CD's own repo-server and plugin server (tests/cluster/argocd, Argo CD v3.6.2) generating the
Applications of docs/argocd-multi-team.md, and its application controller's diff on the control plane.

The repository is the walkthrough's platform repository (tests/test_argocd_multi_team.py's scratch copy)
made a git repository; the repo-server clones its target revision as it clones any repository, and the
plugin server runs deploy/argocd-cmp/plugin.yaml on the host (no container engine here), with the
platform's files mounted where the sidecar mounts them (the one line of plugin.yaml naming that folder
points at the test's copy) and the sidecar's kustomize (kubectl's, as tests/test_argocd_multi_team.py
provides it) on PATH.
"""

from __future__ import annotations

import copy
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.argocd import TRACKING_ANNOTATION, ArgoCD, Compared, Generated, tracking_id
from tests.cluster.controlplane import TRAINER_RELEASES, ControlPlane
from tests.examples import VENV_BIN, documents, kustomize_provider
from tests.test_argocd_multi_team import (
    CHANGED_FILE,
    DEPLOY,
    PLATFORM_DIR,
    TEAMS,
    application,
    git,
    make_the_change,
    mount_platform_files,
    stage,
    team_folders,
)

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


class Platform:
    """The walkthrough's platform repository as a git repository, the plugin configuration the sidecar
    runs (its platform folder here), and the environment of the sidecar."""

    def __init__(self, work: Path, kubectl: str) -> None:
        self.work = work
        self.root = stage(work)
        git(self.root, "init", "-q")
        self.commit("the example as it is")
        self.etc = work / "etc-trainjob-resources"
        mount_platform_files(self.root, self.etc)
        text = (DEPLOY / "plugin.yaml").read_text()
        assert text.count(f"p={PLATFORM_DIR}\n") == 1
        self.plugin_config = work / "plugin.yaml"
        self.plugin_config.write_text(text.replace(f"p={PLATFORM_DIR}\n", f"p={self.etc}\n"))
        self.bin = kustomize_provider(kubectl, work)
        self.env = {
            "PATH": os.pathsep.join([str(self.bin), str(VENV_BIN), "/usr/local/bin", "/usr/bin", "/bin"]),
            "HOME": str(work),
        }

    def commit(self, message: str) -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)

    def render(self, folder: str, app: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """`trainjob-resources render` on the folder with the platform's files and the Application's
        options, run directly: the expectation Argo CD's generation is compared with."""
        source = app["spec"]["source"]
        env = {**self.env, "ARGOCD_APP_NAME": app["metadata"]["name"]}
        env["ARGOCD_APP_NAMESPACE"] = app["spec"]["destination"]["namespace"]
        env.update({f"ARGOCD_ENV_{e['name']}": e["value"] for e in source["plugin"].get("env", [])})
        command = [str(VENV_BIN / "trainjob-resources"), "render", "--config", str(self.etc / "platform.yaml")]
        command += ["--runtimes", str(self.etc / "runtimes"), "--config-from-env", "."]
        return subprocess.run(command, cwd=self.root / folder, env=env, capture_output=True, text=True, check=False)

    def generate(self, argocd: ArgoCD, app: dict[str, Any]) -> Generated:
        return argocd.generate(app, self.root, self.plugin_config, env=self.env)


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory, kubectl: str) -> Platform:
    return Platform(tmp_path_factory.mktemp("argocd"), kubectl)


def applications(platform: Platform) -> list[dict[str, Any]]:
    apps = [application(folder) for folder in team_folders(platform.root)]
    assert [a["metadata"]["name"] for a in apps] == [f"trainjobs-{t}" for t in TEAMS]
    return apps


def untracked(app_name: str, manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The manifests without the tracking annotation Argo CD adds, each annotation checked first."""
    found = copy.deepcopy(manifests)
    for obj in found:
        annotations = obj["metadata"]["annotations"]
        assert annotations.pop(TRACKING_ANNOTATION) == tracking_id(app_name, obj), obj["metadata"]
        if not annotations:
            del obj["metadata"]["annotations"]
    return found


def test_argocd_generates_what_render_prints_for_each_application(argocd: ArgoCD, platform: Platform) -> None:
    for app in applications(platform):
        made = platform.generate(argocd, app)
        assert made.error is None, made.error
        expected = platform.render(app["spec"]["source"]["path"], app)
        assert expected.returncode == 0, expected.stderr
        assert documents(expected.stdout), "the render has objects"
        assert untracked(app["metadata"]["name"], made.manifests) == documents(expected.stdout)


def test_argocd_discovers_the_plugin_for_an_application_that_names_none(argocd: ArgoCD, platform: Platform) -> None:
    """plugin.yaml's discover command, run by Argo CD's discovery over the socket, selects the plugin."""
    app = applications(platform)[1]
    del app["spec"]["source"]["plugin"]["name"]
    named = platform.generate(argocd, applications(platform)[1])
    discovered = platform.generate(argocd, app)
    assert discovered.error is None, discovered.error
    assert discovered.manifests == named.manifests


def test_argocd_shows_our_error_for_an_oversized_job(argocd: ArgoCD, kubectl: str, tmp_path: Path) -> None:
    broken = Platform(tmp_path, kubectl)
    jobs = broken.root / CHANGED_FILE
    jobs.write_text(jobs.read_text().replace("memory: 32Gi", "memory: 96Gi"))
    broken.commit("an oversized data-loader")
    app = applications(broken)[0]
    made = broken.generate(argocd, app)
    assert made.manifests == [] and made.error is not None
    ours = broken.render(app["spec"]["source"]["path"], app)
    assert ours.returncode == 1
    problems = [line for line in ours.stderr.splitlines() if not line.startswith("note: ")]
    assert problems and all(line.startswith("application trainjobs-team-a: ") for line in problems)
    assert sum("above the policy's maximum per container, 64Gi" in line for line in problems) == 2
    for line in problems:
        assert line in made.error, made.error
    assert made.error.startswith('CMP processing failed for application "trainjobs-team-a"'), made.error


# -- Argo CD's diff on the control plane ---------------------------------------------------------


def manifests_text(made: Generated) -> str:
    return yaml.safe_dump_all(made.manifests, sort_keys=False)


SERVER_SIDE = {"syncOptions": ["ServerSideApply=true"]}


@pytest.fixture(params=[(r, how) for r in TRAINER_RELEASES for how in ("client-side", "server-side")], ids=str)
def applied(
    request: pytest.FixtureRequest, control_planes: Any, argocd: ArgoCD, kubectl: str, tmp_path: Path
) -> Iterator[tuple[ControlPlane, Platform, dict[str, Any]]]:
    """team-a's Application generated by Argo CD and applied as its sync applies it: `kubectl apply`
    (client-side, Argo CD's default), or server-side as field manager argocd-controller when the
    Application syncs with ServerSideApply=true; the platform's runtime and the team's namespace in
    place; on each Trainer release."""
    release, how = request.param
    plane: ControlPlane = control_planes(release)
    repo = Platform(tmp_path, kubectl)
    app = applications(repo)[0]
    if how == "server-side":
        app["spec"]["syncPolicy"] = SERVER_SIDE
    namespace = app["spec"]["destination"]["namespace"]
    plane.kubectl("create", "namespace", namespace, check=False)
    runtime = (repo.root / "platform" / "trainjob-resources" / "runtimes" / "torch-distributed.yaml").read_text()
    plane.kubectl("apply", "-f", "-", input=runtime)
    made = repo.generate(argocd, app)
    assert made.error is None, made.error
    if how == "server-side":
        plane.apply_server_side(manifests_text(made))
    else:
        plane.kubectl("apply", "-f", "-", input=manifests_text(made))
    for obj in made.manifests:  # Trainer has reconciled (its JobSet, and on v2.2 the runtime's in-use finalizer)
        if obj["kind"] == "TrainJob":
            plane.wait_for_jobset(obj["metadata"]["name"], namespace)
    try:
        yield plane, repo, app
    finally:
        # Gone before the next test on this shared control plane, the platform's runtime too: another test's
        # server-side apply of a runtime of that name would conflict with this one's client-side apply.
        for obj in reversed(made.manifests):  # the TrainJobs first: a runtime in use keeps a finalizer
            plane.delete(obj["kind"], obj["metadata"]["name"], namespace)
        plane.kubectl("delete", "--ignore-not-found", "--wait=true", "-f", "-", input=runtime)


def diff(argocd: ArgoCD, plane: ControlPlane, repo: Platform, app: dict[str, Any]) -> Compared:
    made = repo.generate(argocd, app)
    assert made.error is None, made.error
    return argocd.diff(app, made, plane.kubeconfig)


def test_argocd_says_synced_after_the_sync_and_out_of_sync_naming_the_field_after_a_git_change(
    argocd: ArgoCD, applied: tuple[ControlPlane, Platform, dict[str, Any]]
) -> None:
    plane, repo, app = applied
    compared = diff(argocd, plane, repo, app)
    assert compared.server_side_diff == ("syncPolicy" in app["spec"]), "ServerSideApply=true turns server-side diff on"
    assert compared.error is None, compared.error
    assert compared.resources and all(r.live for r in compared.resources)
    assert compared.status == "Synced", [(r.kind, r.name, r.status, r.changed) for r in compared.resources]
    before = {(r.kind, r.name) for r in compared.resources}

    make_the_change(repo.root)
    repo.commit("the pull request: the data-loader 32Gi -> 48Gi")
    compared = diff(argocd, plane, repo, app)
    if compared.server_side_diff:
        # Measured: the server-side diff's dry-run apply of the TrainJob is refused by the CRD's CEL rule
        # (its runtimeRef moves to the new derived runtime), so the Application shows a ComparisonError
        # (sync status Unknown) instead of OutOfSync. A sync is refused the same way (README, "What upstream
        # did when run"); this records Argo CD's behaviour until the render or the shipped sync options
        # avoid it (issue 48).
        assert compared.status == "Unknown"
        assert compared.error is not None
        assert "error running server side apply in dryrun mode for resource TrainJob/llm-finetune" in compared.error
        assert "spec.runtimeRef: Invalid value: field is immutable" in compared.error
        return
    assert compared.status == "OutOfSync", compared.error
    out_of_sync = {(r.kind, r.name): r for r in compared.resources if r.status == "OutOfSync"}
    (new_runtime,) = [key for key in out_of_sync if key not in before]
    assert new_runtime[0] == "TrainingRuntime" and not out_of_sync[new_runtime].live, "a derived runtime to create"
    job = out_of_sync.pop(("TrainJob", "llm-finetune"))
    assert "spec.runtimeRef.name" in job.changed, job.changed
    assert set(out_of_sync) == {new_runtime}, "nothing else changed"
    assert all(r.status == "Synced" for r in compared.resources if (r.kind, r.name) in before - {(job.kind, job.name)})

    # argocd-cm's resource customizations reach the diff: ignoring the fields the change moved, the
    # TrainJob is Synced.
    ignored = "\n".join(["jsonPointers:", *(f"- {pointer}" for pointer in _pointers(job.changed))])
    argocd_cm = {"data": {"resource.customizations.ignoreDifferences.trainer.kubeflow.org_TrainJob": ignored}}
    made = repo.generate(argocd, app)
    ignoring = argocd.diff(app, made, plane.kubeconfig, argocd_cm=argocd_cm)
    assert ignoring.resource("TrainJob", "llm-finetune").status == "Synced", ignoring.resource(
        "TrainJob", "llm-finetune"
    )


def _pointers(paths: list[str]) -> list[str]:
    """JSON pointers of the diff's field paths (metadata.annotations.a/b -> /metadata/annotations/a~1b)."""
    pointers = []
    for path in paths:
        head, _, rest = path.partition(".annotations.")
        parts = head.split(".") + (["annotations", rest] if rest else [])
        pointers.append("/" + "/".join(part.replace("~", "~0").replace("/", "~1") for part in parts))
    return pointers
