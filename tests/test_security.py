"""Security (issue 7, item 5): the function reads stdin and writes stdout, and nothing else.

Each run is a real process started through a small bootstrap that installs a ``sys.addaudithook``
before the package is imported; the hook records every audited event that touches the world
outside the process: files opened (and how), directories listed, files removed, renamed or
created, sockets, subprocesses, ``os.system``, ``exec``, ``fork``, ``ctypes``. The test then
asserts that nothing was opened for writing, no file was read outside the interpreter, its
installed packages and the paths ``render``/``explain`` were given, and there was no network or
process event at all. Bytecode writing is Python's import cache, not the function: it is switched
off (``-B``), and ``-I`` keeps the bootstrap's own folder off the import path, so that the record
holds only what the function does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hostile import CONFIG_MAP, RUNTIME, trainjob_value, trainjob_yaml
from tests.test_hostile import billion_laughs, json_bundle, with_memory

TESTDATA = Path(__file__).parent / "testdata"

BOOTSTRAP = r"""
import json, os, site, sys

events = []
WATCHED = ("open", "os.listdir", "os.scandir", "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod",
           "os.chown", "os.truncate", "os.symlink", "os.link", "os.utime", "shutil.", "socket.", "subprocess.",
           "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty", "os.kill", "os.startfile",
           "ctypes.", "urllib.", "http.", "ftplib.", "smtplib.", "webbrowser.", "sqlite3.", "pty.", "mmap.")

def hook(event, args):
    if event.startswith(WATCHED):
        events.append([event] + [repr(a) if not isinstance(a, (str, int)) else a for a in args[:2]])

sys.addaudithook(hook)
_exit = os._exit

def exit_reporting(code):
    # A fork of the function ends with os._exit: it reports what it did first.
    os.write(int(os.environ["AUDIT_FD"]), json.dumps({"events": events, "child": True}).encode())
    _exit(code)

os._exit = exit_reporting
os.register_at_fork(after_in_child=events.clear)  # a fork's record starts at the fork
import trainjob_resources
from trainjob_resources.cli.main import main

trusted = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
           os.path.dirname(os.path.dirname(os.path.abspath(trainjob_resources.__file__)))}
try:
    BODY
finally:
    os.write(int(os.environ["AUDIT_FD"]), json.dumps({"events": events, "trusted": sorted(trusted)}).encode())
sys.exit(code)
"""

NETWORK_OR_PROCESS = ("socket.", "subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork")
NETWORK_OR_PROCESS += ("os.kill", "os.startfile", "ctypes.", "urllib.", "http.", "ftplib.", "smtplib.", "pty.")
CHANGES = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.symlink")
CHANGES += ("os.link", "os.utime", "shutil.")


def audited(
    args: list[str], data: bytes, tmp_path: Path, body: str = "code = main(sys.argv[1:])"
) -> tuple[int, list[list[Any]], list[str]]:
    """Exit code, the events the hook saw, and the folders the interpreter and packages live in."""
    code, reports = audited_processes(args, data, tmp_path, body)
    (report,) = [r for r in reports if not r.get("child")]
    assert not [r for r in reports if r.get("child")], "a fork: see test_a_large_bundle_forks_the_function_only"
    return code, report["events"], report["trusted"]


def audited_processes(
    args: list[str], data: bytes, tmp_path: Path, body: str, env: dict[str, str] | None = None
) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and the record of the process and of each fork of it (``"child": true``)."""
    script = tmp_path / "audited.py"
    script.write_text(BOOTSTRAP.replace("BODY", body))
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-I", "-B", str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(write_end,),
        env={**os.environ, **(env or {}), "AUDIT_FD": str(write_end)},
    )
    os.close(write_end)
    _, stderr = process.communicate(data, timeout=120)
    reports = _reports(read_end)
    assert "Traceback" not in stderr.decode(errors="replace"), stderr[-2000:]
    return process.returncode, reports


