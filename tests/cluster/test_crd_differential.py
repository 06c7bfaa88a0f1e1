"""The function's CRD validator (function/trainjob_resources/trainer/crd_validate.py) against the API
server of each Trainer release's control plane: generated objects (valid runtimes and TrainJobs,
mutated: tests/crd_mutations.py) refused by the validator exactly when the API server refuses them on
a server-side dry-run create with strict field validation (kubectl's default). Also: the CRDs the
function ships are the ones the control plane serves, and the issue's runtime is refused at render.

Only the schema's verdict is compared. A ClusterTrainingRuntime carries
``trainer.kubeflow.org/webhook-validation: disabled``, which v2.3.0's runtime webhooks skip; a
validating webhook's denial (``validator.*``, v2.2.1's runtime webhooks, the TrainJob webhook) comes
after the schema accepted the object, so it counts as accepted. Trainer's mutating TrainJob webhook
(``defaulter.*``) runs before the schema and denies what it cannot decode into Go types: a refusal
(every such value is one the schema refuses too).
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trainjob_resources.trainer.crd_validate import validate

from tests import trainer_crds
from tests.cluster.controlplane import TRAINER_RELEASES, ControlPlane
from tests.crd_mutations import RUNTIME_BASES, apply, as_kubectl_sends, base, mutations
from tests.support import render
from tests.trainer_crds import DATA, FILES, served_schema

pytestmark = pytest.mark.cluster
on_each_release = pytest.mark.parametrize("trainer_control_plane", TRAINER_RELEASES, indirect=True)
PLURALS = {
    "TrainJob": "trainjobs",
    "TrainingRuntime": "trainingruntimes",
    "ClusterTrainingRuntime": "clustertrainingruntimes",
}
UNVALIDATED = {"trainer.kubeflow.org/webhook-validation": "disabled"}

# Every example the generated tests found where the validator and the API server disagreed, kept:
# (release, base, mutations).
_PATCHED_POD: list[str | int] = [
    *("spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0),
    *("template", "spec", "template", "spec"),
]
_PARALLELISM: list[str | int] = [
    *("spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "parallelism"),
]
_NODE_CONTAINER: list[str | int] = [
    *("spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers", 0),
]
REGRESSIONS: list[tuple[str, str, list[list[Any]]]] = [
    # Trainer's mutating TrainJob webhook writes a Go value type's zero value where a required field
    # is missing or a list entry is null: the API server then accepts what the schema alone refuses.
    ("v2.3.0", "trainjob", [["set", ["spec", "trainer", "env", 0], None]]),
    ("v2.3.0", "trainjob", [["del", [*_PATCHED_POD, "initContainers", 0, "env", 0, "name"]]]),
    ("v2.2.1", "trainjob", [["del", ["spec", "trainer", "env", 0, "name"]]]),
    # CEL's matches is RE2, whose "." is not a newline (the hand port this replaced accepted it).
    ("v2.3.0", "trainjob", [["set", ["spec", "initializer", "dataset", "storageUri"], "hf://a\n"]]),
    # format int32 is checked; a float without a fraction is an integer once kubectl sends it.
    ("v2.3.0", "torch-plain", [["set", _PARALLELISM, 2**31]]),
    ("v2.2.1", "torch-plain", [["set", _PARALLELISM, 2**31 - 1]]),
    ("v2.3.0", "torch-plain", [["set", _PARALLELISM, 1.0]]),
    ("v2.3.0", "trainjob", [["set", ["spec", "trainer", "numNodes"], 2**31]]),
    # A quantity written as a number with a fraction: the TrainJob webhook's Go Quantity takes it and
    # writes its string; a runtime has no such webhook, and the schema's int-or-string refuses it.
    ("v2.3.0", "trainjob", [["set", ["spec", "trainer", "resourcesPerNode", "limits", "cpu"], 1.5]]),
    ("v2.3.0", "torch-plain", [["add", _NODE_CONTAINER, "resources", {"limits": {"cpu": 1.5}}]]),
]


def _api(cp: ControlPlane) -> Any:
    from kubernetes import client, config

    return client.CustomObjectsApi(config.new_client_from_config(config_file=cp.kubeconfig))


def _server_refuses(api: Any, obj: dict[str, Any]) -> str | None:
    """The API server's refusal of a server-side dry-run create of ``obj`` (None: its schema accepts it)."""
    from kubernetes.client import ApiException

    plural = PLURALS[obj["kind"]]
    body = as_kubectl_sends(obj)
    try:
        if obj["kind"] == "ClusterTrainingRuntime":
            api.create_cluster_custom_object(
                "trainer.kubeflow.org", "v1alpha1", plural, body, dry_run="All", field_validation="Strict"
            )
        else:
            api.create_namespaced_custom_object(
                "trainer.kubeflow.org", "v1alpha1", "default", plural, body, dry_run="All", field_validation="Strict"
            )
    except ApiException as refused:
        said = str(json.loads(refused.body).get("message", refused.body)) if refused.body else str(refused)
        return None if 'admission webhook "validator.' in said else said
    return None


