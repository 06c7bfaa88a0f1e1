"""The container image's recipe, performed for real without a Docker engine.

The Dockerfile's build stage is replayed step by step (its ENV, WORKDIR, COPY and RUN lines,
absolute paths moved under a scratch root): build the project's wheel, install it with the pinned
requirements-image.txt into a clean virtualenv. The final stage's ENV, USER and ENTRYPOINT then
run the function as user 65534 on the data-loader example. A broken recipe fails here.

The base image's ``python`` is played by a Python 3.11 that user 65534 can run: this test's own
interpreter's base, else the system's ``/usr/bin/python3.11`` (a pyenv under /root is out of
that user's reach).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.examples import EXAMPLES, assert_rendered, documents, interpreter_open_to_others
from tests.goldens import TESTDATA, run_function
from tests.test_dockerfile import ROOT, STEPS, env_pairs

# Building the wheel and installing it with pip takes 20-40 s of the module's fixture.
pytestmark = pytest.mark.slow

BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_ABSOLUTE = re.compile(r"(?<![\w.$/-])/(src|wheels|opt)(?=/|\b)")
# The image needs no pip cache; this test keeps pip's, to stay fast on a second run.
_NOT_REPLAYED = {"PIP_NO_CACHE_DIR"}


@pytest.fixture(scope="module")
def image_root() -> Iterator[Path]:
    """The image's filesystem stand-in: traversable by user 65534, unlike pytest's tmp_path."""
    root = Path(tempfile.mkdtemp(prefix="trainjob-resources-image-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def moved(text: str, root: Path) -> str:
    return _ABSOLUTE.sub(lambda m: f"{root}/{m.group(1)}", text)


def base_python() -> str:
    candidates = [getattr(sys, "_base_executable", sys.executable), "/usr/local/bin/python3.11", "/usr/bin/python3.11"]
    for candidate in candidates:
        if Path(candidate).is_file() and (os.geteuid() != 0 or interpreter_open_to_others(candidate)):
            return candidate
    pytest.fail(f"no Python 3.11 that user 65534 can run among {candidates}")


@pytest.fixture(scope="module")
def installed(image_root: Path) -> Path:
    base_bin = image_root / "base-bin"
    base_bin.mkdir()
    (base_bin / "python").symlink_to(base_python())
    path = os.pathsep.join([str(base_bin), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path}
    cwd = image_root
    for step in (s for s in STEPS if s.stage == 0):
        if step.keyword == "ENV":
            env.update({k: v for k, v in env_pairs(step.args).items() if k not in _NOT_REPLAYED})
        elif step.keyword == "WORKDIR":
            cwd = Path(moved(step.args, image_root))
            cwd.mkdir(parents=True, exist_ok=True)
        elif step.keyword == "COPY":
            *sources, target = step.args.split()
            for source in sources:
                destination = cwd / target / Path(source).name if target.endswith("/") else cwd / target
                if (ROOT / source).is_dir():
                    shutil.copytree(ROOT / source, destination, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(ROOT / source, destination)
        elif step.keyword == "RUN":
            done = subprocess.run(
                ["sh", "-c", moved(step.args, image_root)],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, f"RUN {step.args}\n{done.stdout}\n{done.stderr}"
    return image_root


def final_stage(root: Path) -> tuple[list[str], dict[str, str], list[str]]:
    """The image's entry point, environment and user switch, as the final stage declares them."""
    env: dict[str, str] = {"PATH": BASE_PATH, "HOME": "/nonexistent"}
    entrypoint: list[str] = []
    user: list[str] = []
    for step in (s for s in STEPS if s.stage == 1):
        if step.keyword == "COPY":
            source, target = step.args.removeprefix("--from=build ").split()
            assert source == target, "a virtualenv only works at the path it was created at"
        elif step.keyword == "ENV":
            for key, value in env_pairs(step.args).items():
                env[key] = moved(value.replace("$PATH", env["PATH"]), root)
        elif step.keyword == "USER":
            uid, gid = step.args.split(":")
            user = [f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
        elif step.keyword == "ENTRYPOINT":
            entrypoint = [moved(part, root) for part in json.loads(step.args)]
    assert entrypoint and user
    if os.geteuid() == 0:
        return ["setpriv", *user, *entrypoint], env, user
    return entrypoint, env, []


def run_image(root: Path, args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    command, env, _ = final_stage(root)
    return subprocess.run([*command, *args], input=stdin, env=env, cwd="/", capture_output=True, check=False)


def files_of(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def test_the_installed_image_runs_the_function_as_nobody(installed: Path) -> None:
    venv = installed / "opt" / "trainjob-resources"
    names = {p.name for p in (venv / "lib" / "python3.11" / "site-packages").iterdir()}
    assert not any(n.startswith(("pip-", "setuptools-")) for n in names), "pip and setuptools are removed"
    data = (TESTDATA / "success" / "data-loader-64gi" / "input.yaml").read_bytes()
    before = files_of(installed)

    done = run_image(installed, [], data)

    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == run_function(data)[1], "the image computes what the function computes in-process"
    items = yaml.safe_load(done.stdout)["items"]
    assert_rendered(items)
    (derived,) = [i for i in items if i["kind"] == "TrainingRuntime"]
    spec = derived["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert spec["initContainers"][0]["resources"]["limits"]["memory"] == "64Gi"
    assert files_of(installed) == before, "nothing is written at run time (read-only root filesystem)"


def test_the_unprivileged_user_runs_the_interpreter_it_was_installed_for(installed: Path) -> None:
    command, env, user = final_stage(installed)
    python = str(installed / "opt" / "trainjob-resources" / "bin" / "python")
    probe = "import sys, yaml, pydantic_core; print(sys.version, yaml.__with_libyaml__)"
    as_user = [*command[: len(command) - 1], python] if user else [python]
    done = subprocess.run([*as_user, "-c", probe], env=env, cwd="/", capture_output=True, text=True, check=False)
    expected = subprocess.run(
        [base_python(), "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{expected.stdout.strip()} True\n"


def test_the_image_runs_render_for_the_argocd_plugin(installed: Path) -> None:
    example = EXAMPLES / "exec-data-loader"
    stdin = (example / "runtime.yaml").read_bytes() + b"---\n" + (example / "trainjob.yaml").read_bytes()
    done = run_image(installed, ["render", "-"], stdin)
    assert done.returncode == 0, done.stderr.decode()
    assert_rendered(documents(done.stdout.decode()))


def test_the_image_reports_bad_input_without_a_traceback(installed: Path) -> None:
    done = run_image(installed, [], b"kind: [")
    assert done.returncode == 1
    assert b"invalid YAML" in done.stderr
    assert b"Traceback" not in done.stderr
