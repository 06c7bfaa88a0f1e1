"""The CRD validator (trainer/crd_validate.py) and its rules (runtime-schema, trainjob-schema,
derived-schema), without a cluster: what the differential test (tests/cluster/test_crd_differential.py)
established against the API servers, here at the function's surface."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest
from trainjob_resources.trainer import crd_cel
from trainjob_resources.trainer.crd_schema import SHIPPED, shipped_release
from trainjob_resources.trainer.crd_validate import validate

from tests.kit import build
from tests.support import load_fixture, render
from tests.trainer_crds import DATA, FILES, RELEASES

LOCAL_CONFIG = "config.kubernetes.io/local-config"


def _config(version: str) -> dict[str, Any]:
    return {
        "apiVersion": "fn.trainjob-resources.io/v1alpha1",
        "kind": "TrainJobResources",
        "metadata": {"name": "c"},
        "spec": {"trainerVersion": version},
    }


def _numprocpernode_runtime() -> dict[str, Any]:
    runtime = load_fixture("torch-plain")
    runtime["spec"]["mlPolicy"]["torch"] = {"numProcPerNode": "auto"}
    return runtime


def test_every_release_the_generator_writes_is_shipped_with_its_three_kinds() -> None:
    assert sorted(RELEASES) == sorted(SHIPPED)
    for release in RELEASES:
        data = json.loads((DATA / f"{release}.json").read_text(encoding="utf-8"))
        assert data["release"] == release and sorted(data["kinds"]) == sorted(FILES)
        assert all(kind["version"] == "v1alpha1" for kind in data["kinds"].values())


@pytest.mark.parametrize(
    ("version", "release"),
    [("v2.2", "v2.2.1"), ("v2.2.0", "v2.2.0"), ("v2.2.1", "v2.2.1"), ("v2.3", "v2.3.0"), ("v2.3.0", "v2.3.0")],
)
def test_each_trainer_version_follows_the_crds_of_its_release(version: str, release: str) -> None:
    assert shipped_release(version) == release


@pytest.mark.parametrize("version", ["v2.3.0", "v2.2.1", "v2.2.0"])
def test_a_runtime_field_the_crd_lacks_is_refused_at_its_path_naming_what_the_release_accepts(version: str) -> None:
    out = render([_numprocpernode_runtime()], _config(version))
    assert out.code == 1
    (error,) = out.errors()
    assert error["field"]["path"] == "spec.mlPolicy.torch.numProcPerNode"
    assert error["tags"]["rule"] == "runtime-schema"
    accepts = "accepts envInjection" if version == "v2.3.0" else "accepts no fields"
    assert error["message"] == (
        'unknown field "spec.mlPolicy.torch.numProcPerNode": Kubeflow Trainer '
        f"{shipped_release(version)}'s ClusterTrainingRuntime CRD does not declare it (spec.mlPolicy.torch "
        f"{accepts}): the API server refuses this runtime and every runtime derived from it"
    )


def test_a_cluster_runtimes_copy_is_a_warning_and_nothing_is_derived_from_it() -> None:
    runtime = _numprocpernode_runtime()
    runtime["metadata"].setdefault("annotations", {})[LOCAL_CONFIG] = "true"
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["initContainers"] = [{"name": "loader", "image": "example.com/loader:1", "restartPolicy": "Always"}]
    loader = {"name": "loader", "resources": {"limits": {"memory": "8Gi"}}}
    job = build.trainjob("tj", runtime["metadata"]["name"], [build.container_patch("node", "initContainers", loader)])
    out = render([runtime, job])
    warned = [r for r in out.results if r.get("tags", {}).get("rule") == "runtime-schema"]
    assert [r["severity"] for r in warned] == ["warning"]
    assert "every runtime derived from this one" in warned[0]["message"]
    (error,) = out.errors()
    assert error["tags"]["rule"] == "derived-schema" and error["field"]["path"] == "spec.runtimeRef"
    assert "no runtime is derived" in error["message"]
    assert not any(i["kind"] == "TrainingRuntime" for i in out.items), "nothing derived"


def test_a_trainjobs_own_resources_are_not_an_unknown_field_but_one_beside_them_is() -> None:
    patch = {"name": "node", "resources": {"limits": {"memory": "8Gi"}}}
    job = build.trainjob("tj", "rt", [build.container_patch("node", "containers", patch)])
    assert validate(job, "v2.3.0", "TrainJob", own_resources=True) == []
    assert [f.path for f in validate(job, "v2.3.0", "TrainJob")] == [
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
        ".containers[0].resources"
    ]


@pytest.mark.parametrize(
    ("value", "refused"), [(2**31 - 1, False), (2**31, True), (1.0, False), (1.5, True), (-1, False), ("1", True)]
)
def test_an_int32_field_takes_what_the_api_server_takes(value: Any, refused: bool) -> None:
    runtime = load_fixture("torch-plain")
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] = value
    assert bool(validate(runtime, "v2.3.0", runtime["kind"])) == refused


def test_a_trainjob_gets_the_zero_value_trainers_webhook_writes_for_a_required_field() -> None:
    job = build.trainjob("tj", "rt", trainer={"env": [{"name": "A", "value": "x"}, {"value": "y"}]})
    assert validate(job, "v2.3.0", "TrainJob") == []
    runtime = load_fixture("torch-plain")
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0][
        "env"
    ] = [{"value": "x"}]
    assert [f.reason for f in validate(runtime, "v2.3.0", runtime["kind"])] == ["required"]


def test_a_cel_rule_reports_its_message_and_a_root_rule_the_name() -> None:
    job = build.trainjob("Not_A_Name", "rt", managedBy="example.com/mine")
    found = {f.path: f.message for f in validate(job, "v2.3.0", "TrainJob")}
    assert sorted(found) == ["metadata.name", "spec.managedBy"]
    assert found["metadata.name"].startswith("metadata.name must match RFC 1035 DNS label format")
    assert found["spec.managedBy"].startswith("ManagedBy must be trainer.kubeflow.org/trainjob-controller")


def test_two_ml_policies_break_the_runtimes_cel_rule_on_each_release() -> None:
    runtime = load_fixture("torch-plain")
    runtime["spec"]["mlPolicy"]["mpi"] = {}
    for release in RELEASES:
        (finding,) = validate(copy.deepcopy(runtime), release, runtime["kind"])
        assert (finding.path, finding.reason) == ("spec.mlPolicy", "rule"), release


def test_a_rule_reads_only_the_fields_of_self_it_names() -> None:
    assert crd_cel._fields_read("[has(self.torch), has(self.mpi)].filter(x, x).size() <= 1") == {"torch", "mpi"}
    assert crd_cel._fields_read("!self.exists(c, c == 'node')") is None
    # A conjunction that fails falls back to each rule: only the one that fails is said.
    assert crd_cel.failures(("self.a == 1", "self.b == 2"), {"a": 1, "b": 3}) == [("self.b == 2", "false")]


def test_the_cel_library_is_imported_only_when_a_rule_is_evaluated() -> None:
    probe = (
        "import sys\n"
        "from trainjob_resources import process\n"
        "from trainjob_resources.trainer.crd_validate import validate\n"
        "validate({'spec': {'template': {'metadata': {}}}}, 'v2.3.0', 'ClusterTrainingRuntime')\n"
        "print('cel_expr_python' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
