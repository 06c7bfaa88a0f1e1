"""docs/integrations.md's Flux path, run: its ```sh block runs as written (bash -euo pipefail) from the
root of a git repository whose main and origin/main hold a team folder (kustomization-examples/argocd-cmp's
manifests as teams/ml-team), after a change that raises a TrainJob's memory; what it writes is checked,
then built as Flux builds a folder and applied to the control plane in the order the two Kustomizations
of the ```yaml block give.

No Flux binary is run. What Flux does is read from its source: a folder without a kustomization.yaml
gets one listing its YAML files as resources (`generateKustomization`, fluxcd/pkg
kustomize/kustomize_generator.go); every object of a Kustomization is dry-run on the server before any
is applied (`ApplyAll`, fluxcd/pkg ssa/manager_apply.go), with field manager kustomize-controller.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import standalone
from tests.cluster.controlplane import ControlPlane
from tests.examples import EXAMPLES, VENV_BIN

ROOT = EXAMPLES.parent
DOC = ROOT / "docs" / "integrations.md"
TEAM = EXAMPLES / "argocd-cmp" / "app"
NAMESPACE = "ml-team"
FOLDERS = {"runtimes": "clusters/prod/ml-team/runtimes", "trainjobs": "clusters/prod/ml-team/trainjobs"}
# The pull request's change: large-dataset-training's data-loader from 64Gi to 96Gi.
CHANGED_FILE = "teams/ml-team/trainjobs.yaml"
CHANGE = ("memory: 64Gi", "memory: 96Gi")
FLUX_FIELD_MANAGER = "kustomize-controller"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def flux_section() -> str:
    text = DOC.read_text()
    start = text.index("\n## Flux\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def blocks(language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(flux_section()) if lang == language]


def kustomizations() -> dict[str, dict[str, Any]]:
    (block,) = blocks("yaml")
    return {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(block)}


def git(root: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *ident, *args], cwd=root, env=env, check=True, capture_output=True)


def required(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{tool} is not on PATH (CI must provide it)")
        pytest.skip(f"{tool} is not on PATH")
        raise AssertionError("unreachable")
    return found


class CiRun:
    def __init__(self, root: Path, done: subprocess.CompletedProcess[str]) -> None:
        self.root = root
        self.done = done

    def items(self, folder: str) -> list[dict[str, Any]]:
        listed = yaml.safe_load((self.root / FOLDERS[folder] / "rendered.yaml").read_text())
        assert (listed["apiVersion"], listed["kind"]) == ("v1", "List")
        items: list[dict[str, Any]] = listed["items"]
        return items


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory: pytest.TempPathFactory) -> CiRun:
    """The sh block, run once in a scratch repository after the pull request's change."""
    tools = {required(tool) for tool in ("git", "jq")}
    work = tmp_path_factory.mktemp("flux")
    root = work / "repo"
    shutil.copytree(TEAM, root / "teams" / "ml-team")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    path = root / CHANGED_FILE
    text = path.read_text()
    assert text.count(CHANGE[0]) == 2, "limits and requests of the data-loader"
    path.write_text(text.replace(*CHANGE))
    (block,) = blocks("sh")
    search_path = [str(VENV_BIN), *sorted({str(Path(t).parent) for t in tools}), "/usr/bin", "/bin"]
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PATH": os.pathsep.join(search_path), "HOME": str(work)},
        check=False,
    )
    return CiRun(root, done)


@pytest.mark.slow
def test_the_ci_block_runs_as_written_and_reports_the_change(ci_run: CiRun) -> None:
    assert ci_run.done.returncode == 0, ci_run.done.stderr
    report = (ci_run.root / "report.md").read_text()
    assert "1 changed, 0 added, 0 removed, 1 unchanged" in report
    assert re.search(r"\| ml-team/large-dataset-training \| changed \| 2 \| memory 128Gi → 192Gi \|", report), report


