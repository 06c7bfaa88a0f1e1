"""The functionConfig's ``results`` option: every result, only problems, or one summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import container_patch, render, trainer_runtime, trainjob

SIDECAR = {"name": "data-loader", "image": "loader", "restartPolicy": "Always"}
BIGGER = {"name": "data-loader", "resources": {"limits": {"memory": "64Gi"}}}
BAD = {"name": "data-loader", "resources": {"limits": {"memory": "64GB"}}}


def bundle() -> list[dict[str, Any]]:
    """Two TrainJobs rewritten, one failing, one whose runtime is in the cluster, one with a near miss."""
    return [
        trainer_runtime("torch", [SIDECAR]),
        trainjob("a", "torch", [container_patch("node", "initContainers", BIGGER)]),
        trainjob("b", "torch", [container_patch("node", "initContainers", BIGGER)]),
        trainjob("bad", "torch", [container_patch("node", "initContainers", BAD)]),
        trainjob("elsewhere", "jax", []),
        trainjob("typo", "torh", []),
    ]


def config(option: str, kind: str = "TrainJobResources") -> dict[str, Any]:
    if kind == "ConfigMap":
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"results": option}}
    return {
        "apiVersion": "fn.trainjob-resources.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "c"},
        "spec": {"results": option},
    }


def severities(results: list[dict[str, Any]]) -> list[str]:
    return [r["severity"] for r in results]


def test_all_is_the_default() -> None:
    default, explicit = render(bundle()), render(bundle(), config("all"))
    assert default.results == explicit.results
    assert "info" in severities(default.results)


@pytest.mark.parametrize("kind", ["TrainJobResources", "ConfigMap"])
def test_problems_keeps_warnings_and_errors_only(kind: str) -> None:
    everything = render(bundle()).results
    rendered = render(bundle(), config("problems", kind))
    assert rendered.code == 1
    assert rendered.results == [r for r in everything if r["severity"] != "info"]
    assert set(severities(rendered.results)) == {"error", "warning"}
    assert rendered.items == render(bundle()).items, "the option changes what is said, not what is rendered"


def test_summary_adds_one_info_for_the_run() -> None:
    rendered = render(bundle(), config("summary"))
    infos = [r for r in rendered.results if r["severity"] == "info"]
    assert infos == [
        {
            "message": "5 TrainJobs: 2 rewritten (1 derived runtime), 0 unchanged, "
            "2 passed through unchecked (runtime not in the bundle), 1 with errors",
            "severity": "info",
        }
    ]


def test_an_unknown_value_is_an_error_naming_the_option() -> None:
    rendered = render(bundle(), config("quiet"))
    assert rendered.code == 1
    (error,) = rendered.errors()
    assert error["field"]["path"] == "spec.results"


def test_an_input_without_items_is_a_warning_not_a_silent_success() -> None:
    rendered = render([])
    assert rendered.code == 0
    (warning,) = rendered.results
    assert warning["severity"] == "warning"
    assert warning["message"].startswith("the input has no items: nothing was rendered")
    assert render([], config("problems")).results == rendered.results


def _cli(tmp_path: Path, command: str, *extra: str) -> tuple[int, str, str]:
    import subprocess
    import sys

    import yaml

    (tmp_path / "all.yaml").write_text(yaml.safe_dump_all([o for o in bundle() if o["metadata"]["name"] != "bad"]))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config("all")))
    args = [sys.executable, "-m", "trainjob_resources", command, str(tmp_path / "all.yaml")]
    done = subprocess.run(
        [*args, "--config", str(tmp_path / "config.yaml"), *extra], capture_output=True, text=True, check=False
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_the_render_flag_overrides_the_functionconfig(tmp_path: Path) -> None:
    code, out, everything = _cli(tmp_path, "render", "-v")
    assert code == 0
    assert any(line.startswith("info") for line in everything.splitlines())
    code, problems_out, problems = _cli(tmp_path, "render", "-v", "--results", "problems")
    assert (code, problems_out) == (0, out)
    assert problems.splitlines() == [line for line in everything.splitlines() if line.startswith("warning")]
    code, _, summary = _cli(tmp_path, "render", "-v", "--results", "summary")
    assert summary.splitlines() == [
        *problems.splitlines(),
        "info: 4 TrainJobs: 2 rewritten (1 derived runtime), 0 unchanged, "
        "2 passed through unchecked (runtime not in the bundle), 0 with errors",
    ]


@pytest.mark.slow
def test_render_results_prints_what_it_keeps_without_verbose(tmp_path: Path) -> None:
    """Issue 50: ``render --results summary`` printed nothing without ``-v``; the option asks for the
    infos it keeps, so they are printed. Without the option, infos stay behind ``-v``."""
    _, _, verbose = _cli(tmp_path, "render", "-v", "--results", "summary")
    code, _, summary = _cli(tmp_path, "render", "--results", "summary")
    assert code == 0 and summary == verbose
    assert summary.splitlines()[-1].startswith("info: 4 TrainJobs: ")
    code, _, quiet = _cli(tmp_path, "render")
    assert code == 0 and not any(line.startswith("info") for line in quiet.splitlines())
