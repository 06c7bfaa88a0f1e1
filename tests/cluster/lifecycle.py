"""GitOps lifecycle scenarios on the local control plane (tests/cluster/SCENARIOS.md):

    .venv/bin/python -m tests.cluster.lifecycle SCENARIO_DIR [--via kustomize|render|kpt] [--trainer VERSION]

A scenario is a folder of numbered steps (``01-<name>/``, ``02-<name>/``, ...), each a whole repository
state. For each step the runner renders every Application of the scenario the chosen way, applies the
output as Argo CD does (server-side apply by sync wave, then prune), lets Trainer reconcile, and checks
what the function promises: every object accepted, nothing pruned that a live TrainJob names, runtimeRefs
kept, and every JobSet's containers sized as ``trainjob-resources explain`` predicted. One JSON line per
check on stdout, then ``N passed, M failed``; exit 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from trainjob_resources.kube.quantity import QuantityError, parse_quantity

from tests.cluster.controlplane import (
    DEFAULT_TRAINER,
    JOBSET,
    TRAINJOB,
    ControlPlane,
    KubectlError,
    Unavailable,
    add_trainer_option,
    tool_paths,
)

ROOT = Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "kustomization-examples" / "exec-data-loader" / "run-trainjob-resources"
VIAS = ("kustomize", "render", "kpt")
STEP = re.compile(r"^(\d+)-[A-Za-z0-9._-]+$")
KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SCENARIO_FILES = {"cluster.yaml", "expect.yaml", "scenario.yaml", "README.md"}
FUNCTION_ANNOTATION = "config.kubernetes.io/function"
LOCAL_CONFIG = "config.kubernetes.io/local-config"
WAVE = "argocd.argoproj.io/sync-wave"
FUNCTION_KIND = "TrainJobResources"
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
# Trainer's webhook, for a TrainJob whose runtime its cache has not seen (yet)
NOT_YET = "must be created before the TrainJob is created"
CLUSTER_SCOPED = {"ClusterTrainingRuntime", "Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass"}
RESOURCE_OF = {
    "TrainJob": TRAINJOB,
    "TrainingRuntime": "trainingruntimes.trainer.kubeflow.org",
    "ClusterTrainingRuntime": "clustertrainingruntimes.trainer.kubeflow.org",
}
# Argo CD applies the objects of one sync wave kind by kind in this order, then kinds it does not know
# by name (gitops-engine, pkg/sync/sync_tasks.go, kindOrder): TrainJob sorts before TrainingRuntime,
# which is why the function puts derived runtimes a wave earlier.
ARGOCD_KIND_ORDER = (
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
)  # fmt: skip
# The kustomize sort every example uses (kustomization-examples/README.md#apply-order).
SORT_OPTIONS: dict[str, Any] = {
    "order": "legacy",
    "legacySortOptions": {
        "orderFirst": [
            "Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
            "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap", "Secret",
            "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim",
            "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget", "ClusterTrainingRuntime",
            "TrainingRuntime",
        ],
        "orderLast": ["TrainJob", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"],
    },
}  # fmt: skip


class ScenarioError(Exception):
    """The scenario folder itself is malformed (not a finding about the function)."""


# The scenario ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Application:
    """One Argo CD Application: a source path in each step's repository and a destination namespace."""

    name: str
    path: str
    namespace: str
    env: dict[str, str] = field(default_factory=dict)
    runtimes: str | None = None  # a folder of the step: `--runtimes` for render, local-config copies otherwise


@dataclass(frozen=True)
class Refusal:
    """One refusal expect.yaml announces: the step, the object, and a part of the cluster's message."""

    step: str
    kind: str
    name: str
    message: str
    namespace: str | None = None
    vias: tuple[str, ...] = VIAS

    def matches(self, step: str, obj: dict[str, Any], message: str, namespaces: dict[str, str]) -> bool:
        meta = obj.get("metadata") or {}
        namespace = self.namespace and namespaces.get(self.namespace, self.namespace)
        return (
            self.step == step
            and self.kind == obj.get("kind")
            and self.name == meta.get("name")
            and (namespace is None or namespace == meta.get("namespace"))
            and self.message in message
        )


@dataclass(frozen=True)
class RenderError:
    """A render expect.yaml announces will fail (the function refuses the step): a part of its message."""

    step: str
    message: str
    application: str | None = None
    vias: tuple[str, ...] = VIAS


@dataclass
class Scenario:
    root: Path
    steps: list[Path]
    applications: list[Application]
    namespaces: list[str]
    refusals: list[Refusal]
    render_errors: list[RenderError] = field(default_factory=list)

    @classmethod
    def load(cls, root: Path) -> Scenario:
        if not root.is_dir():
            raise ScenarioError(f"{root}: not a folder")
        steps = sorted((p for p in root.iterdir() if p.is_dir() and STEP.match(p.name)), key=lambda p: p.name)
        if not steps:
            raise ScenarioError(f"{root}: no step folders (01-<name>/, 02-<name>/, ...)")
        numbers = [int(STEP.match(p.name).group(1)) for p in steps]  # type: ignore[union-attr]
        if len(set(numbers)) != len(numbers):
            raise ScenarioError(f"{root}: two steps share a number: {[p.name for p in steps]}")
        config = _yaml_file(root / "scenario.yaml") or {}
        default = {"name": root.name, "namespace": config.get("namespace", "ml-team")}
        apps = [
            Application(
                name=str(a.get("name") or root.name),
                path=str(a.get("path") or "."),
                namespace=str(a["namespace"]),
                env={str(k): str(v) for k, v in (a.get("env") or {}).items()},
                runtimes=str(a["runtimes"]) if a.get("runtimes") else None,
            )
            for a in config.get("applications") or [default]
        ]
        namespaces = sorted({*(str(n) for n in config.get("namespaces") or []), *(a.namespace for a in apps)})
        expect = _yaml_file(root / "expect.yaml") or {}
        refusals = []
        for entry in expect.get("refusals") or []:
            missing = {"step", "kind", "name", "message"} - set(entry)
            if missing:
                raise ScenarioError(f"{root / 'expect.yaml'}: a refusal lacks {sorted(missing)}: {entry}")
            if not any(s.name == entry["step"] for s in steps):
                raise ScenarioError(f"{root / 'expect.yaml'}: no step {entry['step']!r}")
            refusals.append(
                Refusal(
                    str(entry["step"]),
                    str(entry["kind"]),
                    str(entry["name"]),
                    str(entry["message"]),
                    entry.get("namespace"),
                    _vias(entry, root),
                )
            )
        render_errors = []
        for entry in expect.get("renderErrors") or []:
            if not {"step", "message"} <= set(entry) or not any(s.name == entry["step"] for s in steps):
                raise ScenarioError(
                    f"{root / 'expect.yaml'}: a renderErrors entry needs a step of the scenario and a message: {entry}"
                )
            render_errors.append(
                RenderError(str(entry["step"]), str(entry["message"]), entry.get("application"), _vias(entry, root))
            )
        return cls(root, steps, apps, namespaces, refusals, render_errors)


