"""The local control plane with upstream Kubeflow Trainer in it, and the standalone tools, for tests.

`make cluster` (tests/cluster/build.sh) builds everything by Go module version into a cache folder and
writes a `paths.json` there; `tool_paths()` reads it. `ControlPlane().start()` runs the harness
(tests/cluster/harness: envtest's etcd and kube-apiserver with upstream's CRDs and webhook
configuration, Trainer's controllers and webhooks in-process) and talks to it with the machine's kubectl;
``ControlPlane(kueue=True)`` runs upstream Kueue's controllers, scheduler and webhooks beside it
(tests/cluster/kueue, Kueue v0.17.0; ``kueue="v0.19.2"``: tests/cluster/kueue-v0.19, KUEUE_RELEASES);
``ControlPlane(trainer="v2.2.1")`` an older Trainer release (TRAINER_RELEASES).

    from tests.cluster.controlplane import ControlPlane, tool_paths, tools

    with ControlPlane().start() as cp:
        cp.apply_server_side(text)                  # as Argo CD does: field manager argocd-controller
        jobset = cp.wait_for_jobset("my-job", "default")
    tools.kustomize("v5.4")                         # path of the standalone kustomize v5.4.x
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

ARGOCD_FIELD_MANAGER = "argocd-controller"
JOBSET = "jobsets.jobset.x-k8s.io"
TRAINJOB = "trainjobs.trainer.kubeflow.org"
_BINARIES = ("kube-apiserver", "etcd", "harness")
_HERE = Path(__file__).resolve().parent


class Unavailable(RuntimeError):
    """The binaries `make cluster` builds are absent (no Go, or `make cluster` not run)."""


class KubectlError(subprocess.CalledProcessError):
    """kubectl exited non-zero; str() carries its stderr (the API server's or a webhook's refusal)."""

    def __str__(self) -> str:
        return f"kubectl {' '.join(self.cmd[3:])} exited {self.returncode}: {(self.stderr or '').strip()}"


def cache_root() -> Path:
    base = os.environ.get("TRAINJOB_RESOURCES_CACHE") or str(Path.home() / ".cache" / "trainjob-resources")
    return Path(base) / "cluster"


def paths_file() -> Path:
    """`TRAINJOB_RESOURCES_CLUSTER_PATHS` if set, else the cache's `current/paths.json` (`make cluster`)."""
    override = os.environ.get("TRAINJOB_RESOURCES_CLUSTER_PATHS")
    return Path(override) if override else cache_root() / "current" / "paths.json"


def tool_paths() -> dict[str, Any] | None:
    """The parsed paths.json, or None when it is absent or names a binary that is not there."""
    try:
        paths: dict[str, Any] = json.loads(paths_file().read_text())
    except (OSError, ValueError):
        return None
    binaries = [paths.get(name) for name in _BINARIES] + list(paths.get("kustomize", {}).values())
    if not all(isinstance(p, str) and os.access(p, os.X_OK) for p in binaries):
        return None
    return paths


def require_paths() -> dict[str, Any]:
    paths = tool_paths()
    if paths is None:
        raise Unavailable(f"the control-plane binaries are not built ({paths_file()} absent or stale): make cluster")
    return paths


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.lstrip("v").split("."))


def _trainer_version(modfile: Path) -> str:
    found = re.search(r"^\s*github\.com/kubeflow/trainer/v2 (v\S+)", modfile.read_text(), re.M)
    if found is None:
        raise ValueError(f"{modfile} names no github.com/kubeflow/trainer/v2")
    return found.group(1)


# The Trainer releases `make cluster` builds a harness for, as this checkout's module files name them:
# go.mod's (the default, the newest) first, then each trainer-v<minor>.mod's, newest first.
DEFAULT_TRAINER = _trainer_version(_HERE / "go.mod")
TRAINER_RELEASES = (
    DEFAULT_TRAINER,
    *sorted((_trainer_version(m) for m in _HERE.glob("trainer-v*.mod")), key=_version_key, reverse=True),
)


def _kueue_version(modfile: Path) -> str:
    found = re.search(r"^\s*sigs\.k8s\.io/kueue (v\S+)", modfile.read_text(), re.M)
    if found is None:
        raise ValueError(f"{modfile} names no sigs.k8s.io/kueue")
    return found.group(1)


# The Kueue releases with a harness: tests/cluster/kueue's (built by build.sh, the default) first, then
# each tests/cluster/kueue-v<minor>/'s (built by its own build.sh into a cache of its own), newest first.
DEFAULT_KUEUE = _kueue_version(_HERE / "kueue" / "go.mod")
KUEUE_RELEASES = (
    DEFAULT_KUEUE,
    *sorted((_kueue_version(m) for m in _HERE.glob("kueue-v*/go.mod")), key=_version_key, reverse=True),
)


