"""A large bundle's TrainJobs processed on two CPUs: this process and a fork of it.

Each TrainJob is processed on its own (``pipeline/work.py``, ``contribute``), so a range of them can
be processed by a copy of this process, which sends back what they contributed (their texts,
results and derived-runtime requests: plain data, pickled through a pipe). The emit stage
(``pipeline/emit.py``) merges the contributions in input order and makes the derived runtimes, so
the output is the same bytes however the TrainJobs were split; a child that fails or sends
something unreadable has its range processed here instead. kustomize, the tool around the
function, works on every CPU the same way.

Only the KRM function forks, and only where it pays: on a machine with two CPUs for it (its
affinity mask), for a ResourceList read by items from its text, with ``MIN_TRAINJOBS`` or more
TrainJobs. ``TRAINJOB_RESOURCES_WORKERS=1`` keeps it in one process.
"""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any, Final

from ..pipeline.work import Contribution, TrainJobWork

WORKERS_VARIABLE: Final = "TRAINJOB_RESOURCES_WORKERS"
MAX_WORKERS: Final = 2
# Below this many TrainJobs a fork (about 2 ms, and the pages both processes then touch) and
# sending the texts back cost about what they save.
MIN_TRAINJOBS: Final = 100
# The share of the TrainJobs the fork takes, in percent: this process has the merging and the
# writing still to do when both are done.
FORK_SHARE: Final = 50


def workers(environ: dict[str, str] | os._Environ[str] = os.environ) -> int:
    """How many processes may work: the CPUs this process may run on, or the variable's value (a
    positive integer; anything else counts as 1); at most MAX_WORKERS."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    wanted = environ.get(WORKERS_VARIABLE)
    if wanted is not None:
        return min(int(wanted), MAX_WORKERS) if wanted.isdigit() and int(wanted) >= 1 else 1
    return max(1, min(cpus, MAX_WORKERS))


def forked(work: TrainJobWork) -> list[Contribution]:
    """``work`` processed by this process and, for a large bundle on two CPUs, a fork of it."""
    count = len(work)
    if count < MIN_TRAINJOBS or workers() < 2 or not hasattr(os, "fork") or not work.carriable():
        return work.run(0, count)
    return split(work, 0, count - count * FORK_SHARE // 100)


def split(work: TrainJobWork, warm: int, middle: int) -> list[Contribution]:
    """``work``'s first ``warm`` TrainJobs here (the fork then starts with what the memo learnt
    from them), then those up to ``middle`` here while a fork processes the rest."""
    count = len(work)
    head = work.run(0, warm)
    theirs = _start(work, middle, count)
    try:
        mine = work.run(warm, middle)
    except BaseException:  # e.g. krm.NotSplittable: the caller starts again without this fork
        _abandon(theirs)
        raise
    received = _receive(theirs, count - middle)
    if received is None or not work.fits(received):
        received = work.run(middle, count)
    return head + mine + received


def _codec() -> Any:
    """pickle, imported only when a fork is made."""
    import pickle

    return pickle


_Child = tuple[int, int] | None  # (pid, read end of its pipe)


def _start(work: TrainJobWork, start: int, stop: int) -> _Child:
    codec = _codec()  # imported once, before the fork: the child and this process both use it
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(read_end)
            work.derives = False
            contributions = work.carried(start, work.run(start, stop))
            data = codec.dumps(contributions, protocol=codec.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)  # no interpreter teardown, no flush of buffers it shares with its parent
    os.close(write_end)
    return pid, read_end


def _abandon(child: _Child) -> None:
    """Stop and reap a child whose work is no longer wanted."""
    if child is None:
        return
    pid, read_end = child
    os.close(read_end)
    with contextlib.suppress(OSError):  # gone already
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _receive(child: _Child, expected: int) -> list[Contribution] | None:
    """The child's contributions, or None when it failed (its range is then processed here)."""
    if child is None:
        return None
    pid, read_end = child
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    try:
        contributions = _codec().loads(data)
    except Exception:
        return None
    if not isinstance(contributions, list) or len(contributions) != expected:
        return None
    if not all(isinstance(c, Contribution) and c.state is not None for c in contributions):
        return None
    return contributions