def _reports(read_end: int) -> list[dict[str, Any]]:
    """The JSON documents written to the audit pipe: the process's, and one for each fork of it."""
    with os.fdopen(read_end, "rb") as record:
        text = record.read().decode()
    decoder, out, at = json.JSONDecoder(), [], 0
    while at < len(text):
        report, at = decoder.raw_decode(text, at)
        out.append(report)
    return out


def assert_contained(events: list[list[Any]], trusted: list[str], given: tuple[Path, ...] = ()) -> None:
    allowed = tuple(trusted) + tuple(str(p.resolve()) for p in given)
    forbidden = [e for e in events if e[0].startswith(NETWORK_OR_PROCESS)]
    assert not forbidden, forbidden
    changes = [e for e in events if e[0].startswith(CHANGES)]
    assert not changes, changes
    for event in events:
        if event[0] == "open":
            path, mode = event[1], event[2]
            if isinstance(path, int):
                continue  # an already open descriptor (stdin, stdout)
            assert not set(str(mode)) & set("wax+"), event
            assert os.path.realpath(path).startswith(allowed) or path.startswith(allowed), event
        elif event[0] in ("os.listdir", "os.scandir"):
            path = event[1]
            assert path in ("'.'", ".") or os.path.realpath(str(path)).startswith(allowed), event


KRM_INPUTS = {
    "success golden": lambda: (TESTDATA / "success" / "data-loader-64gi" / "input.yaml").read_bytes(),
    "error golden": lambda: (TESTDATA / "error" / "unknown-container" / "input.yaml").read_bytes(),
    "JSON": json_bundle,
    "python tags": lambda: with_memory(f"!!python/object/apply:os.system ['touch {os.devnull}.x']"),
    "alias bomb": billion_laughs,
    "garbage": lambda: bytes(range(256)) * 4,
}


@pytest.mark.parametrize("name", list(KRM_INPUTS))
def test_the_krm_function_touches_nothing_but_stdin_and_stdout(name: str, tmp_path: Path) -> None:
    code, events, trusted = audited([], KRM_INPUTS[name](), tmp_path)
    assert code in (0, 1)
    assert_contained(events, trusted)
    assert any(e[0] == "open" for e in events), "the hook saw nothing: is it installed?"


@pytest.mark.parametrize("command", ["render", "explain"])
def test_render_and_explain_read_only_what_they_are_given(command: str, tmp_path: Path) -> None:
    given = tmp_path / "manifests"
    given.mkdir()
    (given / "runtime.yaml").write_text(RUNTIME.replace("\n  ", "\n")[2:])
    (given / "trainjob.yaml").write_text(trainjob_yaml(trainjob_value()).replace("\n  ", "\n")[2:])
    (given / "configmap.yaml").write_text(CONFIG_MAP.replace("\n  ", "\n")[2:])
    (tmp_path / "secret.yaml").write_text("not to be read\n")
    code, events, trusted = audited([command, str(given)], b"", tmp_path)
    assert code == 0
    assert_contained(events, trusted, (given,))
    read = {os.path.realpath(e[1]) for e in events if e[0] == "open" and isinstance(e[1], str)}
    assert str((given / "trainjob.yaml").resolve()) in read
    assert str((tmp_path / "secret.yaml").resolve()) not in read