def kueue_release_paths(version: str, paths: dict[str, Any]) -> dict[str, Any] | None:
    """The harness, CRDs and webhook configuration of a Kueue release: paths.json's ``kueue`` for the
    default, else the ``paths.json`` of the cache folder tests/cluster/kueue-v<minor>/build.sh builds."""
    if version == DEFAULT_KUEUE:
        built: dict[str, Any] | None = paths.get("kueue")
        return built
    minor = ".".join(version.split(".")[:2])
    try:
        found: dict[str, Any] = json.loads(
            (cache_root().parent / f"kueue-{minor}" / "current" / "paths.json").read_text()
        )
    except (OSError, ValueError):
        return None
    return found if found.get("versions", {}).get("kueue") == version else None


class Tools:
    """The standalone kustomize that `make cluster` builds, by version (Helm: tests/test_helm.py)."""

    def kustomize(self, version: str | None = None) -> str:
        """The kustomize binary whose version starts with `version` ("v5.4", "v5.8.2"); None: the newest."""
        built: dict[str, str] = require_paths()["kustomize"]
        matching = [v for v in built if version is None or v == version or v.startswith(version.rstrip(".") + ".")]
        if not matching:
            raise Unavailable(f"no kustomize {version} built (built: {', '.join(sorted(built))})")
        return built[max(matching, key=_version_key)]

    def kustomize_versions(self) -> list[str]:
        return sorted(require_paths()["kustomize"], key=_version_key)


tools = Tools()


def find_kubectl() -> str:
    found = shutil.which("kubectl") or ("/usr/bin/kubectl" if os.access("/usr/bin/kubectl", os.X_OK) else None)
    if found is None:
        raise Unavailable("kubectl is not on PATH; the control-plane tests drive the real kubectl")
    return found


# The control planes started and not yet stopped in this process: a failed test's report carries their
# API servers' errors (tests/conftest.py).
RUNNING: weakref.WeakSet[ControlPlane] = weakref.WeakSet()
# klog's error lines, as kube-apiserver writes them into the harness's log ("E1207 11:16:47.123456 ...").
_KLOG_ERROR = re.compile(r"^E\d{4} \d{2}:\d{2}:\d{2}\.\d+ ")


def klog_errors(lines: Iterable[str], most: int) -> list[str]:
    """The last ``most`` of klog's error lines among ``lines`` (not the controllers' JSON log lines)."""
    return [line.rstrip("\n") for line in lines if _KLOG_ERROR.match(line)][-most:]


