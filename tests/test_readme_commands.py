"""Every command in the README and the examples' READMEs is one the suite runs as written, or the
exact equivalent the suite can run here (kubectl's kustomize with the container stand-in for an
exec function, see tests/examples.py); a command nobody runs fails this test."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.examples import (
    EXAMPLES,
    IMAGE,
    KPT_IMAGE_PACKAGE,
    KPT_PACKAGE,
    KUSTOMIZE_BUILDS,
    OVERLAY_BUILDS,
    documents,
    expected_path,
    tool_env,
)

ROOT = EXAMPLES.parent
READMES = [ROOT / "README.md", *sorted(EXAMPLES.rglob("README.md"))]
_BLOCK = re.compile(r"^```(?:sh|shell|bash)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def commands(readme: Path) -> list[tuple[str, list[str]]]:
    """(folder the command runs in, relative to the root; its words) for each command line of the
    README's shell blocks; a ``cd`` changes the folder of the commands after it in its block."""
    out: list[tuple[str, list[str]]] = []
    for block in _BLOCK.findall(readme.read_text()):
        folder = "."
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]  # an environment variable for the command
            if not words:
                continue
            if words[0] == "cd":
                folder = words[1]
                continue
            out.append((folder, words))
    return out


def kustomize_builds() -> dict[str, Path]:
    """Every kustomization the suite builds and checks against a golden: its path -> the golden."""
    builds = {f"kustomization-examples/{e}/{b}": expected_path(e) for e, b in KUSTOMIZE_BUILDS.items()}
    for example, overlays in OVERLAY_BUILDS.items():
        for build in overlays:
            builds[f"kustomization-examples/{example}/{build}"] = expected_path(example, build)
    return {str(Path(path)): golden for path, golden in builds.items()}


POST_RENDERERS = {
    "./kustomization-examples/helm-post-renderer/post-render.sh",
    "kustomization-examples/helm-post-renderer/post-render.sh",
}

# The Helm 4 post-renderer plugin, as `helm plugin install` takes it and `--post-renderer` names it.
HELM_PLUGIN = "deploy/helm-plugin"
HELM_PLUGIN_NAME = "trainjob-resources"

ALL = [(readme.relative_to(ROOT), folder, words) for readme in READMES for folder, words in commands(readme)]

# Each `trainjob-resources render` a README shows, run as written from the root: the golden it prints
# (what the example's Argo CD Application generates: the same folder, the same namespace).
RENDERS = {
    "trainjob-resources render kustomization-examples/argocd-cmp/app --namespace ml-team": (
        EXAMPLES / "argocd-cmp" / "expected.yaml"
    ),
    "trainjob-resources render kustomization-examples/argocd-cmp-kustomize/overlays/prod": (
        EXAMPLES / "argocd-cmp-kustomize" / "expected.yaml"
    ),
}
# Each `trainjob-resources explain` a README shows; the ```text block after it must be in what it prints.
EXPLAINS = {"trainjob-resources explain kustomization-examples/argocd-cmp/app --namespace ml-team"}
README_MAX_LINES = 250


def test_the_readmes_have_commands() -> None:
    assert len(ALL) >= 8


def test_the_readme_is_short() -> None:
    """Issue 32: what it does, one quickstart per path, links; the reference lives in docs/."""
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move reference text into docs/"


def shown_commands(prefix: str) -> list[str]:
    return [" ".join(words) for _, _, words in ALL if " ".join(words[:2]) == prefix]


def test_each_render_and_explain_the_readmes_show_is_known() -> None:
    assert set(shown_commands("trainjob-resources render")) == set(RENDERS)
    assert set(shown_commands("trainjob-resources explain")) == EXPLAINS


def run_shown(command: str, path: str, home: Path) -> subprocess.CompletedProcess[str]:
    import os

    from tests.examples import VENV_BIN

    return subprocess.run(
        shlex.split(command),
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": os.pathsep.join([str(VENV_BIN), path, "/usr/bin", "/bin"]), "HOME": str(home)},
        check=False,
    )


def needs_kustomize(command: str) -> bool:
    return any((ROOT / word / "kustomization.yaml").is_file() for word in shlex.split(command))


@pytest.mark.parametrize("command", sorted(c for c in RENDERS if not needs_kustomize(c)))
def test_the_render_commands_run_as_written(command: str, tmp_path: Path) -> None:
    done = run_shown(command, "", tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), command
    assert done.stdout == RENDERS[command].read_text()


@pytest.mark.parametrize("command", sorted(c for c in RENDERS if needs_kustomize(c)))
def test_the_render_commands_of_a_kustomization_run_as_written(command: str, kubectl: str, tmp_path: Path) -> None:
    """render builds the kustomization with the kustomize on PATH: here kubectl's."""
    done = run_shown(command, str(Path(kubectl).parent), tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), command
    assert done.stdout == RENDERS[command].read_text()


@pytest.mark.parametrize("command", sorted(EXPLAINS))
def test_the_explain_commands_run_as_written_and_print_what_the_readme_shows(command: str, tmp_path: Path) -> None:
    shown = [
        block
        for readme in READMES
        for block in re.findall(
            r"^```sh\n" + re.escape(command) + r"\n```\n\n```text\n(.*?)^```", readme.read_text(), re.M | re.S
        )
    ]
    assert shown, f"no ```text block follows `{command}`"
    done = run_shown(command, "", tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), command
    for block in shown:
        assert block in done.stdout


