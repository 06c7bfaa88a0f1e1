"""The integration examples in kustomization-examples/: how CI builds each one with the real tool
(tests/test_examples.py compares each build with its ``expected.yaml``; ``make goldens`` rewrites them).

kubectl's built-in kustomize cannot run exec KRM functions: it has no ``--enable-exec`` and skips
them without a word. So the exec examples are built the way kustomize builds the container
example: their ``exec`` stanza becomes ``container: image:``, and kustomize runs the image with
the real container engine (tests/engine.py; always in CI). Without an engine (outside CI, and to
regenerate the goldens) a stand-in for the docker CLI runs the function of this checkout as user
nobody instead, after checking the arguments kustomize passes (no network, no mounts, ``--user
nobody``): the function still gets exactly the ResourceList kustomize makes, and kustomize still
post-processes its output. The tests also build the exec examples for real, as written, with the
standalone kustomize builds of `make cluster` (``--enable-exec``; tests/cluster/standalone.py).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from tests.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "kustomization-examples"
IMAGE = "ghcr.io/trainjob-resources/trainjob-resources:0.1.0"
VENV_BIN = Path(sys.executable).parent
WRAPPER = "run-trainjob-resources"

KUSTOMIZE_BUILDS = {"exec-data-loader": ".", "overlay-multi": "overlays/prod", "container": "."}
# Further overlays of an example, each with its golden beside its kustomization (expected.yaml).
OVERLAY_BUILDS = {"overlay-multi": ("overlays/team-a",)}
EXEC_EXAMPLES = ("exec-data-loader", "overlay-multi")
KPT_PACKAGE = EXAMPLES / "kpt" / "package"
KPT_IMAGE_PACKAGE = EXAMPLES / "kpt-image" / "package"
CMP = EXAMPLES / "argocd-cmp"  # the plugin (plugin.yaml, sidecar.yaml) and a folder of plain manifests
CMP_EXAMPLES = ("argocd-cmp", "argocd-cmp-kustomize")  # its Applications: plain manifests, an overlay
KUSTOMIZE_STAND_IN = ROOT / "tests" / "kustomize-stand-in" / "kustomize"

_EXEC_STANZA = re.compile(r"exec:\n(\s+)path: \S+")
FUNCTION_ANNOTATION = "config.kubernetes.io/function"

_SHIM = '''#!{python}
"""A stand-in for the docker CLI: what kustomize's container runtime runs, without an engine."""
import os
import subprocess
import sys

args = sys.argv[1:]
with open({log!r}, "a") as log:
    log.write(" ".join(args) + "\\n")


def value_of(flag):
    return args[args.index(flag) + 1] if flag in args[:-1] else None


problems = []
if not args or args[0] != "run" or "--rm" not in args or "-i" not in args:
    problems.append("expected `docker run --rm -i ...`")
if value_of("--network") != "none":
    problems.append("expected --network none")
if value_of("--user") != "nobody":
    problems.append("expected --user nobody")
if any(a in ("-v", "--volume", "--mount") or a.startswith(("--volume=", "--mount=")) for a in args):
    problems.append("expected no mounts")
if not args or args[-1] != {image!r}:
    problems.append("expected the image {image}")
if problems:
    sys.stderr.write("docker stand-in: " + "; ".join(problems) + ": got " + " ".join(args) + "\\n")
    sys.exit(125)
env = {{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}}
for i, arg in enumerate(args[:-1]):
    if arg == "-e" and "=" in args[i + 1]:
        key, value = args[i + 1].split("=", 1)
        env[key] = value
