"""The stateless paths (issue 20): kustomize, Argo CD and Helm render from the source every time, so
the same TrainJob text must give the same runtimeRef at every base version and through every path:
kustomize's container function (kubectl kustomize with the docker stand-in, the same code as the
image), ``render`` (the Argo CD plugin), ``render --runtimes`` and kpt's write-back loop. A team
repository is committed step by step and each step rendered from its commit."""

from __future__ import annotations

import copy
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.cli import explain as explain_cli
from trainjob_resources.cli import render as render_cli

from tests.examples import EXAMPLES, documents, write_docker_shim
from tests.kit import build
from tests.support import Rendered, container_of, render

LOCAL = "config.kubernetes.io/local-config"
DERIVED_FROM = "fn.trainjob-resources.io/derived-from"
SORT = (EXAMPLES / "container" / "kustomization.yaml").read_text().split("resources:")[0]
FUNCTION = (EXAMPLES / "container" / "trainjob-resources.yaml").read_text()


def runtime(
    image: str = "data-loader:3.2.0",
    memory: str = "8Gi",
    labels: dict[str, str] | None = None,
    metrics: bool = False,
    name: str = "torch-streaming",
) -> dict[str, Any]:
    init = [
        {
            "name": "data-loader",
            "image": image,
            "restartPolicy": "Always",
            "resources": {"limits": {"memory": memory}, "requests": {"memory": memory}},
        }
    ]
    if metrics:
        init.append(
            {"name": "metrics", "image": "m:1", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}}
        )
    pod = {"initContainers": init, "containers": [{"name": "node", "image": "torch"}]}
    job = build.replicated_job("node", pod, labels=build.trainer_labels())
    framework = {"trainer.kubeflow.org/framework": "torch", **(labels or {})}
    return build.training_runtime(name, [job], {"numNodes": 1, "torch": {}}, labels=framework)


def trainjob(memory: str = "16Gi", ref: str = "torch-streaming", name: str = "nlp") -> dict[str, Any]:
    loader = {"name": "data-loader", "resources": {"limits": {"memory": memory}, "requests": {"memory": memory}}}
    patch = build.container_patch("node", "initContainers", loader, manager="team.example.com/sizing")
    return build.trainjob(name, ref, [patch], namespace="team-a")


