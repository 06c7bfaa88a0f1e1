"""``render`` (and ``explain``) on a hostile repository, written as the attacker would (issue 16).

Each case builds a tenant's folder (``repo``) beside things it must never reach (``outside``: a
Secret whose value is ``SECRET``), runs the installed command in that folder as Argo CD's plugin
does, under hard limits (CPU seconds and address space: a regression fails, it cannot hang or
swap), and checks the exit code, the message, and that no byte from outside the root was printed.
"""

from __future__ import annotations

import base64
import copy as copy_module
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.examples import EXAMPLES, documents
from tests.hostile import EXECUTABLE, MiB
from tests.kit import forked

SECRET = "s3cr3t-value-from-outside-the-root"
SECRET_YAML = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: other-tenant\nstringData:\n  token: {SECRET}\n"
RUNTIME = (EXAMPLES / "exec-data-loader" / "runtime.yaml").read_text()
TRAINJOB = (EXAMPLES / "exec-data-loader" / "trainjob.yaml").read_text()
FUNCTION = "config.kubernetes.io/function"
KUBECTL_DIR = "/usr/bin"
ADDRESS_SPACE = 4096 * MiB


class Outcome:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[:2000]}\n--- stderr\n{self.stderr[:3000]}"


def _limits(cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def render(
    cwd: Path,
    *args: str,
    command: str = "render",
    env: dict[str, str] | None = None,
    path: str = KUBECTL_DIR,
    cpu_seconds: int = 20,
    stdin: bytes | None = None,
    wall_seconds: int = 30,
) -> Outcome:
    """The installed command run in ``cwd``; never more than ``cpu_seconds`` of CPU or ``wall_seconds``
    (a safety net: on a loaded machine the wall clock says nothing of the function). Under ``make unit``,
    a fork of this process that runs what the command runs (``tests/kit/forked.py``)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARGOCD_")}
    environment = {**base, "PATH": path, "HOSTILE_SECRET": SECRET, **(env or {})}
    program = [str(EXECUTABLE)] if EXECUTABLE.exists() else [sys.executable, "-m", "trainjob_resources"]
    if forked.wanted() and forked.address_space_fits(ADDRESS_SPACE):
        code, stdout, stderr = forked.run(
            [str(EXECUTABLE), command, *args], cwd, environment, lambda: _limits(cpu_seconds), wall_seconds, stdin
        )
    else:
        done = subprocess.run(
            [*program, command, *args],
            cwd=cwd,
            env=environment,
            input=stdin,
            capture_output=True,
            timeout=wall_seconds,
            preexec_fn=lambda: _limits(cpu_seconds),
            check=False,
        )
        code, stdout, stderr = done.returncode, done.stdout, done.stderr
    outcome = Outcome(code, stdout.decode(errors="replace"), stderr.decode(errors="replace"))
    assert SECRET not in outcome.stdout and SECRET not in outcome.stderr, outcome
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr, outcome
    return outcome


def children_cpu_seconds() -> float:
    """CPU time (user + system) of the child processes this test process has waited for, and of the ones
    they waited for (a render and its kustomize): unlike the wall clock, a loaded machine barely changes it."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A tenant's repository with one valid app, and beside it what it must not reach."""
    write(tmp_path / "outside" / "secret.yaml", SECRET_YAML)
    write(tmp_path / "outside" / "base" / "secret.yaml", SECRET_YAML)
    write(tmp_path / "outside" / "base" / "kustomization.yaml", "resources:\n- secret.yaml\n")
    root = tmp_path / "repo"
    write(root / "app" / "runtime.yaml", RUNTIME)
    write(root / "app" / "trainjob.yaml", TRAINJOB)
    return root


def kustomization(folder: Path, text: str) -> Path:
    """A kustomization of the data-loader example's two files, plus ``text`` (its own resources if it has them)."""
    write(folder / "runtime.yaml", RUNTIME)
    write(folder / "trainjob.yaml", TRAINJOB)
    own = "" if text.startswith("resources:") else "resources:\n- runtime.yaml\n- trainjob.yaml\n"
    return write(folder / "kustomization.yaml", own + text)


def marker_tool(folder: Path, name: str, marker: Path) -> None:
    """An executable that, if anything ever ran it, would leave ``marker`` behind."""
    write(folder / name, f"#!/bin/sh\ntouch {marker}\ncat\n").chmod(0o755)


# 1. Nothing a repository names is run


def test_an_exec_function_is_refused_and_not_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    marker_tool(repo / "app", "evil.sh", marker)
    kustomization(repo / "app", "transformers:\n- evil.yaml\n")
    write(
        repo / "app" / "evil.yaml",
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil\n  annotations:\n"
        f"    {FUNCTION}: |\n      exec:\n        path: /bin/sh\n",
    )
    out = render(repo / "app")
    assert out.code == 1, out
    assert "kustomization.yaml: transformers[0] (evil.yaml): v1 ConfigMap runs a KRM function" in out.stderr, out
    assert "render runs no plugin or function a repository names" in out.stderr
    assert out.stdout == "" and not marker.exists()


def test_a_container_function_that_copies_the_environment_is_refused(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "docker-ran"
    marker_tool(tmp_path / "bin", "docker", marker)
    kustomization(
        repo / "app",
        "transformers:\n- |\n  apiVersion: example.com/v1\n  kind: Leak\n  metadata:\n    name: leak\n"
        f"    annotations:\n      {FUNCTION}: |\n        container:\n          image: evil:1\n"
        "          envs: [HOSTILE_SECRET]\n",
    )
    out = render(repo / "app", path=f"{tmp_path / 'bin'}:{KUBECTL_DIR}")
    assert out.code == 1, out
    assert "transformers[0]: example.com/v1 Leak runs a KRM function (exec, container or starlark)" in out.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "helmCharts:\n- name: x\n  repo: https://charts.example.com\n",
            "kustomization.yaml: helmCharts: render does not run Helm",
        ),
        (
            "generators:\n- |\n  apiVersion: builtin\n  kind: HelmChartInflationGenerator\n  metadata: {name: h}\n",
            "generators[0]: builtin HelmChartInflationGenerator runs Helm",
        ),
        (
            "transformers:\n- |\n  apiVersion: someteam.example.com/v1\n  kind: ChartInflator\n  metadata: {name: c}\n",
            "transformers[0]: someteam.example.com/v1 ChartInflator runs an external kustomize plugin",
        ),
        (
            "validators:\n- |\n  apiVersion: example.com/v1\n  kind: Check\n  metadata:\n    name: c\n"
            f"    annotations:\n      {FUNCTION}: |\n        starlark: {{path: check.star}}\n",
            "validators[0]: example.com/v1 Check runs a KRM function",
        ),
        ("resources:\n- https://example.com/x.yaml\n", "https://example.com/x.yaml: a remote base or file"),
        (
            "components:\n- github.com/org/repo//base?ref=v1\n",
            "components[0]: github.com/org/repo//base?ref=v1: a remote base or file; render fetches nothing",
        ),
        ("resources:\n- /etc/passwd\n", "/etc/passwd: an absolute path"),
    ],
    ids=["helmCharts", "helm generator", "legacy plugin", "starlark validator", "remote URL", "remote git", "abs"],
)
def test_a_kustomization_that_needs_a_plugin_helm_or_the_network_is_an_error(
    text: str, message: str, repo: Path
) -> None:
    kustomization(repo / "app", text)
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert message in out.stderr, out


@pytest.mark.slow
def test_this_functions_config_is_applied_by_render_and_its_exec_never_run(repo: Path, tmp_path: Path) -> None:
    """The config's function annotation names a script of the tenant's: render applies the function
    itself, with the config's options (issue 13 item 2: maxPerContainer in the kustomization applies)."""
    marker = tmp_path / "ran"
    marker_tool(repo / "app", "run-trainjob-resources", marker)
    kustomization(repo / "app", "transformers:\n- fn.yaml\n")
    config = (
        "apiVersion: fn.trainjob-resources.io/v1alpha1\nkind: TrainJobResources\nmetadata:\n  name: fn\n"
        f"  annotations:\n    {FUNCTION}: |\n      exec:\n        path: ./run-trainjob-resources\n"
        "spec:\n  maxPerContainer:\n    memory: 16Gi\n"
    )
    write(repo / "app" / "fn.yaml", config)
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "16Gi" in out.stderr and "64Gi" in out.stderr, "the kustomization's policy applies"
    write(repo / "app" / "fn.yaml", config.replace("16Gi", "128Gi"))
    out = render(repo / "app")
    assert out.code == 0, out
    kinds = [o["kind"] for o in documents(out.stdout)]
    assert kinds.count("TrainingRuntime") == 1 and "TrainJobResources" not in kinds, "applied once, never printed"
    assert not marker.exists()


