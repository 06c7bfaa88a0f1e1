"""The Helm post-renderer, run by the real Helm of both majors that `make cluster` builds
(tests/tools/helm.sh): Helm 3 runs kustomization-examples/helm-post-renderer/post-render.sh given to
``--post-renderer``; Helm 4, whose ``--post-renderer`` names a plugin, runs the plugin deploy/helm-plugin
(``helm plugin install deploy/helm-plugin``, then ``--post-renderer trainjob-resources``).

``helm template`` and ``helm install --dry-run=server`` (against the control plane) must print the
example's golden, and a refused chart must stop Helm with render's own messages on its stderr.

What Helm 4 does with a subprocess post-renderer (v4.3.2, internal/plugin/runtime_subprocess.go and
pkg/action/action.go), checked here by running it: the manifests come on stdin, re-serialized, each
object annotated ``postrenderer.helm.sh/postrender-filename``, which Helm takes off what comes back to
file the objects under their template (an object without it lands in ``generated-by-postrender-<i>.yaml``);
the output is then sorted by kind (unknown kinds alphabetically: TrainJob before TrainingRuntime); a
non-zero exit stops Helm; the plugin's stderr is collected and never printed, hence the plugin's relay.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources import __version__

from tests.cluster.controlplane import ControlPlane
from tests.examples import EXAMPLES, VENV_BIN, documents

pytestmark = pytest.mark.cluster

ROOT = EXAMPLES.parent
EXAMPLE = EXAMPLES / "helm-post-renderer"
PLUGIN = ROOT / "deploy" / "helm-plugin"
CHART = "kustomization-examples/helm-post-renderer/chart"
SCRIPT = "./kustomization-examples/helm-post-renderer/post-render.sh"
# How each major names the post-renderer, as the README and the example's README write it.
POST_RENDERER = {"v3": ["--post-renderer", SCRIPT], "v4": ["--post-renderer", "trainjob-resources"]}
MAJORS = ("v3", "v4")
# A value render refuses: memory in GB, which is no Kubernetes quantity.
REFUSED = ["--set", "jobLoaderMemory=64GB"]


def helm_paths() -> dict[str, dict[str, str]] | None:
    base = os.environ.get("TRAINJOB_RESOURCES_CACHE") or str(Path.home() / ".cache" / "trainjob-resources")
    try:
        paths: dict[str, dict[str, str]] = json.loads((Path(base) / "helm" / "current" / "paths.json").read_text())
    except (OSError, ValueError):
        return None
    return paths


def helm_binary(major: str) -> tuple[str, str]:
    """(version, path) of the Helm of that major tests/tools/helm.sh built; skip (fail in CI) without it."""
    built = (helm_paths() or {}).get(major)
    if built is None or not os.access(built["path"], os.X_OK):
        reason = f"no Helm {major} built (run `make cluster`: tests/tools/helm.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI must provide it)")
        pytest.skip(reason)
        raise AssertionError("unreachable")
    return built["version"], built["path"]


class Helm:
    """One Helm binary with a home of its own (plugins, cache, config), run from the repository's root."""

    def __init__(self, major: str, home: Path) -> None:
        self.major = major
        self.version, self.path = helm_binary(major)
        self.home = home

    def __call__(self, *args: str, kubeconfig: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": f"{VENV_BIN}{os.pathsep}/usr/bin:/bin",
            "HOME": str(self.home),
            "HELM_CACHE_HOME": str(self.home / "cache"),
            "HELM_CONFIG_HOME": str(self.home / "config"),
            "HELM_DATA_HOME": str(self.home / "data"),
        }
        if kubeconfig is not None:
            env["KUBECONFIG"] = kubeconfig
        return subprocess.run([self.path, *args], cwd=ROOT, capture_output=True, text=True, env=env, check=False)


@pytest.fixture(params=MAJORS)
def helm(request: pytest.FixtureRequest, tmp_path: Path) -> Helm:
    """Each major; Helm 4 with the plugin installed as the README installs it."""
    found = Helm(request.param, tmp_path)
    if found.major == "v4":
        done = found("plugin", "install", "deploy/helm-plugin")
        assert done.returncode == 0, done.stderr
        assert "Installed plugin: trainjob-resources" in done.stdout
    return found


def test_each_helm_is_the_pinned_release_stamped_as_helm_stamps_one(tmp_path: Path) -> None:
    for major, version in (("v3", "v3.21.4"), ("v4", "v4.3.2")):
        helm = Helm(major, tmp_path)
        assert helm.version == version
        short = helm("version", "--short")
        assert short.stdout.strip() == version, short
        assert 'GitTreeState:"clean"' in helm("version").stdout


def test_the_plugin_is_a_subprocess_postrenderer_of_this_version() -> None:
    manifest = yaml.safe_load((PLUGIN / "plugin.yaml").read_text())
    assert {k: manifest[k] for k in ("apiVersion", "type", "runtime", "name")} == {
        "apiVersion": "v1",
        "type": "postrenderer/v1",
        "runtime": "subprocess",
        "name": "trainjob-resources",
    }
    assert manifest["version"] == __version__
    (command,) = manifest["runtimeConfig"]["platformCommand"]
    assert command == {"command": "${HELM_PLUGIN_DIR}/post-render.sh"}
    assert os.access(PLUGIN / "post-render.sh", os.X_OK)


def test_the_chart_prints_the_post_renderers_input(tmp_path: Path) -> None:
    """input.yaml, which the Helm-less tests feed the script, is what this chart really prints (Helm 3)."""
    done = Helm("v3", tmp_path)("template", "training", CHART)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (EXAMPLE / "input.yaml").read_text()