def local(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as kustomize gives it to a function once commonAnnotations marked it local-config."""
    out = copy.deepcopy(obj)
    out["metadata"].setdefault("annotations", {})[LOCAL] = "true"
    return out


def dump(obj: Any) -> str:
    return yaml.safe_dump(obj, sort_keys=False)


def team_repo(root: Path, base: dict[str, Any], job: dict[str, Any], overlay: str = "") -> None:
    """A team's repository: the platform's runtimes vendored in ``platform/``, marked local-config by
    its kustomization's commonAnnotations (the annotation is in no file); ``team/`` runs the function."""
    (root / "platform").mkdir(parents=True, exist_ok=True)
    (root / "team").mkdir(exist_ok=True)
    (root / "platform" / "kustomization.yaml").write_text(
        f'resources: [torch-streaming.yaml]\ncommonAnnotations:\n  {LOCAL}: "true"\n'
    )
    (root / "platform" / "torch-streaming.yaml").write_text(dump(base))
    (root / "team" / "trainjob.yaml").write_text(dump(job))
    (root / "team" / "trainjob-resources.yaml").write_text(FUNCTION)
    (root / "team" / "kustomization.yaml").write_text(
        SORT + f"{overlay}resources: [../platform, trainjob.yaml]\ntransformers: [trainjob-resources.yaml]\n"
    )


def run_cli(main: Any, args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    for key in list(os.environ):
        if key.startswith("ARGOCD_"):
            monkeypatch.delenv(key)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def kustomize_container(kubectl: str, folder: Path, tmp_path: Path) -> list[dict[str, Any]]:
    """kubectl kustomize --enable-alpha-plugins: the container function path (the docker stand-in runs
    this checkout's function, the code the image holds)."""
    write_docker_shim(tmp_path / "bin", tmp_path / "docker.log")
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [kubectl, "kustomize", "--enable-alpha-plugins", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return documents(done.stdout)


def refs_of(objects: list[dict[str, Any]]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The TrainJob's runtimeRef, and the derived runtimes (name, derived-from)."""
    (job,) = [o for o in objects if o["kind"] == "TrainJob"]
    derived = [
        (o["metadata"]["name"], o["metadata"]["annotations"][DERIVED_FROM])
        for o in objects
        if o["kind"] in ("TrainingRuntime", "ClusterTrainingRuntime")
        and DERIVED_FROM in o["metadata"].get("annotations", {})
    ]
    return job["spec"]["runtimeRef"], derived


# Base edits, committed step by step, rendered at each commit through every path

STEPS = [
    ("the platform's runtime", {}),
    ("image bump", {"image": "data-loader:3.3.0"}),
    ("a label", {"image": "data-loader:3.3.0", "labels": {"team": "platform"}}),
    ("the sidecar's default raised to the override's value", {"image": "data-loader:3.3.0", "memory": "16Gi"}),
    ("and lowered from it", {"image": "data-loader:3.3.0", "memory": "12Gi"}),
    ("a new container", {"image": "data-loader:3.3.0", "memory": "12Gi", "metrics": True}),
]


@pytest.mark.parametrize("memory", ["16Gi", "8Gi"], ids=["override above the base", "override equal to the base"])
def test_every_commit_of_a_base_history_gives_the_same_ref_through_every_path(
    memory: str,
    kubectl: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    job = trainjob(memory)
    commits = []
    for message, edit in STEPS:
        team_repo(repo, runtime(**edit), job)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", message], check=True)
        commits.append(subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout)
    seen: dict[tuple[str, str], Any] = {}
    written_back: list[dict[str, Any]] | None = None
    for at, commit in enumerate(commits):
        tree = tmp_path / f"step{at}"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(repo), "archive", commit.strip()], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        base = yaml.safe_load((tree / "platform" / "torch-streaming.yaml").read_text())
        paths: dict[str, list[dict[str, Any]]] = {}
        paths["kustomize (container)"] = kustomize_container(kubectl, tree / "team", tmp_path)
        code, out, err = run_cli(render_cli.main, [str(tree / "team"), "--root", str(tree)], capsys, monkeypatch)
        assert (code, err) == (0, ""), err
        paths["render (Argo CD)"] = documents(out)
        args = [str(tree / "team" / "trainjob.yaml"), "--runtimes", str(tree / "platform"), "--root", str(tree)]
        code, out, err = run_cli(render_cli.main, args, capsys, monkeypatch)
        assert (code, err) == (0, ""), err
        paths["render --runtimes"] = documents(out)
        fresh = render([local(base), job])
        assert fresh.code == 0 and not [r for r in fresh.results if r["severity"] != "info"], fresh.results
        paths["KRM function"] = fresh.items
        # kpt: the previous step's output written back, the base edited in it
        if written_back is None:
            written_back = fresh.items
        else:
            written_back = [local(base) if o["kind"] == "ClusterTrainingRuntime" else o for o in written_back]
            again = render(written_back)
            assert again.code == 0 and not [r for r in again.results if r["severity"] != "info"], again.results
            written_back = again.items
        paths["kpt (written back)"] = written_back
        for path, objects in paths.items():
            ref, derived = refs_of(objects)
            assert derived == [(ref["name"], "ClusterTrainingRuntime/torch-streaming")], (path, STEPS[at][0])
            seen[(STEPS[at][0], path)] = ref
            (made,) = [o for o in objects if o["metadata"]["name"] == ref["name"]]
            loader = container_of(made, "node", "initContainers", "data-loader")
            assert loader["image"] == STEPS[at][1].get("image", "data-loader:3.2.0"), "the base edit reaches it"
            assert loader["resources"]["limits"]["memory"] == memory, "the override wins"
    first = next(iter(seen.values()))
    assert first["name"].startswith("torch-streaming-")
    assert {str(r) for r in seen.values()} == {str(first)}, seen


# Local-config as kustomize leaves it


@pytest.mark.parametrize(
    "marking",
    [
        pytest.param(("", "commonAnnotations:\n  {local}: 'true'\n", None), id="commonAnnotations"),
        pytest.param(
            (
                "",
                "patches:\n- target: {{kind: ClusterTrainingRuntime}}\n  patch: |\n"
                "    - op: add\n      path: /metadata/annotations\n      value: {{{local}: 'true'}}\n",
                None,
            ),
            id="inline JSON patch",
        ),
        pytest.param(
            ("", "patches:\n- path: mark.yaml\n", "mark.yaml"),
            id="patch file",
        ),
        pytest.param(("component", "", None), id="component"),
    ],
)
def test_render_sees_the_local_config_a_kustomization_adds(
    marking: tuple[str, str, str | None],
    kubectl: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    component, fields, patch_file = marking
    repo = tmp_path / "repo"
    team_repo(repo, runtime(), trainjob())
    platform = repo / "platform"
    text = "resources: [torch-streaming.yaml]\n" + fields.format(local=LOCAL)
    if patch_file:
        mark = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime"}
        mark["metadata"] = {"name": "torch-streaming", "annotations": {LOCAL: "true"}}  # type: ignore[assignment]
        (platform / patch_file).write_text(dump(mark))
    if component:
        (repo / "mark").mkdir()
        (repo / "mark" / "kustomization.yaml").write_text(
            f"apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  {LOCAL}: 'true'\n"
        )
        text += "components: [../mark]\n"
    (platform / "kustomization.yaml").write_text(text)
    code, out, err = run_cli(render_cli.main, [str(repo / "team"), "--root", str(repo)], capsys, monkeypatch)
    assert (code, err) == (0, ""), err
    rendered = documents(out)
    assert "ClusterTrainingRuntime" not in [o["kind"] for o in rendered], "local-config: never emitted"
    assert refs_of(rendered) == refs_of(kustomize_container(kubectl, repo / "team", tmp_path))
    args = [str(repo / "team" / "trainjob.yaml"), "--runtimes", str(platform), "--root", str(repo)]
    code, out, err = run_cli(render_cli.main, args, capsys, monkeypatch)
    assert (code, err) == (0, ""), err
    assert refs_of(documents(out)) == refs_of(rendered)


def test_runtimes_that_give_no_runtime_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (tmp_path / "trainjob.yaml").write_text(dump(trainjob()))
    code, out, err = run_cli(
        render_cli.main, [str(tmp_path / "trainjob.yaml"), "--runtimes", str(tmp_path / "none")], capsys, monkeypatch
    )
    assert (code, out) == (1, "")
    assert "--runtimes" in err and "no TrainingRuntime or ClusterTrainingRuntime found there" in err


# The cluster's name is the identity


def test_a_local_config_copy_renamed_by_the_overlay_is_known_by_the_clusters_name(
    kubectl: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    team_repo(repo, runtime(), trainjob(), overlay="namePrefix: prod-\n")
    unprefixed = render([local(runtime()), trainjob()])
    expected = refs_of(unprefixed.items)
    assert expected[1] == [(expected[0]["name"], "ClusterTrainingRuntime/torch-streaming")]
    container = kustomize_container(kubectl, repo / "team", tmp_path)
    code, out, err = run_cli(render_cli.main, [str(repo / "team"), "--root", str(repo)], capsys, monkeypatch)
    assert (code, err) == (0, ""), err
    assert refs_of(container) == refs_of(documents(out)) == expected
    code, out, err = run_cli(
        explain_cli.main, [str(repo / "team"), "--root", str(repo), "--format", "json"], capsys, monkeypatch
    )
    assert code == 0, err
    assert "prod-torch-streaming" not in out and "torch-streaming" in out


def test_did_you_mean_proposes_only_the_clusters_name_and_the_copys_new_name_is_an_error() -> None:
    copy_ = local(runtime(name="prod-torch-streaming"))
    copy_["metadata"]["annotations"]["internal.config.kubernetes.io/previousNames"] = "torch-streaming"
    copy_["metadata"]["annotations"]["internal.config.kubernetes.io/previousKinds"] = "ClusterTrainingRuntime"
    for typo in ("prod-torch-streamin", "torch-streamin"):
        (error,) = render([copy_, trainjob(ref=typo)]).errors()
        assert "Did you mean 'torch-streaming'?" in error["message"] and "prod-torch-streaming" not in error["message"]
        assert error["field"]["proposedValue"] == "torch-streaming"
    followed = render([copy_, trainjob(ref="prod-torch-streaming")])
    assert followed.code == 1
    (error,) = followed.errors()
    assert error["field"] == {
        "path": "spec.runtimeRef.name",
        "currentValue": "prod-torch-streaming",
        "proposedValue": "torch-streaming",
    }
    assert "the cluster has as 'torch-streaming'" in error["message"]
    # kustomize's namePrefix records its prefix on every object it renames, the TrainJob's too.
    copy_["metadata"]["annotations"]["internal.config.kubernetes.io/prefixes"] = "prod-"
    prefixed = trainjob()
    prefixed["metadata"]["annotations"] = {"internal.config.kubernetes.io/prefixes": "prod-"}
    right = render([copy_, prefixed])
    assert right.code == 0, right.errors()
    assert refs_of(right.items) == refs_of(render([local(runtime()), trainjob()]).items)


# No two Applications emit one cluster-scoped object with different content

CLUSTER_KIND = build.function_config("c", derivedRuntimeKind="ClusterTrainingRuntime")


def test_cluster_scoped_derived_runtimes_come_only_from_the_platforms_runtimes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Team A's copy (3.2.0) and team B's (3.3.0) would both emit one ClusterTrainingRuntime of one
    name (the name hashes the base's identity, not its content): a team's local-config copy is refused."""
    for image in ("data-loader:3.2.0", "data-loader:3.3.0"):
        out = render([local(runtime(image)), trainjob()], CLUSTER_KIND)
        assert out.code == 1
        (error,) = out.errors()
        assert error["field"]["path"].endswith("initContainers[0].resources")
        assert "derivedRuntimeKind ClusterTrainingRuntime needs the base runtime from the platform" in error["message"]
        assert out.of_kind("ClusterTrainingRuntime") == [local(runtime(image))], "nothing derived"
    emitted = render([runtime(), trainjob()], CLUSTER_KIND)
    assert emitted.code == 0, "the runtime itself in the bundle: this Application owns the base too"
    (tmp_path / "platform").mkdir()
    (tmp_path / "platform" / "rt.yaml").write_text(dump(runtime()))
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "trainjob.yaml").write_text(dump(trainjob()))
    (tmp_path / "team" / "config.yaml").write_text(dump(CLUSTER_KIND))
    args = [str(tmp_path / "team"), "--runtimes", str(tmp_path / "platform")]
    code, out, err = run_cli(render_cli.main, args, capsys, monkeypatch)
    assert (code, err) == (0, ""), err
    ref, derived = refs_of(documents(out))
    assert ref["kind"] == "ClusterTrainingRuntime" and derived == [
        (ref["name"], "ClusterTrainingRuntime/torch-streaming")
    ]
    (tmp_path / "team" / "copy.yaml").write_text(dump(local(runtime())))
    code, out, err = run_cli(render_cli.main, [str(tmp_path / "team")], capsys, monkeypatch)
    assert code == 1 and "needs the base runtime from the platform" in err


# kpt: a changed override gets the immutability warning


def test_kpt_a_changed_override_is_warned_like_a_removed_one() -> None:
    once = render([runtime(), trainjob()])
    written_back = copy.deepcopy(once.items)
    job = next(o for o in written_back if o["kind"] == "TrainJob")
    # the user writes the new size where the old one was (resources written win over those recorded)
    job["spec"]["runtimePatches"] = trainjob("32Gi")["spec"]["runtimePatches"]
    again = render(written_back)
    assert again.code == 0
    (warning,) = [r for r in again.results if r["severity"] == "warning"]
    assert warning["field"]["path"] == "spec.runtimeRef" and warning["resourceRef"]["name"] == "nlp"
    assert "the overrides changed since the last render" in warning["message"]
    assert "immutable" in warning["message"] and "Force=true,Replace=true" in warning["message"]
    before, after = refs_of(once.items)[0]["name"], refs_of(again.items)[0]["name"]
    assert before != after and f"from {before!r} to {after!r}" in warning["message"]
    assert not [r for r in render(again.items).results if r["severity"] == "warning"], "once: then a fixed point"
    unchanged = render(once.items)
    assert not [r for r in unchanged.results if r["severity"] == "warning"]


# Runtimes are validated like patches


@pytest.mark.parametrize("marked", [False, True], ids=["emitted runtime", "local-config copy"])
def test_a_runtime_the_api_server_refuses_is_an_error_at_its_own_field(
    marked: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = runtime(memory="16GB")
    bad = local(bad) if marked else bad
    out: Rendered = render([bad, trainjob()])
    assert out.code == 1
    at_runtime = [r for r in out.errors() if r["resourceRef"]["kind"] == "ClusterTrainingRuntime"]
    assert [r["field"]["path"] for r in at_runtime] == [
        "spec.template.spec.replicatedJobs[0].template.spec.template.spec.initContainers[0].resources.limits.memory",
        "spec.template.spec.replicatedJobs[0].template.spec.template.spec.initContainers[0].resources.requests.memory",
    ]
    assert "'16GB' is not a quantity" in at_runtime[0]["message"]
    assert [r["field"]["path"] for r in out.errors() if r["resourceRef"]["kind"] == "TrainJob"] == ["spec.runtimeRef"]
    assert out.of_kind("TrainingRuntime") == [], "no derived runtime is made from it"
    (tmp_path / "rt.yaml").write_text(dump(bad))
    (tmp_path / "trainjob.yaml").write_text(dump(trainjob()))
    code, printed, err = run_cli(render_cli.main, [str(tmp_path)], capsys, monkeypatch)
    assert (code, printed) == (1, "")
    assert "rt.yaml" in err and "initContainers[0].resources.limits.memory" in err and "16GB" in err
