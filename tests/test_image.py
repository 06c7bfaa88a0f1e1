"""The container image the Dockerfile builds, run by a real engine (tests/engine.py: CI sets up
podman with .ci/image.sh; elsewhere these tests skip without an engine): as a KRM function on the
goldens, as kpt's pipeline and ``kpt fn eval`` function, and as the Argo CD plugin's sidecar. The
kustomize examples run it too (tests/test_examples.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.engine import Engine
from tests.examples import (
    CMP,
    EXAMPLES,
    IMAGE,
    KPT_IMAGE_PACKAGE,
    argocd_env,
    assert_rendered,
    cmp_command,
    documents,
    kpt_copy,
    kpt_render,
    kpt_unwrapped,
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


def _cmp_in_image(engine: Engine, stage: str, app: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """One of plugin.yaml's commands in the image as sidecar.yaml runs it: user 999, read-only root
    filesystem, no capabilities, an emptyDir on /tmp holding the sources (read-only here: the
    plugin writes nothing), Argo CD's variables set."""
    command = cmp_command(stage)
    options = [*LOCKED_DOWN, "--user", "999:999", "--tmpfs", "/tmp", "-v", f"{app}:/tmp/app:ro", "-w", "/tmp/app"]
    for key, value in env.items():
        options += ["-e", f"{key}={value}"]
    return engine.run([*options, "--entrypoint", command[0]], args=command[1:])


def test_the_argocd_plugin_commands_in_the_image(engine: Engine, tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(CMP / "app", app)
    env = argocd_env()
    discovered = _cmp_in_image(engine, "discover", app, env)
    assert (discovered.returncode, discovered.stdout) == (0, b"./trainjobs.yaml\n"), discovered.stderr
    init = _cmp_in_image(engine, "init", app, env)
    assert init.returncode == 0, init.stderr
    assert init.stderr.decode().startswith("trainjob-resources ")
    generated = _cmp_in_image(engine, "generate", app, env)
    assert generated.returncode == 0, generated.stderr
    assert generated.stdout.decode() == expected("argocd-cmp")
    assert_rendered(documents(generated.stdout.decode()))


def test_the_argocd_plugin_in_the_image_fails_with_a_message(engine: Engine, tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(CMP / "app", app)
    done = _cmp_in_image(engine, "generate", app, {**argocd_env(), "ARGOCD_ENV_MODE": "fast"})
    assert (done.returncode, done.stdout) == (1, b"")
    assert b"data.mode" in done.stderr
    assert b"Traceback" not in done.stderr