def test_the_readmes_name_the_post_renderer_of_each_major() -> None:
    for readme in (ROOT / "README.md", EXAMPLE / "README.md"):
        text = readme.read_text()
        for words in POST_RENDERER.values():
            assert f"helm template training {CHART} {' '.join(words)}" in text, readme
    assert "helm plugin install deploy/helm-plugin" in (EXAMPLE / "README.md").read_text()


def assert_the_golden(helm: Helm, printed: str) -> None:
    """Helm 3 prints the post-renderer's output as it is; Helm 4 the same objects, filed under their
    templates again (`# Source:` lines) and sorted by kind."""
    golden = (EXAMPLE / "expected.yaml").read_text()
    if helm.major == "v3":
        assert printed == golden
        return
    key = json.dumps
    assert sorted(documents(printed), key=key) == sorted(documents(golden), key=key)
    assert [d["kind"] for d in documents(printed)] == ["ClusterTrainingRuntime", "TrainJob", "TrainingRuntime"]
    assert "postrenderer.helm.sh" not in printed


def test_helm_template_with_the_post_renderer_prints_the_golden(helm: Helm) -> None:
    done = helm("template", "training", CHART, *POST_RENDERER[helm.major])
    assert (done.returncode, done.stderr) == (0, "")
    assert_the_golden(helm, done.stdout)


def assert_refused(done: subprocess.CompletedProcess[str]) -> None:
    """Helm stops, prints no manifest, and render's messages (the field, the value) are on its stderr."""
    assert done.returncode != 0
    assert done.stdout == ""
    assert "'64GB' is not a quantity" in done.stderr and "limits.memory" in done.stderr, done.stderr
    assert "trainjob-resources render: 2 errors; nothing rendered" in done.stderr, done.stderr


def test_a_refused_chart_stops_helm_template_with_renders_messages(helm: Helm) -> None:
    assert_refused(helm("template", "training", CHART, *REFUSED, *POST_RENDERER[helm.major]))


def test_helm_4_refuses_a_script_as_post_renderer(tmp_path: Path) -> None:
    """Why Helm 4 needs the plugin: the Helm 3 command line, as written, does not run the script."""
    done = Helm("v4", tmp_path)("template", "training", CHART, *POST_RENDERER["v3"])
    assert done.returncode != 0 and done.stdout == ""
    assert "not found" in done.stderr and SCRIPT in done.stderr, done.stderr


def manifest_of_dry_run(stdout: str) -> str:
    """The MANIFEST section `helm install --dry-run` prints after the release's status."""
    head, found, manifest = stdout.partition("\nMANIFEST:\n")
    assert found, stdout
    assert "STATUS: pending-install" in head
    return manifest


@pytest.mark.slow
def test_helm_install_dry_run_server_prints_the_golden_and_stops_on_a_refused_chart(
    helm: Helm, control_plane: ControlPlane
) -> None:
    install = ["install", "training", CHART, "--dry-run=server", "--namespace", "default"]
    done = helm(*install, *POST_RENDERER[helm.major], kubeconfig=control_plane.kubeconfig)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert_the_golden_documents(helm, manifest_of_dry_run(done.stdout))
    assert_refused(helm(*install, *REFUSED, *POST_RENDERER[helm.major], kubeconfig=control_plane.kubeconfig))


def assert_the_golden_documents(helm: Helm, manifest: str) -> None:
    golden: list[Any] = documents((EXAMPLE / "expected.yaml").read_text())
    key = json.dumps
    assert sorted(documents(manifest), key=key) == sorted(golden, key=key)


def cluster_runtimes_config(folder: Path) -> Path:
    """The config docs/integrations.md's Helm section gives Helm 4's `helm install`, written to a file."""
    text = (ROOT / "docs" / "integrations.md").read_text()
    start = text.index("\n## Helm\n")
    section = text[start : text.index("\n## ", start + 1)]
    (block,) = re.findall(r"^( *)```yaml\n(.*?)^\1```", section, re.MULTILINE | re.DOTALL)
    config = yaml.safe_load(textwrap.dedent(block[1]))
    assert config["spec"] == {"derivedRuntimeKind": "ClusterTrainingRuntime"}
    path = folder / "cluster-runtimes.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow
def test_helm_install_on_the_control_plane(helm: Helm, control_plane: ControlPlane, tmp_path: Path) -> None:
    """Helm 3 creates the objects in render's order, runtimes first. Helm 4 sorts them by kind, TrainJob
    before TrainingRuntime, and the TrainJob webhook refuses the TrainJob; derived ClusterTrainingRuntimes
    sort first and pass."""
    namespace = f"helm-{helm.major}"
    control_plane.kubectl("create", "namespace", namespace)
    install = ["install", "training", CHART, "--namespace", namespace, *POST_RENDERER[helm.major]]
    uninstall = ["uninstall", "training", "--namespace", namespace]
    try:
        done = helm(*install, kubeconfig=control_plane.kubeconfig)
        if helm.major == "v4":
            assert done.returncode != 0
            assert "specified trainingRuntime must be created before the TrainJob is created" in done.stderr
            assert helm(*uninstall, kubeconfig=control_plane.kubeconfig).returncode == 0
            config = cluster_runtimes_config(tmp_path)
            done = helm(*install, f"--post-renderer-args=--config={config}", kubeconfig=control_plane.kubeconfig)
        assert done.returncode == 0, done.stderr
        assert "STATUS: deployed" in done.stdout
        control_plane.wait_for_jobset("large-dataset-training", namespace)
    finally:
        helm(*uninstall, kubeconfig=control_plane.kubeconfig)
        control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
