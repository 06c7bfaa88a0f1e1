"""The Helm post-renderer example run by the real Helm `make cluster` builds (tests/cluster/standalone.py):
``helm template`` of the example's own chart, with and without the post-renderer, as its README says."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cluster import standalone
from tests.examples import EXAMPLES, VENV_BIN

pytestmark = pytest.mark.cluster

HELM_EXAMPLE = EXAMPLES / "helm-post-renderer"
ROOT = EXAMPLES.parent


def _helm(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{VENV_BIN}{os.pathsep}/usr/bin:/bin",
        "HOME": str(home),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    return subprocess.run([standalone.helm(), *args], cwd=ROOT, capture_output=True, text=True, env=env, check=False)


def test_the_chart_prints_the_post_renderers_input(tmp_path: Path) -> None:
    """input.yaml, which the Helm-less tests feed the script, is what this chart really prints."""
    done = _helm("template", "training", str(HELM_EXAMPLE / "chart"), home=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (HELM_EXAMPLE / "input.yaml").read_text()


def test_helm_template_with_the_post_renderer(tmp_path: Path) -> None:
    chart = "kustomization-examples/helm-post-renderer/chart"
    renderer = "./kustomization-examples/helm-post-renderer/post-render.sh"
    assert f"helm template training {chart} --post-renderer {renderer}" in (HELM_EXAMPLE / "README.md").read_text()
    done = _helm("template", "training", chart, "--post-renderer", renderer, home=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (HELM_EXAMPLE / "expected.yaml").read_text()


def test_a_post_renderer_error_stops_helm(tmp_path: Path) -> None:
    """render prints nothing and exits 1 on a bad override: Helm prints no manifest."""
    renderer = "./kustomization-examples/helm-post-renderer/post-render.sh"
    done = _helm(
        "template",
        "training",
        str(HELM_EXAMPLE / "chart"),
        "--set",
        "jobLoaderMemory=64GB",
        "--post-renderer",
        renderer,
        home=tmp_path,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert "64GB" in done.stderr and "limits.memory" in done.stderr, done.stderr