def _vias(entry: dict[str, Any], root: Path) -> tuple[str, ...]:
    vias = entry.get("via", list(VIAS))
    vias = [vias] if isinstance(vias, str) else vias
    if not isinstance(vias, list) or not vias or not set(vias) <= set(VIAS):
        raise ScenarioError(f"{root / 'expect.yaml'}: via must be some of {list(VIAS)}: {entry}")
    return tuple(vias)


def _yaml_file(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) if path.is_file() else None


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def with_namespaces(text: str, namespaces: dict[str, str]) -> str:
    """Every ``namespace: NAME`` line (a manifest's, a kustomization's) naming one of the scenario's
    namespaces, given the run's name for it."""
    if not namespaces:
        return text
    names = "|".join(re.escape(n) for n in sorted(namespaces, key=len, reverse=True))
    pattern = re.compile(rf"^(\s*(?:- )?namespace:\s*)([\"']?)({names})\2(\s*(?:#.*)?)$", re.MULTILINE)
    return pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{namespaces[m.group(3)]}{m.group(2)}{m.group(4)}", text)


def copy_step(step: Path, target: Path, namespaces: dict[str, str]) -> None:
    """The step's repository state, its namespaces mapped to the run's, without the scenario's own files."""
    for source in sorted(step.rglob("*")):
        relative = source.relative_to(step)
        if source.is_dir() or (len(relative.parts) == 1 and relative.name in SCENARIO_FILES):
            continue
        out = target / relative
        out.parent.mkdir(parents=True, exist_ok=True)
        if source.suffix in (".yaml", ".yml") or source.name == "Kustomization":
            out.write_text(with_namespaces(source.read_text(), namespaces))
        else:
            shutil.copy2(source, out)


# Rendering -----------------------------------------------------------------------------------------


def _is_function_config(doc: dict[str, Any]) -> bool:
    annotations = (doc.get("metadata") or {}).get("annotations") or {}
    return doc.get("kind") == FUNCTION_KIND or (
        FUNCTION_ANNOTATION in annotations and "trainjob-resources" in str(annotations[FUNCTION_ANNOTATION])
    )


def _exec_function() -> str:
    return yaml.safe_dump({"exec": {"path": str(WRAPPER)}}, sort_keys=False)


def _point_at_this_checkout(app: Path) -> bool:
    """Rewrites the function annotation of every trainjob-resources transformer config below ``app`` to run
    this checkout's function as an exec function, keeping its options; whether there was one."""
    found = False
    for path in sorted(app.rglob("*.y*ml")):
        try:
            docs = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        if not any(isinstance(d, dict) and _is_function_config(d) for d in docs):
            continue
        found = True
        for doc in docs:
            if isinstance(doc, dict) and _is_function_config(doc):
                doc.setdefault("metadata", {}).setdefault("annotations", {})[FUNCTION_ANNOTATION] = _exec_function()
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return found


def _kustomization(folder: Path) -> Path | None:
    return next((folder / n for n in KUSTOMIZATIONS if (folder / n).is_file()), None)


def _vendored_copies(folder: Path, seen: set[Path] | None = None) -> list[Path]:
    """The files of local-config Trainer runtimes that the kustomization in ``folder`` lists as resources,
    through its bases."""
    seen = set() if seen is None else seen
    kustomization = _kustomization(folder)
    if kustomization is None or folder.resolve() in seen:
        return []
    seen.add(folder.resolve())
    out: list[Path] = []
    for entry in (yaml.safe_load(kustomization.read_text()) or {}).get("resources") or []:
        target = folder / str(entry)
        if target.is_dir():
            out += _vendored_copies(target, seen)
        elif target.is_file() and any(
            str(d.get("kind")) in ("ClusterTrainingRuntime", "TrainingRuntime")
            and ((d.get("metadata") or {}).get("annotations") or {}).get(LOCAL_CONFIG) == "true"
            for d in documents(target.read_text())
        ):
            out.append(target.resolve())
    return out


def _manifest_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml", ".json"))


@dataclass
class Tools:
    kustomize: str
    kpt: str | None
    python_bin: Path = Path(sys.executable).parent

    def path_with_kustomize(self, work: Path) -> str:
        """A PATH whose ``kustomize`` is the standalone build (as in Argo CD's image), then the function."""
        bin_dir = work / "kustomize-bin"
        if not bin_dir.is_dir():
            bin_dir.mkdir(parents=True)
            (bin_dir / "kustomize").symlink_to(self.kustomize)
        return os.pathsep.join([str(bin_dir), str(self.python_bin), "/usr/local/bin", "/usr/bin", "/bin"])


def kpt_binary() -> str | None:
    """kpt from PATH, else Google Cloud CLI's package (google-cloud-cli-kpt), else None."""
    found = shutil.which("kpt")
    if found:
        return found
    try:
        listing = subprocess.run(["dpkg", "-L", "google-cloud-cli-kpt"], capture_output=True, text=True, check=False)
    except OSError:
        listing = None
    for line in (listing.stdout if listing else "").splitlines():
        if line.endswith("/bin/kpt") and os.access(line, os.X_OK):
            return line
    fallback = Path("/usr/lib/google-cloud-sdk/bin/kpt")
    return str(fallback) if os.access(fallback, os.X_OK) else None


