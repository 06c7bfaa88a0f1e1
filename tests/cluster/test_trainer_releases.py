"""Where Kubeflow Trainer v2.2.1 and v2.3.0 differ (issue 33), on both releases' control planes running
(tests/cluster/README.md; no mocks). Each test reads one difference out of the releases' code, cited
from the module cache ($(go env GOMODCACHE)/github.com/kubeflow/trainer/v2@<release>/), and asserts what
each running program does: the value seen wins over the reading."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.cluster.apply import submit
from tests.cluster.controlplane import JOBSET, TRAINER_RELEASES, TRAINJOB, ControlPlane
from tests.examples import VENV_BIN
from tests.kit import build
from tests.support import load_fixture

pytestmark = pytest.mark.cluster
on_each_release = pytest.mark.parametrize("trainer_control_plane", TRAINER_RELEASES, indirect=True)

CLUSTER_RUNTIME = "clustertrainingruntimes.trainer.kubeflow.org"
IN_USE = "trainer.kubeflow.org/resource-in-use"


def _namespace(cp: ControlPlane, name: str) -> str:
    cp.kubectl("create", "namespace", name)
    return name


def _runtime(name: str, namespace: str | None, **node: Any) -> dict[str, Any]:
    """tests/testdata/runtimes/torch-plain.yaml: a TrainingRuntime in `namespace` (a ClusterTrainingRuntime
    for None), its trainer container `node` updated with `node`."""
    rt = load_fixture("torch-plain")
    rt["kind"] = "TrainingRuntime" if namespace else "ClusterTrainingRuntime"
    rt["metadata"] = {"name": name, **({"namespace": namespace} if namespace else {})}
    _node(rt["spec"]["template"]).update(node)
    return rt


def _trainjob(name: str, namespace: str, runtime: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return build.trainjob(name, runtime["metadata"]["name"], namespace=namespace, kind=runtime["kind"], **spec)


def _node(template: dict[str, Any]) -> dict[str, Any]:
    """The container `node` of the replicated job `node` of a runtime's template or of a JobSet."""
    job = next(j for j in template["spec"]["replicatedJobs"] if j["name"] == "node")
    found: dict[str, Any] = next(
        c for c in job["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"
    )
    return found


def _until(what: str, probe: Callable[[], Any], timeout: float = 15.0) -> Any:
    """The first truthy value of probe(), polled until timeout."""
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f}s: {what}")
        time.sleep(0.2)
    return value


@on_each_release
def test_resources_per_node_replaces_the_trainer_container_s_resources_on_v2_2(
    trainer_control_plane: ControlPlane,
) -> None:
    """v2.2.1: the JobSet builder's Trainer() gives the trainer-ancestor job's `node` container
    WithResources(resourcesPerNode), all of it (pkg/runtime/framework/plugins/jobset/builder.go; newRuntimeInfo
    in pkg/runtime/core/trainingruntime.go assigns it the same way). v2.3.0: newRuntimeInfo merges it onto the
    container's own per resource name (trainingruntime.go, MergeResourceRequirements of pkg/util/trainingruntime)."""
    cp = trainer_control_plane
    ns = _namespace(cp, "per-node")
    rt = _runtime("per-node", ns, resources={"requests": {"cpu": "4", "memory": "8Gi"}})
    per_node = {"limits": {"nvidia.com/gpu": 1}}
    cp.apply_server_side(yaml.safe_dump(rt))
    done = submit(cp, _trainjob("per-node", ns, rt, trainer={"resourcesPerNode": per_node}))
    assert done.returncode == 0, done.stderr
    expected = {
        "v2.2.1": {"limits": {"nvidia.com/gpu": "1"}},
        "v2.3.0": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "4", "memory": "8Gi"}},
    }
    assert _node(cp.wait_for_jobset("per-node", ns))["resources"] == expected[cp.trainer]


# What the function predicts, with trainerVersion naming the release, for a runtime sized in requests and a
# resourcesPerNode in limits, each combination: the pods the JobSet's trainer container makes.
PER_NODE_CASES = [
    {"limits": {"nvidia.com/gpu": 1}},
    {"requests": {"memory": "2Gi"}},
    {"limits": {"cpu": "6"}, "requests": {"cpu": "2"}},
    {},
]


