"""``render`` (and ``explain``) on a hostile repository, written as the attacker would (issue 16).

Each case builds a tenant's folder (``repo``) beside things it must never reach (``outside``: a
Secret whose value is ``SECRET``), runs the installed command in that folder as Argo CD's plugin
does, under hard limits (CPU seconds and address space: a regression fails, it cannot hang or
swap), and checks the exit code, the message, and that no byte from outside the root was printed.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.examples import EXAMPLES, documents
from tests.hostile import EXECUTABLE, MiB

SECRET = "s3cr3t-value-from-outside-the-root"
SECRET_YAML = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: other-tenant\nstringData:\n  token: {SECRET}\n"
RUNTIME = (EXAMPLES / "exec-data-loader" / "runtime.yaml").read_text()
TRAINJOB = (EXAMPLES / "exec-data-loader" / "trainjob.yaml").read_text()
FUNCTION = "config.kubernetes.io/function"
KUBECTL_DIR = "/usr/bin"


class Outcome:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[:2000]}\n--- stderr\n{self.stderr[:3000]}"


def _limits(cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (4096 * MiB, 4096 * MiB))


def render(
    cwd: Path,
    *args: str,
    command: str = "render",
    env: dict[str, str] | None = None,
    path: str = KUBECTL_DIR,
    cpu_seconds: int = 20,
) -> Outcome:
    """The installed command run in ``cwd``; never more than ``cpu_seconds`` of CPU or 30 s."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARGOCD_")}
    environment = {**base, "PATH": path, "HOSTILE_SECRET": SECRET, **(env or {})}
    program = [str(EXECUTABLE)] if EXECUTABLE.exists() else [sys.executable, "-m", "trainjob_resources"]
    done = subprocess.run(
        [*program, command, *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        timeout=30,
        preexec_fn=lambda: _limits(cpu_seconds),
        check=False,
    )
    outcome = Outcome(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))
    assert SECRET not in outcome.stdout and SECRET not in outcome.stderr, outcome
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr, outcome
    return outcome


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


def test_too_many_files(repo: Path) -> None:
    many = repo / "app" / "many"
    many.mkdir()
    for index in range(100_001):
        os.close(os.open(many / f"{index}.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    out = render(repo / "app", cpu_seconds=10)
    assert (out.code, out.stdout) == (1, ""), out
    assert "many: more than 100000 files and folders in one render, the limit" in out.stderr, out


def test_too_many_objects(repo: Path) -> None:
    items = "".join("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n" for _ in range(100_001))
    write(repo / "app" / "list.yaml", "apiVersion: v1\nkind: List\nitems:\n" + items)
    out = render(repo / "app", cpu_seconds=15)
    assert (out.code, out.stdout) == (1, ""), out
    assert "list.yaml: more than 100000 objects in one render, the limit" in out.stderr, out


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
)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("MAX_PER_CONTAINER", "memory=128Gi", "maxPerContainer {memory: 128Gi} would loosen the platform's policy"),
        ("NAMESPACE_POLICY", "off", "namespacePolicy off would loosen the platform's policy (namespacePolicy warning"),
        ("ALLOW_GPU_IN_SIDECARS", "true", "allowGpuInSidecars true would loosen"),
        ("ALLOWED_RESOURCES", "cpu,memory,example.com/fpga", "allowedResources [example.com/fpga] would loosen"),
        ("GPU_RESOURCES", "nvidia.com/gpu", "gpuResources without amd.com/gpu, gpu.intel.com/*, nvidia.com/mig-*"),
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
    out = render(repo / "app", *args, env={"ARGOCD_ENV_NAMESPACE_POLICY": "error", "ARGOCD_ENV_MODE": "native"})
    assert out.code == 0, out
    (job,) = [o for o in documents(out.stdout) if o["kind"] == "TrainJob"]
    assert job == yaml.safe_load(TRAINJOB), "mode (not policy) is the tenant's to set"


def test_the_repositorys_config_cannot_loosen_the_platform_policy(repo: Path, tmp_path: Path) -> None:
    platform = write(tmp_path / "platform.yaml", PLATFORM.replace("96Gi", "32Gi"))
    write(
        repo / "app" / "fn.yaml",
        "apiVersion: fn.trainjob-resources.io/v1alpha1\nkind: TrainJobResources\nmetadata:\n  name: mine\n"
        "spec:\n  maxPerContainer: {memory: 1Ti}\n",
    )
    out = render(repo / "app", "--config", str(platform), ".")
    assert (out.code, out.stdout) == (1, ""), out
    assert "error: ./fn.yaml: maxPerContainer {memory: 1Ti} would loosen the platform's policy" in out.stderr, out


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


FAKE_KUSTOMIZE = """#!/bin/sh
echo $$ > {pids}
/usr/bin/env > {env}
echo "$@" > {args}
/bin/sleep 60 &
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
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_kustomize_runs_plain_with_an_empty_environment_and_a_time_limit(repo: Path, tmp_path: Path) -> None:
    pids, env, args = fake_kustomize(tmp_path)
    kustomization(repo / "app", "")
    out = render(repo / "app", "--timeout", "1", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert (out.code, out.stdout) == (1, ""), out
    assert (
        "error: .: `kustomize build` did not finish within the render's 1 s for kustomize builds; stopped" in out.stderr
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
        assert not alive(pid), "the build's whole process group is killed"


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
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(pids.read_text().split() if pids.exists() else []) < 2:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert b"stopped by signal 15" in stderr
    for pid in map(int, pids.read_text().split()):
        assert not alive(pid)