# 2. Nothing outside the root is read


def _links(repo: Path, tmp_path: Path) -> dict[str, tuple[Path, str]]:
    return {
        "file link": (repo / "app" / "leak.yaml", str(tmp_path / "outside" / "secret.yaml")),
        "folder link": (repo / "app" / "leak", str(tmp_path / "outside")),
        "relative ../..": (repo / "app" / "up.yaml", "../../outside/secret.yaml"),
        "chained": (repo / "app" / "chain.yaml", "inner/next.yaml"),
        "absolute to /etc": (repo / "app" / "passwd.yaml", "/etc/passwd"),
        "a device": (repo / "app" / "zero.yaml", "/dev/zero"),
    }


@pytest.mark.parametrize(
    "case", ["file link", "folder link", "relative ../..", "chained", "absolute to /etc", "a device"]
)
def test_a_link_out_of_the_root_is_refused(case: str, repo: Path, tmp_path: Path) -> None:
    link, target = _links(repo, tmp_path)[case]
    if case == "chained":
        (repo / "app" / "inner").mkdir()
        (repo / "app" / "inner" / "next.yaml").symlink_to("../../../outside/secret.yaml")
    link.symlink_to(target)
    for command in ("render", "explain"):
        out = render(repo / "app", ".", command=command)
        assert (out.code, out.stdout) == (1, ""), out
        assert f"{link.name}: leads outside . (through a symbolic link or ..): refused" in out.stderr, out


def test_a_kustomize_base_outside_the_root_is_refused(repo: Path) -> None:
    kustomization(repo / "app", "resources:\n- runtime.yaml\n- ../../outside/base\n")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "kustomization.yaml: resources[1]: ../../outside/base: leads outside ." in out.stderr, out


def test_an_overlay_rendered_in_its_own_folder_is_told_which_root_to_pass(repo: Path) -> None:
    """``render .`` in an overlay whose base is ``../../base``: the current folder is the root, so the
    base is refused, and the message names the flag and the folder that holds both (issue 32)."""
    write(repo / "base" / "kustomization.yaml", "resources:\n- runtime.yaml\n- trainjob.yaml\n")
    write(repo / "base" / "runtime.yaml", RUNTIME)
    write(repo / "base" / "trainjob.yaml", TRAINJOB)
    write(repo / "overlays" / "prod" / "kustomization.yaml", "resources:\n- ../../base\n")
    out = render(repo / "overlays" / "prod", ".")
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "kustomization.yaml: resources[0]: ../../base: leads outside . (through ..): refused; render reads "
        "nothing outside its root: pass --root ../.. (the repository's root, or any folder that holds both)"
    ) in out.stderr, out
    out = render(repo / "overlays" / "prod", "--root", "../..", ".")
    assert out.code == 0, out
    assert [o["kind"] for o in documents(out.stdout)].count("TrainJob") == 1, out


def test_links_inside_a_kustomization_that_lead_out_are_refused(repo: Path, tmp_path: Path) -> None:
    kustomization(repo / "app", "configMapGenerator:\n- name: c\n  files:\n  - data/secret.yaml\n")
    (repo / "app" / "data").symlink_to(tmp_path / "outside")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "app/data: leads outside" in out.stderr or "data: leads outside" in out.stderr, out
    (repo / "app" / "data").unlink()
    (repo / "app" / "kustomization.yaml").unlink()
    (repo / "app" / "kustomization.yaml").symlink_to(tmp_path / "outside" / "base" / "kustomization.yaml")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "kustomization.yaml: leads outside" in out.stderr, out


def test_kustomize_itself_reads_only_inside_the_kustomization(repo: Path) -> None:
    """A generator's file above the kustomization: kustomize's root-only load restrictor refuses it."""
    kustomization(repo / "app", "configMapGenerator:\n- name: c\n  files:\n  - ../../outside/secret.yaml\n")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "`kubectl kustomize` failed (exit 1): " in out.stderr, out


def test_a_command_line_path_that_is_a_link_out_of_the_root_is_refused(repo: Path, tmp_path: Path) -> None:
    (repo / "app" / "elsewhere").symlink_to(tmp_path / "outside")
    out = render(repo / "app", "elsewhere")
    assert (out.code, out.stdout) == (1, ""), out
    assert "elsewhere: leads outside ." in out.stderr


def test_the_root_is_the_repository_under_argo_cd(repo: Path, tmp_path: Path) -> None:
    """Argo CD runs the plugin in the app's folder; the repository's root is where reads may go."""
    write(repo / "base" / "kustomization.yaml", "resources:\n- runtime.yaml\n- trainjob.yaml\n")
    write(repo / "base" / "runtime.yaml", RUNTIME)
    write(repo / "base" / "trainjob.yaml", TRAINJOB)
    write(repo / "apps" / "prod" / "kustomization.yaml", "resources:\n- ../../base\n")
    env = {"ARGOCD_APP_SOURCE_PATH": "apps/prod", "ARGOCD_APP_NAME": "a"}
    out = render(repo / "apps" / "prod", "--config-from-env", ".", env=env)
    assert out.code == 0, out
    write(repo / "apps" / "prod" / "kustomization.yaml", "resources:\n- ../../../outside/base\n")
    out = render(repo / "apps" / "prod", "--config-from-env", ".", env=env)
    assert out.code == 1, out
    assert "../../../outside/base: leads outside ../.." in out.stderr, out
    assert "it is outside the repository Argo CD checked out" in out.stderr, out  # no --root to pass there


# 3. Bounded


def test_links_back_into_the_tree_are_read_once(repo: Path) -> None:
    """``a -> .`` and ``b -> .`` make endless paths; each real folder is read once."""
    for name in "abcdefgh":
        (repo / "app" / name).symlink_to(".")
    (repo / "app" / "again.yaml").symlink_to("trainjob.yaml")
    out = render(repo / "app", cpu_seconds=10)
    assert out.code == 0, out
    assert len([o for o in documents(out.stdout) if o["kind"] == "TrainJob"]) == 1
    assert "app/a: skipped: the same file or folder as ." in out.stderr.replace(str(repo), "") or (
        "a: skipped: the same file or folder as ." in out.stderr
    ), out
    assert "note: ./trainjob.yaml: skipped: the same file or folder as ./again.yaml" in out.stderr, out


def test_a_huge_file_is_refused_before_it_is_read(repo: Path) -> None:
    with open(repo / "app" / "huge.yaml", "wb") as huge:
        huge.truncate(1200 * MiB)  # sparse: 1.2 GB to stat, nothing on disk
    out = render(repo / "app", cpu_seconds=5)
    assert (out.code, out.stdout) == (1, ""), out
    assert "error: .: " in out.stderr and "bytes would take the input over 67108864 bytes, the limit" in out.stderr
    assert int(out.stderr.split("error: .: ")[1].split()[0]) > 1200 * MiB, out