@on_each_release
@pytest.mark.parametrize("per_node", PER_NODE_CASES, ids=["gpu-limit", "memory-request", "cpu-both", "empty"])
def test_explain_with_trainer_version_predicts_the_jobset(
    trainer_control_plane: ControlPlane, per_node: dict[str, Any], tmp_path: Any
) -> None:
    from tests.cluster.lifecycle import differences, explain, jobset_containers

    cp = trainer_control_plane
    ns = _namespace(cp, f"predict-{len(str(per_node))}-{cp.trainer.replace('.', '-')}")
    rt = _runtime("predict", ns, resources={"requests": {"cpu": "4", "memory": "8Gi"}})
    tj = _trainjob("predict", ns, rt, trainer={"resourcesPerNode": per_node})
    cp.apply_server_side(yaml.safe_dump(rt))
    done = submit(cp, tj)
    assert done.returncode == 0, done.stderr
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all([rt, tj]))
    env = {"PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    predicted = explain(["in.yaml"], tmp_path, env, cp.trainer)[(ns, "predict")]
    seen = jobset_containers(cp.wait_for_jobset("predict", ns))
    assert not differences({"node": predicted["node"]}, {"node": seen["node"]}), (cp.trainer, per_node)


@on_each_release
def test_a_runtime_edited_before_a_suspended_trainjob_resumes(trainer_control_plane: ControlPlane) -> None:
    """v2.3.0 snapshots the runtime at the TrainJob's first reconcile into the ConfigMap
    `<trainjob>-runtime-snapshot` it owns, and builds every later JobSet from it (pkg/runtime/core/snapshot.go,
    NewObjects in trainingruntime.go). v2.2.1's NewObjects reads the live runtime at every reconcile. The JobSet
    plugin rebuilds a JobSet only while it or its TrainJob is suspended (pkg/runtime/framework/plugins/jobset/
    jobset.go, Build, on both): so a TrainJob created suspended (as Kueue holds one) whose runtime changes
    before it resumes."""
    cp = trainer_control_plane
    ns = _namespace(cp, "snapshot")
    rt = _runtime("snapshot", ns, image="example.com/trainer:before")
    cp.apply_server_side(yaml.safe_dump(rt))
    done = submit(cp, _trainjob("held", ns, rt, suspend=True))
    assert done.returncode == 0, done.stderr
    assert _node(cp.wait_for_jobset("held", ns))["image"] == "example.com/trainer:before"
    snapshot = cp.get("configmap", "held-runtime-snapshot", ns)
    if cp.trainer == "v2.2.1":
        assert snapshot is None
    else:
        assert snapshot is not None and "example.com/trainer:before" in snapshot["data"]["runtime"]
    _node(rt["spec"]["template"])["image"] = "example.com/trainer:after"
    cp.apply_server_side(yaml.safe_dump(rt))
    cp.kubectl("patch", TRAINJOB, "held", "-n", ns, "--type=merge", "-p", '{"spec": {"suspend": false}}')
    resumed = _until(
        "the JobSet resumed", lambda: (j := cp.get(JOBSET, "held", ns)) and j["spec"].get("suspend") is not True and j
    )
    expected = {"v2.2.1": "example.com/trainer:after", "v2.3.0": "example.com/trainer:before"}
    assert _node(resumed)["image"] == expected[cp.trainer]


@on_each_release
def test_a_cluster_training_runtime_in_use_is_kept_by_a_finalizer_on_v2_2(trainer_control_plane: ControlPlane) -> None:
    """v2.2.1's ClusterTrainingRuntime controller adds the finalizer trainer.kubeflow.org/resource-in-use
    while a TrainJob names the runtime, and removes it once none does (Reconcile and NotifyTrainJobUpdate in
    pkg/controller/clustertrainingruntime_controller.go). v2.3.0's only removes that finalizer (the same file)."""
    cp = trainer_control_plane
    ns = _namespace(cp, "in-use")
    rt = _runtime("in-use", None)
    cp.apply_server_side(yaml.safe_dump(rt))
    assert submit(cp, _trainjob("user", ns, rt)).returncode == 0
    cp.wait_for_jobset("user", ns)
    if cp.trainer == "v2.2.1":
        _until(
            "the finalizer",
            lambda: IN_USE in (cp.get(CLUSTER_RUNTIME, "in-use") or {})["metadata"].get("finalizers", []),
        )
    else:
        time.sleep(2)  # the controllers have had the runtime's and the TrainJob's events
        assert "finalizers" not in (cp.get(CLUSTER_RUNTIME, "in-use") or {})["metadata"]
    cp.delete(CLUSTER_RUNTIME, "in-use", wait=False)
    time.sleep(1)
    left = cp.get(CLUSTER_RUNTIME, "in-use")
    if cp.trainer == "v2.2.1":
        assert left is not None and left["metadata"]["deletionTimestamp"], "Terminating while the TrainJob names it"
        cp.delete(TRAINJOB, "user", ns)
        _until("the runtime gone with its last TrainJob", lambda: cp.get(CLUSTER_RUNTIME, "in-use") is None)
    else:
        assert left is None


def _grace_period_patch() -> dict[str, Any]:
    job = build.replicated_job("node", {"terminationGracePeriodSeconds": 90})
    return build.runtime_patch(job, manager="example.com/grace")


@on_each_release
def test_pod_spec_patch_has_termination_grace_period_seconds_from_v2_3(trainer_control_plane: ControlPlane) -> None:
    """PodSpecPatch.TerminationGracePeriodSeconds is new in v2.3.0 (pkg/apis/trainer/v1alpha1/trainjob_types.go);
    v2.2.1's CRD schema has no such field: kubectl's default --validate=strict has the API server refuse it,
    and without strict validation the structural schema prunes it (the TrainJob is stored without it)."""
    cp = trainer_control_plane
    ns = _namespace(cp, "grace")
    rt = _runtime("grace", ns)
    cp.apply_server_side(yaml.safe_dump(rt))
    tj = _trainjob("grace", ns, rt, runtimePatches=[_grace_period_patch()])
    strict, lax = submit(cp, tj, dry_run=True), submit(cp, tj, dry_run=True, validate="ignore")
    assert lax.returncode == 0, lax.stderr
    kept = json.loads(lax.stdout)["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]
    kept_pod = kept["replicatedJobs"][0]["template"]["spec"]["template"]
    if cp.trainer == "v2.2.1":
        assert (
            strict.returncode != 0
            and 'unknown field "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.'
            'replicatedJobs[0].template.spec.template.spec.terminationGracePeriodSeconds"'
            in strict.stderr
        ), strict.stderr
        assert kept_pod == {"spec": {}}, "pruned"
    else:
        assert strict.returncode == 0, strict.stderr
        assert kept_pod == {"spec": {"terminationGracePeriodSeconds": 90}}


@on_each_release
def test_an_initializer_storage_uri_is_checked_from_v2_3(trainer_control_plane: ControlPlane) -> None:
    """v2.3.0's CRD has a CEL rule on the initializers' storageUri: empty or `scheme://...`
    (pkg/apis/trainer/v1alpha1/trainjob_types.go); v2.2.1's has none."""
    cp = trainer_control_plane
    ns = _namespace(cp, "storage-uri")
    rt = _runtime("storage-uri", ns)
    # The job and container a dataset initializer needs (both webhooks check them: jobset.go, Validate).
    init = {"containers": [{"name": "dataset-initializer", "image": "example.com/init"}]}
    labels = {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}
    job = {
        "name": "dataset-initializer",
        "template": {"metadata": {"labels": labels}, "spec": {"template": {"spec": init}}},
    }
    rt["spec"]["template"]["spec"]["replicatedJobs"].insert(0, job)
    cp.apply_server_side(yaml.safe_dump(rt))
    done = submit(cp, _trainjob("uri", ns, rt, initializer={"dataset": {"storageUri": "bucket/path"}}), dry_run=True)
    if cp.trainer == "v2.2.1":
        assert done.returncode == 0, done.stderr
    else:
        assert done.returncode != 0 and "storageUri may be empty, or it must be a valid URI" in done.stderr, done.stderr


@on_each_release
def test_the_webhook_validation_disabled_label_skips_the_runtime_webhook_from_v2_3(
    trainer_control_plane: ControlPlane,
) -> None:
    """v2.3.0's manifests/base/webhook/patch_validating.yaml gives the runtime webhooks an objectSelector that
    lets a runtime labelled trainer.kubeflow.org/webhook-validation: disabled through; v2.2.1's has none, so
    its webhook refuses such a runtime as any other (here: replicas 2, "always must be 1")."""
    cp = trainer_control_plane
    rt = _runtime("unchecked", None)
    rt["metadata"]["labels"] = {"trainer.kubeflow.org/webhook-validation": "disabled"}
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    done = cp.create(yaml.safe_dump(rt), dry_run=True, check=False)
    if cp.trainer == "v2.2.1":
        assert done.returncode != 0 and "always must be 1" in done.stderr, done.stderr
    else:
        assert done.returncode == 0, done.stderr