def _run(cmd: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=180, check=False)
    if done.returncode != 0:
        raise RenderFailed(f"{what} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


class RenderFailed(Exception):
    """The step could not be rendered (an error of the function or of the tool): a failed check."""


def _base_env(tools: Tools, work: Path) -> dict[str, str]:
    return {"PATH": tools.path_with_kustomize(work), "HOME": str(work), "LC_ALL": "C.UTF-8"}


def render_kustomize(app_dir: Path, repo: Path, app: Application, tools: Tools, work: Path) -> str:
    """Standalone ``kustomize build --enable-alpha-plugins --enable-exec`` with the function as an exec
    transformer: the step's own transformer config pointed at this checkout, or, where the step names
    none, an overlay of the runner's on top of it (a plain folder gets a kustomization first)."""
    if _kustomization(app_dir) is None:
        resources, transformers = [], []
        for path in _manifest_files(app_dir):
            docs = documents(path.read_text())
            rel = str(path.relative_to(app_dir))
            if any(_is_function_config(d) for d in docs):
                transformers.append(rel)
            elif docs and not all(d.get("kind") == "Kptfile" for d in docs):
                resources.append(rel)
        kustomization = {"resources": resources, "sortOptions": SORT_OPTIONS}
        if transformers:
            kustomization["transformers"] = transformers
        (app_dir / "kustomization.yaml").write_text(yaml.safe_dump(kustomization, sort_keys=False))
    target = app_dir
    if not _point_at_this_checkout(repo):
        target = work / f"overlay-{app.name}"
        target.mkdir(parents=True, exist_ok=True)
        config = {
            "apiVersion": "fn.trainjob-resources.io/v1alpha1",
            "kind": FUNCTION_KIND,
            "metadata": {"name": "trainjob-resources", "annotations": {FUNCTION_ANNOTATION: _exec_function()}},
        }
        (target / "trainjob-resources.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        overlay = {
            "resources": [os.path.relpath(app_dir, target)],
            "transformers": ["trainjob-resources.yaml"],
            "sortOptions": SORT_OPTIONS,
        }
        (target / "kustomization.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    cmd = [tools.kustomize, "build", "--enable-alpha-plugins", "--enable-exec", "--load-restrictor"]
    cmd += ["LoadRestrictionsNone", str(target)]
    return _run(cmd, work, _base_env(tools, work), "kustomize build")


def argocd_env(app: Application, repo: Path, app_dir: Path) -> dict[str, str]:
    """What Argo CD's repo-server sets for the plugin (kustomization-examples/argocd-cmp/plugin.yaml)."""
    env = {
        "ARGOCD_APP_NAME": app.name,
        "ARGOCD_APP_NAMESPACE": app.namespace,
        "ARGOCD_APP_SOURCE_PATH": os.path.relpath(app_dir, repo),
    }
    env.update({f"ARGOCD_ENV_{k}": v for k, v in app.env.items()})
    return env


def render_cmp(
    app_dir: Path,
    app: Application,
    repo: Path,
    tools: Tools,
    work: Path,
    extra: list[str],
    platform_env: dict[str, str] | None = None,
) -> str:
    """plugin.yaml's generate command: ``trainjob-resources render --config-from-env .`` in the source folder
    (with ``--runtimes`` where the Application names the platform's runtimes, and the platform's options)."""
    env = {**_base_env(tools, work), **argocd_env(app, repo, app_dir), **(platform_env or {})}
    cmd = ["trainjob-resources", "render", "--config-from-env", *extra, "."]
    return _run(cmd, app_dir, env, "trainjob-resources render")


def local_config_copies(runtimes: Path, app_dir: Path) -> None:
    """The platform's runtimes as local-config copies in a plain folder (what `--runtimes` is to render)."""
    if _kustomization(app_dir) is not None:
        raise ScenarioError(f"{app_dir}: `runtimes:` needs a plain folder, not a kustomization")
    target = app_dir / "platform-runtimes"
    target.mkdir(exist_ok=True)
    for path in _manifest_files(runtimes):
        docs = documents(path.read_text())
        for doc in docs:
            doc.setdefault("metadata", {}).setdefault("annotations", {})[LOCAL_CONFIG] = "true"
        (target / path.name).write_text(yaml.safe_dump_all(docs, sort_keys=False))


def _strip_transformers(app_dir: Path) -> None:
    """Drops the trainjob-resources transformers from every kustomization below ``app_dir``."""
    for kustomization in [p for p in app_dir.rglob("*") if p.name in KUSTOMIZATIONS]:
        data = yaml.safe_load(kustomization.read_text()) or {}
        kept = []
        for entry in data.get("transformers") or []:
            path = kustomization.parent / str(entry)
            if path.is_file() and any(_is_function_config(d) for d in documents(path.read_text())):
                continue
            if not path.is_file() and "trainjob-resources" in str(entry):
                continue
            kept.append(entry)
        if "transformers" in data:
            data["transformers"] = kept
        kustomization.write_text(yaml.safe_dump(data, sort_keys=False))


def kpt_source(app_dir: Path, repo: Path, tools: Tools, work: Path) -> tuple[dict[str, str], str | None]:
    """The files a kpt package of this step holds (a kustomization is hydrated first with kustomize,
    without the function), and the function config among them (the pipeline's configPath)."""
    files: dict[str, str] = {}
    config: str | None = None
    if _kustomization(app_dir) is not None:
        configs = [p for p in _manifest_files(repo) if any(_is_function_config(d) for d in documents(p.read_text()))]
        _strip_transformers(repo)
        cmd = [tools.kustomize, "build", "--load-restrictor", "LoadRestrictionsNone", str(app_dir)]
        files["hydrated.yaml"] = _run(cmd, work, _base_env(tools, work), "kustomize build")
        for path in configs:
            if any(_is_function_config(d) for d in documents(path.read_text())):
                files["trainjob-resources.yaml"] = path.read_text()
                config = "trainjob-resources.yaml"
        # kustomize drops local-config objects from its output: a vendored runtime copy the kustomization
        # reads is carried as a package file of its own, as a kpt user keeps it.
        for path in _vendored_copies(app_dir):
            files[f"vendored/{path.relative_to(repo.resolve()).as_posix().replace('/', '_')}"] = path.read_text()
        return files, config
    for path in _manifest_files(app_dir):
        rel = str(path.relative_to(app_dir))
        text = path.read_text()
        if all(d.get("kind") == "Kptfile" for d in documents(text)) and documents(text):
            continue
        files[rel] = text
        if any(_is_function_config(d) for d in documents(text)):
            config = rel
    return files, config


KPTFILE = """apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: {name}
  annotations:
    config.kubernetes.io/local-config: "true"
pipeline:
  mutators:
    - exec: {wrapper}
"""


PROVENANCE = "fn.trainjob-resources.io/"
DEPENDS_ON = "config.kubernetes.io/depends-on"


def with_provenance(rendered: str, new: str) -> str | None:
    """``new`` with the function's records of ``rendered`` (its ``fn.trainjob-resources.io/`` annotations,
    the depends-on it added, the runtimeRef it set) on the objects of the same kind and name; None when
    ``new`` is not YAML."""
    try:
        old_docs = {(d.get("kind"), (d.get("metadata") or {}).get("name")): d for d in documents(rendered)}
        new_docs = list(yaml.safe_load_all(new))
    except yaml.YAMLError:
        return None
    for doc in new_docs:
        if not isinstance(doc, dict):
            continue
        before = old_docs.get((doc.get("kind"), (doc.get("metadata") or {}).get("name")))
        if before is None:
            continue
        kept = {
            k: v
            for k, v in ((before.get("metadata") or {}).get("annotations") or {}).items()
            if k.startswith(PROVENANCE) or k == DEPENDS_ON
        }
        if kept:
            doc.setdefault("metadata", {}).setdefault("annotations", {}).update(kept)
        ref = (before.get("spec") or {}).get("runtimeRef")
        if doc.get("kind") == "TrainJob" and ref and isinstance(doc.get("spec"), dict):
            doc["spec"]["runtimeRef"] = ref
    return yaml.safe_dump_all([d for d in new_docs if d is not None], sort_keys=False)


@dataclass
class KptPackage:
    """The package kpt renders in place, carried from step to step: each step's edits (its files against the
    previous step's) are merged into the rendered package, as a user edits the rendered files."""

    folder: Path
    previous: dict[str, str] = field(default_factory=dict)

    def carry(self, files: dict[str, str], config: str | None) -> list[str]:
        """Brings the package to this step; returns the files whose edits could not be carried."""
        conflicts: list[str] = []
        self.folder.mkdir(parents=True, exist_ok=True)
        for rel in sorted(set(files) | set(self.previous)):
            target = self.folder / rel
            old, new = self.previous.get(rel), files.get(rel)
            if new is None:
                target.unlink(missing_ok=True)
            elif old is None or not target.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(new)
            elif old != new:
                merged = self._merge(target, old, new)
                if merged is None:
                    # The edit touches lines the function rewrote (a patch's resources): the user writes the
                    # new text into the rendered file, which keeps what the function recorded there.
                    merged = with_provenance(target.read_text(), new)
                    if merged is None:
                        conflicts.append(rel)
                        merged = new
                target.write_text(merged)
        self.previous = dict(files)
        kptfile = KPTFILE.format(name=self.folder.name, wrapper=WRAPPER)
        if config is not None:
            kptfile += f"      configPath: {config}\n"
        (self.folder / "Kptfile").write_text(kptfile)
        return conflicts

    def _merge(self, target: Path, old: str, new: str) -> str | None:
        with tempfile.TemporaryDirectory() as tmp:
            base, theirs = Path(tmp) / "base", Path(tmp) / "theirs"
            base.write_text(old)
            theirs.write_text(new)
            done = subprocess.run(
                ["git", "merge-file", "-p", str(target), str(base), str(theirs)],
                capture_output=True,
                text=True,
                check=False,
            )
        return done.stdout if done.returncode == 0 else None

    def render(self, tools: Tools, work: Path) -> str:
        if tools.kpt is None:
            raise RenderFailed("kpt is not installed (google-cloud-cli-kpt)")
        _run([tools.kpt, "fn", "render", "--allow-exec"], self.folder, _base_env(tools, work), "kpt fn render")
        out = []
        for path in _manifest_files(self.folder):
            for doc in documents(path.read_text()):
                annotations = (doc.get("metadata") or {}).get("annotations") or {}
                if doc.get("kind") == "Kptfile" or str(annotations.get(LOCAL_CONFIG)) == "true":
                    continue
                if _is_function_config(doc):
                    continue
                out.append(doc)
        return yaml.safe_dump_all(out, sort_keys=False)


# Predictions: explain ---------------------------------------------------------------------------------


Prediction = dict[str, dict[str, dict[str, dict[str, str]]]]  # replicatedJob -> container -> requests/limits


def trainer_env(trainer: str) -> dict[str, str]:
    """The option that tells the function an older Trainer runs (``trainerVersion``), as the platform
    gives it to the Argo CD plugin; nothing for the newest, the function's default."""
    return {} if trainer == DEFAULT_TRAINER else {"ARGOCD_ENV_TRAINER_VERSION": trainer}


def _pinned_release(config: Path, trainer: str, work: Path) -> Path:
    """A copy of the functionConfig ``config`` with ``trainerVersion: trainer`` (a ConfigMap's ``data``, a
    TrainJobResources' ``spec``), beside the step's files."""
    objects = documents(config.read_text())
    for obj in objects:
        section = "spec" if obj.get("kind") == "TrainJobResources" else "data"
        obj[section] = {**(obj.get(section) or {}), "trainerVersion": trainer}
    pinned = work.parent / f"{config.stem}-{trainer}.yaml"
    pinned.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return pinned


def explain(
    args: list[str], cwd: Path, env: dict[str, str], trainer: str = DEFAULT_TRAINER
) -> dict[tuple[str, str], Prediction]:
    """``trainjob-resources explain --format json``: per (namespace, TrainJob), per replicated job and
    container, the requests and limits it predicts on that Trainer release."""
    release_env = trainer_env(trainer)
    if trainer != DEFAULT_TRAINER and "--config" in args:
        # A config given with --config is the platform's: trainerVersion is set there, as the platform
        # pins it (a tenant's ARGOCD_ENV_TRAINER_VERSION beside it is refused).
        at = args.index("--config") + 1
        args = [*args[:at], str(_pinned_release(cwd / args[at], trainer, cwd)), *args[at + 1 :]]
        release_env = {}
    elif trainer != DEFAULT_TRAINER and "--config-from-env" not in args:
        args = ["--config-from-env", *args]
    done = subprocess.run(
        ["trainjob-resources", "explain", "--format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**env, **release_env},
        timeout=120,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise RenderFailed(f"trainjob-resources explain exited {done.returncode}: {done.stderr.strip()}")
    out: dict[tuple[str, str], Prediction] = {}
    for job in json.loads(done.stdout)["trainJobs"]:
        prediction: Prediction = {}
        for replicated in job.get("replicatedJobs") or []:
            prediction[replicated["name"]] = {c["name"]: _in_the_jobset(c) for c in replicated.get("containers") or []}
        out[(job.get("namespace") or "", job["name"])] = prediction
    return out


def _in_the_jobset(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What of explain's container the JobSet holds: not the values a LimitRange defaults, which the API
    server gives the Pod at its admission, nor a request defaulted from such a limit."""
    sources = container.get("sources") or {}
    from_range = {
        section: {k for k, v in (sources.get(section) or {}).items() if str(v).startswith("LimitRange")}
        for section in ("requests", "limits")
    }
    limits = {k: v for k, v in (container.get("limits") or {}).items() if k not in from_range["limits"]}
    requests = {
        k: v
        for k, v in (container.get("requests") or {}).items()
        if k not in from_range["requests"]
        and not ((sources.get("requests") or {}).get(k) == "defaulted from limits" and k not in limits)
    }
    return {"requests": requests, "limits": limits}


def _pod_defaults(resources: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """requests and limits as the API server gives them to the Pod: a limit without a request is the request."""
    requests = dict(resources.get("requests") or {})
    limits = dict(resources.get("limits") or {})
    for name, value in limits.items():
        requests.setdefault(name, value)
    return {"requests": requests, "limits": limits}


def jobset_containers(jobset: dict[str, Any]) -> Prediction:
    """What the JobSet Trainer made gives each container's pods (after the API server's defaulting of
    requests from limits, which explain predicts): per replicated job, per container."""
    out: Prediction = {}
    for replicated in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        pod = ((((replicated.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
        containers = [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]
        out[replicated["name"]] = {c["name"]: _pod_defaults(c.get("resources") or {}) for c in containers}
    return out


def _same_quantities(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if set(a) != set(b):
        return False
    try:
        return all(parse_quantity(str(a[k])) == parse_quantity(str(b[k])) for k in a)
    except QuantityError:
        return False


def differences(predicted: Prediction, actual: Prediction) -> list[str]:
    """Each container whose resources in the JobSet differ from the prediction, in words."""
    problems = []
    for job in sorted(set(predicted) | set(actual)):
        if job not in actual:
            problems.append(f"replicated job {job}: not in the JobSet")
            continue
        if job not in predicted:
            problems.append(f"replicated job {job}: in the JobSet, not in explain")
            continue
        for name in sorted(set(predicted[job]) | set(actual[job])):
            want, got = predicted[job].get(name), actual[job].get(name)
            if want is None or got is None:
                problems.append(f"{job}/{name}: {'not in the JobSet' if got is None else 'not in explain'}")
                continue
            for key in ("requests", "limits"):
                if not _same_quantities(want[key], got[key]):
                    problems.append(f"{job}/{name} {key}: explain {want[key]}, JobSet {got[key]}")
    return problems


# Applying as Argo CD does ---------------------------------------------------------------------------------


def wave_of(obj: dict[str, Any]) -> int:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(WAVE)
    try:
        return int(str(value).strip()) if value is not None else 0
    except ValueError:
        return 0


def argocd_order(objects: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The objects by sync wave; within a wave by Argo CD's kind order, then kind and name."""
    waves: dict[int, list[dict[str, Any]]] = {}
    for obj in objects:
        waves.setdefault(wave_of(obj), []).append(obj)

    def key(obj: dict[str, Any]) -> tuple[int, str, str]:
        kind = str(obj.get("kind"))
        rank = ARGOCD_KIND_ORDER.index(kind) if kind in ARGOCD_KIND_ORDER else len(ARGOCD_KIND_ORDER)
        return rank, kind, str((obj.get("metadata") or {}).get("name"))

    return [sorted(waves[w], key=key) for w in sorted(waves)]


Identity = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


def identity(obj: dict[str, Any], default_namespace: str) -> Identity:
    kind = str(obj.get("kind"))
    meta = obj.get("metadata") or {}
    namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or default_namespace)
    return kind, namespace, str(meta.get("name"))


def until_admitted(apply: Callable[[], object], timeout: float = 15.0) -> None:
    """``apply()`` of a TrainJob whose runtime is in the cluster, again while Trainer's webhook refuses it for
    a runtime its cache has not seen yet (tests/cluster/README.md, What upstream did when run); a pause before
    the first try cannot be long enough on a loaded machine. Any other KubectlError, or this one after
    ``timeout`` seconds, is raised."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            apply()
            return
        except KubectlError as refused:
            if NOT_YET not in str(refused) or time.monotonic() > deadline:
                raise
        time.sleep(0.1)


def describe(ident: Identity) -> str:
    kind, namespace, name = ident
    return f"{kind} {namespace + '/' if namespace else ''}{name}"


def sync_options(obj: dict[str, Any]) -> set[str]:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get("argocd.argoproj.io/sync-options") or ""
    return {o.strip() for o in str(value).split(",") if o.strip()}


def _resource(kind: str) -> str:
    return RESOURCE_OF.get(kind, kind)


def runtime_of(trainjob: dict[str, Any]) -> Identity:
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind = str(ref.get("kind") or "ClusterTrainingRuntime")
    namespace = "" if kind == "ClusterTrainingRuntime" else str(trainjob["metadata"].get("namespace") or "")
    return kind, namespace, str(ref.get("name"))


# The run ---------------------------------------------------------------------------------------------


@dataclass
class Check:
    step: str
    check: str
    ok: bool
    subject: str
    message: str = ""

    def line(self) -> str:
        data = {"step": self.step, "check": self.check, "ok": self.ok, "object": self.subject}
        if self.message:
            data["message"] = self.message
        return json.dumps(data, sort_keys=False)


@dataclass
class Live:
    """A TrainJob the run created, and what explain predicted for it when it was created."""

    uid: str
    prediction: Prediction | None
    step: str


class Runner:
    def __init__(
        self,
        scenario: Scenario,
        via: str,
        cp: ControlPlane,
        tools: Tools,
        work: Path,
        *,
        run_id: str | None = None,
        wave_delay: float = 2.0,
        jobset_timeout: float = 30.0,
        emit: Callable[[Check], None] = lambda c: print(c.line(), flush=True),
    ) -> None:
        scenario = Scenario(
            scenario.root,
            scenario.steps,
            scenario.applications,
            scenario.namespaces,
            [r for r in scenario.refusals if via in r.vias],
            [e for e in scenario.render_errors if via in e.vias],
        )
        self.scenario, self.via, self.cp, self.tools, self.work = scenario, via, cp, tools, work
        self.run_id = run_id or secrets.token_hex(3)
        self.namespaces = {n: f"{n}-{self.run_id}" for n in scenario.namespaces}
        self.wave_delay, self.jobset_timeout, self.emit = wave_delay, jobset_timeout, emit
        self.checks: list[Check] = []
        self.applied: dict[str, dict[Identity, dict[str, Any]]] = {a.name: {} for a in scenario.applications}
        self.cluster_applied: dict[Identity, dict[str, Any]] = {}
        self.live: dict[tuple[str, str], Live] = {}
        self.packages = {a.name: KptPackage(work / "kpt" / a.name) for a in scenario.applications}
        self.refusals_seen: set[int] = set()

    def record(self, step: str, check: str, ok: bool, subject: str, message: str = "") -> None:
        item = Check(step, check, ok, subject, message)
        self.checks.append(item)
        self.emit(item)

    def ns(self, name: str) -> str:
        return self.namespaces.get(name, name)

    def run(self) -> list[Check]:
        for namespace in self.namespaces.values():
            self.cp.kubectl("create", "namespace", namespace)
        try:
            for step in self.scenario.steps:
                self.run_step(step)
            for index, refusal in enumerate(self.scenario.refusals):
                if index not in self.refusals_seen:
                    subject = f"{refusal.kind} {refusal.name}"
                    self.record(refusal.step, "expected-refusal", False, subject, f"not refused: {refusal.message}")
        finally:
            self.cleanup()
        return self.checks

    def cleanup(self) -> None:
        """Deletes the cluster-scoped objects the run applied (namespaces are never reused)."""
        everything = [*self.cluster_applied, *(i for a in self.applied.values() for i in a)]
        for kind, namespace, name in everything:
            if not namespace:
                self.cp.delete(_resource(kind), name, None, wait=False)

    # one step ------------------------------------------------------------------------------------------

    def run_step(self, step: Path) -> None:
        name = step.name
        repo = self.work / name / "repo"
        copy_step(step, repo, self.namespaces)
        cluster_yaml = step / "cluster.yaml"
        if cluster_yaml.is_file():
            self.apply_cluster_objects(name, with_namespaces(cluster_yaml.read_text(), self.namespaces))
        before = self.live_trainjobs()
        outputs: dict[str, list[dict[str, Any]]] = {}
        predictions: dict[tuple[str, str], Prediction] = {}
        for app in self.scenario.applications:
            app_dir = repo / app.path
            if not app_dir.is_dir():
                continue  # the Application has no source in this step: everything it applied is pruned
            try:
                text, predicted = self.render(app, app_dir, repo)
            except RenderFailed as failed:
                expected = any(
                    e.step == name and e.message in str(failed) and e.application in (None, app.name)
                    for e in self.scenario.render_errors
                )
                self.record(
                    name,
                    "expected-render-error" if expected else "rendered",
                    expected,
                    f"Application {app.name}",
                    str(failed),
                )
                continue
            unmet = [
                e.message for e in self.scenario.render_errors if e.step == name and e.application in (None, app.name)
            ]
            if unmet:
                self.record(
                    name, "expected-render-error", False, f"Application {app.name}", f"rendered, not refused: {unmet}"
                )
            else:
                self.record(name, "rendered", True, f"Application {app.name}")
            outputs[app.name] = documents(text)
            for (namespace, job), prediction in predicted.items():
                predictions[(namespace or self.ns(app.namespace), job)] = prediction
        synced = set()
        for app in self.scenario.applications:
            if app.name in outputs:
                self.check_runtime_refs(name, app, outputs[app.name], before)
                if self.sync(name, app, outputs[app.name]):
                    synced.add(app.name)
        for app in self.scenario.applications:
            if app.name in synced or not (repo / app.path).is_dir():
                self.prune(name, app, outputs.get(app.name, []))
        self.check_jobsets(name, predictions)

    def render(self, app: Application, app_dir: Path, repo: Path) -> tuple[str, dict[tuple[str, str], Prediction]]:
        work = self.work / repo.parent.name
        env = _base_env(self.tools, work)
        runtimes = repo / app.runtimes if app.runtimes else None
        if self.via == "render":
            extra = ["--runtimes", str(runtimes)] if runtimes else []
            cmp_env = {**env, **argocd_env(app, repo, app_dir)}
            predicted = explain(["--config-from-env", *extra, "."], app_dir, cmp_env, self.cp.trainer)
            rendered = render_cmp(app_dir, app, repo, self.tools, work, extra, trainer_env(self.cp.trainer))
            return rendered, predicted
        if runtimes is not None:
            local_config_copies(runtimes, app_dir)
        if self.via == "kustomize":
            explained = self.explain_kustomization(app, app_dir, repo, env)
            return render_kustomize(app_dir, repo, app, self.tools, work), explained
        package = self.packages[app.name]
        files, config = kpt_source(app_dir, repo, self.tools, work)
        conflicts = package.carry(files, config)
        if conflicts:
            raise RenderFailed(f"this step's edits of {conflicts} do not merge into the rendered package")
        args = ["--namespace", self.ns(app.namespace), "."]
        if config is not None:
            args[:0] = ["--config", config]
        predicted = explain(args, package.folder, env, self.cp.trainer)
        return package.render(self.tools, work), predicted

    def explain_kustomization(
        self, app: Application, app_dir: Path, repo: Path, env: dict[str, str]
    ) -> dict[tuple[str, str], Prediction]:
        """explain on the step as written (a kustomization is built without running its functions; its
        transformer's options apply), in the Application's namespace."""
        args = ["--namespace", self.ns(app.namespace), "--root", str(repo), "."]
        if _kustomization(app_dir) is None:
            config = next(
                (p for p in _manifest_files(app_dir) if any(_is_function_config(d) for d in documents(p.read_text()))),
                None,
            )
            if config is not None:
                args[:0] = ["--config", str(config.relative_to(app_dir))]
        return explain(args, app_dir, {**env}, self.cp.trainer)

    def apply_cluster_objects(self, step: str, text: str) -> None:
        """cluster.yaml: applied straight to the cluster (by the platform, by the SDK) before the render."""
        objects = documents(text)
        for obj in objects:
            ident = identity(obj, "default")
            try:
                self.cp.apply_server_side(json.dumps(obj), field_manager="platform", force_conflicts=True)
            except KubectlError as refused:
                self.record(step, "cluster-object-accepted", False, describe(ident), str(refused))
                continue
            self.cluster_applied[ident] = obj
            self.record(step, "cluster-object-accepted", True, describe(ident))
        trainjobs = [o for o in objects if o.get("kind") == "TrainJob"]
        if trainjobs:
            runtimes = self.live_runtimes_file(step)
            for job in trainjobs:
                ident = identity(job, "default")
                single = self.work / step / f"sdk-{ident[2]}.yaml"
                single.write_text(yaml.safe_dump(job, sort_keys=False))
                env = _base_env(self.tools, self.work)
                predicted = explain(["--runtimes", str(runtimes), str(single)], self.work, env, self.cp.trainer)
                for (namespace, name), prediction in predicted.items():
                    self.note_created(step, namespace or ident[1], name, prediction)

    def live_runtimes_file(self, step: str) -> Path:
        """The runtimes in the cluster now, as a file for ``explain --runtimes``."""
        items = []
        for kind in RUNTIME_KINDS:
            args = ["get", _resource(kind), "-o", "json"]
            args += ["--all-namespaces"] if kind == "TrainingRuntime" else []
            listed = json.loads(self.cp.kubectl(*args).stdout)
            for item in listed.get("items") or []:
                meta = item["metadata"]
                item["metadata"] = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if k in meta}
                item.pop("status", None)
                items.append(item)
        path = self.work / step / "live-runtimes.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump_all(items, sort_keys=False))
        return path

    def live_trainjobs(self) -> dict[tuple[str, str], dict[str, Any]]:
        out = {}
        for namespace in self.namespaces.values():
            listed = json.loads(self.cp.kubectl("get", TRAINJOB, "-n", namespace, "-o", "json").stdout)
            for item in listed.get("items") or []:
                out[(namespace, item["metadata"]["name"])] = item
        return out

    def note_created(self, step: str, namespace: str, name: str, prediction: Prediction | None) -> None:
        live = self.cp.get(TRAINJOB, name, namespace)
        if live is None:
            return
        uid = live["metadata"]["uid"]
        known = self.live.get((namespace, name))
        if known is None or known.uid != uid:
            self.live[(namespace, name)] = Live(uid, prediction, step)

    def check_runtime_refs(
        self, step: str, app: Application, objects: list[dict[str, Any]], before: dict[tuple[str, str], dict[str, Any]]
    ) -> None:
        for obj in objects:
            if obj.get("kind") != "TrainJob":
                continue
            _, namespace, name = identity(obj, self.ns(app.namespace))
            live = before.get((namespace, name))
            if live is None or {"Force=true", "Replace=true"} <= sync_options(obj):
                continue  # new, or recreated by Argo CD
            if any(r.step == step and r.kind == "TrainJob" and r.name == name for r in self.scenario.refusals):
                continue  # the refusal expect.yaml announces is the check
            was = runtime_of(live)
            now = runtime_of({**obj, "metadata": {**obj["metadata"], "namespace": namespace}})
            ok = was == now
            message = "" if ok else f"live {describe(was)}, rendered {describe(now)}"
            self.record(step, "runtimeRef-kept", ok, f"TrainJob {namespace}/{name}", message)

    def sync(self, step: str, app: Application, objects: list[dict[str, Any]]) -> bool:
        """Applies wave by wave; a wave with a refusal ends the sync (Argo CD applies no later wave and
        prunes nothing): whether every object was accepted."""
        waves = argocd_order(objects)
        runtimes: set[Identity] = set()  # applied by an earlier wave of this sync
        for number, wave in enumerate(waves):
            if number:
                time.sleep(self.wave_delay)
            failed = False
            for obj in wave:
                ident = identity(obj, self.ns(app.namespace))
                if ident[1] and not (obj.get("metadata") or {}).get("namespace"):
                    obj = {**obj, "metadata": {**obj["metadata"], "namespace": ident[1]}}
                try:
                    # Argo CD's pause between waves lets the webhook see the earlier wave's runtime (README);
                    # the tests shorten it, a loaded machine outruns it: that refusal alone is retried.
                    if ident[0] == "TrainJob" and runtime_of(obj) in runtimes:
                        until_admitted(lambda obj=obj, ident=ident: self.apply(obj, ident))
                    else:
                        self.apply(obj, ident)
                except KubectlError as refused:
                    self.refused(step, obj, ident, str(refused))
                    failed = True
                    continue
                self.applied[app.name][ident] = obj
                if ident[0] in RUNTIME_KINDS:
                    runtimes.add(ident)
                self.record(step, "accepted", True, describe(ident))
                if ident[0] == "TrainJob":
                    self.note_created(step, ident[1], ident[2], None)
            if failed:
                skipped = [describe(identity(o, self.ns(app.namespace))) for w in waves[number + 1 :] for o in w]
                if skipped:
                    self.record(step, "synced", False, f"Application {app.name}", f"not applied: {skipped}")
                return False
        return True

    def apply(self, obj: dict[str, Any], ident: Identity) -> None:
        """Server-side apply, as Argo CD's ServerSideApply=true (field manager argocd-controller, conflicts
        forced); with the sync options Replace=true a replace, and Force=true,Replace=true a delete and
        create (an object with no earlier copy is created)."""
        options = sync_options(obj)
        if "Replace=true" not in options:
            self.cp.apply_server_side(json.dumps(obj), force_conflicts=True)
            return
        exists = self.cp.get(_resource(ident[0]), ident[2], ident[1] or None) is not None
        if not exists:
            self.cp.create(json.dumps(obj))
        elif "Force=true" in options:
            self.delete(ident)
            self.cp.create(json.dumps(obj))
        else:
            self.cp.kubectl("replace", "-f", "-", input=json.dumps(obj))

    def delete(self, ident: Identity) -> None:
        """Deletes an object and waits; a TrainJob's JobSet with it (the control plane runs no garbage
        collector, which would delete the JobSet its ownerReference ties to the TrainJob)."""
        kind, namespace, name = ident
        live = self.cp.get(_resource(kind), name, namespace or None) if kind == "TrainJob" else None
        self.cp.delete(_resource(kind), name, namespace or None, wait=True)
        if live is not None:
            self.collect_garbage(namespace, live["metadata"]["uid"])
            self.live.pop((namespace, name), None)

    def collect_garbage(self, namespace: str, owner_uid: str) -> None:
        """What the garbage collector does for a deleted TrainJob: deletes what it owns (its JobSet, its
        `<name>-runtime-snapshot` ConfigMap, the MPI plugin's Secret and ConfigMap)."""
        listed = self.cp.kubectl("get", f"{JOBSET},configmaps,secrets", "-n", namespace, "-o", "json").stdout
        owned = [
            item
            for item in json.loads(listed).get("items") or []
            if any(ref.get("uid") == owner_uid for ref in item["metadata"].get("ownerReferences") or [])
        ]
        for item in owned:
            kind = JOBSET if item["kind"] == "JobSet" else item["kind"].lower()
            self.cp.delete(kind, item["metadata"]["name"], namespace, wait=True)

    def refused(self, step: str, obj: dict[str, Any], ident: Identity, message: str) -> None:
        for index, refusal in enumerate(self.scenario.refusals):
            if refusal.matches(step, obj, message, self.namespaces):
                self.refusals_seen.add(index)
                self.record(step, "expected-refusal", True, describe(ident), message)
                return
        self.record(step, "accepted", False, describe(ident), message)

    def prune(self, step: str, app: Application, objects: list[dict[str, Any]]) -> None:
        """What this Application applied before and its output now lacks, last wave first, as Argo CD prunes;
        a pruned runtime that a live TrainJob names is a failed check (it is deleted all the same)."""
        keep = {identity(o, self.ns(app.namespace)) for o in objects}
        gone = {
            i: o for i, o in self.applied[app.name].items() if i not in keep and "Prune=false" not in sync_options(o)
        }
        if not gone:
            return
        leaving = {(i[1], i[2]) for i in gone if i[0] == "TrainJob"}
        users: dict[Identity, list[str]] = {}
        for (namespace, name), job in self.live_trainjobs().items():
            if (namespace, name) not in leaving:
                users.setdefault(runtime_of(job), []).append(f"{namespace}/{name}")
        for wave in reversed(argocd_order(gone.values())):
            for obj in reversed(wave):
                ident = identity(obj, self.ns(app.namespace))
                if ident[0] in RUNTIME_KINDS:
                    named_by = users.get(ident, [])
                    message = f"still named by TrainJob {', '.join(named_by)}" if named_by else ""
                    self.record(step, "pruned-runtime-unused", not named_by, describe(ident), message)
                self.delete(ident)
                del self.applied[app.name][ident]

    def check_jobsets(self, step: str, predictions: dict[tuple[str, str], Prediction]) -> None:
        """Each live TrainJob's JobSet against explain: the prediction of the step that created it (a running
        TrainJob keeps its runtime snapshot, upstream pkg/runtime/core/snapshot.go)."""
        for (namespace, name), live in sorted(self.live.items()):
            if live.prediction is None:
                live.prediction = predictions.get((namespace, name))
            subject = f"TrainJob {namespace}/{name}"
            if live.prediction is None:
                self.record(step, "jobset-resources", False, subject, "explain made no prediction for it")
                continue
            try:
                jobset = self.cp.wait_for_jobset(name, namespace, timeout=self.jobset_timeout)
            except TimeoutError as missing:
                self.record(step, "jobset-resources", False, subject, str(missing))
                continue
            problems = differences(live.prediction, jobset_containers(jobset))
            since = "" if live.step == step else f" (as predicted at {live.step}, when it was created)"
            message = "; ".join(problems) + since if problems else ""
            self.record(step, "jobset-resources", not problems, subject, message)


def summary(checks: list[Check]) -> str:
    passed = sum(c.ok for c in checks)
    return f"{passed} passed, {len(checks) - passed} failed"


def run_scenario(
    scenario_dir: Path,
    via: str,
    cp: ControlPlane,
    *,
    kustomize: str | None = None,
    wave_delay: float = 2.0,
    emit: Callable[[Check], None] = lambda c: print(c.line(), flush=True),
) -> list[Check]:
    scenario = Scenario.load(scenario_dir)
    paths = tool_paths() or {}
    built = paths.get("kustomize") or {}
    if kustomize is None:
        if not built:
            raise Unavailable("no standalone kustomize built: run `make cluster`")
        kustomize = built[max(built, key=lambda v: tuple(int(p) for p in v.lstrip("v").split(".")))]
    tools = Tools(kustomize=kustomize, kpt=kpt_binary())
    with tempfile.TemporaryDirectory(prefix=f"lifecycle-{scenario_dir.name}-") as tmp:
        runner = Runner(scenario, via, cp, tools, Path(tmp), wave_delay=wave_delay, emit=emit)
        return runner.run()


@dataclass
class _Args:
    scenario: Path
    via: str
    kustomize: str | None
    wave_delay: float
    trainer: str


def _parse(argv: list[str]) -> _Args:
    parser = argparse.ArgumentParser(
        prog="python -m tests.cluster.lifecycle",
        description="Run a GitOps lifecycle scenario on the local control plane (tests/cluster/SCENARIOS.md).",
    )
    parser.add_argument("scenario", type=Path, metavar="SCENARIO_DIR")
    parser.add_argument("--via", choices=VIAS, default="kustomize", help="how each step is rendered")
    parser.add_argument("--kustomize", help="standalone kustomize binary (default: the newest `make cluster` built)")
    parser.add_argument(
        "--wave-delay", type=float, default=2.0, help="seconds between sync waves (Argo CD's default: 2)"
    )
    add_trainer_option(parser)
    ns = parser.parse_args(argv)
    return _Args(ns.scenario, ns.via, ns.kustomize, ns.wave_delay, ns.trainer)


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        Scenario.load(args.scenario)
        with ControlPlane(trainer=args.trainer) as cp:
            checks = run_scenario(args.scenario, args.via, cp, kustomize=args.kustomize, wave_delay=args.wave_delay)
    except (ScenarioError, Unavailable) as problem:
        print(f"lifecycle: {problem}", file=sys.stderr)
        return 2
    print(summary(checks))
    return 0 if all(c.ok for c in checks) else 1


def scenarios(root: Path = Path(__file__).parent / "scenarios") -> Iterator[Path]:
    return (p for p in sorted(root.iterdir()) if p.is_dir() and any(STEP.match(c.name) for c in p.iterdir()))


if __name__ == "__main__":
    sys.exit(main())
