"""kustomize run as a sandboxed child on the private copy (``private_copy``): an empty environment,
one deadline for all the builds of a render (wall clock, and CPU time as a resource limit), a data
limit (MAX_MEMORY), its own process group and network namespace (where the kernel allows one),
killed with ``render`` even if render is killed (a parent-death signal); the copy is made outside
the repository, or not at all, and removed on the way out."""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .kustomize import BuildPlan
from .private_copy import mirror
from .sources import Reader, RenderError, Root, shown

if TYPE_CHECKING:
    pass

DEFAULT_TIMEOUT = 60.0
MAX_STDERR = 64 * 1024


def command(directory: str) -> list[str]:
    """kustomize's build, as plain as it gets: no plugin, exec, container, Helm flags; root-only loads."""
    kustomize = shutil.which("kustomize")
    if kustomize is not None:
        return [kustomize, "build", "--load-restrictor", "LoadRestrictionsRootOnly", directory]
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsRootOnly", directory]
    raise RenderError("building it needs kustomize or kubectl on PATH, and neither was found")


class Interrupted(BaseException):
    """render was asked to stop (SIGTERM, SIGHUP, SIGINT) while kustomize ran."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def build(found: BuildPlan, reader: Reader, timeout: float = DEFAULT_TIMEOUT) -> str:
    """kustomize's output for the plan, read within the load's budget; RenderError if it fails.
    ``timeout`` applies when the reader carries no deadline of its own (the render's, for all builds)."""
    from ..yamltext import yamlnodes as yn

    deadline = reader.deadline if reader.deadline is not None else time.monotonic() + timeout
    limit = reader.time_limit if reader.deadline is not None else timeout
    with _signals(), _work_dir(found.root) as work:  # handlers first: a stop during the copy cleans up too
        left = deadline - time.monotonic()
        if left <= 0:
            raise RenderError(
                f"{shown(found.label)}: the render's {limit:g} s for kustomize builds ran out before this one; stopped"
            )
        tree = os.path.join(work, "tree")
        os.mkdir(tree)
        directory = mirror(found, reader, tree)
        try:
            argv = command(directory)
        except RenderError as missing:
            raise RenderError(f"{shown(found.label)}: has a kustomization; {missing}") from None
        env = {
            "PATH": "/nonexistent",
            "HOME": work,
            "LC_ALL": "C",
            "KUSTOMIZE_PLUGIN_HOME": "/nonexistent",
            "GOMEMLIMIT": f"{MAX_MEMORY * 3 // 4}B",  # the Go runtime collects harder before the hard limit
            "GOMAXPROCS": "2",
        }
        left = deadline - time.monotonic()
        code, out, stderr, timed_out = _run(argv, env, work, left, reader.budget.bytes_left)
        tool = "kustomize build" if os.path.basename(argv[0]) == "kustomize" else "kubectl kustomize"
        if timed_out:
            raise RenderError(
                f"{shown(found.label)}: `{tool}` did not finish within the render's {limit:g} s for kustomize "
                "builds; stopped"
            )
        if out is None:
            raise RenderError(
                f"{shown(found.label)}: `{tool}` printed more than the {reader.budget.bytes_left} bytes left "
                "of the render's input limit; stopped"
            )
        if code != 0:
            if _out_of_memory(stderr):
                raise RenderError(
                    f"{shown(found.label)}: `{tool}` ran out of its {MAX_MEMORY // MiB} MiB of memory (YAML aliases "
                    "that expand, or a large file named many times?); stopped"
                )
            summary = _summary(stderr, tree, found.root, directory)
            raise RenderError(f"{shown(found.label)}: `{tool}` failed (exit {code}): {summary}")
    reader.budget.take_bytes(len(out), found.label)
    try:
        return yn.decode(out)
    except yn.YamlInputError as err:
        raise RenderError(f"{shown(found.label)}: kustomize output: {err}") from None


MiB = 1024 * 1024
# kustomize's data segment (RLIMIT_DATA: the Go heap's private writable mappings; the Go runtime
# starts under 128 MiB of it, while an address-space limit under 1 GiB stops it reserving its arenas).
MAX_MEMORY = 1024 * MiB
WORK_PREFIX = "trainjob-resources-"  # then the PID namespace, the process id, mkdtemp's random part


def _out_of_memory(stderr: bytes) -> bool:
    return b"out of memory" in stderr or b"cannot allocate memory" in stderr


@contextlib.contextmanager
def _signals() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT raise Interrupted while a build is prepared and runs (the private
    copy is removed and kustomize killed on the way out); only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def temp_candidates() -> list[str]:
    return [d for d in (os.environ.get("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm") if d]


@contextlib.contextmanager
def _work_dir(root: Root) -> Iterator[str]:
    """A private folder for the copy, outside the repository (never Python's fallback to the current
    folder); copies left by renders that were killed (SIGKILL: no clean-up ran) are removed first."""
    tried: list[str] = []
    for candidate in temp_candidates():
        real = os.path.realpath(candidate)
        if not os.path.isabs(candidate) or root.contains(real) or real in tried:
            continue
        tried.append(real)
        _remove_orphans(real)
        try:
            work = tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{_pid_namespace()}-{os.getpid()}-", dir=real)
        except OSError:
            continue
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    raise RenderError(
        "no temporary folder outside the repository is writable (TMPDIR, /tmp, /var/tmp, /dev/shm); render "
        "builds kustomizations in a private copy and writes nothing into the repository: refused"
    )


def _pid_namespace() -> int:
    """The PID namespace render runs in (its inode): a process id means something only within it."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _remove_orphans(folder: str) -> None:
    """Removes private copies of renders of this PID namespace, owned by this user, whose process is
    gone (a render killed by SIGKILL runs no clean-up). Copies of other namespaces (a /tmp shared by
    containers) are left alone: their process ids cannot be checked from here."""
    uid, namespace = os.getuid(), str(_pid_namespace())
    with contextlib.suppress(OSError), os.scandir(folder) as scan:
        for entry in scan:
            if not entry.name.startswith(WORK_PREFIX):
                continue
            parts = entry.name.removeprefix(WORK_PREFIX).split("-", 2)
            if len(parts) < 3 or parts[0] != namespace:
                continue
            pid_text = parts[1]
            with contextlib.suppress(OSError, ValueError):
                if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                try:
                    os.kill(int(pid_text), 0)
                except ProcessLookupError:
                    shutil.rmtree(entry.path, ignore_errors=True)


def _libc() -> object | None:
    """The C library render runs on (dlopen of no file: nothing new is loaded), for prctl and unshare."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000


def _child_setup(cpu_seconds: int, libc: object | None, parent: int) -> None:
    """In kustomize's process, before it runs: killed with render (a parent-death signal, set before
    the check that render is still there), CPU time and data limits, and a network namespace of its
    own (no interface but a down loopback) where the kernel allows one, as root or in a user namespace."""
    import resource

    if libc is not None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # type: ignore[attr-defined]
    if os.getppid() != parent:
        os._exit(137)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    hard = cpu_seconds + 1 if hard == resource.RLIM_INFINITY else min(hard, cpu_seconds + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (min(cpu_seconds, hard), hard))
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    data = MAX_MEMORY if hard == resource.RLIM_INFINITY else min(hard, MAX_MEMORY)
    resource.setrlimit(resource.RLIMIT_DATA, (data, data))
    if libc is not None and libc.unshare(_CLONE_NEWNET) != 0:  # type: ignore[attr-defined]
        libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET)  # type: ignore[attr-defined]


def _run(
    argv: list[str], env: dict[str, str], cwd: str, timeout: float, max_out: int
) -> tuple[int, bytes | None, bytes, bool]:
    """Exit code, stdout (None past ``max_out``), stderr (first 64 KiB) and whether time ran out."""
    cpu = max(1, int(timeout) + 1)
    libc, parent = _libc(), os.getpid()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=lambda: _child_setup(cpu, libc, parent),
    )
    out, err = bytearray(), bytearray()
    too_much = timed_out = False
    try:
        deadline = time.monotonic() + timeout
        assert process.stdout is not None and process.stderr is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ, out)
            selector.register(process.stderr, selectors.EVENT_READ, err)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    buffer: bytearray = key.data
                    if buffer is err:
                        buffer.extend(chunk[: max(0, MAX_STDERR - len(buffer))])
                    else:
                        buffer.extend(chunk)
                        too_much = len(buffer) > max_out
                if too_much:
                    break
        if timed_out or too_much:
            _kill(process)
            return -1, None, bytes(err), timed_out
        code = process.wait(timeout=max(0.1, deadline - time.monotonic()))
        return code, bytes(out), bytes(err), False
    except subprocess.TimeoutExpired:
        _kill(process)
        return -1, None, bytes(err), True
    finally:
        if process.poll() is None:
            _kill(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


_GO_ERR = re.compile(r'\berr="((?:[^"\\]|\\.)*)"')


def _summary(stderr: bytes, tree: str, root: Root, directory: str | None = None) -> str:
    """kustomize's reason, in one line: its ``Error:`` or klog ``err=`` text, a malformed file on its
    own lines (``kustomize_yaml``), the private copy's paths named as the repository's, control
    characters escaped, cut at 500 characters."""
    text = stderr.decode(errors="replace")
    reason = ""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if line.rstrip().endswith("err=<"):  # klog's multi-line value: tab-indented lines, then " >"
            block = [row.strip() for row in lines[at + 1 :] if row.startswith("\t")]
            reason = " ".join(row for row in block if row and row != "`")
            break
        match = _GO_ERR.search(line)
        if match:
            reason = match.group(1).replace('\\"', '"').replace("\\\\", "\\")
            break
        if line.startswith("Error: "):
            reason = line.removeprefix("Error: ")
            break
    reason = reason or (text.strip().splitlines() or ["(no message)"])[-1]
    if directory is not None:
        from .kustomize_yaml import placed

        reason = placed(reason, directory, tree, root.label)
    reason = reason.replace(tree, root.label.rstrip(os.sep) or os.sep)
    if "external plugins disabled" in reason:
        reason += " (render runs no plugin or KRM function a repository names)"
    reason = shown(reason)
    return reason if len(reason) <= 500 else reason[:500] + "…"
