"""The lifecycle runner's own logic, without a control plane: what it compares, orders and carries."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.cluster.lifecycle import (
    KptPackage,
    Scenario,
    ScenarioError,
    argocd_order,
    differences,
    jobset_containers,
    scenarios,
    with_namespaces,
    with_provenance,
)


def _jobset(resources: dict[str, object]) -> dict[str, object]:
    pod = {"initContainers": [{"name": "loader", "resources": resources}], "containers": [{"name": "node"}]}
    return {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": pod}}}}]}}


def test_the_jobset_comparison_sees_every_kind_of_difference() -> None:
    actual = jobset_containers(_jobset({"limits": {"memory": "68719476736"}}))
    assert actual["node"]["loader"] == {"requests": {"memory": "68719476736"}, "limits": {"memory": "68719476736"}}
    same = {
        "node": {
            "loader": {"requests": {"memory": "64Gi"}, "limits": {"memory": "64Gi"}},
            "node": actual["node"]["node"],
        }
    }
    assert differences(same, actual) == []
    other = {
        "node": {
            "loader": {"requests": {"memory": "8Gi"}, "limits": {"memory": "64Gi"}},
            "node": {"requests": {}, "limits": {}},
        }
    }
    assert differences(other, actual) == [
        "node/loader requests: explain {'memory': '8Gi'}, JobSet {'memory': '68719476736'}"
    ]
    assert differences({"node": {"node": {"requests": {}, "limits": {}}}}, actual) == ["node/loader: not in explain"]
    assert differences({"launcher": {}}, actual) == [
        "replicated job launcher: not in the JobSet",
        "replicated job node: in the JobSet, not in explain",
    ]
    extra_key = {
        "node": {**same["node"], "loader": {"requests": {"memory": "64Gi", "cpu": "1"}, "limits": {"memory": "64Gi"}}}
    }
    assert differences(extra_key, actual) == [
        "node/loader requests: explain {'memory': '64Gi', 'cpu': '1'}, JobSet {'memory': '68719476736'}"
    ]


def test_argo_cd_order_waves_then_its_kind_order_then_names() -> None:
    objects = [
        {"kind": "TrainingRuntime", "metadata": {"name": "b"}},
        {"kind": "TrainJob", "metadata": {"name": "a"}},
        {"kind": "ConfigMap", "metadata": {"name": "z"}},
        {"kind": "Secret", "metadata": {"name": "s"}},
        {"kind": "Namespace", "metadata": {"name": "y"}},
        {"kind": "TrainingRuntime", "metadata": {"name": "d", "annotations": {"argocd.argoproj.io/sync-wave": "-1"}}},
    ]
    order = [[o["metadata"]["name"] for o in wave] for wave in argocd_order(objects)]
    # Known kinds in Argo CD's order (Namespace, Secret, ConfigMap: not alphabetical), then unknown ones by
    # kind: TrainJob before TrainingRuntime.
    assert order == [["d"], ["y", "s", "z", "a", "b"]]


def test_namespaces_are_mapped_only_where_a_namespace_is_named() -> None:
    text = "metadata:\n  name: ml-team\n  namespace: ml-team\nnamespace: 'ml-team'  # mine\n- namespace: ml-teams\n"
    out = with_namespaces(text, {"ml-team": "ml-team-1a2b3c"})
    assert out.splitlines() == [
        "metadata:",
        "  name: ml-team",
        "  namespace: ml-team-1a2b3c",
        "namespace: 'ml-team-1a2b3c'  # mine",
        "- namespace: ml-teams",
    ]


def test_kpt_edits_merge_into_the_rendered_files_and_keep_the_records(tmp_path: Path) -> None:
    package = KptPackage(tmp_path / "pkg")
    first = {"a.yaml": "kind: TrainJob\nmetadata:\n  name: t\nspec:\n  x: 1\n  y: 1\n"}
    assert package.carry(first, None) == []
    rendered = first["a.yaml"].replace(
        "name: t\n", "name: t\n  annotations:\n    fn.trainjob-resources.io/resources: r\n"
    )
    (tmp_path / "pkg" / "a.yaml").write_text(rendered)
    assert package.carry({"a.yaml": first["a.yaml"].replace("y: 1", "y: 2")}, "a.yaml") == []
    assert (tmp_path / "pkg" / "a.yaml").read_text() == rendered.replace("y: 1", "y: 2")
    assert "configPath: a.yaml" in (tmp_path / "pkg" / "Kptfile").read_text()
    assert package.carry({}, None) == [] and not (tmp_path / "pkg" / "a.yaml").exists()


def test_an_edit_of_a_rewritten_line_keeps_the_functions_records() -> None:
    rendered = (
        "kind: TrainJob\nmetadata:\n  name: t\n  annotations:\n    fn.trainjob-resources.io/resources: r\n"
        "    other: o\nspec:\n  runtimeRef: {name: derived}\n"
    )
    new = "kind: TrainJob\nmetadata:\n  name: t\nspec:\n  runtimeRef: {name: base}\n  z: 1\n"
    merged = yaml.safe_load(with_provenance(rendered, new) or "")
    assert merged["metadata"]["annotations"] == {"fn.trainjob-resources.io/resources": "r"}
    assert merged["spec"] == {"runtimeRef": {"name": "derived"}, "z": 1}


def test_every_shipped_scenario_loads(tmp_path: Path) -> None:
    found = list(scenarios())
    assert len(found) >= 12
    for root in found:
        scenario = Scenario.load(root)
        assert len(scenario.steps) >= 2, root
        assert (root / "README.md").is_file(), root


def test_a_malformed_scenario_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no step folders"):
        Scenario.load(tmp_path)
    (tmp_path / "01-a").mkdir()
    (tmp_path / "expect.yaml").write_text(
        "refusals:\n  - step: 02-b\n    kind: TrainJob\n    name: x\n    message: m\n"
    )
    with pytest.raises(ScenarioError, match="no step '02-b'"):
        Scenario.load(tmp_path)
    (tmp_path / "expect.yaml").write_text("renderErrors:\n  - step: 01-a\n    message: m\n    via: helm\n")
    with pytest.raises(ScenarioError, match="via must be some of"):
        Scenario.load(tmp_path)


def test_the_cli_says_what_is_wrong_with_a_scenario(tmp_path: Path) -> None:
    done = subprocess.run(
        [".venv/bin/python", "-m", "tests.cluster.lifecycle", str(tmp_path), "--via", "render"],
        cwd=Path(__file__).parents[1],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert "no step folders" in done.stderr
