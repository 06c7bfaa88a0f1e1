"""Argo CD's own code, run for tests: its plugin server and repo-server manifest generation, and its
application controller's diff and sync (tests/cluster/argocd/, built by `make cluster` into the cache folder).

    from tests.cluster.argocd import ArgoCD

    argocd = ArgoCD.built()                         # Unavailable when `make cluster` did not build it
    made = argocd.generate(application, repo, plugin_config, env=...)   # made.manifests or made.error
    compared = argocd.diff(application, made, kubeconfig)               # compared.status, per resource
    synced = argocd.sync(application, made, kubeconfig, prune=True)     # synced.phase, per resource, waves

The harness takes what Argo CD reads (the Application, the plugin's plugin.yaml, argocd-cm) as files, so a
test can point it at any of them. The plugin server runs on the host (no container engine here): its
commands run with the environment ``generate`` is given (PATH, HOME), as the sidecar's image would
provide them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.cluster.controlplane import Unavailable, cache_root

TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id"
VERSION = "v3.6.2"


def harness_file() -> Path:
    """`TRAINJOB_RESOURCES_ARGOCD_HARNESS` if set, else the cache's `argocd/current/argocd-harness`."""
    override = os.environ.get("TRAINJOB_RESOURCES_ARGOCD_HARNESS")
    return Path(override) if override else cache_root().parent / "argocd" / "current" / "argocd-harness"


@dataclass
class Generated:
    """What the repo-server returned: the manifests (Argo CD's tracking set on each), or its error."""

    manifests: list[dict[str, Any]]
    error: str | None
    revision: str | None
    raw: str = field(repr=False)


@dataclass
class ResourceDiff:
    group: str
    kind: str
    namespace: str
    name: str
    status: str  # Synced | OutOfSync
    live: bool
    requires_pruning: bool
    changed: list[str]
    normalized_live: dict[str, Any] | None
    predicted_live: dict[str, Any] | None


@dataclass
class Compared:
    """The controller's comparison: the Application's sync status and each resource's."""

    status: str
    server_side_diff: bool
    resources: list[ResourceDiff]
    error: str | None

    def resource(self, kind: str, name: str) -> ResourceDiff:
        (found,) = [r for r in self.resources if (r.kind, r.name) == (kind, name)]
        return found


@dataclass
class SyncResult:
    """One resource of the operation's result: Synced, SyncFailed, Pruned, PruneSkipped (and why)."""

    kind: str
    name: str
    status: str
    message: str


@dataclass
class Wave:
    """One wave gitops-engine ran, and the resources whose result appeared in it."""

    wave: int
    final: bool
    resources: list[str]  # Kind/name


@dataclass
class Synced:
    """A sync operation run to completion (the Application's status.operationState)."""

    skipped: bool  # a self-heal found the Application Synced
    before: Compared  # the comparison it started from
    phase: str  # Succeeded | Failed | Error
    message: str
    resources: list[SyncResult]
    waves: list[Wave]
    passes: int

    def result(self, kind: str, name: str) -> SyncResult:
        (found,) = [r for r in self.resources if (r.kind, r.name) == (kind, name)]
        return found


def tracking_id(app_name: str, obj: dict[str, Any]) -> str:
    """The annotation Argo CD's annotation tracking (its default) sets: `app:group/Kind:namespace/name`."""
    group = obj["apiVersion"].rpartition("/")[0] if "/" in obj["apiVersion"] else ""
    namespace = obj["metadata"].get("namespace", "")
    return f"{app_name}:{group}/{obj['kind']}:{namespace}/{obj['metadata']['name']}"