@pytest.mark.slow
def test_the_two_folders_split_the_render_by_kind(ci_run: CiRun) -> None:
    """Every object render prints lands in exactly one folder: the TrainJobs in one, the rest in the other."""
    rendered = json.loads((ci_run.root / "rendered.json").read_text())["items"]
    runtimes, trainjobs = ci_run.items("runtimes"), ci_run.items("trainjobs")
    assert [o["kind"] for o in trainjobs] == ["TrainJob", "TrainJob"]
    assert {o["kind"] for o in runtimes} == {"TrainingRuntime"} and len(runtimes) == 2
    assert sorted(runtimes + trainjobs, key=json.dumps) == sorted(rendered, key=json.dumps)
    derived = [o for o in runtimes if o["metadata"]["name"] != "torch-with-data-loader"]
    (changed,) = [o for o in trainjobs if o["metadata"]["name"] == "large-dataset-training"]
    assert changed["spec"]["runtimeRef"]["name"] == derived[0]["metadata"]["name"]


def test_the_kustomizations_apply_the_two_folders_trainjobs_after_runtimes() -> None:
    found = kustomizations()
    assert set(found) == {"ml-team-runtimes", "ml-team-trainjobs"}
    for name, kustomization in found.items():
        assert kustomization["apiVersion"] == "kustomize.toolkit.fluxcd.io/v1"
        assert kustomization["spec"]["path"] == "./" + FOLDERS[name.removeprefix("ml-team-")]
        assert "patches" not in kustomization["spec"] and "targetNamespace" not in kustomization["spec"]
    assert found["ml-team-trainjobs"]["spec"]["dependsOn"] == [{"name": "ml-team-runtimes"}]
    assert "dependsOn" not in found["ml-team-runtimes"]["spec"]
    for folder in FOLDERS.values():
        assert f"> {folder}/rendered.yaml" in blocks("sh")[0]


def flux_build(ci_run: CiRun, folder: str) -> str:
    """`kustomize build` of a folder with the kustomization.yaml Flux generates when it has none."""
    source = ci_run.root / FOLDERS[folder]
    assert not (source / "kustomization.yaml").exists()
    build = ci_run.root.parent / "flux-build" / folder
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(source, build)
    yamls = sorted(p.name for p in build.iterdir() if p.suffix in (".yaml", ".yml"))
    (build / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [f"./{name}" for name in yamls],
            }
        )
    )
    done = subprocess.run(
        [standalone.kustomize("newest"), "build", str(build)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stderr) == (0, ""), folder
    return done.stdout


@pytest.mark.slow
@pytest.mark.cluster
def test_flux_builds_each_folder_to_its_objects(ci_run: CiRun) -> None:
    for folder in FOLDERS:
        built = list(yaml.safe_load_all(flux_build(ci_run, folder)))
        assert sorted(built, key=json.dumps) == sorted(ci_run.items(folder), key=json.dumps), folder


def apply(cp: ControlPlane, text: str, *, dry_run: bool) -> subprocess.CompletedProcess[str]:
    return cp.apply_server_side(text, FLUX_FIELD_MANAGER, force_conflicts=True, dry_run=dry_run, check=False)


@pytest.mark.slow
@pytest.mark.cluster
def test_on_the_control_plane_the_trainjobs_pass_once_their_runtimes_are_applied(
    ci_run: CiRun, control_plane: ControlPlane
) -> None:
    """One Kustomization of both folders is refused at its dry run (the derived runtime does not exist
    yet); the runtimes' applied first, the TrainJobs' dry run and apply pass."""
    runtimes, trainjobs = flux_build(ci_run, "runtimes"), flux_build(ci_run, "trainjobs")
    control_plane.kubectl("create", "namespace", NAMESPACE)
    try:
        together = apply(control_plane, runtimes + "---\n" + trainjobs, dry_run=True)
        assert together.returncode != 0
        derived = next(o for o in ci_run.items("runtimes") if o["metadata"]["name"] != "torch-with-data-loader")
        assert derived["metadata"]["name"] in together.stderr, together.stderr

        assert apply(control_plane, runtimes, dry_run=True).returncode == 0
        applied = apply(control_plane, runtimes, dry_run=False)
        assert applied.returncode == 0, applied.stderr
        dry = apply(control_plane, trainjobs, dry_run=True)
        assert dry.returncode == 0, dry.stderr
        applied = apply(control_plane, trainjobs, dry_run=False)
        assert applied.returncode == 0, applied.stderr
        control_plane.wait_for_jobset("large-dataset-training", NAMESPACE)
    finally:
        control_plane.kubectl("delete", "namespace", NAMESPACE, "--wait=false")