@pytest.mark.parametrize(
    "body",
    [
        "open(os.path.join(os.environ['TMPDIR'], 'x'), 'w').close(); code = 0",
        "import subprocess; subprocess.run(['true']); code = 0",
        "import socket; socket.socket().close(); code = 0",
        "open('/etc/hostname').close(); code = 0",
    ],
)
def test_the_harness_catches_a_violation(body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    code, events, trusted = audited([], b"", tmp_path, body)
    assert code == 0
    with pytest.raises(AssertionError):
        assert_contained(events, trusted)


def _inside(path: object, folders: tuple[str, ...]) -> bool:
    text = str(path).strip("'\"")
    return os.path.realpath(text).startswith(folders) or text.startswith(folders)


@pytest.mark.parametrize("command", ["render", "explain"])
def test_render_on_a_kustomization_runs_kustomize_alone_and_reads_only_the_root(
    command: str, kubectl: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16: the one process is the plain kustomize build (no plugin flags); files opened resolve
    inside the root, the interpreter or the private copy kustomize builds; that copy is all it changes."""
    import shutil

    from tests.examples import EXAMPLES

    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "overlay-multi", root)
    (tmp_path / "secret.yaml").write_text("not to be read\n")
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    monkeypatch.setenv("PATH", str(Path(kubectl).parent))
    code, events, trusted = audited([command, "--root", str(root), str(root / "overlays" / "prod")], b"", tmp_path)
    assert code == 0
    # dlopen(NULL): the C library already loaded, for kustomize's prctl (parent-death signal) and unshare.
    processes = [e for e in events if e[0].startswith(NETWORK_OR_PROCESS) and e[:2] != ["ctypes.dlopen", "None"]]
    assert [e[0] for e in processes] == ["subprocess.Popen"], processes
    executable, argv = processes[0][1], processes[0][2]
    assert os.path.basename(str(executable)) in ("kubectl", "kustomize"), processes
    assert "kustomize" in str(argv) and "--enable" not in str(argv) and "LoadRestrictionsRootOnly" in str(argv)
    allowed = (*trusted, str(root.resolve()), str(private.resolve()), os.devnull)  # devnull: kustomize's stdin
    removing = False  # shutil.rmtree of the private copy opens its entries by name, relative to a folder
    for event in events:
        if event[0] == "shutil.rmtree":
            removing = _inside(event[1], (str(private.resolve()),))
        if event[0] == "open" and not isinstance(event[1], int):
            assert _inside(event[1], allowed) or (removing and "/" not in str(event[1])), event
            if set(str(event[2])) & set("wax+"):
                assert _inside(event[1], (str(private.resolve()),)), event
        elif event[0].startswith(CHANGES):
            assert _inside(event[1], (str(private.resolve()),)) or (removing and "/" not in str(event[1])), event
    read = {os.path.realpath(e[1]) for e in events if e[0] == "open" and isinstance(e[1], str)}
    assert str((root / "base" / "trainjobs.yaml").resolve()) in read
    assert str((tmp_path / "secret.yaml").resolve()) not in read
    assert list(private.iterdir()) == [], "the private copy is removed"


def test_a_large_bundle_forks_the_function_only(tmp_path: Path) -> None:
    """From MIN_TRAINJOBS TrainJobs on two CPUs the function forks once (cli/fan_out.py): no exec, no
    other program, and the fork touches nothing but the pipe back to its parent."""
    from trainjob_resources.cli import fan_out

    out = tmp_path / "bundle"
    generator = Path(__file__).resolve().parent.parent / "bench" / "generate.py"
    subprocess.run([sys.executable, str(generator), "--n", str(fan_out.MIN_TRAINJOBS), "--out", str(out)], check=True)
    data = (out / "resourcelist.yaml").read_bytes()
    code, reports = audited_processes([], data, tmp_path, "code = main([])", {fan_out.WORKERS_VARIABLE: "2"})
    assert code == 0
    (parent,) = [r for r in reports if not r.get("child")]
    (child,) = [r for r in reports if r.get("child")]
    processes = [e for e in parent["events"] if e[0].startswith(NETWORK_OR_PROCESS)]
    assert [e[0] for e in processes] == ["os.fork"], processes
    assert_contained([e for e in parent["events"] if e[0] != "os.fork"], parent["trusted"])
    assert_contained(child["events"], parent["trusted"])  # it reads the interpreter's modules (pickle) at most
    written = [e for e in child["events"] if e[0] == "open" and set(str(e[2])) & set("wax+")]
    assert written and all(isinstance(e[1], int) for e in written), written  # the pipe's descriptor only
