"""The Dockerfile: hadolint-clean, pinned, multi-stage, non-root, read-only friendly, labelled.

test_image_recipe.py performs the recipe's install steps without an engine; in CI test_image.py runs the built image.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from trainjob_resources import __version__

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
REQUIREMENTS = ROOT / "requirements-image.txt"
PYPROJECT = (ROOT / "pyproject.toml").read_text()


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str
    stage: int


def instructions(text: str) -> list[Instruction]:
    """The Dockerfile's instructions, continuation lines joined; stage -1 is before the first FROM."""
    logical: list[str] = []
    current = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1].rstrip() + " "
            continue
        logical.append(current + stripped)
        current = ""
    out: list[Instruction] = []
    stage = -1
    for line in logical:
        keyword, _, args = line.partition(" ")
        if keyword.upper() == "FROM":
            stage += 1
        out.append(Instruction(keyword.upper(), args.strip(), stage))
    return out


def env_pairs(args: str) -> dict[str, str]:
    return dict(pair.split("=", 1) for pair in shlex.split(args))


def pins() -> dict[str, str]:
    """requirements-image.txt as {canonical name: version}; every line must be an exact pin."""
    out: dict[str, str] = {}
    for line in REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier
        assert spec.operator == "==", f"not pinned: {line}"
        out[_canonical(requirement.name)] = spec.version
    return out


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project_version() -> str:
    """The version, written once: the package's __version__ (pyproject.toml reads it, tests/test_version.py)."""
    return __version__


STEPS = instructions(DOCKERFILE.read_text())


def test_hadolint_passes() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    if not hadolint.is_file():
        pytest.fail("hadolint is missing from the virtualenv: install the test extras (pip install -e '.[test]')")
    done = subprocess.run([str(hadolint), str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_pinned_base_and_two_stages() -> None:
    (base,) = [i.args for i in STEPS if i.keyword == "ARG" and i.stage == -1]
    name, _, image = base.partition("=")
    assert name == "PYTHON_IMAGE"
    assert re.fullmatch(r"python:3\.11\.\d+-slim-[a-z]+(@sha256:[0-9a-f]{64})?", image), image
    froms = [i.args for i in STEPS if i.keyword == "FROM"]
    assert froms == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE}"]


def test_the_final_stage_runs_the_function_as_nobody_without_writing() -> None:
    final = [i for i in STEPS if i.stage == 1]
    assert [i.args for i in final if i.keyword == "USER"] == ["65534:65534"]
    env: dict[str, str] = {}
    for i in final:
        if i.keyword == "ENV":
            env.update(env_pairs(i.args))
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    (entrypoint,) = [json.loads(i.args) for i in final if i.keyword == "ENTRYPOINT"]
    assert entrypoint == ["/opt/trainjob-resources/bin/trainjob-resources"]
    assert [i.keyword for i in final if i.keyword == "RUN"] == [], "nothing is installed in the final stage"


def test_oci_labels() -> None:
    labels: dict[str, str] = {}
    for i in STEPS:
        if i.keyword == "LABEL":
            labels.update(env_pairs(i.args))
    (version_arg,) = [i.args for i in STEPS if i.keyword == "ARG" and i.args.startswith("VERSION=")]
    assert version_arg == f"VERSION={project_version()}"
    assert labels["org.opencontainers.image.version"] == "${VERSION}"
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
    assert 'license = { text = "Apache-2.0" }' in PYPROJECT
    assert labels["org.opencontainers.image.source"].startswith("https://github.com/")


def test_every_runtime_dependency_is_pinned() -> None:
    pinned = pins()
    needed: set[str] = set()
    queue = [
        _canonical(Requirement(r).name) for r in metadata.requires("trainjob-resources") or [] if "extra ==" not in r
    ]
    while queue:
        name = queue.pop()
        if name in needed:
            continue
        needed.add(name)
        for requirement in metadata.requires(name) or []:
            parsed = Requirement(requirement)
            if parsed.marker is None or parsed.marker.evaluate({"extra": ""}):
                queue.append(_canonical(parsed.name))
    assert set(pinned) == needed
    for requirement in metadata.requires("trainjob-resources") or []:
        parsed = Requirement(requirement)
        if "extra ==" not in requirement:
            assert parsed.specifier.contains(pinned[_canonical(parsed.name)]), requirement


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    for i in STEPS:
        if i.keyword == "COPY" and not i.args.startswith("--from"):
            for source in i.args.split()[:-1]:
                assert (ROOT / source).exists(), source
                assert f"!{source}" in ignore or f"!{source}/" in ignore, f"{source} is excluded by .dockerignore"