command = [{python!r}, "-m", "trainjob_resources"]
if {as_nobody!r}:
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
sys.exit(subprocess.run(command, env=env, cwd="/").returncode)
'''


def to_container(text: str) -> str:
    """A transformer config's exec stanza turned into the container stanza of the image."""
    return _EXEC_STANZA.sub(lambda m: f"container:\n{m.group(1)}image: {IMAGE}", text)


def open_to_others(path: Path) -> bool:
    """Whether any user can reach ``path`` (every folder above it searchable) and read it."""
    path = path.resolve()
    if not path.exists() or not path.stat().st_mode & stat.S_IROTH:
        return False
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)


def interpreter_open_to_others(python: str) -> bool:
    """Whether user 65534 can run ``python`` with its own standard library."""
    stdlib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return open_to_others(Path(python)) and open_to_others(Path(stdlib) / "os.py")


def write_docker_shim(bin_dir: Path, log: Path) -> None:
    """The docker stand-in runs the function as user nobody, as kustomize asks, where that user can
    run this checkout's interpreter (not when it lies under root's home, as with pyenv)."""
    as_nobody = (
        os.geteuid() == 0
        and interpreter_open_to_others(sys.executable)
        and open_to_others(Path(sys.prefix) / "pyvenv.cfg")
        and open_to_others(ROOT / "function" / "trainjob_resources" / "__init__.py")
    )
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "docker"
    shim.write_text(_SHIM.format(python=sys.executable, log=str(log), image=IMAGE, as_nobody=as_nobody))
    shim.chmod(0o755)


def expected_path(example: str, build: str | None = None) -> Path:
    """The golden of an example's build: beside the example's README, or beside an overlay's kustomization."""
    return EXAMPLES / example / (build or "") / "expected.yaml"


def overlay_builds() -> list[tuple[str, str]]:
    return [(example, build) for example, builds in OVERLAY_BUILDS.items() for build in builds]


def kubectl_build(
    kubectl: str, example: str, work: Path, engine: Engine | None = None, build: str | None = None
) -> str:
    """``kubectl kustomize --enable-alpha-plugins`` on a copy of the example (its ``build`` folder,
    by default the one of KUSTOMIZE_BUILDS), exec functions run through the container runtime: the
    real engine's image, else the stand-in, which fails the build unless the function really ran."""
    copy = work / example
    shutil.copytree(EXAMPLES / example, copy)
    for config in copy.rglob("*.yaml"):
        text = config.read_text()
        if FUNCTION_ANNOTATION in text:
            config.write_text(to_container(text) if engine is None else engine.localized(to_container(text)))
    log = work / "docker.log"
    if engine is None:
        write_docker_shim(work / "bin", log)
        env = {**os.environ, "PATH": f"{work / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    else:
        env = engine.env
    done = subprocess.run(
        [kubectl, "kustomize", "--enable-alpha-plugins", str(copy / (build or KUSTOMIZE_BUILDS[example]))],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"kubectl kustomize failed ({done.returncode}):\n{done.stderr}")
    if engine is None and (not log.is_file() or not log.read_text().strip()):
        raise AssertionError(f"kubectl kustomize did not run the function for {example}")
    return done.stdout


def kustomize_exec_build(kustomize: str, example: str, build: str | None = None) -> str:
    """A standalone kustomize running the exec function for real, in the example as written."""
    done = subprocess.run(
        [
            kustomize,
            "build",
            "--enable-alpha-plugins",
            "--enable-exec",
            str(EXAMPLES / example / (build or KUSTOMIZE_BUILDS[example])),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"kustomize build failed ({done.returncode}):\n{done.stderr}")
    return done.stdout


def tool_env() -> dict[str, str]:
    """The environment for kpt and the plugin: the function of this checkout on PATH."""
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def kpt_render(
    kpt: str, package: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``kpt fn render --allow-exec`` run from the package folder (kpt resolves exec paths
    against the current folder); ``env`` for image functions reaches the container engine."""
    return subprocess.run(
        [kpt, "fn", "render", "--allow-exec", *extra],
        cwd=package,
        capture_output=True,
        text=True,
        env=tool_env() if env is None else env,
        check=False,
    )


def kpt_copy(package: Path, copy: Path, engine: Engine | None = None) -> Path:
    """A copy of the package; its Kptfile naming the engine's image, if one is given."""
    shutil.copytree(package, copy)
    if engine is not None:
        kptfile = copy / "Kptfile"
        kptfile.write_text(engine.localized(kptfile.read_text()))
    return copy


def kpt_unwrapped(kpt: str, work: Path, package: Path = KPT_PACKAGE, engine: Engine | None = None) -> str:
    copy = kpt_copy(package, work / "package", engine)
    done = kpt_render(kpt, copy, "--output", "unwrap", env=None if engine is None else engine.env)
    if done.returncode != 0:
        raise AssertionError(f"kpt fn render failed ({done.returncode}):\n{done.stderr}")
    return done.stdout if engine is None else engine.published(done.stdout)


def kpt_image_expected(kpt_expected: str) -> str:
    """The kpt-image package's golden: the kpt package's, whose first document is the Kptfile,
    with kpt-image's Kptfile instead (the two packages differ in that file only)."""
    _, rest = kpt_expected.split("---\n", 1)
    return (KPT_IMAGE_PACKAGE / "Kptfile").read_text() + "---\n" + rest


def tree(root: Path) -> dict[str, bytes]:
    """Every file below ``root``: its path relative to ``root``, its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    namespace = "" if obj["kind"] == "ClusterTrainingRuntime" else obj["metadata"].get("namespace", "")
    return (obj["kind"], namespace, obj["metadata"]["name"])


def _has_key(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_has_key(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_has_key(v, key) for v in value)
    return False


def assert_rendered(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every TrainJob has no ``resources`` left in its patches and its runtimeRef resolves to a
    runtime earlier in the same output (applied in order, the TrainJob webhook finds it); returns
    the TrainJobs."""
    trainjobs = [o for o in objects if o.get("kind") == "TrainJob"]
    assert trainjobs, "no TrainJob in the output"
    for position, job in enumerate(objects):
        if job.get("kind") != "TrainJob":
            continue
        name = job["metadata"]["name"]
        assert not _has_key(job["spec"].get("runtimePatches"), "resources"), f"TrainJob {name} still has resources"
        ref = job["spec"]["runtimeRef"]
        kind = ref.get("kind", "ClusterTrainingRuntime")
        namespace = job["metadata"].get("namespace", "") if kind == "TrainingRuntime" else ""
        before = {identity(o) for o in objects[:position] if o.get("kind") in RUNTIME_KINDS}
        assert (kind, namespace, ref["name"]) in before, (
            f"TrainJob {name}: {kind} {ref['name']} does not come before it"
        )
    return trainjobs


RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")


def application(example: str = CMP.name) -> dict[str, Any]:
    return load(EXAMPLES / example / "application.yaml")  # type: ignore[no-any-return]


def argocd_env(example: str = CMP.name) -> dict[str, str]:
    """What Argo CD's repo-server sets for the plugin of the example's application.yaml (besides
    its own)."""
    return application_env(application(example))


def application_env(app: dict[str, Any]) -> dict[str, str]:
    """What Argo CD's repo-server sets for the plugin of an Application (besides its own)."""
    source = app["spec"]["source"]
    env = {
        "ARGOCD_APP_NAME": app["metadata"]["name"],
        "ARGOCD_APP_NAMESPACE": app["spec"]["destination"]["namespace"],
        "ARGOCD_APP_PROJECT_NAME": app["spec"]["project"],
        "ARGOCD_APP_REVISION": "0123456789abcdef0123456789abcdef01234567",
        "ARGOCD_APP_SOURCE_PATH": source["path"],
        "ARGOCD_APP_SOURCE_REPO_URL": source["repoURL"],
        "ARGOCD_APP_SOURCE_TARGET_REVISION": source["targetRevision"],
        "KUBE_VERSION": "1.32.4",
        "KUBE_API_VERSIONS": "v1,apps/v1,trainer.kubeflow.org/v1alpha1",
    }
    for entry in source["plugin"].get("env") or []:
        env[f"ARGOCD_ENV_{entry['name']}"] = entry["value"]
    return env


def cmp_command(stage: str) -> list[str]:
    """One of plugin.yaml's commands: discover, init or generate."""
    spec = load(CMP / "plugin.yaml")["spec"]
    step = spec["discover"]["find"] if stage == "discover" else spec[stage]
    return [*step["command"], *(step.get("args") or [])]


def sidecar_containers() -> tuple[dict[str, Any], dict[str, Any]]:
    """sidecar.yaml's init container (the one that copies kustomize) and plugin container."""
    pod = load(CMP / "sidecar.yaml")["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    (container,) = pod["containers"]
    return init, container


def sidecar_kustomize_dir() -> str:
    """Where the plugin container mounts the folder into which the init container copies kustomize."""
    init, container = sidecar_containers()
    (volume,) = {m["name"] for m in init["volumeMounts"]}
    (path,) = [m["mountPath"] for m in container["volumeMounts"] if m["name"] == volume]
    return str(path)


def sidecar_path() -> str:
    """The PATH the plugin container sets (kustomize's folder first)."""
    _, container = sidecar_containers()
    (path,) = [e["value"] for e in container["env"] if e["name"] == "PATH"]
    return str(path)


def stage_source(example: str, work: Path) -> Path:
    """A copy of the example laid out as in the repository, as Argo CD unpacks it for the plugin
    (goldens left out); returns the Application's source folder in it."""
    repo = work / "repo"
    shutil.copytree(EXAMPLES / example, repo / EXAMPLES.name / example, ignore=shutil.ignore_patterns("expected.yaml"))
    return repo / str(application(example)["spec"]["source"]["path"])


def kustomize_provider(kubectl: str, work: Path) -> Path:
    """A folder with ``kustomize`` (the kubectl stand-in for Argo CD's kustomize) and ``../kubectl``
    (the real, static kubectl) beside it, laid out as the image tests mount them; returns the folder."""
    tools = work / "kustomize-provider"
    (tools / "bin").mkdir(parents=True)
    shutil.copy2(KUSTOMIZE_STAND_IN, tools / "bin" / "kustomize")
    (tools / "kubectl").symlink_to(os.path.realpath(kubectl))
    return tools / "bin"


def cmp_run(
    stage: str, app: Path, env: dict[str, str], kustomize_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """One of plugin.yaml's commands the way the CMP server runs it: in the source folder, with
    only the image's tools on PATH (and the sidecar's kustomize, if given) and Argo CD's variables
    set."""
    path = [str(VENV_BIN), "/usr/local/bin", "/usr/bin", "/bin"]
    if kustomize_dir is not None:
        path.insert(0, str(kustomize_dir))
    return subprocess.run(
        cmp_command(stage),
        cwd=app,
        capture_output=True,
        text=True,
        env={"PATH": os.pathsep.join(path), "HOME": str(app), **env},
        check=False,
    )


def cmp_generate(work: Path, example: str = CMP.name, kubectl: str | None = None) -> str:
    """The plugin's init and generate on a copy of the example (an overlay needs ``kubectl`` for
    the kustomize stand-in)."""
    app = stage_source(example, work)
    tools = kustomize_provider(kubectl, work) if kubectl is not None else None
    env = argocd_env(example)
    for stage in ("init", "generate"):
        done = cmp_run(stage, app, env, tools)
        if done.returncode != 0:
            raise AssertionError(f"plugin {stage} failed ({done.returncode}):\n{done.stderr}")
    return done.stdout
