"""The test kit itself (tests/kit): the CPU budget names the test over it and fails the run, the golden
checker compares or rewrites, the budget's exempt markers are the ones `make unit` leaves out, and a
command run in a fork gives what the installed command gives; on xdist's workers (`make test`) the
controller still names the offenders and the goldens rewritten, and the scheduler sends the heaviest
files first, the split file test by test."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.examples import EXAMPLES
from tests.hostile import EXECUTABLE
from tests.kit import cpu_budget, forked, golden, workers
from tests.test_makefile import variable

ROOT = Path(__file__).resolve().parents[1]
SUITE = """
import time
from collections.abc import Iterator

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


@pytest.fixture(scope="session")
def costly_teardown() -> Iterator[None]:
    yield
    burn()


def test_cheap_run_last_before_a_costly_shared_teardown(costly_teardown: None) -> None:
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
# "-n 2": on two xdist workers, as `make test` runs (the workers measure, the controller judges).
@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_budget_names_the_unmarked_test_over_it_and_fails_the_run(tmp_path: Path, workers: str) -> None:
    done = _run_suite(tmp_path, "--cpu-budget=0.04", "-m", "", "-n", workers)
    assert done.returncode == 1, done.stdout
    over = done.stdout.split("over the CPU budget of 0.04 s")[1].splitlines()[1:]
    named = [line.split()[-1] for line in over if "CPU  " in line]
    assert named == ["test_suite.py::test_costly"], done.stdout
    assert "4 passed" in done.stdout
    assert _run_suite(tmp_path, "--cpu-budget=0", "-m", "", "-n", workers).returncode == 0, "0: no budget"


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


GOLDEN_SUITE = """
from pathlib import Path

import pytest

from tests.kit.golden import assert_golden


@pytest.mark.parametrize("name", ["a", "b"])
def test_golden(name: str) -> None:
    assert_golden(Path(__file__).parent / f"{name}.txt", name + "\\n")
"""


@pytest.mark.slow  # a pytest run of its own, on two workers
def test_the_goldens_rewritten_on_workers_are_named_by_the_controller(tmp_path: Path) -> None:
    (tmp_path / "test_goldens.py").write_text(textwrap.dedent(GOLDEN_SUITE))
    command = [sys.executable, "-m", "pytest", "-p", "tests.kit.golden", "-p", "no:cacheprovider", "-n", "2"]
    done = subprocess.run(
        [*command, "--update-goldens", "-q", "--rootdir", str(tmp_path), str(tmp_path / "test_goldens.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    named = [line for line in done.stdout.split("goldens rewritten: 2")[1].splitlines() if line.startswith("/")]
    assert sorted(named) == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], done.stdout
    assert (tmp_path / "b.txt").read_text() == "b\n"


class Item:
    """What workers.heaviest_first reads of a collected test: its node id and its markers."""

    def __init__(self, nodeid: str, *markers: str) -> None:
        self.nodeid, self.markers = nodeid, markers

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_the_workers_take_the_split_file_first_then_the_files_that_wait_then_the_rest() -> None:
    split = workers.SPLIT_FILES[0]
    items = [
        Item("tests/test_a.py::test_one"),
        Item("tests/test_b.py::test_one"),
        Item("tests/test_b.py::test_two", "kubectl"),
        Item(f"{split}::test_one[v2.3.0]", "cluster"),
        Item("tests/test_c.py::test_one", "slow"),
        Item("tests/test_a.py::test_two"),
    ]
    ordered = workers.heaviest_first(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in ordered] == [
        f"{split}::test_one[v2.3.0]",
        "tests/test_b.py::test_one",
        "tests/test_b.py::test_two",
        "tests/test_a.py::test_one",
        "tests/test_a.py::test_two",
        "tests/test_c.py::test_one",
    ]


@pytest.mark.slow  # a pytest run of its own, on a worker
def test_a_worker_runs_the_files_that_wait_first(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("def test_plain() -> None:\n    pass\n")
    (tmp_path / "test_b.py").write_text(
        "import pytest\n\n\n@pytest.mark.kubectl\ndef test_waits() -> None:\n    pass\n"
    )
    command = [sys.executable, "-m", "pytest", "-p", "tests.kit.workers", "-p", "no:cacheprovider", "-n", "1"]
    done = subprocess.run(
        [*command, "--dist", "loadfile", "-vv", "-W", "ignore", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    ran = [line.split()[-1].split("/")[-1] for line in done.stdout.splitlines() if line.startswith("[gw0]")]
    assert ran == ["test_b.py::test_waits", "test_a.py::test_plain"], done.stdout


def test_a_split_file_goes_test_by_test_and_any_other_file_as_one() -> None:
    scheduler = object.__new__(workers.FileScheduling)  # _split_scope reads nothing of the scheduler
    for split in workers.SPLIT_FILES:
        assert (ROOT / split).is_file(), f"{split}: workers.SPLIT_FILES names a file that is not there"
        assert scheduler._split_scope(f"{split}::test_x[v2.2.1-running]") == f"{split}::test_x[v2.2.1-running]"
    assert scheduler._split_scope("tests/cluster/test_kueue.py::test_x[v2.2.1]") == "tests/cluster/test_kueue.py"
