"""The container image the Dockerfile builds, run by a real engine (tests/engine.py: CI sets up
podman with .ci/image.sh; elsewhere these tests skip without an engine): as a KRM function on the
goldens, as kpt's pipeline and ``kpt fn eval`` function, and as the Argo CD plugin's sidecar. The
kustomize examples run it too (tests/test_examples.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest
import yaml

from tests.engine import Engine
from tests.examples import (
    CMP,
    CMP_EXAMPLES,
    EXAMPLES,
    IMAGE,
    KPT_IMAGE_PACKAGE,
    KUSTOMIZE_STAND_IN,
    application,
    argocd_env,
    assert_rendered,
    cmp_command,
    documents,
    identity,
    kpt_copy,
    kpt_render,
    kpt_unwrapped,
    sidecar_containers,
    sidecar_kustomize_dir,
    sidecar_path,
    stage_source,
    tree,
)
from tests.goldens import cases, results_of

pytestmark = pytest.mark.image

# What a hardened runtime allows a KRM function: no network, nothing written, no capabilities.
LOCKED_DOWN = ["--network", "none", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges"]


def expected(example: str) -> str:
    return (EXAMPLES / example / "expected.yaml").read_text()


def test_the_image_runs_as_the_dockerfile_says(engine: Engine) -> None:
    done = subprocess.run(
        [engine.cli, "image", "inspect", engine.image], capture_output=True, text=True, check=True, timeout=60
    )
    (config,) = [i["Config"] for i in json.loads(done.stdout)]
    assert config["User"] == "65534:65534"
    assert config["Entrypoint"] == ["/opt/trainjob-resources/bin/trainjob-resources"]
    assert config["Labels"]["org.opencontainers.image.version"] == IMAGE.rsplit(":", 1)[1]
    listed = engine.run([*LOCKED_DOWN, "--entrypoint", "python"], args=["-m", "pip", "--version"])
    assert listed.returncode != 0 and b"No module named pip" in listed.stderr, "pip is removed from the image"


@pytest.mark.parametrize("case", cases("success"), ids=lambda p: p.name)
def test_a_golden_through_the_locked_down_image(engine: Engine, case: Path) -> None:
    done = engine.run(LOCKED_DOWN, (case / "input.yaml").read_bytes())
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == (case / "expected.yaml").read_text()


def test_an_error_golden_through_the_locked_down_image(engine: Engine) -> None:
    (case,) = [c for c in cases("error") if c.name == "unknown-container"]
    done = engine.run(LOCKED_DOWN, (case / "input.yaml").read_bytes())
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr
    assert results_of(done.stdout) == yaml.safe_load((case / "results.yaml").read_text())


def test_bad_input_in_the_image_is_a_message_not_a_traceback(engine: Engine) -> None:
    done = engine.run(LOCKED_DOWN, b"kind: [")
    assert done.returncode == 1
    assert b"invalid YAML" in done.stderr
    assert b"Traceback" not in done.stderr


# kpt


@pytest.mark.kpt
def test_kpt_pipeline_with_the_image_matches_its_golden(kpt: str, engine: Engine, tmp_path: Path) -> None:
    assert kpt_unwrapped(kpt, tmp_path, KPT_IMAGE_PACKAGE, engine) == expected("kpt-image")


@pytest.mark.kpt
def test_kpt_renders_in_place_with_the_image_and_a_second_render_changes_nothing(
    kpt: str, engine: Engine, tmp_path: Path
) -> None:
    package = kpt_copy(KPT_IMAGE_PACKAGE, tmp_path / "package", engine)
    first = kpt_render(kpt, package, env=engine.env)
    assert first.returncode == 0, first.stderr
    assert engine.image in first.stderr, "kpt ran the image"
    rendered = tree(package)
    objects = [d for data in rendered.values() for d in documents(engine.published(data.decode()))]
    assert sorted(map(str, objects)) == sorted(map(str, documents(expected("kpt-image"))))
    second = kpt_render(kpt, package, env=engine.env)
    assert second.returncode == 0, second.stderr
    assert tree(package) == rendered


@pytest.mark.kpt
def test_kpt_fn_eval_with_the_image(kpt: str, engine: Engine, tmp_path: Path) -> None:
    """``kpt fn eval --image``: the function run once on a package, no pipeline; the same result."""
    package = tmp_path / "package"
    shutil.copytree(KPT_IMAGE_PACKAGE, package)
    command = [kpt, "fn", "eval", "--image", engine.image, "--fn-config", "trainjob-resources.yaml"]
    printed = subprocess.run(
        [*command, "-o", "unwrap"], cwd=package, env=engine.env, capture_output=True, text=True, check=False
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == expected("kpt-image")
    assert tree(package) == tree(KPT_IMAGE_PACKAGE), "printing leaves the package alone"
    in_place = subprocess.run(command, cwd=package, env=engine.env, capture_output=True, text=True, check=False)
    assert in_place.returncode == 0, in_place.stderr
    rendered = kpt_copy(KPT_IMAGE_PACKAGE, tmp_path / "rendered", engine)
    assert kpt_render(kpt, rendered, env=engine.env).returncode == 0
    (rendered / "Kptfile").write_text(engine.published((rendered / "Kptfile").read_text()))
    assert tree(package) == tree(rendered), "eval writes what the pipeline writes"


# Argo CD
#
# The plugin as sidecar.yaml runs it: plugin.yaml's own commands, as user 999, read-only root
# filesystem, no network, no capabilities, /tmp an empty tmpfs, the repository's copy (where the
# CMP server would have unpacked it) read-only, sidecar.yaml's PATH. Where the sidecar's init
# container copies Argo CD's kustomize into an emptyDir, these tests mount a stand-in at the same
# place: kubectl's built-in kustomize behind a `kustomize` script (tests/kustomize-stand-in/).
# kubectl is a static binary, mounted read-only beside that folder, outside PATH, so the plugin
# sees only `kustomize`, as in the sidecar.

REPO = PurePosixPath("/tmp/argocd-repo")


def _kustomize_mounts(kubectl: str, work: Path) -> list[str]:
    """The folder the init container fills (here: the stand-in), and the kubectl it runs."""
    tools = work / "kustomize-bin"
    tools.mkdir()
    shutil.copy2(KUSTOMIZE_STAND_IN, tools / "kustomize")
    target = PurePosixPath(sidecar_kustomize_dir())
    return ["-v", f"{tools}:{target}:ro", "-v", f"{os.path.realpath(kubectl)}:{target.parent / 'kubectl'}:ro"]


def _cmp_in_image(
    engine: Engine, stage: str, repo: Path, workdir: PurePosixPath, mounts: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """One of plugin.yaml's commands in the image as sidecar.yaml runs it, in ``workdir`` of the
    repository copy ``repo``; Argo CD's variables ``env`` set."""
    _, container = sidecar_containers()
    user = container["securityContext"]["runAsUser"]
    command = cmp_command(stage)
    options = [*LOCKED_DOWN, "--user", f"{user}:{user}", "--tmpfs", "/tmp", "-v", f"{repo}:{REPO}:ro", *mounts]
    options += ["-w", str(workdir), "-e", f"PATH={sidecar_path()}"]
    for key, value in env.items():
        options += ["-e", f"{key}={value}"]
    return engine.run([*options, "--entrypoint", command[0]], args=command[1:])