def test_the_byte_limit_is_for_the_whole_load(repo: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        with open(repo / "app" / name, "wb") as part:
            part.truncate(40 * MiB)
    out = render(repo / "app", cpu_seconds=5)
    assert (out.code, out.stdout) == (1, ""), out
    assert "error: .: 8388" in out.stderr and "bytes would take the input over 67108864 bytes" in out.stderr, out


@pytest.mark.slow
def test_a_file_over_half_the_byte_limit_is_read_whole(repo: Path) -> None:
    """A 33 MiB file fits the 64 MiB budget but is larger than what the budget has left once it is
    charged: it was read only that far, its object cut and the one after it lost, with exit 0."""
    blob = 33 * MiB
    write(
        repo / "app" / "big.yaml",
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: {'x' * blob}\n"
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after-the-blob\n",
    )
    out = render(repo / "app", cpu_seconds=15)
    assert out.code == 0, out
    printed = {o["metadata"]["name"]: o for o in yaml.load_all(out.stdout, Loader=yaml.CSafeLoader) if o}
    assert "after-the-blob" in printed, out.stderr
    assert len(printed["big"]["data"]["blob"]) == blob


@pytest.mark.slow
def test_too_many_files(repo: Path) -> None:
    many = repo / "app" / "many"
    many.mkdir()
    for index in range(100_001):
        os.close(os.open(many / f"{index}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    out = render(repo / "app", cpu_seconds=10)
    assert (out.code, out.stdout) == (1, ""), out
    assert "many: more than 100000 files and folders in one render, the limit" in out.stderr, out


@pytest.mark.slow
def test_too_many_objects(repo: Path) -> None:
    items = "".join("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n" for _ in range(100_001))
    write(repo / "app" / "list.yaml", "apiVersion: v1\nkind: List\nitems:\n" + items)
    out = render(repo / "app", cpu_seconds=15)
    assert (out.code, out.stdout) == (1, ""), out
    assert "list.yaml: more than 100000 objects in one render, the limit" in out.stderr, out


@pytest.mark.slow
def test_document_splitting_is_linear(tmp_path: Path) -> None:
    """16 MB of tiny documents took 106 s when each document counted the lines before it; these
    11 MB would take that version ~45 s: under a 15 s CPU limit it is killed, this one is not."""
    text = tmp_path / "docs.yaml"
    text.write_text("---\na: 1\n" * 1_200_000)
    probe = (
        "import sys; from trainjob_resources.yamltext.documents import split_documents\n"
        "docs = list(split_documents(open(sys.argv[1]).read())); print(len(docs), docs[-1][0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(text)],
        capture_output=True,
        text=True,
        preexec_fn=lambda: _limits(15),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["1200000", str(2 * 1_200_000 - 2)]


@pytest.mark.slow
def test_kustomize_fan_out_is_cut_by_the_time_limit_or_the_output_bound(repo: Path) -> None:
    """Bases that include the level below twice (under two name prefixes): 2^18 objects from 18 small
    folders. kustomize is stopped by the time limit or the byte budget, whichever comes first."""
    levels = repo / "fan"
    data = "x" * 500
    write(levels / "l0" / "kustomization.yaml", "resources:\n- cm.yaml\n")
    write(levels / "l0" / "cm.yaml", f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  d: {data}\n")
    for level in range(1, 19):
        write(levels / f"l{level}" / "kustomization.yaml", "resources:\n- a\n- b\n")
        for side in "ab":
            write(
                levels / f"l{level}" / side / "kustomization.yaml",
                f"namePrefix: {side}-\nresources:\n- ../../l{level - 1}\n",
            )
    out = render(repo, "fan/l18", "--timeout", "3", cpu_seconds=20)
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "did not finish within the render's 3 s for kustomize builds; stopped" in out.stderr
        or "bytes left of the render's input limit" in out.stderr
    )


def test_a_named_pipe_is_skipped_not_waited_for(repo: Path) -> None:
    os.mkfifo(repo / "app" / "pipe.yaml")
    out = render(repo / "app", cpu_seconds=5)
    assert out.code == 0, out
    assert "note: ./pipe.yaml: skipped: a named pipe, not a regular file" in out.stderr, out


# 4. Platform policy is a floor


PLATFORM = (
    "apiVersion: fn.trainjob-resources.io/v1alpha1\nkind: TrainJobResources\nmetadata:\n  name: platform\n"
    "spec:\n  maxPerContainer: {memory: 96Gi}\n  namespacePolicy: warning\n  allowGpuInSidecars: false\n"
    "  allowedResources: [cpu, memory, nvidia.com/gpu]\n"
    "  derivedRuntimeMetadata: {annotations: {argocd.argoproj.io/sync-options: Prune=false}}\n"
)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("MAX_PER_CONTAINER", "memory=128Gi", "maxPerContainer {memory: 128Gi} would loosen the platform's policy"),
        ("NAMESPACE_POLICY", "off", "namespacePolicy off would loosen the platform's policy (namespacePolicy warning"),
        ("ALLOW_GPU_IN_SIDECARS", "true", "allowGpuInSidecars true would loosen"),
        ("ALLOWED_RESOURCES", "cpu,memory,example.com/fpga", "allowedResources [example.com/fpga] would loosen"),
        ("GPU_RESOURCES", "nvidia.com/gpu", "gpuResources without amd.com/gpu, gpu.intel.com/*, nvidia.com/mig-*"),
        (
            "DERIVED_RUNTIME_METADATA",
            '{"annotations": {"argocd.argoproj.io/sync-options": "Prune=true"}, "labels": {"team": "ml"}}',
            "derivedRuntimeMetadata {annotations: {argocd.argoproj.io/sync-options: Prune=true}} would loosen",
        ),
    ],
)
def test_argo_cd_options_cannot_loosen_the_platform_policy(
    variable: str, value: str, message: str, repo: Path, tmp_path: Path
) -> None:
    platform = write(tmp_path / "platform.yaml", PLATFORM)
    env = {f"ARGOCD_ENV_{variable}": value}
    out = render(repo / "app", "--config-from-env", "--config", str(platform), ".", env=env)
    assert (out.code, out.stdout) == (1, ""), out
    assert f"error: ARGOCD_ENV_{variable} (plugin env {variable}): {message}" in out.stderr, out
    assert "the repository and ARGOCD_ENV_* may only tighten it" in out.stderr


def test_argo_cd_options_may_tighten_the_policy_and_set_other_options(repo: Path, tmp_path: Path) -> None:
    platform = write(tmp_path / "platform.yaml", PLATFORM)
    args = ("--config-from-env", "--config", str(platform), ".")
    out = render(repo / "app", *args, env={"ARGOCD_ENV_MAX_PER_CONTAINER": "memory=32Gi"})
    assert out.code == 1 and "32Gi" in out.stderr, "a tighter cap applies"
    stricter = {"ARGOCD_ENV_NAMESPACE_POLICY": "error", "ARGOCD_ENV_TRAINER_RESOURCES": "error"}
    out = render(repo / "app", *args, env={**stricter, "ARGOCD_ENV_RESULTS": "problems"})
    assert out.code == 0, "stricter policy, and results (what is reported) is the tenant's to set"
    out = render(repo / "app", *args, env={"ARGOCD_ENV_MODE": "native"})
    assert (out.code, out.stdout) == (1, ""), "mode decides which objects are written: the platform's"
    assert "mode native: the platform's config" in out.stderr and "so it is materialize, the default" in out.stderr


def tenant_config(repo: Path, option: str) -> None:
    """The repository's own config (a TrainJobResources among the app's files) setting one ``option``."""
    write(
        repo / "app" / "fn.yaml",
        "apiVersion: fn.trainjob-resources.io/v1alpha1\nkind: TrainJobResources\nmetadata:\n  name: mine\n"
        f"spec:\n  {option}\n",
    )


def test_the_repositorys_config_cannot_loosen_the_platform_policy(repo: Path, tmp_path: Path) -> None:
    platform = write(tmp_path / "platform.yaml", PLATFORM.replace("96Gi", "32Gi"))
    tenant_config(repo, "maxPerContainer: {memory: 1Ti}")
    out = render(repo / "app", "--config", str(platform), ".")
    assert (out.code, out.stdout) == (1, ""), out
    assert "error: ./fn.yaml: maxPerContainer {memory: 1Ti} would loosen the platform's policy" in out.stderr, out


@pytest.mark.slow
def test_a_role_cap_applies_through_the_cli_and_cannot_be_loosened(repo: Path, tmp_path: Path) -> None:
    """maxPerRole (issue 32) through the installed command: the platform's cap applies to the sidecar,
    ARGOCD_ENV_* and the repository's config may not loosen it, and without a platform the tenant's cap
    is the only one."""
    platform = write(
        tmp_path / "platform.yaml",
        PLATFORM.replace("maxPerContainer: {memory: 96Gi}", "maxPerRole: {sidecar: {memory: 32Gi}, trainer: {cpu: 1}}"),
    )
    out = render(repo / "app", "--config", str(platform), ".")
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "limits.memory 64Gi (patch user-controller.example.com/manager) of sidecar 'data-loader' of replicated job "
        "'node' is above the policy's maximum for the sidecar role, 32Gi (functionConfig maxPerRole.sidecar: "
        "restartable init containers)"
    ) in out.stderr, out
    assert "trainer role" not in out.stderr, "the trainer sets no cpu: nothing to cap"
    env = {"ARGOCD_ENV_MAX_PER_ROLE": "sidecar.memory=128Gi"}
    out = render(repo / "app", "--config-from-env", "--config", str(platform), ".", env=env)
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "error: ARGOCD_ENV_MAX_PER_ROLE (plugin env MAX_PER_ROLE): maxPerRole {sidecar: {memory: 128Gi}} would loosen "
        "the platform's policy (maxPerRole {sidecar: {memory: 32Gi}, trainer: {cpu: 1}} in "
    ) in out.stderr, out
    out = render(repo / "app", "--config-from-env", ".", env=env)
    assert out.code == 0, "without a platform, the tenant's cap is the only one (and 64Gi is under it)"
    tenant_config(repo, "maxPerRole: {sidecar: {memory: 1Ti}, initializer: {memory: 8Gi}}")
    out = render(repo / "app", "--config", str(platform), ".")
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "error: ./fn.yaml: maxPerRole {sidecar: {memory: 1Ti}} would loosen the platform's policy "
        "(maxPerRole {sidecar: {memory: 32Gi}, trainer: {cpu: 1}} in "
    ) in out.stderr, out