class ControlPlane:
    """One harness process: etcd, kube-apiserver and upstream Trainer's controllers and webhooks.

    Start it from a thread that outlives it (the main thread): the harness asks for SIGTERM when the
    thread that started it exits (Linux's parent-death signal), and stops when its stdin closes.
    """

    def __init__(
        self,
        paths: dict[str, Any] | None = None,
        kubectl: str | None = None,
        verbosity: int = 0,
        *,
        kueue: bool | str = False,
        trainer: str = DEFAULT_TRAINER,
    ) -> None:
        self.paths = paths if paths is not None else require_paths()
        # The Trainer release: its harness, CRDs and webhook configuration (paths.json's releases; a
        # paths.json from before them holds only the default's, at its top level).
        releases = self.paths.get("releases") or {DEFAULT_TRAINER: self.paths}
        self.trainer = trainer
        self.release: dict[str, Any] = releases.get(trainer) or {}
        if not os.access(str(self.release.get("harness")), os.X_OK):
            built = ", ".join(sorted(releases, key=_version_key, reverse=True))
            raise Unavailable(f"no harness for Trainer {trainer} is built (built: {built}): make cluster")
        # With kueue: upstream Kueue's controllers, scheduler and webhooks too (tests/cluster/kueue), of
        # the release named (KUEUE_RELEASES; True: the default).
        self.kueue = bool(kueue)
        self.kueue_release: dict[str, Any] = {}
        if kueue:
            version = DEFAULT_KUEUE if kueue is True else str(kueue)
            self.kueue_release = kueue_release_paths(version, self.paths) or {}
            if not os.access(str(self.kueue_release.get("harness")), os.X_OK):
                raise Unavailable(f"no Kueue {version} harness is built: make cluster")
        self.kubectl_path = kubectl or find_kubectl()
        self.verbosity = verbosity
        self.versions: dict[str, Any] = {**self.paths.get("versions", {}), **self.release.get("versions", {})}
        self.versions.update(self.kueue_release.get("versions", {}))
        self.server = ""
        self.start_seconds = 0.0
        self._proc: subprocess.Popen[str] | None = None
        self._kueue: subprocess.Popen[str] | None = None
        self._dir: Path | None = None
        self._log: Any = None

    @property
    def kubeconfig(self) -> str:
        if self._dir is None:
            raise RuntimeError("the control plane is not started")
        return str(self._dir / "kubeconfig")

    @property
    def log_path(self) -> Path:
        if self._dir is None:
            raise RuntimeError("the control plane is not started")
        return self._dir / "harness.log"

    def start(self, timeout: float = 300.0) -> ControlPlane:
        if self._proc is not None:
            return self
        self._dir = Path(tempfile.mkdtemp(prefix="trainjob-resources-cp-"))
        # envtest puts etcd's data and the apiserver's certificates under TMPDIR: under our folder,
        # stop() can find whatever a killed harness left running.
        env = dict(os.environ, TMPDIR=str(self._dir))
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop())
        cmd = [
            self.release["harness"],
            f"--kubeconfig={self.kubeconfig}",
            f"--assets={self.paths['assets']}",
            f"--crds={self.release['crds']}",
            f"--webhook={self.release['webhook']}",
            f"--v={self.verbosity}",
            f"--start-timeout={int(timeout)}s",
        ]
        started = time.monotonic()
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, env=env
        )
        ready = self._ready(self._proc, "the harness", started + timeout)
        self.server = ready["server"]
        if self.kueue:
            kueue = self.kueue_release
            cmd = [
                kueue["harness"],
                f"--kubeconfig={self.kubeconfig}",
                f"--crds={kueue['crds']}",
                f"--webhook={kueue['webhook']}",
                f"--v={self.verbosity}",
                f"--start-timeout={int(timeout)}s",
            ]
            self._kueue = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, env=env
            )
            self._ready(self._kueue, "the Kueue harness", started + timeout)
        self.start_seconds = time.monotonic() - started
        RUNNING.add(self)
        return self

    def api_server_errors(self, most: int = 40) -> list[str]:
        """The last ``most`` error lines kube-apiserver wrote into the harness's log (a request it timed
        out or aborted is one: "Timeout or abort while handling")."""
        if self._dir is None or not self.log_path.is_file():
            return []
        with self.log_path.open(errors="replace") as log:
            return klog_errors(log, most)

    def _ready(self, proc: subprocess.Popen[str], what: str, deadline: float) -> dict[str, Any]:
        """The JSON of the process's ``READY`` line; stops everything if it exits or times out first."""
        lines: queue.Queue[str | None] = queue.Queue()
        stdout = proc.stdout
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise TimeoutError(f"{what} printed no READY in time") from None
            if line is None:
                code = proc.wait()
                tail = self.log_path.read_text()[-4000:]
                self.stop()
                raise RuntimeError(f"{what} exited {code} before READY; the log ends:\n{tail}")
            if line.startswith("READY "):
                ready: dict[str, Any] = json.loads(line[len("READY ") :])
                return ready

    def stop(self) -> None:
        RUNNING.discard(self)
        kueue, self._kueue = self._kueue, None
        proc, self._proc = self._proc, None
        for running in (kueue, proc):  # Kueue's harness first: it talks to the other's apiserver
            if running is None:
                continue
            with contextlib.suppress(OSError):
                if running.stdin is not None:
                    running.stdin.close()
            if running.poll() is None:
                running.send_signal(signal.SIGTERM)
            try:
                running.wait(timeout=40)
            except subprocess.TimeoutExpired:
                running.kill()
                running.wait()
        if self._dir is not None:
            _kill_leftovers(str(self._dir))
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._dir is not None and os.environ.get("TRAINJOB_RESOURCES_KEEP_CLUSTER_DIR") != "1":
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()

    # kubectl --------------------------------------------------------------------------------------

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [self.kubectl_path, f"--kubeconfig={self.kubeconfig}", "--request-timeout=60s", *args]
        done = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise KubectlError(done.returncode, cmd, done.stdout, done.stderr)
        return done

    def apply_server_side(
        self,
        yaml_text: str,
        field_manager: str = ARGOCD_FIELD_MANAGER,
        *,
        force_conflicts: bool = False,
        dry_run: bool = False,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """`kubectl apply --server-side` of a YAML stream, as Argo CD's server-side apply does."""
        args = ["apply", "--server-side", f"--field-manager={field_manager}", "-f", "-"]
        if force_conflicts:
            args.append("--force-conflicts")
        if dry_run:
            args.append("--dry-run=server")
        return self.kubectl(*args, input=yaml_text, check=check)

    def create(self, yaml_text: str, *, dry_run: bool = False, check: bool = True) -> subprocess.CompletedProcess[str]:
        args = ["create", "-f", "-"] + (["--dry-run=server"] if dry_run else [])
        return self.kubectl(*args, input=yaml_text, check=check)

    def get(
        self, kind: str, name: str, namespace: str | None = None, *, managed_fields: bool = False
    ) -> dict[str, Any] | None:
        """The object as JSON, or None when it does not exist."""
        args = ["get", kind, name, "-o", "json", "--ignore-not-found"]
        if managed_fields:
            args.append("--show-managed-fields")
        if namespace:
            args.append(f"--namespace={namespace}")
        out = self.kubectl(*args).stdout.strip()
        if not out:
            return None
        obj: dict[str, Any] = json.loads(out)
        return obj

    def delete(self, kind: str, name: str, namespace: str | None = None, *, wait: bool = True) -> None:
        args = ["delete", kind, name, "--ignore-not-found", f"--wait={'true' if wait else 'false'}"]
        if namespace:
            args.append(f"--namespace={namespace}")
        self.kubectl(*args)

    def wait_for_jobset(self, trainjob_name: str, namespace: str = "default", timeout: float = 30.0) -> dict[str, Any]:
        """The JobSet Trainer's controller creates for a TrainJob (same name, same namespace)."""
        deadline = time.monotonic() + timeout
        while True:
            jobset = self.get(JOBSET, trainjob_name, namespace)
            if jobset is not None:
                return jobset
            if time.monotonic() > deadline:
                trainjob = self.get(TRAINJOB, trainjob_name, namespace)
                status = json.dumps((trainjob or {}).get("status"), indent=1)
                raise TimeoutError(
                    f"no JobSet {namespace}/{trainjob_name} within {timeout:.0f}s; "
                    f"TrainJob {'absent' if trainjob is None else 'status: ' + status}"
                )
            time.sleep(0.2)


def _kill_leftovers(marker: str) -> None:
    """SIGKILL processes whose command line names our folder (etcd, kube-apiserver of a killed harness)."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def add_trainer_option(parser: argparse.ArgumentParser) -> None:
    """``--trainer VERSION``: the Trainer release the control plane runs (ControlPlane's ``trainer``)."""
    parser.add_argument(
        "--trainer",
        default=DEFAULT_TRAINER,
        metavar="VERSION",
        help=f"the Kubeflow Trainer release the control plane runs ({', '.join(TRAINER_RELEASES)}; "
        f"default: {DEFAULT_TRAINER})",
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.cluster.controlplane --kubeconfig FILE``: start the control plane, write its admin
    kubeconfig to FILE, and run until SIGTERM or SIGINT, or until stdin closes (then FILE is removed)."""
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m tests.cluster.controlplane",
        description="Run the local control plane (kube-apiserver, etcd, upstream Trainer's CRDs, webhooks and "
        "controllers) for your own output: `make cluster` first. Stops on SIGTERM, Ctrl-C or a closed stdin.",
    )
    parser.add_argument("--kubeconfig", required=True, metavar="FILE", help="where to write the admin kubeconfig")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the start (default: 300)")
    parser.add_argument(
        "--kueue",
        nargs="?",
        const=DEFAULT_KUEUE,
        choices=KUEUE_RELEASES,
        help=f"run upstream Kueue's controllers and webhooks too, of this release (default {DEFAULT_KUEUE})",
    )
    add_trainer_option(parser)
    options = parser.parse_args(argv)
    try:
        cp = ControlPlane(kueue=options.kueue or False, trainer=options.trainer)
    except Unavailable as absent:
        sys.stderr.write(f"controlplane: {absent}\n")
        return 2
    stop = threading.Event()

    def stop_on_signal(signum: int, _frame: object) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop_on_signal)

    def stop_on_eof() -> None:
        with contextlib.suppress(OSError, ValueError):
            while sys.stdin.read(4096):
                pass
        stop.set()

    cp.start(timeout=options.timeout)
    target = Path(options.kubeconfig)
    try:
        target.write_text(Path(cp.kubeconfig).read_text())
        target.chmod(0o600)
        sys.stdout.write(
            f"control plane up in {cp.start_seconds:.1f}s at {cp.server} (Kubernetes "
            f"{cp.versions.get('kubernetes', '?')}, Trainer {cp.versions.get('trainer', '?')}"
            f"{', Kueue ' + str(cp.versions.get('kueue', '?')) if cp.kueue else ''}); kubeconfig: "
            f"{target}\n"
        )
        sys.stdout.flush()
        threading.Thread(target=stop_on_eof, daemon=True).start()
        stop.wait()
    finally:
        cp.stop()
        with contextlib.suppress(OSError):
            target.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