@pytest.mark.parametrize(("readme", "folder", "words"), ALL, ids=lambda v: str(v) if isinstance(v, Path) else None)
def test_each_readme_command_is_run_by_the_suite(readme: Path, folder: str, words: list[str]) -> None:
    command = " ".join(words)
    if words[:2] in (["make", "example"], ["make", "test"]):
        recipe = (ROOT / "Makefile").read_text()
        if words[1] == "example":
            case = re.search(r"^example:.*\n\t\$\(BIN\)/trainjob-resources < (\S+)$", recipe, re.MULTILINE)
            assert case is not None and (ROOT / case.group(1)).is_file(), "make example runs a golden's input"
            assert (ROOT / case.group(1)).with_name("expected.yaml").is_file()
        return  # `make test` is what CI runs
    if words[:2] == ["kustomize", "build"] or words[:2] == ["kubectl", "kustomize"]:
        assert folder == "."
        flags = {w for w in words[2:] if w.startswith("--")}
        path = [w for w in words[2:] if not w.startswith("--")]
        assert len(path) == 1, command
        assert str(Path(path[0])) in kustomize_builds(), f"{readme}: `{command}` builds nothing the suite checks"
        assert "--enable-alpha-plugins" in flags
        return
    if words[:3] == ["kpt", "fn", "render"] and (ROOT / folder).resolve() == KPT_PACKAGE.resolve():
        assert set(words[3:]) <= {"--allow-exec", "-o", "unwrap"}, command
        return
    in_image_package = (ROOT / folder).resolve() == KPT_IMAGE_PACKAGE.resolve()
    if words[:3] == ["kpt", "fn", "eval"] and readme.parent.name == "kpt-image":
        in_image_package = True  # its README's prose: run in the package, like the block above it
    if words[:2] == ["kpt", "fn"] and in_image_package:
        # run with the image by tests/test_image.py (render, render -o unwrap, eval --image --fn-config)
        if words[2] == "render":
            assert set(words[3:]) <= {"-o", "unwrap"}, command
        else:
            assert words[2:] == ["eval", "--image", IMAGE, "--fn-config", "trainjob-resources.yaml"], command
        return
    if words[0] == "helm":
        # helm template on the chart runs as written in tests/test_helm.py, which installs the Helm 4
        # plugin as written; the post-renderer a line names must be one the suite runs.
        if words[1:3] == ["plugin", "install"]:
            assert words[3:] == [HELM_PLUGIN], command
            return
        renderer = words[words.index("--post-renderer") + 1]
        assert renderer in POST_RENDERERS | {HELM_PLUGIN_NAME}, (
            f"{readme}: `{command}` runs a post-renderer no test runs"
        )
        return
    if words[0] in POST_RENDERERS:
        return  # run as written by test_the_post_renderer_commands_run_as_written
    if words[:3] == [".venv/bin/python", "-m", "tests.examples"]:
        assert (ROOT / "tests" / "examples.py").is_file()
        return
    if words == ["python3", "-m", "pip", "install", "."]:
        # what every Makefile target runs into .venv (editable), putting the same command on PATH
        assert re.search(r"^\t\$\(BIN\)/pip install .*-e \.$", (ROOT / "Makefile").read_text(), re.MULTILINE)
        scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
        assert scripts["trainjob-resources"] == "trainjob_resources.cli.main:run"
        return
    if words[:2] == ["docker", "build"]:
        # CI builds the same Dockerfile under the same name with podman (.ci/image.sh; tests/test_image.py)
        assert words[2:] == ["-t", IMAGE, "."], command
        script = (ROOT / ".ci" / "image.sh").read_text()
        assert 'image="ghcr.io/trainjob-resources/trainjob-resources:${version}"' in script
        assert re.search(r"^podman build .* -t \"\$\{image\}\" \.$", script, re.MULTILINE)
        return
    if words[0] == "trainjob-resources" and words[1] in ("render", "explain"):
        assert command in RENDERS or command in EXPLAINS, f"{readme}: `{command}` is run by no test"
        return  # run as written by test_the_render_and_explain_commands_run_as_written
    pytest.fail(f"{readme}: `{command}` is run by no test: add it here, or change the README")


def test_the_kpt_commands_run_as_written(kpt: str, tmp_path: Path) -> None:
    """``cd kustomization-examples/kpt/package`` then each ``kpt`` line of its README, in a copy."""
    readme = EXAMPLES / "kpt" / "README.md"
    kpt_commands = [words for folder, words in commands(readme) if words[0] == "kpt"]
    assert kpt_commands
    for words in kpt_commands:
        package = tmp_path / f"package-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(KPT_PACKAGE, package)
        done = subprocess.run(
            [kpt, *words[1:]], cwd=package, capture_output=True, text=True, env=tool_env(), check=False
        )
        assert done.returncode == 0, f"`{' '.join(words)}`: {done.stderr}"
        if "unwrap" in words:
            assert documents(done.stdout) == documents((EXAMPLES / "kpt" / "expected.yaml").read_text())


def test_the_post_renderer_commands_run_as_written(tmp_path: Path) -> None:
    """Each README line that runs the Helm post-renderer on a file, as written, from the root."""
    import os

    from tests.examples import VENV_BIN

    lines = [line for readme in READMES for block in _BLOCK.findall(readme.read_text()) for line in block.splitlines()]
    runs = [line.split("#")[0].strip() for line in lines if line.split(" ")[0] in POST_RENDERERS]
    assert runs
    for line in runs:
        done = subprocess.run(
            ["sh", "-c", line],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={"PATH": f"{VENV_BIN}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path)},
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), line
        assert done.stdout == (EXAMPLES / "helm-post-renderer" / "expected.yaml").read_text()