class ArgoCD:
    def __init__(self, binary: Path) -> None:
        self.binary = binary

    @classmethod
    def built(cls) -> ArgoCD:
        binary = harness_file()
        if not os.access(binary, os.X_OK):
            raise Unavailable(f"the Argo CD harness is not built ({binary} absent): make cluster")
        return cls(binary)

    def _run(self, args: list[str], env: dict[str, str] | None, work: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.binary), *args],
            capture_output=True,
            text=True,
            env=env if env is not None else dict(os.environ),
            cwd=work,
            timeout=300,
            check=False,
        )

    def generate(
        self,
        application: dict[str, Any],
        repo: Path,
        plugin_config: Path,
        *,
        env: dict[str, str],
        argocd_cm: dict[str, Any] | None = None,
        api_versions: tuple[str, ...] = ("v1", "apps/v1", "trainer.kubeflow.org/v1alpha1"),
    ) -> Generated:
        """Argo CD's repo-server generating the Application's manifests from the git repository ``repo``
        (its target revision cloned as the repo-server clones it), through the plugin server running
        ``plugin_config``. ``env`` is the environment of both (the plugin's commands see it)."""
        with tempfile.TemporaryDirectory(prefix="argocd-") as scratch:
            work = Path(scratch)
            args = ["generate", "--application", _write(work / "application.yaml", application)]
            args += ["--repo", str(repo), "--plugin-config", str(plugin_config)]
            if argocd_cm is not None:
                args += ["--argocd-cm", _write(work / "argocd-cm.yaml", argocd_cm)]
            for version in api_versions:
                args += ["--api-version", version]
            done = self._run(args, env, work)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"argocd-harness generate exited {done.returncode}: {done.stderr}")
        out = json.loads(done.stdout)
        return Generated(
            manifests=out.get("manifests") or [], error=out.get("error"), revision=out.get("revision"), raw=done.stdout
        )

    def diff(
        self,
        application: dict[str, Any],
        generated: Generated,
        kubeconfig: str,
        *,
        argocd_cm: dict[str, Any] | None = None,
    ) -> Compared:
        """The application controller's comparison of ``generated`` with the live objects."""
        return _compared(self._on_cluster("diff", application, generated, kubeconfig, argocd_cm, []))

    def _on_cluster(
        self,
        command: str,
        application: dict[str, Any],
        generated: Generated,
        kubeconfig: str,
        argocd_cm: dict[str, Any] | None,
        flags: list[str],
    ) -> dict[str, Any]:
        """`diff` or `sync` of ``generated`` against the cluster: its JSON output."""
        assert generated.error is None, generated.error
        with tempfile.TemporaryDirectory(prefix="argocd-") as scratch:
            work = Path(scratch)
            manifests = work / "generated.json"
            manifests.write_text(generated.raw)
            args = [command, "--application", _write(work / "application.yaml", application)]
            args += ["--manifests", str(manifests), "--kubeconfig", kubeconfig, *flags]
            if argocd_cm is not None:
                args += ["--argocd-cm", _write(work / "argocd-cm.yaml", argocd_cm)]
            done = self._run(args, None, work)
        if done.returncode != 0:
            raise RuntimeError(f"argocd-harness {command} exited {done.returncode}: {done.stderr}")
        out: dict[str, Any] = json.loads(done.stdout)
        return out

    def sync(
        self,
        application: dict[str, Any],
        generated: Generated,
        kubeconfig: str,
        *,
        argocd_cm: dict[str, Any] | None = None,
        prune: bool = False,
        self_heal: bool = False,
    ) -> Synced:
        """The application controller's sync operation of ``generated`` (gitops-engine's sync, the
        Application's sync options), run to completion; ``self_heal``: as automated self-heal with git
        unchanged (nothing when Synced, else only the OutOfSync resources)."""
        flags = (["--prune"] if prune else []) + (["--self-heal"] if self_heal else [])
        out = self._on_cluster("sync", application, generated, kubeconfig, argocd_cm, flags)
        return Synced(
            skipped=out["skipped"],
            before=_compared(out["before"]),
            phase=out["phase"],
            message=out["message"],
            resources=[
                SyncResult(kind=r["kind"], name=r["name"], status=r["status"], message=r["message"])
                for r in out["resources"]
            ],
            waves=[Wave(wave=w["wave"], final=w["final"], resources=w["resources"]) for w in out["waves"]],
            passes=out["passes"],
        )


def _compared(out: dict[str, Any]) -> Compared:
    return Compared(
        status=out["status"],
        server_side_diff=out["serverSideDiff"],
        error=out.get("error"),
        resources=[
            ResourceDiff(
                group=r["group"],
                kind=r["kind"],
                namespace=r["namespace"],
                name=r["name"],
                status=r["status"],
                live=r["live"],
                requires_pruning=r["requiresPruning"],
                changed=r["changed"],
                normalized_live=r.get("normalizedLive"),
                predicted_live=r.get("predictedLive"),
            )
            for r in out["resources"]
        ],
    )


def _write(path: Path, document: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return str(path)