@pytest.mark.kubectl
@pytest.mark.parametrize("example", CMP_EXAMPLES)
def test_the_argocd_plugin_commands_in_the_image(engine: Engine, kubectl: str, example: str, tmp_path: Path) -> None:
    """discover, init and generate, for the plain example and the overlay, against their goldens."""
    stage_source(example, tmp_path)
    repo = tmp_path / "repo"
    (repo / "empty").mkdir()
    mounts = _kustomize_mounts(kubectl, tmp_path)
    workdir = REPO / application(example)["spec"]["source"]["path"]
    env = argocd_env(example)

    discovered = _cmp_in_image(engine, "discover", repo, workdir, mounts, {})
    found = "./trainjobs.yaml" if example == CMP.name else "./trainjob-resources.yaml"
    assert (discovered.returncode, discovered.stdout.decode()) == (0, f"{found}\n"), discovered.stderr
    empty = _cmp_in_image(engine, "discover", repo, REPO / "empty", mounts, {})
    assert (empty.returncode, empty.stdout) == (0, b""), "a folder without TrainJobs is not selected"
    init = _cmp_in_image(engine, "init", repo, workdir, mounts, env)
    assert init.returncode == 0, init.stderr
    assert init.stderr.decode().startswith("trainjob-resources ")
    generated = _cmp_in_image(engine, "generate", repo, workdir, mounts, env)
    assert generated.returncode == 0, generated.stderr
    assert generated.stdout.decode() == expected(example)
    assert_rendered(documents(generated.stdout.decode()))


@pytest.mark.kubectl
def test_the_sidecar_finds_the_mounted_kustomize_first(engine: Engine, kubectl: str, tmp_path: Path) -> None:
    """What the plugin runs as kustomize is what the init container's folder holds, first on PATH."""
    mounts = _kustomize_mounts(kubectl, tmp_path)
    options = [*LOCKED_DOWN, "--user", "999:999", *mounts, "-e", f"PATH={sidecar_path()}", "--entrypoint", "sh"]
    done = engine.run(options, args=["-c", "command -v kustomize && kustomize version"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == str(PurePosixPath(sidecar_kustomize_dir()) / "kustomize")
    assert any(line.startswith("Kustomize Version") for line in lines), lines


def test_the_argocd_plugin_in_the_image_fails_with_a_message(engine: Engine, tmp_path: Path) -> None:
    stage_source(CMP.name, tmp_path)
    workdir = REPO / application()["spec"]["source"]["path"]
    env = {**argocd_env(), "ARGOCD_ENV_MODE": "fast"}
    done = _cmp_in_image(engine, "generate", tmp_path / "repo", workdir, [], env)
    assert (done.returncode, done.stdout) == (1, b"")
    assert b"ARGOCD_ENV_MODE (plugin env MODE): " in done.stderr
    assert b"Traceback" not in done.stderr
    assert all(line.startswith(f"application {env['ARGOCD_APP_NAME']}: ") for line in done.stderr.decode().splitlines())


@pytest.mark.kubectl
def test_the_overlay_built_by_kustomize_with_the_image_is_the_plugins_output(
    engine: Engine, kubectl: str, tmp_path: Path
) -> None:
    """Outside Argo CD the overlay builds with its transformer's container annotation (kustomize
    runs the image through ``docker``): the same objects as the plugin's golden."""
    example = "argocd-cmp-kustomize"
    source = stage_source(example, tmp_path)
    config = source / "trainjob-resources.yaml"
    config.write_text(engine.localized(config.read_text()))
    assert engine.image in config.read_text()
    done = subprocess.run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(source)],
        capture_output=True,
        text=True,
        env=engine.env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    golden = documents(expected(example))
    assert sorted(documents(done.stdout), key=identity) == sorted(golden, key=identity)
