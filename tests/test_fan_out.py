"""cli/fan_out.py: TrainJobs processed in a fork of the function give the bytes one process gives.

Every split here really forks (``split`` is called directly, below the size and CPU thresholds),
and each test checks that the child's contributions were the ones used, so that a fallback to
processing everything here cannot pass for a working fork.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from trainjob_resources.cli import fan_out
from trainjob_resources.cli.main import as_main
from trainjob_resources.krm import resource_list as krm
from trainjob_resources.pipeline.work import Contribution, TrainJobWork, in_process
from trainjob_resources.process import process

from tests.goldens import cases
from tests.test_properties import bundles

GENERATOR = Path(__file__).resolve().parent.parent / "bench" / "generate.py"
FUNCTION = Path(sys.executable).parent / "trainjob-resources"


@pytest.fixture
def received(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Whether each child's contributions arrived (False: its range was processed here instead)."""
    seen: list[bool] = []
    original = fan_out._receive

    def recording(child: Any, expected: int) -> list[Contribution] | None:
        got = original(child, expected)
        seen.append(got is not None)
        return got

    monkeypatch.setattr(fan_out, "_receive", recording)
    yield seen


def one_process(data: bytes) -> bytes:
    return krm.write(process(krm.read(data)))


def split_at(warm: Callable[[int], int]) -> Callable[[TrainJobWork], list[Contribution]]:
    def fan(work: TrainJobWork) -> list[Contribution]:
        assert work.carriable(), "read by items from text: what the CLI forks for"
        first = warm(len(work))
        return fan_out.split(work, first, first + (len(work) - first) // 2)

    return fan


def two_processes(data: bytes, warm: Callable[[int], int] = lambda n: 0) -> bytes:
    return krm.write(process(krm.read(data), fan_out=split_at(warm)))


def _trainjob_count(data: bytes) -> int:
    """The TrainJobs ``process`` hands to its fan-out (none when it stops before, at a bad
    functionConfig), when they can be carried across processes; else 0."""
    counted: list[int] = []

    def count(work: TrainJobWork) -> list[Contribution]:
        counted.append(len(work) if work.carriable() else 0)
        return in_process(work)

    try:
        process(krm.read(data), fan_out=count)
    except (krm.ResourceListError, ValueError):
        return 0
    return counted[0] if counted else 0


GOLDEN_INPUTS = [p / "input.yaml" for p in cases("success") + cases("error")]
COUNTS = {p: _trainjob_count(p.read_bytes()) for p in GOLDEN_INPUTS}
SPLITTABLE = [p for p in GOLDEN_INPUTS if COUNTS[p]]
# Where the child's range starts: none warm, half, all but one. A case with one TrainJob splits the
# same way at all three, one with two at the last two: each split is run once.
WARM: dict[str, Callable[[int], int]] = {"0": lambda n: 0, "half": lambda n: n // 2, "all-but-one": lambda n: n - 1}


def _distinct_splits() -> Iterator[Any]:
    for path in SPLITTABLE:
        firsts: set[int] = set()
        for name, warm in WARM.items():
            if warm(COUNTS[path]) not in firsts:
                firsts.add(warm(COUNTS[path]))
                yield pytest.param(path, warm, id=f"{name}-{path.parent.name}")


@pytest.mark.parametrize(("path", "warm"), list(_distinct_splits()))
def test_every_golden_gives_the_same_bytes_split_anywhere(
    path: Path, warm: Callable[[int], int], received: list[bool]
) -> None:
    data = path.read_bytes()
    assert two_processes(data, warm) == one_process(data)
    assert received == [True]


def test_the_goldens_cover_forking() -> None:
    assert len(SPLITTABLE) >= 20, [p.parent.name for p in SPLITTABLE]
    assert any(_trainjob_count(p.read_bytes()) >= 3 for p in SPLITTABLE)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=bundles(failing=2))
def test_any_bundle_gives_the_same_bytes_in_two_processes(data: bytes, received: list[bool]) -> None:
    received.clear()
    if not _trainjob_count(data):
        return
    assert two_processes(data) == one_process(data)
    assert received == [True]


@pytest.fixture(scope="module")
def bench_bundle(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("bundle")
    count = fan_out.MIN_TRAINJOBS + 20
    subprocess.run([sys.executable, str(GENERATOR), "--n", str(count), "--out", str(out)], check=True)
    return (out / "resourcelist.yaml").read_bytes()


@pytest.mark.slow
def test_the_benchmark_bundle_gives_the_same_bytes(bench_bundle: bytes, received: list[bool]) -> None:
    assert two_processes(bench_bundle, lambda n: n // 10) == one_process(bench_bundle)
    assert received == [True]


class _Refusing:
    """A pickle module whose dumps fails (in the child, which then exits 1)."""

    HIGHEST_PROTOCOL = 5

    @staticmethod
    def dumps(value: object, protocol: int) -> bytes:
        raise RuntimeError("cannot pickle")

    loads = staticmethod(pickle.loads)


class _Garbling(_Refusing):
    @staticmethod
    def dumps(value: object, protocol: int) -> bytes:
        return b"not a pickle"


class _Shortening(_Refusing):
    @staticmethod
    def dumps(value: object, protocol: int) -> bytes:
        assert isinstance(value, list)
        return pickle.dumps(value[:-1], protocol)


@pytest.mark.parametrize(
    "broken",
    [_Refusing, pytest.param(_Garbling, marks=pytest.mark.slow), pytest.param(_Shortening, marks=pytest.mark.slow)],
)
@pytest.mark.slow
def test_a_failing_child_changes_nothing(
    broken: type[_Refusing], bench_bundle: bytes, received: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fan_out, "_codec", lambda: broken)
    assert two_processes(bench_bundle) == one_process(bench_bundle)
    assert received == [False], "the child's range was processed here"


def test_a_child_that_cannot_start_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """``split`` is called directly, so a golden of a few TrainJobs forks as the benchmark's bundle would."""
    data = max(SPLITTABLE, key=COUNTS.__getitem__).read_bytes()
    forks: list[bool] = []

    def no_fork() -> int:
        forks.append(True)
        raise OSError("fork refused")

    monkeypatch.setattr(fan_out.os, "fork", no_fork)
    assert two_processes(data) == one_process(data)
    assert forks, "a fork was tried"


@pytest.mark.parametrize(
    ("value", "expected"), [("1", 1), ("2", 2), ("8", fan_out.MAX_WORKERS), ("0", 1), ("two", 1), ("", 1), ("-2", 1)]
)
def test_the_workers_variable(value: str, expected: int) -> None:
    assert fan_out.workers({fan_out.WORKERS_VARIABLE: value}) == expected


def test_workers_default_to_the_cpus_this_process_may_use() -> None:
    cpus = len(os.sched_getaffinity(0))
    assert fan_out.workers({}) == max(1, min(cpus, fan_out.MAX_WORKERS))


def _cli(data: bytes, workers: str) -> bytes:
    env = {**os.environ, fan_out.WORKERS_VARIABLE: workers}
    done = subprocess.run([str(FUNCTION)], input=data, capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.mark.slow
def test_the_function_forks_for_a_large_bundle(
    bench_bundle: bytes, received: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fan_out, "workers", lambda: 2)
    from trainjob_resources.cli import main

    stdout = io.BytesIO()
    assert main.as_main(lambda rl: process(rl, fan_out=fan_out.forked), io.BytesIO(bench_bundle), stdout) == 0
    assert received == [True]
    assert stdout.getvalue() == _cli(bench_bundle, "1")


@pytest.mark.slow  # the command twice on a bundle over the fork threshold: about 0.5 to 1 s of CPU
def test_the_command_gives_the_same_bytes_with_one_worker_or_two(bench_bundle: bytes) -> None:
    assert _cli(bench_bundle, "2") == _cli(bench_bundle, "1")


def test_small_bundles_and_one_cpu_stay_in_one_process(
    bench_bundle: bytes, received: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = SPLITTABLE[0].read_bytes()
    monkeypatch.setattr(fan_out, "workers", lambda: 2)
    as_main(lambda rl: process(rl, fan_out=fan_out.forked), io.BytesIO(golden), io.BytesIO())
    monkeypatch.setattr(fan_out, "workers", lambda: 1)
    as_main(lambda rl: process(rl, fan_out=fan_out.forked), io.BytesIO(bench_bundle), io.BytesIO())
    assert received == []
