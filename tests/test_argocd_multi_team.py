"""docs/argocd-multi-team.md, run: every ```sh block of the walkthrough runs as written (bash -euo
pipefail) from the root of a scratch copy of kustomization-examples/argocd-multi-team/ (the platform
repository it describes), and what each prints is checked; the plugin's own generate command renders
each team's folder with the variables Argo CD sets for the Application the ApplicationSet makes;
deploy/argocd-cmp is the plugin of kustomization-examples/argocd-cmp, and builds into Argo CD.

No network: in the scratch copy, the one remote resource of platform/kustomization.yaml (Argo CD's
install.yaml) is a stand-in repo-server Deployment, and deploy/argocd-cmp sits where the example's
relative path finds it. The pull-request report runs in a git repository made of the copy (main and
origin/main the example as it is), after the change the walkthrough describes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.cli.render import env_name
from trainjob_resources.options.config import FunctionConfig

from tests.examples import EXAMPLES, IMAGE, VENV_BIN, application_env, documents, kustomize_provider, load

ROOT = EXAMPLES.parent
DOC = ROOT / "docs" / "argocd-multi-team.md"
EXAMPLE = EXAMPLES / "argocd-multi-team"
DEPLOY = ROOT / "deploy" / "argocd-cmp"
ARGOCD_CM = ROOT / "deploy" / "argocd-cm"
CMP = EXAMPLES / "argocd-cmp"
TEAMS = ("team-a", "team-b")
ARGOCD_INSTALL = "https://raw.githubusercontent.com/argoproj/argo-cd/v2.14.11/manifests/install.yaml"
PLATFORM_DIR = "/etc/trainjob-resources"  # where plugin.yaml's generate reads the platform's files
TEAM_LABEL = "example.com/team"
# The change of the walkthrough's pull request: llm-finetune's data-loader from 32Gi to 48Gi.
CHANGED_FILE = "teams/team-a/trainjobs.yaml"
CHANGE = ("memory: 32Gi", "memory: 48Gi")
_SH = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)

# A stand-in for Argo CD's install.yaml: the repo-server Deployment with the two volumes Argo CD
# gives it for plugins (var-files, plugins), under another tag than the kustomization pins.
STAND_IN_INSTALL = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: argocd-repo-server
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: argocd-repo-server}
  template:
    metadata:
      labels: {app.kubernetes.io/name: argocd-repo-server}
    spec:
      containers:
        - name: argocd-repo-server
          image: quay.io/argoproj/argocd:v0.0.0-stand-in
      volumes:
        - {name: var-files, emptyDir: {}}
        - {name: plugins, emptyDir: {}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  labels: {app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}
"""


def sh_blocks() -> list[str]:
    return _SH.findall(DOC.read_text())


def fenced(language: str) -> list[Any]:
    return [yaml.safe_load(b) for lang, b in _FENCE.findall(DOC.read_text()) if lang == language]


def text_blocks() -> list[str]:
    return [b for lang, b in _FENCE.findall(DOC.read_text()) if lang == "text"]


def tool_path(kubectl: str) -> str:
    """The checkout's trainjob-resources first (as tests/test_readme_commands.py runs the README's),
    kubectl beside it, the system's tools after."""
    return os.pathsep.join([str(VENV_BIN), str(Path(kubectl).parent), "/usr/bin", "/bin"])


def stage(work: Path) -> Path:
    """A copy of the example as a repository root, laid out so that its path to deploy/argocd-cmp
    resolves, Argo CD's install a local stand-in; returns the root."""
    root = work / "repo" / EXAMPLE.relative_to(ROOT)
    shutil.copytree(EXAMPLE, root)
    for component in (DEPLOY, ARGOCD_CM):
        shutil.copytree(component, work / "repo" / component.relative_to(ROOT))
    kustomization = root / "platform" / "kustomization.yaml"
    text = kustomization.read_text()
    assert text.count(ARGOCD_INSTALL) == 1
    assert len(re.findall(r"^\s+- https?://", text, re.MULTILINE)) == 1, "one remote resource, Argo CD's"
    kustomization.write_text(text.replace(ARGOCD_INSTALL, "argocd-install.yaml"))
    (root / "platform" / "argocd-install.yaml").write_text(STAND_IN_INSTALL)
    return root


