"""The test kit itself (tests/kit): the CPU budget names the test over it and fails the run, the golden
checker compares or rewrites, the budget's exempt markers are the ones `make unit` leaves out, and a
command run in a fork gives what the installed command gives."""

from __future__ import annotations

import importlib.util
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.examples import EXAMPLES
from tests.hostile import EXECUTABLE
from tests.kit import cpu_budget, forked, golden
from tests.test_makefile import variable

ROOT = Path(__file__).resolve().parents[1]
SUITE = """
import time

import pytest


def burn() -> None:
    start = time.process_time()
    while time.process_time() - start < 0.08:
        pass


def test_costly() -> None:
    burn()


@pytest.mark.slow
def test_costly_but_slow() -> None:
    burn()


@pytest.fixture(scope="module")
def shared() -> None:
    burn()


def test_cheap_with_a_costly_shared_fixture(shared: None) -> None:
    pass
"""


def _run_suite(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(textwrap.dedent(SUITE))
    command = [sys.executable, "-m", "pytest", "-p", "tests.kit.cpu_budget", "-p", "no:cacheprovider", *options]
    return subprocess.run(
        [*command, "-q", "--rootdir", str(tmp_path), str(tmp_path / "test_suite.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow  # a pytest run of its own
@pytest.mark.parametrize("workers", [[], ["-p", "xdist", "-n", "2"]], ids=["one process", "pytest-xdist"])
def test_the_budget_names_the_unmarked_test_over_it_and_fails_the_run(tmp_path: Path, workers: list[str]) -> None:
    """Under pytest-xdist the workers run the tests and the controller sums their reports."""
    if workers and importlib.util.find_spec("xdist") is None:
        pytest.skip("pytest-xdist is not installed")
    done = _run_suite(tmp_path, "--cpu-budget=0.04", "-m", "", *workers)
    assert done.returncode == 1, done.stdout
    over = done.stdout.split("over the CPU budget of 0.04 s")[1].splitlines()[1:]
    named = [line.split()[-1] for line in over if "CPU  " in line]
    assert named == ["test_suite.py::test_costly"], done.stdout
    assert "3 passed" in done.stdout
    assert _run_suite(tmp_path, "--cpu-budget=0", "-m", "").returncode == 0, "0: no budget"


def test_the_exempt_markers_are_those_make_unit_leaves_out() -> None:
    left_out = {term.removeprefix("not ") for term in variable("UNIT_MARKERS").split(" and ")}
    assert set(cpu_budget.EXEMPT_MARKERS) == left_out


def test_a_golden_is_compared_or_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "golden.txt"
    path.write_text("old\n")
    golden.assert_golden(path, "old\n")
    with pytest.raises(AssertionError, match="make goldens"):
        golden.assert_golden(path, "new\n")
    monkeypatch.setattr(golden, "_updating", [True])
    monkeypatch.setattr(golden, "rewritten", [])
    golden.assert_golden(path, "new\n")
    golden.assert_golden(tmp_path / "absent.txt", "made\n")
    assert (path.read_text(), (tmp_path / "absent.txt").read_text()) == ("new\n", "made\n")
    assert golden.rewritten == [path, tmp_path / "absent.txt"]


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (["render"], None),  # a success: the example's manifests
        (["render", "--runtimes", "runtime.yaml", "-"], b"kind: [\n"),  # an error on stdin, exit 1
        (["render", "--no-such-option"], None),  # argparse's usage line, exit 2
        (["--version"], None),
    ],
)
def test_a_command_run_in_a_fork_gives_what_the_installed_command_gives(
    tmp_path: Path, args: list[str], stdin: bytes | None
) -> None:
    """``make unit`` runs the hostile renders in a fork (tests/kit/forked.py): the same exit code and
    bytes on stdout and stderr as the console script run as a process, under the same limits."""
    app = tmp_path / "app"
    app.mkdir()
    for name in ("runtime.yaml", "trainjob.yaml"):
        (app / name).write_text((EXAMPLES / "exec-data-loader" / name).read_text())
    env = {"PATH": "/usr/bin"}

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (20, 20))

    real = subprocess.run(
        [str(EXECUTABLE), *args], cwd=app, env=env, input=stdin, capture_output=True, preexec_fn=limits, check=False
    )
    in_fork = forked.run([str(EXECUTABLE), *args], app, env, limits, 30, stdin)
    assert in_fork == (real.returncode, real.stdout, real.stderr)
    assert os.getcwd() != str(app), "the test process stays where it was"
