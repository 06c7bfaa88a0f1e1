"""Goldens of ``trainjob-resources render`` as users run it: ``tests/testdata/render/<case>/``
holds ``repo/`` (the folder it runs in), ``args`` (the command line), optionally ``env``
(``NAME=value`` lines), and the outcome: ``exit``, ``stdout`` and ``stderr``, the exact text users
read. ``make goldens`` rewrites them (tests/kit/golden.py); review the diff.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from trainjob_resources.cli import explain as explain_cli
from trainjob_resources.cli import render as render_cli

from tests.kit.golden import assert_golden

RENDER = Path(__file__).parent / "testdata" / "render"
CASES = sorted(p for p in RENDER.iterdir() if (p / "args").is_file())
NEEDS_KUBECTL = {p.name for p in CASES if any(p.glob("repo/**/kustomization.yaml"))}
# Each case as a parameter; one that builds a kustomization runs kubectl's kustomize and carries its marker.
CASE_PARAMS = [
    pytest.param(p, id=p.name, marks=[pytest.mark.kubectl] if p.name in NEEDS_KUBECTL else []) for p in CASES
]


def outcome(case: Path) -> tuple[str, str, str]:
    """exit code, stdout, stderr of the case, run in-process in its ``repo`` folder."""
    args = shlex.split((case / "args").read_text())
    env_file = case / "env"
    env = dict(line.split("=", 1) for line in env_file.read_text().splitlines()) if env_file.is_file() else {}
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    stdout, stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    try:
        for key in [k for k in os.environ if k.startswith("ARGOCD_")]:
            del os.environ[key]
        os.environ.update(env)
        os.chdir(case / "repo")
        sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO()), stdout, stderr
        main = {"render": render_cli.main, "explain": explain_cli.main}[args[0]]
        code = main(args[1:])
        stdout.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    assert isinstance(stdout.buffer, io.BytesIO)
    return f"{code}\n", stdout.buffer.getvalue().decode(), stderr.getvalue()


def _skip_without_kubectl(case: Path) -> None:
    if case.name in NEEDS_KUBECTL and shutil.which("kubectl") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("kubectl is not on PATH (CI must provide it)")
        pytest.skip("kubectl is not on PATH; this case builds a kustomization")


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_render_golden(case: Path) -> None:
    _skip_without_kubectl(case)
    code, stdout, stderr = outcome(case)
    assert_golden(case / "exit", code)
    assert_golden(case / "stderr", stderr)
    assert_golden(case / "stdout", stdout)


def test_the_goldens_cover_what_issue_13_asks() -> None:
    outcomes = {p.name: (p / "exit").read_text().strip() for p in CASES}
    assert outcomes == {
        "argocd-cannot-loosen-a-role-cap": "1",  # issue 32: maxPerRole
        "argocd-cannot-loosen-the-platform": "1",
        "config-among-inputs": "0",
        "kustomization-sets-a-role-cap": "1",  # issue 32: maxPerRole
        "kustomization-sets-the-policy": "1",
        "local-config-runtime-in-kustomization": "0",
        "reference-runtimes": "0",
    }
    assert "16Gi" in (RENDER / "kustomization-sets-the-policy" / "stderr").read_text()
    assert "TrainJobResources" not in (RENDER / "config-among-inputs" / "stdout").read_text()
    local = (RENDER / "local-config-runtime-in-kustomization" / "stdout").read_text()
    assert "kind: ClusterTrainingRuntime" not in local and "derived-from: ClusterTrainingRuntime/" in local