def _runtime_of_the_trainjob() -> str:
    runtime = _prepared("torch-plain")
    runtime["metadata"]["name"] = "probe-runtime"
    return json.dumps(runtime)


def _prepared(name: str) -> dict[str, Any]:
    obj = base(name)
    if obj["kind"] == "ClusterTrainingRuntime":
        obj["metadata"]["labels"] = dict(UNVALIDATED)
    return obj


def _compare(api: Any, release: str, name: str, changes: list[list[Any]]) -> None:
    obj = apply(_prepared(name), changes)
    ours = [f"{f.path}: {f.message}" for f in validate(as_kubectl_sends(obj), release, obj["kind"])]
    theirs = _server_refuses(api, obj)
    server = f"refuses: {theirs}" if theirs else "accepts"
    function = f"refuses: {ours}" if ours else "accepts"
    assert bool(ours) == bool(theirs), f"{release} {name} {json.dumps(changes)}: the API server {server}; we {function}"


def test_the_shipped_crds_are_what_each_releases_module_holds() -> None:
    """`python -m tests.trainer_crds --check`: the package data is what the generator writes today
    (v2.2.0 too, which no control plane here runs: Kueue's build brings its module)."""
    if shutil.which("go") is None:
        pytest.skip("no Go: the modules cannot be read")
    assert trainer_crds.main(["--check"]) == 0


@on_each_release
def test_the_shipped_crds_are_the_ones_the_control_plane_serves(trainer_control_plane: ControlPlane) -> None:
    release = trainer_control_plane.trainer
    shipped = json.loads((DATA / f"{release}.json").read_text(encoding="utf-8"))
    for kind in FILES:
        crd = json.loads(
            trainer_control_plane.kubectl("get", "crd", shipped["kinds"][kind]["crd"], "-o", "json").stdout
        )
        assert served_schema(crd) == {k: shipped["kinds"][kind][k] for k in ("version", "schema")}, kind


@on_each_release
def test_every_base_is_accepted_by_both(trainer_control_plane: ControlPlane) -> None:
    api = _api(trainer_control_plane)
    trainer_control_plane.apply_server_side(_runtime_of_the_trainjob())  # the TrainJob's, for its webhook
    for name in (*RUNTIME_BASES, "trainjob"):
        _compare(api, trainer_control_plane.trainer, name, [])
        assert _server_refuses(api, _prepared(name)) is None, name


@on_each_release
@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_runtime_is_refused_by_the_function_exactly_when_the_api_server_refuses_it(
    trainer_control_plane: ControlPlane, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(RUNTIME_BASES))
    changes = data.draw(mutations(_prepared(name)))
    _compare(_api(trainer_control_plane), trainer_control_plane.trainer, name, changes)


@on_each_release
@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_trainjob_is_refused_by_the_function_exactly_when_the_api_server_refuses_it(
    trainer_control_plane: ControlPlane, data: st.DataObject
) -> None:
    trainer_control_plane.apply_server_side(_runtime_of_the_trainjob())
    changes = data.draw(mutations(_prepared("trainjob")))
    _compare(_api(trainer_control_plane), trainer_control_plane.trainer, "trainjob", changes)


@pytest.mark.parametrize(("release", "name", "changes"), REGRESSIONS)
def test_a_kept_example(control_planes: Any, release: str, name: str, changes: list[list[Any]]) -> None:
    cp = control_planes(release)
    if name == "trainjob":
        cp.apply_server_side(_runtime_of_the_trainjob())
    _compare(_api(cp), release, name, changes)


@on_each_release
def test_the_issues_runtime_is_refused_at_render_as_the_api_server_refuses_it(
    trainer_control_plane: ControlPlane,
) -> None:
    """Issue 50: a runtime with mlPolicy.torch.numProcPerNode, which neither release's CRD declares."""
    release = trainer_control_plane.trainer
    runtime = _prepared("torch-plain")
    runtime["metadata"]["name"] = "issue-50"
    runtime["spec"]["mlPolicy"]["torch"] = {"numProcPerNode": "auto"}
    refused = _server_refuses(_api(trainer_control_plane), runtime)
    assert refused is not None and 'unknown field "spec.mlPolicy.torch.numProcPerNode"' in refused, refused
    config = {
        "apiVersion": "fn.trainjob-resources.io/v1alpha1",
        "kind": "TrainJobResources",
        "metadata": {"name": "c"},
        "spec": {"trainerVersion": release},
    }
    out = render([runtime], config)
    assert out.code == 1
    (error,) = out.errors()
    assert error["field"]["path"] == "spec.mlPolicy.torch.numProcPerNode"
    assert error["message"].startswith('unknown field "spec.mlPolicy.torch.numProcPerNode"')
    assert f"Kubeflow Trainer {release}'s ClusterTrainingRuntime CRD does not declare it" in error["message"]