def git(root: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=ci", "-c", "user.email=ci@example.com", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *ident, *args], cwd=root, env=env, check=True, capture_output=True)


def make_the_change(root: Path) -> None:
    path = root / CHANGED_FILE
    text = path.read_text()
    assert text.count(CHANGE[0]) == 2, "limits and requests of the data-loader"
    path.write_text(text.replace(*CHANGE))


@pytest.fixture(scope="module")
def walkthrough(kubectl: str, tmp_path_factory: pytest.TempPathFactory) -> list[subprocess.CompletedProcess[str]]:
    """Each sh block, in the doc's order, run in one scratch copy (a git repository whose main and
    origin/main are the example as it is); the pull request's change is made before the block
    that compares with the base."""
    work = tmp_path_factory.mktemp("walkthrough")
    root = stage(work)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    done = []
    for block in sh_blocks():
        if "--against" in block:
            make_the_change(root)
        done.append(
            subprocess.run(
                ["bash", "-euo", "pipefail", "-c", block],
                cwd=root,
                capture_output=True,
                text=True,
                env={"PATH": tool_path(kubectl), "HOME": str(work)},
                check=False,
            )
        )
    return done


def block_output(walkthrough: list[subprocess.CompletedProcess[str]], marker: str) -> str:
    (index,) = [i for i, block in enumerate(sh_blocks()) if marker in block]
    return walkthrough[index].stdout


def test_the_walkthrough_has_each_step_and_only_known_blocks() -> None:
    """Each block is one the tests below check; a new block needs its check here."""
    known = {
        "kubectl kustomize platform": 1,
        "trainjob-resources render teams/team-a": 1,
        "trainjob-resources render teams/team-b": 1,
        "trainjob-resources explain teams/team-a --against ../base": 1,
    }
    blocks = sh_blocks()
    for marker, count in known.items():
        assert sum(marker in b for b in blocks) == count, marker
    assert all(sum(marker in b for marker in known) == 1 for b in blocks), blocks


def test_every_sh_block_runs_as_written(walkthrough: list[subprocess.CompletedProcess[str]]) -> None:
    for block, done in zip(sh_blocks(), walkthrough, strict=True):
        assert done.returncode == 0, f"`{block}` exited {done.returncode}:\n{done.stderr}"
        assert done.stdout, block


# -- the plugin, as Argo CD runs it for each Application of the ApplicationSet -------------------


def applicationset() -> dict[str, Any]:
    return load(EXAMPLE / "platform" / "applicationset.yaml")  # type: ignore[no-any-return]


def plugin() -> dict[str, Any]:
    return load(DEPLOY / "plugin.yaml")  # type: ignore[no-any-return]


def team_folders(root: Path) -> list[str]:
    """What the ApplicationSet's git directories generator matches in the repository."""
    (generator,) = [g["git"] for g in applicationset()["spec"]["generators"]]
    (directory,) = generator["directories"]
    return sorted(str(p.relative_to(root)) for p in root.glob(directory["path"]) if p.is_dir())


def application(folder: str) -> dict[str, Any]:
    """The Application the ApplicationSet's template makes for a folder (its path parameters)."""
    spec = applicationset()["spec"]
    assert spec["goTemplate"] is True
    text = yaml.safe_dump(spec["template"])
    text = text.replace("{{.path.basename}}", Path(folder).name).replace("{{.path.path}}", folder)
    assert "{{" not in text, text
    return yaml.safe_load(text)  # type: ignore[no-any-return]


def plugin_env(app: dict[str, Any]) -> dict[str, str]:
    """What Argo CD's repo-server sets for the plugin (besides its own)."""
    return application_env(app)


def generators() -> dict[str, list[str]]:
    """The platform kustomization's ConfigMaps: name -> the files it lists."""
    kustomization = load(EXAMPLE / "platform" / "kustomization.yaml")
    return {g["name"]: g["files"] for g in kustomization["configMapGenerator"]}


def mount_platform_files(root: Path, etc: Path) -> None:
    """The platform's ConfigMaps as the sidecar sees them at /etc/trainjob-resources (here ``etc``):
    the mounts of deploy/argocd-cmp's patch, a subPath as a plain file, a whole ConfigMap as kubelet
    writes it (each key a link into ``..data``, a link to a timestamped folder)."""
    pod = load(DEPLOY / "repo-server.yaml")["spec"]["template"]["spec"]
    volumes = {v["name"]: v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
    (container,) = pod["containers"]
    mounted = 0
    for mount in container["volumeMounts"]:
        if not mount["mountPath"].startswith(PLATFORM_DIR + "/"):
            continue
        files = generators()[volumes[mount["name"]]]
        target = etc / mount["mountPath"][len(PLATFORM_DIR) + 1 :]
        target.parent.mkdir(parents=True, exist_ok=True)
        if "subPath" in mount:
            (source,) = [f for f in files if Path(f).name == mount["subPath"]]
            shutil.copy(root / "platform" / source, target)
        else:
            data = target / "..2025_01_01_00_00_00.000000000"
            data.mkdir(parents=True)
            (target / "..data").symlink_to(data.name)
            for source in files:
                shutil.copy(root / "platform" / source, data / Path(source).name)
                (target / Path(source).name).symlink_to(f"..data/{Path(source).name}")
        mounted += 1
    assert mounted == 2, "the platform's policy and its runtimes"


def generate_command(etc: Path) -> list[str]:
    """plugin.yaml's generate, reading the platform's files from ``etc``."""
    step = plugin()["spec"]["generate"]
    command = [*step["command"], *step["args"]]
    script = command[-1]
    assert script.count(f"p={PLATFORM_DIR}\n") == 1
    return [*command[:-1], script.replace(f"p={PLATFORM_DIR}\n", f"p={shlex.quote(str(etc))}\n")]


def run_plugin(root: Path, folder: str, kubectl: str, work: Path) -> subprocess.CompletedProcess[str]:
    """init, then generate, in the team's folder as the CMP server runs them: only the image's
    tools and the sidecar's kustomize on PATH, Argo CD's variables set."""
    etc = work / "etc-trainjob-resources"
    if not etc.exists():
        mount_platform_files(root, etc)
    tools = work / "kustomize-provider" / "bin"
    if not tools.exists():
        tools = kustomize_provider(kubectl, work)
    env = {
        "PATH": os.pathsep.join([str(tools), str(VENV_BIN), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(work),
        **plugin_env(application(folder)),
    }
    init = plugin()["spec"]["init"]
    started = subprocess.run(
        [*init["command"], *init["args"]], cwd=root / folder, capture_output=True, text=True, env=env, check=False
    )
    assert started.returncode == 0, started.stderr
    return subprocess.run(
        generate_command(etc), cwd=root / folder, capture_output=True, text=True, env=env, check=False
    )


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return stage(tmp_path_factory.mktemp("plugin"))


def test_the_applicationset_makes_one_application_per_team(staged: Path) -> None:
    assert team_folders(staged) == [f"teams/{t}" for t in TEAMS]
    apps = [application(f) for f in team_folders(staged)]
    assert [a["metadata"]["name"] for a in apps] == [f"trainjobs-{t}" for t in TEAMS]
    assert [a["spec"]["destination"]["namespace"] for a in apps] == list(TEAMS)
    assert [a["spec"]["source"]["path"] for a in apps] == [f"teams/{t}" for t in TEAMS]


def test_each_team_renders_derived_runtimes_and_repointed_trainjobs(staged: Path, kubectl: str, tmp_path: Path) -> None:
    expected_jobs = {"team-a": {"llm-finetune": True}, "team-b": {"vision-train": True, "vision-eval": False}}
    for team in TEAMS:
        done = run_plugin(staged, f"teams/{team}", kubectl, tmp_path)
        assert done.returncode == 0, done.stderr
        objects = documents(done.stdout)
        derived = {o["metadata"]["name"]: o for o in objects if o["kind"] == "TrainingRuntime"}
        assert derived and all(n.startswith("torch-distributed-") for n in derived), objects
        for runtime in derived.values():
            metadata = runtime["metadata"]
            assert metadata["namespace"] == team
            assert metadata["labels"][TEAM_LABEL] == team, "the ApplicationSet's env reached the runtime"
            assert metadata["annotations"]["fn.trainjob-resources.io/derived-from"] == (
                "ClusterTrainingRuntime/torch-distributed"
            )
        jobs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "TrainJob"}
        assert set(jobs) == set(expected_jobs[team])
        for name, sized in expected_jobs[team].items():
            job = jobs[name]
            assert job["metadata"]["namespace"] == team
            ref = job["spec"]["runtimeRef"]
            if sized:
                assert (ref["kind"], ref["name"]) in {("TrainingRuntime", n) for n in derived}, ref
                assert objects.index(job) > objects.index(derived[ref["name"]])
                # Its patches set only resources: none is left (a client-side apply would replace Kueue's).
                assert "runtimePatches" not in job["spec"], job["spec"]
            else:
                assert ref == {"name": "torch-distributed"}, "unsized: still the platform's runtime"
        assert not [o for o in objects if o["kind"] in ("ClusterTrainingRuntime", "TrainJobResources")]


def test_the_walkthroughs_render_is_what_the_plugin_syncs_but_for_the_team_label(
    walkthrough: list[subprocess.CompletedProcess[str]], staged: Path, kubectl: str, tmp_path: Path
) -> None:
    for team in TEAMS:
        synced = documents(run_plugin(staged, f"teams/{team}", kubectl, tmp_path).stdout)
        for obj in synced:
            if obj["kind"] == "TrainingRuntime":
                del obj["metadata"]["labels"][TEAM_LABEL]
        assert documents(block_output(walkthrough, f"render teams/{team}")) == synced


def test_team_as_cap_refuses_an_oversized_job_with_the_message_the_walkthrough_shows(
    kubectl: str, tmp_path: Path
) -> None:
    root = stage(tmp_path)
    jobs = root / "teams" / "team-a" / "trainjobs.yaml"
    jobs.write_text(jobs.read_text().replace("memory: 32Gi", "memory: 96Gi"))
    done = run_plugin(root, "teams/team-a", kubectl, tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    problems = [line for line in lines if not line.startswith("note: ")]
    assert all(line.startswith("application trainjobs-team-a: ") for line in problems), lines
    assert sum("above the policy's maximum per container, 64Gi" in line for line in problems) == 2
    (shown,) = [b for b in text_blocks() if "application trainjobs-team-a:" in b]
    for line in shown.splitlines():
        parts = line.split("...")
        assert any(all(p in problem for p in parts) for problem in problems), line
    # team b's folder, under the platform's 128Gi only, takes the same 96Gi
    team_b = (root / "teams" / "team-b" / "trainjobs.yaml").read_text()
    assert "memory: 96Gi" in team_b


def test_the_pull_request_report_shows_the_changed_trainjob(
    walkthrough: list[subprocess.CompletedProcess[str]],
) -> None:
    report = block_output(walkthrough, "--against ../base")
    rows = [line for line in report.splitlines() if line.startswith("| team-a/llm-finetune |")]
    assert rows and rows[0].split(" | ")[1] == "changed", report
    assert "memory 64Gi → 96Gi" in rows[0], "2 pods, data-loader 32Gi → 48Gi"
    (shown,) = [b for b in text_blocks() if b.startswith("**ok**")]
    assert shown in report  # after `git worktree add`'s own line
    assert "#### TrainJobs to recreate" in shown, "the data-loader's override edited: another derived runtime"


# -- deploy/argocd-cmp --------------------------------------------------------------------------


def test_the_component_is_the_plugin_of_the_argocd_cmp_example() -> None:
    """plugin.yaml is the example's, byte for byte; the patch is the example's sidecar with the
    platform's two ConfigMaps mounted, and nothing else changed."""
    assert (DEPLOY / "plugin.yaml").read_bytes() == (CMP / "plugin.yaml").read_bytes()
    ours = load(DEPLOY / "repo-server.yaml")
    theirs = load(CMP / "sidecar.yaml")
    assert ours["metadata"] == theirs["metadata"] == {"name": "argocd-repo-server"}
    pod, example = ours["spec"]["template"]["spec"], theirs["spec"]["template"]["spec"]
    assert pod["initContainers"] == example["initContainers"]
    (container,), (expected,) = pod["containers"], example["containers"]
    added = [m for m in container["volumeMounts"] if m not in expected["volumeMounts"]]
    assert {k: v for k, v in container.items() if k != "volumeMounts"} == {
        k: v for k, v in expected.items() if k != "volumeMounts"
    }
    assert [m for m in container["volumeMounts"] if m not in added] == expected["volumeMounts"]
    assert {m["mountPath"] for m in added} == {f"{PLATFORM_DIR}/platform.yaml", f"{PLATFORM_DIR}/runtimes"}
    assert all(m["readOnly"] is True for m in added)
    new_volumes = [v for v in pod["volumes"] if v not in example["volumes"]]
    assert {v["name"] for v in new_volumes} == {m["name"] for m in added}
    assert all(set(v) == {"name", "configMap"} for v in new_volumes), "not optional"
    kustomization = load(DEPLOY / "kustomization.yaml")
    assert kustomization["kind"] == "Component"
    (patch,) = kustomization["patches"]
    assert patch["target"] == {"group": "apps", "version": "v1", "kind": "Deployment", "name": "argocd-repo-server"}


def test_the_applicationset_names_the_plugin_and_only_known_documented_options() -> None:
    spec = plugin()
    source = applicationset()["spec"]["template"]["spec"]["source"]
    assert source["plugin"]["name"] == spec["metadata"]["name"]
    env = {e["name"] for e in source["plugin"]["env"]}
    options = {env_name(f.alias or n): f.alias or n for n, f in FunctionConfig.model_fields.items()}
    config_doc = (ROOT / "docs" / "config.md").read_text()
    doc = DOC.read_text()
    for name in env:
        option = options[f"ARGOCD_ENV_{name}"]  # a KeyError: not an option the plugin accepts
        assert f"| `{option}` |" in config_doc, option
        assert f"`ARGOCD_ENV_{name}`" in doc and f"`{option}`" in doc


def test_the_platform_build_adds_the_sidecar_and_its_configmaps(
    walkthrough: list[subprocess.CompletedProcess[str]],
) -> None:
    """`kubectl kustomize platform`: the component's patch applied to Argo CD's repo-server (the
    stand-in), the plugin's ConfigMap and the platform's two, referenced by their hashed names."""
    objects = documents(block_output(walkthrough, "kubectl kustomize platform"))
    assert {o["metadata"].get("namespace") for o in objects} == {"argocd"}
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["metadata"]["name"] == "argocd-repo-server"
    pod = deployment["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    sidecar = containers["trainjob-resources"]
    assert (sidecar["image"], sidecar["command"]) == (IMAGE, ["/var/run/argocd/argocd-cmp-server"])
    (init,) = pod["initContainers"]
    assert init["name"] == "trainjob-resources-kustomize"
    assert init["image"] == containers["argocd-repo-server"]["image"] == "quay.io/argoproj/argocd:v2.14.11"
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert {m["name"] for m in sidecar["volumeMounts"]} <= set(volumes)
    configmaps = {o["metadata"]["name"]: o["data"] for o in objects if o["kind"] == "ConfigMap"}
    # deploy/argocd-cm's resource customizations, merged into Argo CD's own argocd-cm.
    (argocd_cm,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "argocd-cm"]
    assert argocd_cm["metadata"]["labels"] == {
        "app.kubernetes.io/name": "argocd-cm",
        "app.kubernetes.io/part-of": "argocd",
    }
    assert argocd_cm["data"] == load(ARGOCD_CM / "argocd-cm.yaml")["data"]
    del configmaps["argocd-cm"]

    def data(volume: str) -> dict[str, str]:
        return configmaps[volumes[volume]["configMap"]["name"]]  # type: ignore[no-any-return]

    by_path = {m["mountPath"]: m["name"] for m in sidecar["volumeMounts"]}
    assert data(by_path["/home/argocd/cmp-server/config/plugin.yaml"]) == {
        "plugin.yaml": (DEPLOY / "plugin.yaml").read_text()
    }
    platform = EXAMPLE / "platform"
    assert data(by_path[f"{PLATFORM_DIR}/platform.yaml"]) == {
        "platform.yaml": (platform / "trainjob-resources" / "platform.yaml").read_text()
    }
    runtimes = data(by_path[f"{PLATFORM_DIR}/runtimes"])
    assert runtimes == {p.name: p.read_text() for p in (platform / "trainjob-resources" / "runtimes").iterdir()}
    assert all(re.fullmatch(r"trainjob-resources-(plugin|platform|runtimes)-[a-z0-9]{10}", n) for n in configmaps)
    (appset,) = [o for o in objects if o["kind"] == "ApplicationSet"]
    assert appset["spec"] == applicationset()["spec"]
    served = yaml.safe_load(data(by_path["/home/argocd/cmp-server/config/plugin.yaml"])["plugin.yaml"])
    name = served["metadata"]["name"]
    assert appset["spec"]["template"]["spec"]["source"]["plugin"]["name"] == name


# -- the walkthrough's YAML is the example's ---------------------------------------------------


def test_the_walkthroughs_yaml_is_the_examples() -> None:
    kustomization, policy, template, trainjob = fenced("yaml")
    files = load(EXAMPLE / "platform" / "kustomization.yaml")
    assert kustomization["components"] == [
        f"https://github.com/trainjob-resources/trainjob-resources//deploy/{c.name}?ref=main"
        for c in (DEPLOY, ARGOCD_CM)
    ]
    assert files["components"] == [os.path.relpath(c, EXAMPLE / "platform") for c in (DEPLOY, ARGOCD_CM)]
    shown = {k: v for k, v in kustomization.items() if k != "components"}
    assert shown == {k: v for k, v in files.items() if k not in ("components", "apiVersion", "kind")}
    assert policy["spec"] == load(EXAMPLE / "platform" / "trainjob-resources" / "platform.yaml")["spec"]

    def subset(part: Any, whole: Any) -> bool:
        if isinstance(part, dict):
            return isinstance(whole, dict) and all(k in whole and subset(v, whole[k]) for k, v in part.items())
        return bool(part == whole)

    assert subset(template["template"], applicationset()["spec"]["template"])
    assert trainjob == documents((EXAMPLE / CHANGED_FILE).read_text())[0]
