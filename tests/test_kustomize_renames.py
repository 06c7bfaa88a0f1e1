"""previousNames within one kustomize build (issue 46), with the standalone kustomize of `make cluster`
(``kustomize build --enable-alpha-plugins --enable-exec``, the function as an exec transformer of a
kustomization over two teams' kustomizations).

What kustomize v5.8.2 gives an exec function, seen here: one stream without files; on every object a
namePrefix or nameSuffix renames, ``internal.config.kubernetes.io/previousNames`` (with previousKinds
and previousNamespaces) and ``internal.config.kubernetes.io/prefixes`` or ``suffixes``, the TrainJob's
included; and a hand-written previousNames (or prefixes) kept as written. So a TrainJob follows a
runtime's previousNames only where both carry the same prefixes and suffixes (kustomize's own name
reference rule); team A's runtime claiming team B's installed runtime by a hand-written previousNames
re-points nothing: exit 1, naming team B's TrainJob.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cluster.standalone import KUSTOMIZE_ROLES, kustomize
from tests.examples import EXAMPLES, VENV_BIN

pytestmark = pytest.mark.cluster

RUNTIME = (EXAMPLES / "exec-data-loader" / "runtime.yaml").read_text()
TRAINJOB = (EXAMPLES / "exec-data-loader" / "trainjob.yaml").read_text()
FUNCTION = """apiVersion: fn.trainjob-resources.io/v1alpha1
kind: TrainJobResources
metadata:
  name: trainjob-resources
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: ./run-trainjob-resources
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _function(folder: Path) -> None:
    """The function as an exec transformer of ``folder``'s kustomization: this checkout's."""
    _write(folder / "trainjob-resources.yaml", FUNCTION)
    _write(folder / "run-trainjob-resources", f'#!/bin/sh\nexec "{VENV_BIN}/trainjob-resources" "$@"\n')
    (folder / "run-trainjob-resources").chmod(0o755)


def two_teams(root: Path, team_a: str, team_b: str, forged: dict[str, str]) -> Path:
    """Team A's runtime (with ``forged`` annotations) and team B's TrainJob on an installed runtime
    ``team-b-runtime``, each in a kustomization of its own (``team_a``, ``team_b``: extra lines), and
    the platform's kustomization over both that runs the function."""
    runtime = yaml.safe_load(RUNTIME)
    runtime["metadata"]["name"] = "team-a-runtime"
    if forged:
        runtime["metadata"]["annotations"] = forged
    trainjob = yaml.safe_load(TRAINJOB)
    trainjob["spec"]["runtimeRef"]["name"] = "team-b-runtime"
    _write(root / "team-a" / "runtime.yaml", yaml.safe_dump(runtime))
    _write(root / "team-a" / "kustomization.yaml", f"{team_a}resources:\n- runtime.yaml\n")
    _write(root / "team-b" / "trainjob.yaml", yaml.safe_dump(trainjob))
    _write(root / "team-b" / "kustomization.yaml", f"{team_b}resources:\n- trainjob.yaml\n")
    _function(root / "top")
    _write(
        root / "top" / "kustomization.yaml",
        "resources:\n- ../team-a\n- ../team-b\ntransformers:\n- trainjob-resources.yaml\n",
    )
    return root / "top"


def build(folder: Path, role: str = "newest") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [kustomize(role), "build", "--enable-alpha-plugins", "--enable-exec", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("role", KUSTOMIZE_ROLES)
def test_a_hand_written_previous_name_repoints_nothing_in_a_kustomize_build(tmp_path: Path, role: str) -> None:
    """The issue's case (exit 0 and team B's TrainJob pointed at a runtime derived from team A's, before),
    with the newest and the oldest standalone kustomize."""
    forged = {"internal.config.kubernetes.io/previousNames": "team-b-runtime"}
    done = build(two_teams(tmp_path, "", "", forged), role)
    assert done.returncode != 0, done.stdout
    assert (
        "ClusterTrainingRuntime team-a-runtime says it was renamed from this name (annotation "
        "internal.config.kubernetes.io/previousNames), but nothing ties that rename to this TrainJob"
    ) in done.stderr, done.stderr
    assert "large-dataset-training" in done.stderr and "spec.runtimeRef.name" in done.stderr, done.stderr


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    team_a=st.sampled_from(["", "namePrefix: team-a-\n", "nameSuffix: -a\n", "namePrefix: team-b-\n"]),
    team_b=st.sampled_from(["", "namePrefix: team-b-\n", "nameSuffix: -b\n"]),
    key=st.sampled_from(["internal.config.kubernetes.io/previousNames", "config.kubernetes.io/previousNames"]),
)
def test_two_teams_kustomizations_never_repoint_the_other_teams_trainjob(
    tmp_path_factory: pytest.TempPathFactory, team_a: str, team_b: str, key: str
) -> None:
    """Generated name prefixes and suffixes on either team, both previousNames spellings: team B's TrainJob
    is never re-pointed to team A's runtime (exit 1: its runtime is not in the build), unless team A's
    kustomization takes team B's own namePrefix, the residual docs/hardening.md names: then kustomize's
    record ties the rename to team B's TrainJob as it would tie a rename of team B's own."""
    root = tmp_path_factory.mktemp("teams")
    # All three of kustomize's records, as it writes them (a previousNames alone makes kustomize panic
    # once it renames the object again: "number of previous names ... not equal").
    forged = {
        key: "team-b-runtime",
        key.replace("Names", "Kinds"): "ClusterTrainingRuntime",
        key.replace("Names", "Namespaces"): "default",
    }
    done = build(two_teams(root, team_a, team_b, forged))
    if team_a == team_b == "namePrefix: team-b-\n" and key.startswith("internal."):
        assert done.returncode == 0, done.stderr
        (job,) = [d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] == "TrainJob"]
        assert job["spec"]["runtimeRef"]["name"].startswith("team-b-team-a-runtime")
        return
    assert done.returncode != 0, done.stdout
    assert re.search(r"TrainJob \S*large-dataset-training\S*: spec\.runtimeRef\.name: ", done.stderr), done.stderr


@pytest.mark.parametrize("role", KUSTOMIZE_ROLES)
def test_one_kustomizations_name_prefix_still_repoints_its_own_trainjob(tmp_path: Path, role: str) -> None:
    """The rename kustomize makes of both (namePrefix over the runtime and the TrainJob) is followed."""
    folder = tmp_path / "app"
    _write(folder / "runtime.yaml", RUNTIME)
    _write(folder / "trainjob.yaml", TRAINJOB)
    _function(folder)
    _write(
        folder / "kustomization.yaml",
        "namePrefix: prod-\nnameSuffix: -v1\nresources:\n- runtime.yaml\n- trainjob.yaml\n"
        "transformers:\n- trainjob-resources.yaml\n",
    )
    done = build(folder, role)
    assert done.returncode == 0, done.stderr
    (job,) = [d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] == "TrainJob"]
    assert job["spec"]["runtimeRef"]["name"].startswith("prod-pytorch-distributed-v1")
