"""The command line run in a fork of the test process, for the fast loop (``make unit``).

A test that runs ``trainjob-resources render`` as a real process pays a fresh interpreter and its
imports, about 0.2 s of CPU, for a render that costs 0.04 s: ``tests/test_render_hostile.py`` runs
it some 150 times, half of ``make unit``'s CPU. Under ``make unit`` (``TESTS_RENDER_IN_FORK=1``) such a
run is a fork of the test process, the package already imported, that does what the console script
does: ``trainjob_resources.cli.main.run()`` in the given folder, environment, standard streams and
resource limits, its exit code and output collected as ``subprocess.run`` collects them. ``make test``
(and a plain ``pytest``) runs the installed command itself: the entry point and a fresh interpreter
are checked there, and a test about the process (signals, a killed child) always runs the real one.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import os
import pkgutil
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

SWITCH = "TESTS_RENDER_IN_FORK"
# What an uncaught exception exits with in a real interpreter.
UNCAUGHT = 1


def wanted() -> bool:
    return os.environ.get(SWITCH) == "1"


_warm: list[bool] = []


def _import_the_package() -> None:
    """Every module of the package, once, so that no fork pays for an import (``__main__`` runs the function)."""
    if _warm:
        return
    import trainjob_resources

    for module in pkgutil.walk_packages(trainjob_resources.__path__, "trainjob_resources."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
    _warm.append(True)


def run(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    limits: Callable[[], None],
    timeout: float,
    stdin: bytes | None = None,
) -> tuple[int, bytes, bytes]:
    """``argv`` (``argv[0]`` the program's name) as the console script runs it: exit code, stdout, stderr.

    ``limits`` runs in the child before the command, as ``subprocess``'s ``preexec_fn``; past
    ``timeout`` seconds the child is killed and ``TimeoutError`` raised."""
    _import_the_package()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given:
        if stdin is not None:
            given.write(stdin)
            given.seek(0)
        gc.freeze()  # the child's collections then leave the test process's objects (and its pages) alone
        try:
            pid = os.fork()
            if pid == 0:
                _child(argv, cwd, env, limits, (given if stdin is not None else None, out, err))
        finally:
            gc.unfreeze()
        status = _wait(pid, timeout)
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read(), err.read()


def _child(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    limits: Callable[[], None],
    streams: tuple[IO[bytes] | None, IO[bytes], IO[bytes]],
) -> None:
    """Never returns: the test process's code (pytest, its exit handlers) must not run in the child."""
    code = UNCAUGHT
    try:
        given, out, err = streams
        if given is not None:
            os.dup2(given.fileno(), 0)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        # The streams a fresh interpreter opens on them (C.UTF-8, PEP 538), not pytest's captures.
        sys.stdin = open(0, encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        faulthandler.disable()
        for signum in (signal.SIGTERM, signal.SIGALRM, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = list(argv)
        limits()
        from trainjob_resources.cli.main import run as console_script

        console_script()  # exits the process itself (os._exit), its output flushed
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        _flush()
    except BaseException:
        traceback.print_exc()
        _flush()
    finally:
        os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed early: what it held is lost
            stream.flush()


def _wait(pid: int, timeout: float) -> int:
    deadline, pause = time.monotonic() + timeout, 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError(f"killed after {timeout} s")
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def address_space_fits(limit_bytes: int) -> bool:
    """Whether the test process's address space is far enough under ``limit_bytes`` for a fork of it
    to run under that limit as a fresh interpreter would."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize() < limit_bytes // 2