def test_argo_cd_booleans_are_true_or_false(repo: Path) -> None:
    out = render(repo / "app", "--config-from-env", ".", env={"ARGOCD_ENV_ALLOW_GPU_IN_SIDECARS": "no"})
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "error: ARGOCD_ENV_ALLOW_GPU_IN_SIDECARS (plugin env ALLOW_GPU_IN_SIDECARS): must be true or false, got 'no'"
        in out.stderr
    )


# 5. Nothing silent


def test_an_empty_render_is_an_error_unless_allowed(repo: Path) -> None:
    (repo / "empty").mkdir()
    write(repo / "empty" / "README.md", "nothing here\n")
    out = render(repo / "empty")
    assert (out.code, out.stdout) == (1, ""), out
    assert "error: .: no objects to print; an empty render makes Argo CD prune the application" in out.stderr
    assert "note: .: skipped files that are not *.yaml, *.yml or *.json: README.md" in out.stderr
    assert render(repo / "empty", "--allow-empty").code == 0


def test_what_is_skipped_is_said(repo: Path) -> None:
    (repo / "app" / "broken.yaml").symlink_to("missing.yaml")
    write(repo / "app" / "UPPER.YAML", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: upper\n")
    out = render(repo / "app")
    assert out.code == 0, out
    assert "note: ./broken.yaml: skipped: a broken symbolic link" in out.stderr
    assert "upper" in [o["metadata"]["name"] for o in documents(out.stdout)], "*.YAML is read"
    write(repo / "app" / "list.yaml", "apiVersion: v1\nkind: List\nitems:\n  a: {}\n")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "error: ./list.yaml: a v1 List whose items is not a list" in out.stderr


def test_names_cannot_forge_lines(repo: Path) -> None:
    write(repo / "app" / "x\nerror: all good\x1b[2J.yaml", "kind: [\n")
    out = render(repo / "app")
    assert out.code == 1, out
    assert "x\\nerror: all good\\x1b[2J.yaml" in out.stderr, out
    assert "\x1b" not in out.stderr
    assert not any(line.startswith("error: all good") for line in out.stderr.splitlines())


# The kustomize process


# The fakes sleep far past eventually()'s ceiling: one render fails to kill is alive when outlives() gives up.
FAKE_KUSTOMIZE = """#!/bin/sh
echo $$ > {pids}
/usr/bin/env > {env}
echo "$@" > {args}
/bin/sleep 600 &
echo $! >> {pids}
wait
"""


def fake_kustomize(tmp_path: Path) -> tuple[Path, Path, Path]:
    pids, env, args = tmp_path / "pids", tmp_path / "env", tmp_path / "args"
    write(tmp_path / "bin" / "kustomize", FAKE_KUSTOMIZE.format(pids=pids, env=env, args=args)).chmod(0o755)
    return pids, env, args


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def eventually(condition: Callable[[], bool], seconds: float = 120) -> bool:
    """Whether ``condition()`` holds within ``seconds``: a ceiling, not a measure. On a loaded machine (make
    test's four workers on two cores, load 10-20) a process can take many seconds to start, or to run the
    exit a SIGKILL forces on it."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def outlives(pid: int) -> bool:
    """Still alive after ``eventually``'s ceiling: a SIGKILL is delivered when the process next runs, which
    on a loaded machine can be after render has returned."""
    return not eventually(lambda: not alive(pid))


def test_kustomize_runs_plain_with_an_empty_environment_and_a_time_limit(repo: Path, tmp_path: Path) -> None:
    pids, env, args = fake_kustomize(tmp_path)
    kustomization(repo / "app", "")
    # 3 s: the fake writes what it was given within the time limit even when the machine is loaded
    out = render(repo / "app", "--timeout", "3", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "error: .: `kustomize build` did not finish within the render's 3 s for kustomize builds; stopped" in out.stderr
    ), out
    arguments = args.read_text().split()
    assert arguments[:3] == ["build", "--load-restrictor", "LoadRestrictionsRootOnly"]
    assert not [a for a in arguments if a.startswith("--enable")]
    variables = dict(line.split("=", 1) for line in env.read_text().splitlines() if "=" in line)
    assert SECRET not in env.read_text()
    assert {"PATH", "HOME", "LC_ALL", "KUSTOMIZE_PLUGIN_HOME"} <= set(variables)
    ours = {"PATH", "HOME", "LC_ALL", "KUSTOMIZE_PLUGIN_HOME", "GOMEMLIMIT", "GOMAXPROCS"}
    assert set(variables) <= ours | {"PWD", "SHLVL", "_", "OLDPWD"}
    assert variables["GOMEMLIMIT"] == f"{768 * 1024 * 1024}B"
    for pid in map(int, pids.read_text().split()):
        assert not outlives(pid), "the build's whole process group is killed"


def test_kustomize_is_killed_with_render(repo: Path, tmp_path: Path) -> None:
    pids, _, _ = fake_kustomize(tmp_path)
    kustomization(repo / "app", "")
    program = [str(EXECUTABLE)] if EXECUTABLE.exists() else [sys.executable, "-m", "trainjob_resources"]
    process = subprocess.Popen(
        [*program, "render"],
        cwd=repo / "app",
        env={**os.environ, "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    started = eventually(lambda: len(pids.read_text().split() if pids.exists() else []) == 2)
    assert started, "the fake kustomize and its child never started"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert b"stopped by signal 15" in stderr
    for pid in map(int, pids.read_text().split()):
        assert not outlives(pid)


# Issue 21: decide as kustomize and go-yaml decide, bound the kustomize child, lose nothing


@pytest.mark.parametrize(
    "entry",
    [
        "hTTp://127.0.0.1:9/x.yaml",  # Go lower-cases the scheme
        "https:/127.0.0.1/x.yaml",
        "git::https://127.0.0.1/repo.git",
        "deploy@127.0.0.1:org/repo",
        "GitHub.com:org/repo",
        "file:///etc/passwd",
    ],
)
def test_a_remote_form_is_refused_whatever_the_disk_holds(repo: Path, entry: str) -> None:
    kustomization(repo / "app", f"resources:\n- runtime.yaml\n- trainjob.yaml\n- {entry}\n")
    decoy = repo / "app" / os.path.normpath(entry)
    write(decoy / "kustomization.yaml", "resources: []\n") if not entry.endswith(".yaml") else write(decoy, RUNTIME)
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert f"resources[2]: {entry}: a remote base or file; render fetches nothing" in out.stderr, out


@pytest.mark.parametrize(
    "key",
    ["file\u017f", "env\u017f", "pat\u0127", "\u212aey", "fi\u0131es"],
    ids=["long-s", "envs", "h", "kelvin", "dotless-i"],
)
def test_a_non_ascii_key_in_a_kustomization_is_refused(repo: Path, key: str) -> None:
    kustomization(repo / "app", f"configMapGenerator:\n- name: x\n  {key}:\n  - creds.txt\n")
    write(repo / "app" / "creds.txt", "x\n")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "a field name with non-ASCII letters, which kustomize may read as another field" in out.stderr, out


@pytest.mark.parametrize("where", ["runtime", "config", "platform-config"])
def test_a_merge_key_in_a_runtime_or_a_config_is_refused(repo: Path, tmp_path: Path, where: str) -> None:
    app = repo / "app"
    args: list[str] = []
    if where == "runtime":
        write(app / "runtime.yaml", RUNTIME.replace("spec:\n", "spec:\n  <<: {mlPolicy: {numNodes: 64}}\n", 1))
    elif where == "config":
        write(app / "config.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
              f"    {FUNCTION}: 'exec: {{path: trainjob-resources}}'\ndata:\n  <<: {{mode: native}}\n")  # fmt: skip
    else:
        platform = write(tmp_path / "platform.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n"
                         "data:\n  <<: {maxPerContainer: 'memory=1Gi'}\n")  # fmt: skip
        args = ["--config", str(platform)]
    out = render(app, *args)
    assert (out.code, out.stdout) == (1, ""), out
    assert "YAML merge key (<<)" in out.stderr, out


def test_a_trainjob_hidden_in_a_list_is_checked_against_the_platform_caps(repo: Path, tmp_path: Path) -> None:
    trainjob = yaml.safe_load(TRAINJOB)
    wrapped = {"apiVersion": "example.com/v1", "kind": "Anything", "metadata": {"name": "w"}, "items": [trainjob]}
    write(repo / "app" / "trainjob.yaml", yaml.safe_dump(wrapped))
    platform = write(tmp_path / "platform.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n"
                     "data:\n  maxPerContainer: memory=32Gi\n")  # fmt: skip
    out = render(repo / "app", "--config", str(platform))
    assert (out.code, out.stdout) == (1, ""), out
    assert "TrainJob large-dataset-training" in out.stderr and "32Gi" in out.stderr, out
    write(repo / "app" / "trainjob.yaml", yaml.safe_dump({**wrapped, "items": None}))
    out = render(repo / "app")
    assert out.code == 1 and "items: null: kubectl reads an object with an items field as a list" in out.stderr, out


def test_in_krm_mode_a_trainjob_in_an_items_list_is_an_error() -> None:
    from tests.hostile import HEADER, bundle, run_limited
    from tests.hostile import RUNTIME as KRM_RUNTIME

    hidden = "- apiVersion: example.com/v1\n  kind: WidgetList\n  metadata: {name: w}\n  items:\n"
    hidden += "  - apiVersion: trainer.kubeflow.org/v1alpha1\n    kind: TrainJob\n    metadata: {name: tj}\n"
    run = run_limited(bundle(KRM_RUNTIME, hidden))
    assert run.code == 1 and "has an items list holding a TrainJob" in run.stderr + run.stdout.decode(), run
    assert HEADER


def _gpu_job(memory: str) -> str:
    return TRAINJOB.replace(
        "                                memory: 64Gi\n                              requests:",
        f"                                memory: 64Gi\n                                ephemeral-storage: {memory}\n"
        "                              requests:",
    ).replace(
        "    numNodes: 2\n",
        "    numNodes: 2\n    resourcesPerNode:\n      limits: {ephemeral-storage: 1m, nvidia.com/gpu: 64}\n",
    )


def test_totals_that_cannot_be_exact_fail_closed_under_a_policy(repo: Path, tmp_path: Path) -> None:
    write(repo / "app" / "trainjob.yaml", _gpu_job("1e100010"))
    out = render(repo / "app")
    assert out.code == 0 and "cannot be totalled exactly" in out.stderr, out  # no policy: a warning
    platform = write(tmp_path / "platform.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n"
                     "data:\n  maxPerContainer: nvidia.com/gpu=8\n")  # fmt: skip
    out = render(repo / "app", "--config", str(platform))
    assert (out.code, out.stdout) == (1, ""), out
    assert "the policy cannot be checked, so it is refused" in out.stderr, out


def test_a_huge_quantity_costs_little_and_prints_little(repo: Path) -> None:
    write(repo / "app" / "trainjob.yaml", TRAINJOB.replace("memory: 64Gi", f"memory: '{'9' * 400_000}'", 1))
    before = children_cpu_seconds()
    out = render(repo / "app", cpu_seconds=10)
    spent = children_cpu_seconds() - before
    assert (out.code, out.stdout) == (1, ""), out
    assert "400000 characters long: render reads quantities of at most 10240" in out.stderr, out
    assert len(out.stderr) < 20_000, out
    assert spent < 2, f"{spent:.2f} s of CPU (a plain render's: 0.45 s, 0.22 s in a fork)"


@pytest.mark.parametrize(
    ("option", "variable", "platform_value", "tenant_value"),
    [
        ("derivedRuntimeKind", "DERIVED_RUNTIME_KIND", "TrainingRuntime", "ClusterTrainingRuntime"),
        ("trainerVersion", "TRAINER_VERSION", "v2.2.1", "v2.3.0"),
    ],
)
def test_the_platform_pins_an_option(
    repo: Path, tmp_path: Path, option: str, variable: str, platform_value: str, tenant_value: str
) -> None:
    platform = write(tmp_path / "platform.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n"
                     f"data:\n  {option}: {platform_value}\n")  # fmt: skip
    env = {f"ARGOCD_ENV_{variable}": tenant_value}
    out = render(repo / "app", "--config", str(platform), "--config-from-env", env=env)
    assert (out.code, out.stdout) == (1, ""), out
    assert f"{option} {tenant_value}: the platform pins it to {platform_value}" in out.stderr, out
    assert render(repo / "app", "--config-from-env", env=env).code == 0, (
        "without the platform's pin, the tenant's choice"
    )


@pytest.mark.slow
def test_a_local_config_copy_never_stands_in_for_a_platform_runtime(repo: Path, tmp_path: Path) -> None:
    """A copy of a runtime --runtimes supplies is matched by the cluster's identity (an overlay's
    ``namespace:`` reaches the cluster-scoped copy too) and compared: the same runtime is the
    platform's; another is refused, naming the copy's file and the first field, with the copy's value
    only (the platform's file and value are not the tenant's to read)."""
    platform = write(tmp_path / "platform" / "runtime.yaml", RUNTIME)
    copy = yaml.safe_load(RUNTIME)
    copy["metadata"].setdefault("annotations", {})["config.kubernetes.io/local-config"] = "true"
    os.remove(repo / "app" / "runtime.yaml")
    write(repo / "base" / "kustomization.yaml", "resources:\n- runtime.yaml\n- trainjob.yaml\n")
    write(repo / "base" / "trainjob.yaml", TRAINJOB)
    write(repo / "overlay" / "kustomization.yaml", "namespace: team-a\nresources:\n- ../base\n")
    without_copy = render(repo / "app", "--runtimes", str(platform.parent))
    assert without_copy.code == 0, without_copy
    for app in ("app", "overlay"):
        copy_path = repo / ("app" if app == "app" else "base") / "runtime.yaml"
        write(copy_path, yaml.safe_dump(copy))
        same = render(repo / app, "--runtimes", str(platform.parent), "--root", str(repo))
        assert same.code == 0, same
        if app == "app":
            assert same.stdout == without_copy.stdout, "the same runtime: the platform's is read"
        stale = copy_module.deepcopy(copy)
        loader = stale["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        loader["initContainers"][0]["image"] = "busybox:1.35"
        write(copy_path, yaml.safe_dump(stale))
        out = render(repo / app, "--runtimes", str(platform.parent), "--root", str(repo))
        assert (out.code, out.stdout) == (1, ""), out
        where = "./runtime.yaml" if app == "app" else "../base/runtime.yaml"
        assert (
            f"{where}: ClusterTrainingRuntime pytorch-distributed: a local-config copy of a runtime the platform "
            "supplies (--runtimes) that differs from it at spec.template.spec.replicatedJobs[node]"
            '.template.spec.template.spec.initContainers[data-loader].image: "busybox:1.35" in the copy (the '
            "platform's value is not shown); remove the copy (the platform's runtime is what the cluster runs)"
        ) in out.stderr, out
        assert "busybox:1.36" not in out.stderr and str(platform) not in out.stderr, out


TEAM_B_TOKEN = "team-b-token-7f3a9c"


@pytest.mark.slow
def test_a_copy_of_another_teams_runtime_learns_nothing_of_its_values(repo: Path, tmp_path: Path) -> None:
    """Team A's local-config "copy" of team B's namespaced runtime from the platform's --runtimes, written
    to read team B's env one field at a time: each refusal names the field and team A's own value, never
    team B's value, nor an env name or key only team B's runtime has."""
    team_b = yaml.safe_load(RUNTIME)
    team_b["kind"] = "TrainingRuntime"
    team_b["metadata"]["namespace"] = "team-b"
    node = team_b["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    node["initContainers"][0]["env"] = [{"name": "HF_TOKEN", "value": TEAM_B_TOKEN}, {"name": "PRIVATE_BUCKET"}]
    team_b["metadata"].setdefault("labels", {})["team-b/secret-project"] = "atlas"
    platform = write(tmp_path / "platform" / "team-b-runtime.yaml", yaml.safe_dump(team_b))
    env_at = "spec.template.spec.replicatedJobs[node].template.spec.template.spec.initContainers[data-loader]"
    probes: list[tuple[dict[str, str] | None, list[object] | None, str]] = [
        (None, [{"name": "HF_TOKEN", "value": "guess"}], f'{env_at}.env[HF_TOKEN].value: "guess" in the copy'),
        (None, [{"name": "HF_TOKEN"}], f'{env_at}.env[HF_TOKEN]: {{"name": "HF_TOKEN"}} in the copy'),
        (None, [], f"{env_at}.env: [] in the copy"),
        (None, None, f'{env_at}: {{"image": "busybox:1.36"'),
        ({}, [{"name": "HF_TOKEN", "value": "guess"}], "metadata.labels: {} in the copy"),
    ]
    for labels, env, said in probes:
        copy = copy_module.deepcopy(team_b)
        copy["metadata"]["annotations"] = {"config.kubernetes.io/local-config": "true"}
        if labels is not None:
            copy["metadata"]["labels"] = labels
        loader = copy["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        loader["initContainers"][0].pop("env")
        if env is not None:
            loader["initContainers"][0]["env"] = env
        text = yaml.safe_dump(copy)
        write(repo / "app" / "runtime.yaml", text)
        out = render(repo / "app", "--runtimes", str(platform.parent))
        assert (out.code, out.stdout) == (1, ""), out
        assert said in out.stderr, out
        for theirs in (TEAM_B_TOKEN, "PRIVATE_BUCKET", "secret-project", "atlas", str(platform)):
            assert theirs in text or theirs not in out.stderr, (theirs, out)


def test_snake_case_options_are_refused_by_render_and_by_the_function(repo: Path) -> None:
    from tests.hostile import RUNTIME as KRM_RUNTIME
    from tests.hostile import bundle, run_limited

    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
    config += f"    {FUNCTION}: 'exec: {{path: trainjob-resources}}'\ndata:\n  max_per_container: memory=1Gi\n"
    write(repo / "app" / "config.yaml", config)
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "unknown option 'max_per_container'; did you mean 'maxPerContainer'?" in out.stderr, out
    function_config = b"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n"
    function_config += b"  data: {max_per_container: bad}\nitems:"
    krm = bundle(KRM_RUNTIME).replace(b"items:", function_config, 1)
    run = run_limited(krm)
    assert run.code == 1 and "did you mean 'maxPerContainer'?" in run.stdout.decode() + run.stderr, run


@pytest.mark.parametrize("field", ["name", "namespace"])
@pytest.mark.parametrize("name", ["tj\n0 errors; rendered OK", "tj\x1b[2Jhidden", "tj\u202eKO ,derever"])
def test_a_name_cannot_forge_or_reorder_a_message(repo: Path, name: str, field: str) -> None:
    value = json_text(name)
    replacement = f"name: {value}" if field == "name" else f"name: large-dataset-training\n  namespace: {value}"
    write(repo / "app" / "trainjob.yaml", TRAINJOB.replace("name: large-dataset-training", replacement))
    write(repo / "app" / "runtime.yaml", RUNTIME.replace("name: pytorch-distributed", "name: gone"))
    out = render(repo / "app")
    assert out.code == 1, out
    assert name not in out.stderr and "\x1b" not in out.stderr and "\u202e" not in out.stderr, out
    assert name.encode("unicode_escape").decode() in out.stderr, "the value is shown, escaped"
    assert all(line.startswith(("error", "warning", "note", "trainjob-resources")) for line in out.stderr.splitlines())


def json_text(value: str) -> str:
    import json

    return json.dumps(value)


def test_the_source_path_cannot_make_the_root_slash(tmp_path: Path) -> None:
    app = write(tmp_path / "a" / "b" / "trainjob.yaml", TRAINJOB).parent
    source = str(app.resolve()).lstrip("/")
    out = render(app, "--config-from-env", env={"ARGOCD_APP_SOURCE_PATH": source})
    assert (out.code, out.stdout) == (1, ""), out
    assert "spells the whole current folder, so the repository root would be /; refused" in out.stderr, out


@pytest.mark.slow
def test_stderr_is_capped_with_a_count(repo: Path) -> None:
    write(repo / "app" / "many.yaml", "- x\n---\n" * 50_000)
    out = render(repo / "app")
    assert out.code == 1, out
    assert len(out.stderr.splitlines()) < 2_010 and "more lines not shown" in out.stderr, out
    assert out.stderr.rstrip().endswith("errors; nothing rendered")


@pytest.mark.slow
def test_a_stream_of_empty_documents_costs_little(repo: Path) -> None:
    write(repo / "app" / "empty.yaml", "---\n" * 1_000_000 + "--- # c\n\n" * 100_000)
    out = render(repo / "app", cpu_seconds=8)
    assert out.code == 0, out


def test_a_path_the_walker_cannot_look_at_is_an_error_naming_it(repo: Path) -> None:
    folder = repo / "app"
    while len(str(folder)) < 3_900:
        folder = folder / ("d" * 200)
    folder.mkdir(parents=True)
    fd = os.open(folder, os.O_RDONLY)  # the file's whole path is past PATH_MAX: created relative to its folder
    try:
        os.close(os.open("y" * 240 + ".yaml", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    finally:
        os.close(fd)
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "y" * 240 + ".yaml: cannot read: File name too long" in out.stderr, out


@pytest.mark.slow
def test_the_kustomize_child_is_bounded_in_memory(repo: Path) -> None:
    bomb = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata: {name: bomb}",
        "data:",
        '  a0: &a0 ["x","x","x","x","x","x","x","x","x"]',
    ]
    bomb += [f"  a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    app = repo / "bomb"
    write(app / "bomb.yaml", "\n".join(bomb) + "\n")
    write(app / "kustomization.yaml", "resources:\n- bomb.yaml\n")
    # Memory stops it: render's own time limit for kustomize builds is raised out of the way, since under
    # make test's four workers on two cores the bomb's build took more than its default 60 s of wall clock.
    out = render(app, "--timeout", "600", cpu_seconds=60, wall_seconds=660)
    assert (out.code, out.stdout) == (1, ""), out
    assert "ran out of its 1024 MiB of memory" in out.stderr, out


def test_a_big_file_named_by_many_generators_is_refused_before_kustomize_reads_it(repo: Path, tmp_path: Path) -> None:
    """Render copies the 20 MB file once, but kustomize reads (and holds) it once per generator: 6 GB,
    which it would spend a minute of CPU on before its 1 GiB stopped it. The input limit counts every read."""
    app = repo / "generators"
    write(app / "big.txt", "x" * (20 * 1024 * 1024))
    generators = "".join(f"- name: c{i}\n  files: [big.txt]\n" for i in range(300))
    write(app / "kustomization.yaml", f"configMapGenerator:\n{generators}")
    marker = tmp_path / "kustomize-ran"
    write(tmp_path / "bin" / "kustomize", f"#!/bin/sh\n: > {marker}\n").chmod(0o755)  # kustomize's PATH is empty
    before = children_cpu_seconds()
    out = render(app, cpu_seconds=60, path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    spent = children_cpu_seconds() - before
    assert (out.code, out.stdout) == (1, ""), out
    assert "configMapGenerator[299].files[0] (big.txt, named 300 times, first at" in out.stderr, out
    assert "6270484480 bytes would take the input over 67108864 bytes" in out.stderr, out
    assert not marker.exists(), "refused before kustomize runs"
    assert spent < 2, f"{spent:.2f} s of CPU (measured: 0.26 s, 0.02 s in a fork)"


def refused_for_reads(app: Path, name: str, kustomization_text: str) -> str:
    """render's error for a kustomization that names a 22 MB file ``name`` four times (three reads
    beyond the copy's, 66 MB: refused before the copy; a reading left uncounted would name the file
    three times, or fail later, at the copy)."""
    write(app / name, "x" * (22 * 1024 * 1024))
    write(app / "kustomization.yaml", kustomization_text)
    out = render(app)
    assert (out.code, out.stdout) == (1, ""), out
    return out.stderr


GENERATORS_OF = (
    "configMapGenerator:\n- name: a\n  FILES: [k={0}]\n"
    "secretGenerator:\n- name: b\n  envs: [{0}]\n- name: c\n  ENV: {0}\n"
    "generators:\n- gen.yaml\n"
)
PLUGIN_OF = "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {{name: p}}\nenvs: [{0}]\nenv: {1}\n"


def test_every_way_a_generator_names_a_file_counts_as_a_read(repo: Path) -> None:
    """files (key=path), envs and env in a kustomization's generators, envs in a builtin generator's
    config (whose env kustomize ignores: not counted), field names in any case (kustomize's Go
    decoder matches them so)."""
    app = repo / "generators"
    write(app / "gen.yaml", PLUGIN_OF.format("big.txt", "big.txt"))
    stderr = refused_for_reads(app, "big.txt", GENERATORS_OF.format("big.txt"))
    assert "(big.txt, named 4 times, first at ./kustomization.yaml: configMapGenerator[0].FILES[0];" in stderr


def test_kubectl_kustomize_reads_the_file_at_every_generator_form_render_counts(kubectl: str, tmp_path: Path) -> None:
    """Differential: what test_every_way_a_generator_names_a_file_counts_as_a_read counts, built by the
    real kustomize: each counted entry yields data read from the file; the builtin config's env is not read."""
    app = tmp_path / "generators"
    write(app / "data.env", "marker=read-by-kustomize\n")
    write(app / "other.env", "other=read-by-kustomize\n")
    write(app / "gen.yaml", PLUGIN_OF.format("data.env", "other.env"))
    write(app / "kustomization.yaml", GENERATORS_OF.format("data.env"))
    built = subprocess.run([kubectl, "kustomize", str(app)], capture_output=True, text=True, timeout=60, check=True)
    by_name = {d["metadata"]["name"].split("-")[0]: d["data"] for d in yaml.safe_load_all(built.stdout)}
    assert sorted(by_name) == ["a", "b", "c", "p"], by_name
    assert by_name["a"] == {"k": "marker=read-by-kustomize\n"}
    assert {k: base64.b64decode(v) for k, v in by_name["b"].items()} == {"marker": b"read-by-kustomize"}
    assert {k: base64.b64decode(v) for k, v in by_name["c"].items()} == {"marker": b"read-by-kustomize"}
    assert by_name["p"] == {"marker": "read-by-kustomize"}, "the builtin config's env was read"


def test_a_patch_file_named_by_several_patches_counts_once_per_read(repo: Path) -> None:
    """kustomize reads a patch's file for each entry that names it, in whichever field."""
    stderr = refused_for_reads(
        repo / "patches",
        "big.yaml",
        "patches:\n- path: big.yaml\n- path: big.yaml\n  target: {kind: ConfigMap}\n"
        "patchesStrategicMerge:\n- big.yaml\n"
        "patchesJson6902:\n- path: big.yaml\n  target: {version: v1, kind: ConfigMap, name: c}\n",
    )
    assert (
        "patchesStrategicMerge[0] (big.yaml, named 4 times, first at ./kustomization.yaml: patches[0].path;" in stderr
    )


def test_kubectl_kustomize_applies_a_patch_file_once_per_entry_that_names_it(kubectl: str, tmp_path: Path) -> None:
    """Differential, for the count above: kustomize loads the patch's file for each entry (three
    finalizers from one file named three times)."""
    app = tmp_path / "patches"
    write(app / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  finalizers: []\n")
    write(app / "p.json", '[{"op": "add", "path": "/metadata/finalizers/-", "value": "f"}]\n')
    write(
        app / "kustomization.yaml",
        "resources: [cm.yaml]\npatches:\n- path: p.json\n  target: {kind: ConfigMap}\n"
        "- path: p.json\n  target: {kind: ConfigMap}\n"
        "patchesJson6902:\n- path: p.json\n  target: {version: v1, kind: ConfigMap, name: c}\n",
    )
    built = subprocess.run([kubectl, "kustomize", str(app)], capture_output=True, text=True, timeout=60, check=True)
    assert yaml.safe_load(built.stdout)["metadata"]["finalizers"] == ["f", "f", "f"]


def test_a_small_file_named_by_several_generators_builds(repo: Path) -> None:
    app = repo / "generators"
    write(app / "small.txt", "hello\n")
    generators = "".join(f"- name: c{i}\n  files: [small.txt]\n" for i in range(3))
    write(app / "kustomization.yaml", f"configMapGenerator:\n{generators}")
    out = render(app)
    assert out.code == 0, out
    assert out.stdout.count("small.txt: |\n    hello\n") == 3, out


SLOW_KUSTOMIZE = (
    "#!/bin/sh\necho $$ >> {log}/started\n/bin/sleep 3\necho $$ >> {log}/finished\n"
    "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: c%s\\n' $$\n"
)


def test_one_deadline_holds_for_all_the_builds_of_a_render(repo: Path, tmp_path: Path) -> None:
    """Four builds of 3 s each under one limit of 4 s for the render: at most one can finish within it and a
    second start (and be stopped at the deadline: it never finishes, nor outlives render); a limit per build
    would let all four finish, a build let run past the deadline a second one. Counted, not timed: on a
    loaded machine a build only takes longer, so no more of them can finish."""
    log = tmp_path / "log"
    log.mkdir()
    write(tmp_path / "bin" / "kustomize", SLOW_KUSTOMIZE.format(log=log)).chmod(0o755)
    for n in range(4):
        write(repo / "many" / f"k{n}" / "kustomization.yaml", "resources: []\n")
    out = render(repo / "many", "--timeout", "4", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert (out.code, out.stdout) == (1, ""), out
    assert "the render's 4 s for kustomize builds" in out.stderr, out
    started, finished = (
        (log / name).read_text().split() if (log / name).exists() else [] for name in ("started", "finished")
    )
    assert len(started) <= 2 and len(finished) <= 1, f"the limit is per render, not per build: {started=} {finished=}"
    for pid in set(started) - set(finished):
        assert not outlives(int(pid)), "the build running at the deadline is stopped"


def test_kustomize_dies_with_render_even_on_sigkill(repo: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    write(tmp_path / "bin" / "kustomize", f"#!/bin/sh\necho $$ > {pids}\nexec /bin/sleep 600\n").chmod(0o755)
    kustomization(repo / "app", "")
    program = [str(EXECUTABLE)] if EXECUTABLE.exists() else [sys.executable, "-m", "trainjob_resources"]
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([*program, "render"], cwd=repo / "app", env=env, stderr=subprocess.PIPE)
    assert eventually(lambda: pids.exists() and pids.read_text().endswith("\n")), "kustomize never started"
    process.kill()
    process.communicate(timeout=120)
    assert not outlives(int(pids.read_text())), "kustomize outlived a render killed by SIGKILL"
    left = [p for p in tmp_path.iterdir() if p.name.startswith("trainjob-resources-")]
    assert left, "SIGKILL runs no clean-up: the copy stays until the next render"
    assert render(repo / "app", env={"TMPDIR": str(tmp_path)}).code == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("trainjob-resources-")], "orphans removed"


def test_the_private_copy_is_never_made_inside_the_repository(repo: Path) -> None:
    from trainjob_resources.repo import sandbox
    from trainjob_resources.repo.sources import RenderError, Root

    kustomization(repo / "app", "")
    inside = repo / "app" / "tmp"
    inside.mkdir()
    out = render(repo / "app", env={"TMPDIR": str(inside)})
    assert out.code == 0 and not list(inside.iterdir()), out
    original = sandbox.temp_candidates
    try:
        sandbox.temp_candidates = lambda: [str(inside), "/nonexistent-tmp"]  # type: ignore[assignment]
        refused = pytest.raises(RenderError, match="no temporary folder outside the repository is writable")
        with refused, sandbox._work_dir(Root(str(repo.resolve()), "repo")):
            pass
    finally:
        sandbox.temp_candidates = original  # type: ignore[assignment]


def test_kustomize_has_no_network_where_the_kernel_gives_it_a_namespace(repo: Path, tmp_path: Path) -> None:
    import socket

    if subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False).returncode != 0 and (
        subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False).returncode != 0
    ):
        pytest.skip("no network namespaces here: kustomize runs with the host's network (docs/hardening.md)")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.1)
    port = listener.getsockname()[1]
    probe = (
        f"#!{sys.executable}\nimport socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), 2)\n"
        "    print('connected')\nexcept OSError:\n"
        "    print('apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: isolated')\n"
    )
    write(tmp_path / "bin" / "kustomize", probe).chmod(0o755)
    kustomization(repo / "app", "")
    out = render(repo / "app", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    assert "connected" not in out.stdout and "isolated" in out.stdout, out


@pytest.mark.slow
def test_twenty_renders_in_parallel_give_identical_output(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "overlay-multi", root)
    program = [str(EXECUTABLE)] if EXECUTABLE.exists() else [sys.executable, "-m", "trainjob_resources"]
    processes = [
        subprocess.Popen(
            [*program, "render", "--root", str(root), str(root / "overlays" / "prod")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PATH": KUBECTL_DIR + ":/bin"},
        )
        for _ in range(20)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert all(p.returncode == 0 for p in processes), [e[-500:] for _, e in outputs]
    assert len({out for out, _ in outputs}) == 1


@pytest.mark.slow
def test_huge_quantities_in_many_trainjobs_give_bounded_output_in_krm_mode() -> None:
    from tests.hostile import RUNTIME as KRM_RUNTIME
    from tests.hostile import bundle, run_limited, trainjob_value, trainjob_yaml

    items = [trainjob_yaml(trainjob_value(name=f"tj{i}", memory="1e99999")) for i in range(3000)]
    data = bundle(KRM_RUNTIME, *items)
    run = run_limited(data, memory_mib=1024, cpu_seconds=30)
    assert run.code in (0, 1), run
    assert len(run.stdout) < 4 * len(data), f"{len(run.stdout)} bytes out for {len(data)} in (603 MB before)"


# 3. One reading of YAML (issue 30): what kustomize, kubectl and Argo CD read (go-yaml) is what is checked


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# Each spelling of a tag go-yaml decodes (!!binary: to the string it encodes) and PyYAML does not.
BINARY_SPELLINGS = {
    "short": ("", "!!binary"),
    "verbatim": ("", "!<tag:yaml.org,2002:binary>"),
    "tag-handle": ("%TAG !e! tag:yaml.org,2002:\n---\n", "!e!binary"),
}
# What each spelling is refused as (the handle's %TAG directive comes first).
REFUSED_AS = {"short": "the tag !!binary", "verbatim": "the tag !!binary", "tag-handle": "the %TAG directive"}
REFUSED = "is refused"


@pytest.mark.parametrize("spelling", sorted(BINARY_SPELLINGS))
@pytest.mark.parametrize(
    "field",
    ["resources", "components", "patches-path", "flow-resources"],
)
def test_a_tagged_kustomization_entry_is_refused(repo: Path, spelling: str, field: str) -> None:
    """``resources: [!!binary <base64 of ../../outside/base>]``: go-yaml (kustomize) reads the path
    it encodes; a folder named like the base64 text is the decoy the screen would have checked."""
    head, tag = BINARY_SPELLINGS[spelling]
    target = "../../outside/base"
    decoy = _b64(target)
    write(repo / "app" / decoy / "kustomization.yaml", "resources: []\n")
    entry = f"{tag} {decoy}"
    text = {
        "resources": f"resources:\n- runtime.yaml\n- trainjob.yaml\n- {entry}\n",
        "components": f"components:\n- {entry}\n",
        "patches-path": f"patches:\n- path: {tag} {_b64('https://example.com/p.yaml')}\n",
        "flow-resources": f"resources: [runtime.yaml, trainjob.yaml, {entry}]\n",
    }[field]
    write(repo / "app" / "runtime.yaml", RUNTIME)
    write(repo / "app" / "trainjob.yaml", TRAINJOB)
    write(repo / "app" / "kustomization.yaml", head + text)
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "kustomization.yaml" in out.stderr and REFUSED_AS[spelling] in out.stderr, out
    assert REFUSED in out.stderr and "line " in out.stderr, out


@pytest.mark.parametrize("directive", ["%YAML 1.1", "%TAG !x! tag:example.com,2000:"])
def test_a_directive_in_a_kustomization_is_refused(repo: Path, directive: str) -> None:
    write(repo / "app" / "runtime.yaml", RUNTIME)
    write(repo / "app" / "trainjob.yaml", TRAINJOB)
    write(repo / "app" / "kustomization.yaml", f"{directive}\n---\nresources:\n- runtime.yaml\n- trainjob.yaml\n")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert f"the {directive.split()[0]} directive is refused" in out.stderr, out


# Where an object's reading decides: the runtime a TrainJob names, its kind, a quantity.
OBJECT_CASES = {
    "runtimeRef.name": ("    name: pytorch-distributed\n", "    name: {tag} " + _b64("pytorch-distributed") + "\n"),
    "kind": ("kind: TrainJob\n", "kind: {tag} " + _b64("TrainJob") + "\n"),
    "memory": ("memory: 64Gi\n", "memory: {tag} " + _b64("1Gi") + "\n"),
}


@pytest.mark.parametrize("spelling", sorted(BINARY_SPELLINGS))
@pytest.mark.parametrize("field", sorted(OBJECT_CASES))
@pytest.mark.parametrize("mode", ["file", "stdin", "kustomization"])
def test_a_tagged_field_of_an_object_is_refused(repo: Path, spelling: str, field: str, mode: str) -> None:
    """``runtimeRef.name: !!binary <base64 of big-gpu>``: kubectl reads the runtime it encodes."""
    head, tag = BINARY_SPELLINGS[spelling]
    old, new = OBJECT_CASES[field]
    trainjob = head + TRAINJOB.replace(old, new.format(tag=tag), 1)
    assert trainjob != head + TRAINJOB
    app = repo / "app"
    write(app / "trainjob.yaml", trainjob)
    if mode == "kustomization":
        write(app / "kustomization.yaml", "resources:\n- runtime.yaml\n- trainjob.yaml\n")
        out = render(app)
    elif mode == "file":
        out = render(app, "runtime.yaml", "trainjob.yaml")
    else:
        out = render(app, "--runtimes", "runtime.yaml", "-", stdin=trainjob.encode())
    if mode == "kustomization":
        # What render checks is kustomize's output: kustomize decodes the tag (or fails on it), so the
        # function decides on what kustomize, and kubectl after it, read; nothing tagged or encoded
        # comes out, and a refusal (kustomize's or the function's, on the decoded value) prints nothing.
        assert "!!binary" not in out.stdout and new.format(tag="").split()[-1] not in out.stdout, out
        if out.code == 0:
            assert {"TrainJob", "ClusterTrainingRuntime"} <= {d["kind"] for d in documents(out.stdout)}, out
        else:
            assert out.code == 1 and out.stdout == "" and "error" in out.stderr, out
        return
    assert (out.code, out.stdout) == (1, ""), out
    where = {"file": "trainjob.yaml", "stdin": "<stdin>", "kustomization": ""}[mode]
    assert where in out.stderr and REFUSED_AS[spelling] in out.stderr and "line " in out.stderr, out
    assert "Traceback" not in out.stderr, out


# Plain scalars PyYAML (YAML 1.1) reads otherwise than go-yaml: each refused where it decides.
DISPUTED_PLAIN = ["1:30", "0o17", "1e3", "+.5", "08", "y", "yes", "off", "99999999999999999999"]


@pytest.mark.parametrize("text", DISPUTED_PLAIN)
@pytest.mark.parametrize("mode", ["file", "kustomization"])
def test_a_yaml_1_1_form_is_refused(repo: Path, text: str, mode: str) -> None:
    """``cpu: 1:30``: 90 CPUs to PyYAML, the string "1:30" (refused by the API server) to kubectl."""
    app = repo / "app"
    write(
        app / "trainjob.yaml",
        TRAINJOB.replace("memory: 64Gi\n", f"memory: 64Gi\n                                cpu: {text}\n", 1),
    )
    if mode == "kustomization":
        # render checks kustomize's output, where kustomize has already written the value as it read
        # it (1:30 as "1:30", 0o17 as 15, yes as "yes"): decided as kustomize reads it, or refused.
        write(app / "kustomization.yaml", "resources:\n- runtime.yaml\n- trainjob.yaml\n")
        out = render(app)
        read_by_kustomize = {"0o17": 15, "1e3": 1000, "+.5": 0.5, "08": 8}
        if out.code == 0:
            assert f"cpu: {read_by_kustomize[text]}\n" in out.stdout, out  # in the derived runtime
        else:
            assert out.code == 1 and out.stdout == "" and ("cpu" in out.stderr or REFUSED in out.stderr), out
        return
    out = render(app, "runtime.yaml", "trainjob.yaml")
    assert (out.code, out.stdout) == (1, ""), out
    assert f"the plain scalar {text} at " in out.stderr and REFUSED in out.stderr, out


@pytest.mark.parametrize("text", ["1:30", "0o17", "y"])
def test_a_yaml_1_1_form_in_a_kustomization_field_is_refused(repo: Path, text: str) -> None:
    kustomization(repo / "app", f"namePrefix: {text}\n")
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert f"kustomization.yaml: the plain scalar {text} at namePrefix is refused" in out.stderr, out


def test_a_tagged_inline_plugin_config_is_refused(repo: Path) -> None:
    """An inline transformer config is YAML in a string: its tags are refused as a file's are."""
    kustomization(
        repo / "app",
        "transformers:\n- |\n  apiVersion: builtin\n  kind: PrefixSuffixTransformer\n  metadata: {name: p}\n"
        f"  prefix: !!binary {_b64('../x-')}\n",
    )
    out = render(repo / "app")
    assert (out.code, out.stdout) == (1, ""), out
    assert "transformers[0]: an inline config: the tag !!binary is refused" in out.stderr, out


@pytest.mark.slow
def test_messages_name_no_namespaced_runtime_the_platform_supplies(repo: Path, tmp_path: Path) -> None:
    """A TrainJob's namespace is the repository's to write: one put in team B's namespace with a near
    miss of team B's runtime's name (or that name, as a ClusterTrainingRuntime, or from another
    namespace) is refused without a "did you mean", another namespace or kind naming team B's runtime."""
    team_b = yaml.safe_load(RUNTIME)
    team_b["kind"] = "TrainingRuntime"
    team_b["metadata"].update(name="atlas-finetune-secret", namespace="team-b")
    platform = write(tmp_path / "platform" / "team-b.yaml", yaml.safe_dump(team_b))
    os.remove(repo / "app" / "runtime.yaml")
    for namespace, kind, name in (
        ("team-b", "TrainingRuntime", "atlas-finetune-secrets"),
        ("team-a", "TrainingRuntime", "atlas-finetune-secret"),
        ("team-b", "ClusterTrainingRuntime", "atlas-finetune-secret"),
    ):
        trainjob = yaml.safe_load(TRAINJOB)
        trainjob["metadata"]["namespace"] = namespace
        trainjob["spec"]["runtimeRef"] = {"name": name, "kind": kind}
        write(repo / "app" / "trainjob.yaml", yaml.safe_dump(trainjob))
        out = render(repo / "app", "--runtimes", str(platform.parent))
        assert (out.code, out.stdout) == (1, ""), out
        assert f"{kind} {name!r}" in out.stderr and "is not in the bundle" in out.stderr, out
        assert "Did you mean" not in out.stderr and "A TrainingRuntime of that name" not in out.stderr, out
        assert "atlas-finetune-secret" not in out.stderr.replace(name, ""), out
