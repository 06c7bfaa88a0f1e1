"""The function answers as upstream Kubeflow Trainer (kubeflow/trainer at HEAD) would: one table per rule,
each citing the upstream file and function it follows (issue 12)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from trainjob_resources.cli import explain as explain_cli
from trainjob_resources.krm.resource_list import Item, ResourceList
from trainjob_resources.resolve.bundle import index
from trainjob_resources.trainer.effective import effective_resources
from trainjob_resources.trainer.models import parse_trainjob
from trainjob_resources.trainer.per_node import moved_resources
from trainjob_resources.trainer.runtime_view import parse_runtime
from trainjob_resources.trainer.sites import container_sites
from trainjob_resources.trainer.topology import smp_order, topology
from trainjob_resources.yamltext.yamlnodes import from_python

from tests.kit import build
from tests.support import kubectl_patch, load_fixture, render

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_LABELS = {ANCESTOR: "trainer"}
P0 = "spec.runtimePatches[0]"
JOBS = f"{P0}.trainingRuntimeSpec.template.spec.replicatedJobs"
PODSPEC = f"{JOBS}[0].template.spec.template.spec"


def container(name: str, resources: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": f"example/{name}", **fields}
    if resources is not None:
        out["resources"] = resources
    return out


def rjob(
    name: str,
    containers: list[dict[str, Any]],
    labels: dict[str, str] | None = None,
    init: list[dict[str, Any]] | None = None,
    **job_spec: Any,
) -> dict[str, Any]:
    pod: dict[str, Any] = {"containers": containers}
    if init:
        pod["initContainers"] = init
    return build.replicated_job(name, pod, labels=labels, **job_spec)


def runtime(jobs: list[dict[str, Any]], ml_policy: dict[str, Any] | None, name: str = "rt") -> dict[str, Any]:
    return build.training_runtime(name, jobs, ml_policy)


def deepspeed(labelled: bool = True, launcher_as_node: bool = True) -> dict[str, Any]:
    """Shaped like upstream's manifests/base/runtimes/deepspeed_distributed.yaml: the job named
    ``node`` first and unlabelled, the ``launcher`` labelled as the trainer."""
    node_resources = {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"nvidia.com/gpu": 2}}
    return runtime(
        [
            rjob("node", [container("node", copy.deepcopy(node_resources))], init=[container("ssh-keys")]),
            rjob(
                "launcher",
                [container("node", {"requests": {"cpu": "1", "memory": "2Gi"}})],
                TRAINER_LABELS if labelled else None,
                init=[container("ssh-keys")],
            ),
        ],
        {
            "numNodes": 1,
            "mpi": {"numProcPerNode": 1, "mpiImplementation": "OpenMPI", "runLauncherAsNode": launcher_as_node},
        },
    )


def torch_runtime(ml_policy: dict[str, Any] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return runtime(
        [
            rjob(
                "node",
                [container("node", {"limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 4}})],
                TRAINER_LABELS if labels is None else labels,
                init=[container("loader", {"requests": {"cpu": "1", "memory": "1Gi"}}, restartPolicy="Always")],
            )
        ],
        ml_policy,
    )


def patch(
    job: str, manager: str = "user.example.com/me", labels: dict[str, str] | None = None, **lists: Any
) -> dict[str, Any]:
    return build.runtime_patch(build.replicated_job(job, lists or None, labels=labels), manager=manager)


def trainjob(
    patches: list[dict[str, Any]], trainer: dict[str, Any] | None = None, runtime_name: str = "rt"
) -> dict[str, Any]:
    out = build.trainjob("tj", runtime_name, patches, namespace="team-a")
    if trainer is not None:
        out["spec"]["trainer"] = trainer
    return out


def config(**spec: str) -> dict[str, Any]:
    return build.function_config("fn-config", **spec)


def errors(rendered: Any) -> list[tuple[str, str]]:
    return [(r.get("field", {}).get("path", ""), r["message"]) for r in rendered.errors()]


# Rule 1: the trainer container. kubeflow/trainer pkg/runtime/core/trainingruntime.go newRuntimeInfo:
# a replicated job's node container is sized by resourcesPerNode when its *patched* ancestor label is
# "trainer" and the runtime has an mlPolicy, or, with mlPolicy.mpi.runLauncherAsNode, when the job is
# *named* "node".
RELABEL = patch("node", labels={ANCESTOR: "evaluator"})
LABEL = patch("node", labels=TRAINER_LABELS)
TRAINER_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], set[str]]] = [
    ("deepspeed, launcher labelled, runLauncherAsNode", deepspeed(), [], {"node", "launcher"}),
    ("deepspeed without labels, runLauncherAsNode", deepspeed(labelled=False), [], {"node"}),
    ("deepspeed, launcher labelled, launcher not a node", deepspeed(launcher_as_node=False), [], {"launcher"}),
    ("deepspeed without labels, launcher not a node", deepspeed(False, False), [], set()),
    ("torch runtime", torch_runtime({"numNodes": 1, "torch": {}}), [], {"node"}),
    ("labelled runtime without mlPolicy", torch_runtime(None), [], set()),
    ("a patch rewrites the ancestor label", torch_runtime({"torch": {}}), [RELABEL], set()),
    ("a patch adds the ancestor label", torch_runtime({"torch": {}}, labels={}), [LABEL], {"node"}),
    (
        "a later patch restores it",
        torch_runtime({"torch": {}}),
        [RELABEL, patch("node", "b.io/x", TRAINER_LABELS)],
        {"node"},
    ),
]


@pytest.mark.parametrize(
    ("rt", "patches", "trainers"), [c[1:] for c in TRAINER_CASES], ids=[c[0] for c in TRAINER_CASES]
)
def test_trainer_containers_follow_new_runtime_info(
    rt: dict[str, Any], patches: list[dict[str, Any]], trainers: set[str]
) -> None:
    spec, problems = parse_runtime(rt)
    tj, violations = parse_trainjob(trainjob(patches))
    assert spec is not None and tj is not None and not problems and not violations
    assert set(topology(spec, tj, []).trainers) == trainers


NODE_PATCH = {"name": "node", "resources": {"limits": {"memory": "16Gi"}}}


@pytest.mark.parametrize("labelled", [True, False], ids=["launcher labelled", "no labels"])
def test_the_mpi_node_job_is_the_trainer_s_on_a_deepspeed_runtime(labelled: bool) -> None:
    """trainingruntime.go newRuntimeInfo: runLauncherAsNode sizes the job *named* node, labelled or not."""
    out = render([deepspeed(labelled), trainjob([patch("node", containers=[NODE_PATCH])])])
    path = f"{PODSPEC}.containers[0].resources"
    assert out.code == 1
    assert [p for p, m in errors(out) if "trainer container 'node' of replicated job 'node'" in m] == [path]
    moved = render(
        [deepspeed(labelled), trainjob([patch("node", containers=[NODE_PATCH])])],
        config(trainerResources="moveToResourcesPerNode"),
    )
    if labelled:  # the launcher is a trainer container too: see test_a_move_sizes_every_trainer_container
        assert moved.code == 1
        return
    assert moved.code == 0, moved.errors()
    assert moved.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"]["limits"]["memory"] == "16Gi"
    assert moved.of_kind("TrainingRuntime") == []


# trainingruntime.go newRuntimeInfo: with runLauncherAsNode and a labelled launcher, resourcesPerNode
# sizes both launcher/node and node/node, so a move keeps the pods as patched only when the patches
# leave both equal.
DS_NODE = {"requests": {"cpu": "2", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": 2}}
DS_MOVES: list[tuple[str, bool, list[dict[str, Any]], dict[str, Any] | None]] = [
    ("only node/node patched, launcher labelled", True, [patch("node", containers=[NODE_PATCH])], None),
    (
        "node/node and launcher/node patched differently",
        True,
        [
            patch("node", containers=[{"name": "node", "resources": {"limits": {"memory": "64Gi"}}}]),
            patch(
                "launcher",
                "b.example.com/m",
                containers=[{"name": "node", "resources": {"limits": {"memory": "16Gi"}}}],
            ),
        ],
        None,
    ),
    (
        "both patched to the same resources",
        True,
        [
            patch("node", containers=[{"name": "node", "resources": {"requests": {"memory": "64Gi"}}}]),
            patch("launcher", "b.example.com/m", containers=[{"name": "node", "resources": DS_NODE}]),
        ],
        # a number moved to resourcesPerNode is written as a string (per_node._quantities_as_strings)
        {"requests": {"cpu": "2", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": "2"}},
    ),
    (
        "only node/node, launcher unlabelled",
        False,
        [patch("node", containers=[NODE_PATCH])],
        {"limits": {"memory": "16Gi", "nvidia.com/gpu": "2"}, "requests": {"cpu": "2"}},
    ),
]


@pytest.mark.parametrize(("labelled", "patches", "expected"), [c[1:] for c in DS_MOVES], ids=[c[0] for c in DS_MOVES])
def test_a_move_sizes_every_trainer_container(
    labelled: bool, patches: list[dict[str, Any]], expected: dict[str, Any] | None
) -> None:
    move = config(trainerResources="moveToResourcesPerNode")
    out = render([deepspeed(labelled), trainjob(copy.deepcopy(patches), {"numNodes": 3})], move)
    refused = render([deepspeed(labelled), trainjob(copy.deepcopy(patches), {"numNodes": 3})])
    if expected is None:
        assert out.code == 1
        for rendered in (out, refused):
            # one message: why it is impossible and what the platform can offer, no proposal beside it
            ((path, message),) = errors(rendered)
            assert path.endswith("containers[0].resources")
            assert "is sized by spec.trainer.resourcesPerNode" in message and "cannot be moved" in message
            assert "launcher/containers/node" in message and "node/containers/node" in message
            assert "runLauncherAsNode unset" in message, "names the runtime the platform can offer instead"
        assert all("proposedValue" not in r["field"] for r in refused.errors())
        return
    error, *_ = [r for r in refused.errors() if "is sized by" in r["message"]]
    assert error["field"]["proposedValue"] == {"spec": {"trainer": {"resourcesPerNode": expected}}}
    assert out.code == 0, out.errors()
    assert out.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"] == expected
    again = render(out.items, move)
    assert again.items == out.items
    summaries = [[r for r in x.results if "moved to" not in r["message"]] for x in (out, again)]
    assert summaries[0] and summaries[0] == summaries[1], "a re-render of the output computes what the first did"


def test_without_run_launcher_as_node_the_node_job_is_materialized() -> None:
    """Neither labelled trainer nor (with runLauncherAsNode false) the MPI node: a patch sizes it."""
    out = render([deepspeed(launcher_as_node=False), trainjob([patch("node", containers=[NODE_PATCH])])])
    assert out.code == 0, out.errors()
    (derived,) = out.of_kind("TrainingRuntime")
    node = derived["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert node["resources"]["limits"] == {"nvidia.com/gpu": 2, "memory": "16Gi"}


def test_a_runtime_without_ml_policy_has_no_trainer_container() -> None:
    """newRuntimeInfo merges resourcesPerNode only with an mlPolicy: a patch sizes node, resourcesPerNode is refused."""
    out = render([torch_runtime(None), trainjob([patch("node", containers=[NODE_PATCH])])])
    assert out.code == 0, out.errors()
    assert len(out.of_kind("TrainingRuntime")) == 1
    refused = render([torch_runtime(None), trainjob([], {"resourcesPerNode": {"limits": {"cpu": "2"}}})])
    assert refused.code == 1
    assert [p for p, m in errors(refused) if "ignores spec.trainer.resourcesPerNode" in m] == [
        "spec.trainer.resourcesPerNode"
    ]


# Rule 2: moving to resourcesPerNode keeps the topology. pkg/runtime/runtime.go ExtractResourcePerNodeFromRuntime
# and GetNumGPUPerNode; plugins/torch/torch.go EnforceMLPolicy (getNumCPUPerNode), torchtune.go getRecipeAndConfig,
# plugins/mpi/mpi.go EnforceMLPolicy, plugins/xgboost/xgboost.go: resourcesPerNode replaces the node container's.
RUNTIME_NODE: dict[str, Any] = {
    "limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 4, "example.com/fpga": 1},
    "requests": {"amd.com/gpu": 1},
}
MOVE_CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None, list[str], Any]] = [
    (
        "the runtime's GPU and cpu keys are carried over",
        [{"limits": {"memory": "64Gi"}}],
        None,
        [],
        # numbers carried over or moved are written as strings (per_node._quantities_as_strings)
        {"limits": {"cpu": "8", "nvidia.com/gpu": "4", "memory": "64Gi"}, "requests": {"amd.com/gpu": "1"}},
    ),
    (
        "the patch's own values win",
        [{"limits": {"nvidia.com/gpu": 8, "cpu": "16"}}],
        None,
        [],
        {"limits": {"nvidia.com/gpu": "8", "cpu": "16"}, "requests": {"amd.com/gpu": "1"}},
    ),
    (
        "a resourcesPerNode the user wrote is what the plugins read already: nothing is carried",
        [{"limits": {"memory": "64Gi"}}],
        {"limits": {"cpu": "4"}},
        [],
        {"limits": {"memory": "64Gi", "cpu": "4"}},
    ),
    ("a deletion cannot move", [{"limits": {"memory": None}}], None, [], None),
    # newRuntimeInfo rebuilds the trainer container's resources from limits and requests only: with
    # resourcesPerNode set, its claims (the runtime's, the patch's, resourcesPerNode's) are gone.
    ("a patch's claims cannot move", [{"claims": [{"name": "nic"}]}], None, [], None),
    (
        "claims that keep the runtime's cannot move",
        [{"claims": [{"name": "rdma"}, {"name": "nic"}]}],
        None,
        ["rdma"],
        None,
    ),
    (
        "a move that creates resourcesPerNode drops the runtime's claims",
        [{"limits": {"memory": "1Gi"}}],
        None,
        ["rdma"],
        None,
    ),
    (
        "the runtime's claims are gone already under a written resourcesPerNode",
        [{"limits": {"memory": "1Gi"}}],
        {"limits": {"cpu": "4"}},
        ["rdma"],
        {"limits": {"memory": "1Gi", "cpu": "4"}},
    ),
    (
        "claims: [] removes the runtime's: it moves",
        [{"claims": [], "limits": {"cpu": "1"}}],
        None,
        ["rdma"],
        {"limits": {"cpu": "1", "nvidia.com/gpu": "4"}, "requests": {"amd.com/gpu": "1"}},
    ),
    ("$patch: replace cannot move", [{"limits": {"$patch": "replace", "memory": "1Gi"}}], None, [], None),
]


@pytest.mark.parametrize(
    ("patches", "existing", "claims", "expected"), [c[1:] for c in MOVE_CASES], ids=[c[0] for c in MOVE_CASES]
)
def test_moved_resources_keep_what_the_plugins_read(
    patches: list[dict[str, Any]], existing: dict[str, Any] | None, claims: list[str], expected: Any
) -> None:
    moved, problem = moved_resources(patches, existing, RUNTIME_NODE, claims)
    assert moved == expected
    assert (problem is None) == (expected is not None)
    if problem is not None and expected is None and "claims" in str(patches) + str(claims):
        assert "newRuntimeInfo" in problem and "limits and requests only" in problem


def test_the_default_error_proposes_what_moving_writes() -> None:
    rt = torch_runtime({"numNodes": 1, "torch": {}})
    tj = trainjob([patch("node", containers=[{"name": "node", "resources": {"limits": {"memory": "64Gi"}}}])], {})
    refused = render([rt, tj])
    (error,) = [r for r in refused.errors() if "trainer container" in r["message"]]
    proposed = {"limits": {"cpu": "8", "nvidia.com/gpu": "4", "memory": "64Gi"}}  # the number as a string
    assert error["field"]["proposedValue"] == {"spec": {"trainer": {"resourcesPerNode": proposed}}}
    moved = render([rt, tj], config(trainerResources="moveToResourcesPerNode"))
    assert moved.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"] == proposed


# Rule 3: runtimes keyed by name. plugins/torch/torchtune.go getModelFromRuntimeRef reads the model from
# runtimeRef.name; pkg/runtime/core/clustertrainingruntime.go ValidateObjects warns about deprecated runtimes.
TUNE = {"command": ["tune", "run"]}
LOADER = {"name": "loader", "resources": {"limits": {"memory": "4Gi"}}}
NAME_CASES: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None, int, str | None]] = [
    ("torchtune is refused", {"torch": {}}, TUNE, 1, "getModelFromRuntimeRef"),
    ("a torch command is not torchtune", {"torch": {}}, {"command": ["torchrun", "train.py"]}, 0, None),
    ("tune run without mlPolicy.torch: no torch plugin", {"mpi": {"runLauncherAsNode": False}}, TUNE, 0, None),
]


@pytest.mark.parametrize(
    ("ml_policy", "trainer", "code", "said"), [c[1:] for c in NAME_CASES], ids=[c[0] for c in NAME_CASES]
)
def test_torchtune_runtimes_are_keyed_by_name(
    ml_policy: dict[str, Any] | None, trainer: dict[str, Any] | None, code: int, said: str | None
) -> None:
    rt = torch_runtime(ml_policy)
    rt["metadata"]["name"] = "torchtune-llama3.2-1b"
    out = render([rt, trainjob([patch("node", initContainers=[LOADER])], trainer, "torchtune-llama3.2-1b")])
    assert out.code == code
    if said is not None:
        assert any(said in m and p.endswith("initContainers[0].resources") for p, m in errors(out))


def test_torchtune_with_overrides_equal_to_the_runtime_is_refused_like_any_override() -> None:
    """An override that says something derives even when it equals the runtime's value (the name
    must not depend on the base's content), so the torchtune model name would be lost all the same."""
    rt = torch_runtime({"torch": {}})
    rt["metadata"]["name"] = "torchtune-llama3.2-1b"
    same = {"name": "loader", "resources": {"requests": {"cpu": "1000m"}}}
    out = render([rt, trainjob([patch("node", initContainers=[same])], TUNE, "torchtune-llama3.2-1b")])
    assert out.code == 1
    (error,) = out.errors()
    assert "getModelFromRuntimeRef" in error["message"]


def test_torchtune_trainer_only_patches_keep_the_runtime_ref() -> None:
    rt = torch_runtime({"torch": {}})
    rt["metadata"]["name"] = "torchtune-llama3.2-1b"
    tj = trainjob([patch("node", containers=[NODE_PATCH])], TUNE, "torchtune-llama3.2-1b")
    out = render([rt, tj], config(trainerResources="moveToResourcesPerNode"))
    assert out.code == 0, out.errors()
    assert out.named("TrainJob", "tj")["spec"]["runtimeRef"]["name"] == "torchtune-llama3.2-1b"


def test_a_deprecated_runtime_keeps_its_warning_on_a_derived_training_runtime() -> None:
    rt = torch_runtime({"torch": {}})
    rt["metadata"]["labels"] = {"trainer.kubeflow.org/support": "deprecated"}
    out = render([rt, trainjob([patch("node", initContainers=[LOADER])])])
    assert out.code == 0
    assert [r["message"] for r in out.results if r["severity"] == "warning" and "deprecated" in r["message"]]
    same_kind = render(
        [rt, trainjob([patch("node", initContainers=[LOADER])])], config(derivedRuntimeKind="ClusterTrainingRuntime")
    )
    assert not [r for r in same_kind.results if r["severity"] == "warning"]


# Rule 4: merge as upstream's strategic merge does. Claims: tests/test_merge.py. Container order:
# apimachinery pkg/util/strategicpatch/patch.go mergeSlice / normalizeElementOrder / mergeSortedSlice,
# applied by trainingruntime.go mergeRuntimePatches (which restores only replicatedJobs' order).
ORDER_CASES: list[tuple[str, list[str], list[str], list[str]]] = [
    ("one entry keeps the order", ["a", "b", "c", "d"], ["c"], ["a", "b", "c", "d"]),
    # b (original-only) goes before c: both in the original, b first; d is not before a there.
    ("two entries swapped", ["a", "b", "c", "d"], ["c", "a"], ["b", "c", "a", "d"]),
    ("the last before the first", ["a", "b", "c"], ["c", "a"], ["b", "c", "a"]),
    ("reversed", ["a", "b", "c", "d"], ["d", "c", "b", "a"], ["d", "c", "b", "a"]),
    ("interleaved", ["a", "b", "c", "d", "e"], ["d", "b"], ["a", "c", "d", "b", "e"]),
]


@pytest.mark.parametrize(
    ("original", "listed", "expected"), [c[1:] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES]
)
def test_container_order_as_strategic_merge_makes_it(
    original: list[str], listed: list[str], expected: list[str]
) -> None:
    assert smp_order(original, listed) == expected


@pytest.mark.kubectl
@pytest.mark.parametrize(("original", "listed"), [c[1:3] for c in ORDER_CASES], ids=[c[0] for c in ORDER_CASES])
def test_container_order_matches_kubectl_patch(
    kubectl: str, original: list[str], listed: list[str], tmp_path: Any
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"initContainers": [container(n) for n in original], "containers": [container("main")]},
    }
    patched = kubectl_patch(
        kubectl, pod, {"spec": {"initContainers": [{"name": n} for n in listed]}}, tmp_path / "pod.json"
    )
    assert [c["name"] for c in patched["spec"]["initContainers"]] == smp_order(original, listed)


DIRECTIVE_CASES: list[tuple[str, dict[str, Any], str, str | None]] = [
    (
        "in resourcesPerNode",
        trainjob([], {"resourcesPerNode": {"limits": {"$patch": "replace", "cpu": "1"}}}),
        "materialize",
        "spec.trainer.resourcesPerNode.limits[$patch]",
    ),
    (
        "in resources, native mode",
        trainjob(
            [
                patch(
                    "node",
                    initContainers=[{"name": "loader", "resources": {"limits": {"$patch": "replace", "cpu": "1"}}}],
                )
            ]
        ),
        "native",
        "limits[$patch]",
    ),
    (
        "in a field materialize mode keeps",
        trainjob([patch("node", initContainers=[{"name": "loader", "securityContext": {"$patch": "replace"}}])]),
        "materialize",
        "securityContext[$patch]",
    ),
    (
        "$patch: delete in resources",
        trainjob([patch("node", initContainers=[{"name": "loader", "resources": {"limits": {"$patch": "delete"}}}])]),
        "materialize",
        "limits[$patch]",
    ),
    (
        "$patch: replace in resources, materialize mode: the function's own extension",
        trainjob(
            [
                patch(
                    "node",
                    initContainers=[{"name": "loader", "resources": {"limits": {"$patch": "replace", "cpu": "1"}}}],
                )
            ]
        ),
        "materialize",
        None,
    ),
]


@pytest.mark.parametrize(
    ("tj", "mode", "refused"), [c[1:] for c in DIRECTIVE_CASES], ids=[c[0] for c in DIRECTIVE_CASES]
)
def test_strategic_merge_directives_that_would_reach_the_cluster_are_refused(
    tj: dict[str, Any], mode: str, refused: str | None
) -> None:
    out = render([torch_runtime({"torch": {}}), tj], config(mode=mode))
    found = [p for p, m in errors(out) if "strategic-merge directive" in m]
    if refused is None:
        assert out.code == 0 and found == [], out.errors()
    else:
        assert out.code == 1 and len(found) == 1 and found[0].endswith(refused), errors(out)


# A null the API server prunes deletes nothing: resourcesPerNode (a typed field; newRuntimeInfo then
# MergeResourceRequirements), and every resources in native mode. The runtime's value stays.
NULL_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "in resourcesPerNode",
        trainjob([], {"resourcesPerNode": {"limits": {"cpu": None, "memory": "64Gi"}}}),
        "materialize",
        "spec.trainer.resourcesPerNode.limits.cpu",
    ),
    (
        "in resources, native mode",
        trainjob([patch("node", initContainers=[{"name": "loader", "resources": {"requests": {"cpu": None}}}])]),
        "native",
        f"{PODSPEC}.initContainers[0].resources.requests.cpu",
    ),
]


@pytest.mark.parametrize(("tj", "mode", "path"), [c[1:] for c in NULL_CASES], ids=[c[0] for c in NULL_CASES])
def test_a_pruned_null_deletes_nothing(tj: dict[str, Any], mode: str, path: str) -> None:
    documents = [torch_runtime({"torch": {}}), tj]
    out = render(documents, config(mode=mode))
    assert out.code == 0, out.errors()
    assert [r["field"]["path"] for r in out.results if r["severity"] == "warning"] == [path]
    jobs = explain(documents, config(mode=mode))["replicatedJobs"]
    containers = {c["name"]: c for c in jobs[0]["containers"]}
    assert containers["node"]["limits"]["cpu"] == "8"
    assert containers["loader"]["requests"]["cpu"] == "1"


# Rule 5: CRD limits, pkg/apis/trainer/v1alpha1/trainjob_types.go markers; the manager's format is
# pkg/runtime/framework/plugins/jobset/jobset.go Validate (IsDomainPrefixedPath, whole-string match).


def many_patches(n: int) -> list[dict[str, Any]]:
    return [patch("node", f"m{i}.example.com/x") for i in range(n)]


def with_jobs(n: int) -> list[dict[str, Any]]:
    one = patch("node")
    one["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"] *= n
    return [one]


CRD_CASES: list[tuple[str, list[dict[str, Any]], str, str]] = [
    ("runtimePatches MaxItems 16", many_patches(17), "spec.runtimePatches", "at most 16 items"),
    ("manager MaxLength 253", [patch("node", "a.io/" + "x" * 249)], f"{P0}.manager", "more than 253 characters"),
    ("manager matched as a whole string", [patch("node", "example.com/me\n")], f"{P0}.manager", "domain-prefixed path"),
    ("replicatedJobs MaxItems 100", with_jobs(101), JOBS, "at most 100 items"),
    ("replicatedJobs keyed by name", with_jobs(2), f"{JOBS}[1].name", "Duplicate value"),
    (
        "containers MaxItems 64",
        [patch("node", containers=[{"name": "node"}] * 65)],
        f"{PODSPEC}.containers",
        "at most 64 items",
    ),
    (
        "initContainers MaxItems 64",
        [patch("node", initContainers=[{"name": "loader"}] * 65)],
        f"{PODSPEC}.initContainers",
        "at most 64 items",
    ),
    (
        "containers keyed by name",
        [patch("node", initContainers=[{"name": "loader"}] * 2)],
        f"{PODSPEC}.initContainers[1].name",
        "Duplicate",
    ),
    (
        "ContainerPatch name MaxLength 253",
        [patch("node", initContainers=[{"name": "x" * 254}])],
        f"{PODSPEC}.initContainers[0].name",
        "more than 253 characters",
    ),
    (
        "ContainerPatch env MaxItems 128",
        [patch("node", initContainers=[{"name": "loader", "env": [{"name": f"E{i}"} for i in range(129)]}])],
        f"{PODSPEC}.initContainers[0].env",
        "at most 128",
    ),
    (
        "tolerations MaxItems 128",
        [patch("node", tolerations=[{"key": "k"}] * 129)],
        f"{PODSPEC}.tolerations",
        "at most 128",
    ),
]


@pytest.mark.parametrize(("patches", "path", "said"), [c[1:] for c in CRD_CASES], ids=[c[0] for c in CRD_CASES])
def test_the_trainjob_crd_s_limits(patches: list[dict[str, Any]], path: str, said: str) -> None:
    out = render([torch_runtime({"torch": {}}), trainjob(patches)])
    assert out.code == 1
    assert any(p == path and said in m for p, m in errors(out)), errors(out)


# explain against a hand computation.


def explain(documents: list[dict[str, Any]], function_config: dict[str, Any] | None = None) -> dict[str, Any]:
    items = [Item(from_python(copy.deepcopy(d))) for d in documents]
    fn = Item(from_python(function_config)) if function_config is not None else None
    explained = explain_cli.explain_resource_list(ResourceList(items=items, function_config=fn), "json")
    assert not explained.failed, explained.messages
    (view,) = json.loads(explained.output)["trainJobs"]
    out: dict[str, Any] = view
    return out


def test_explain_mpi_run_launcher_as_node_by_hand() -> None:
    tj = trainjob([], {"numNodes": 4, "resourcesPerNode": {"limits": {"cpu": "4", "memory": "16Gi"}}})
    view = explain([deepspeed(), tj])
    jobs = {j["name"]: j for j in view["replicatedJobs"]}
    # mpi.go EnforceMLPolicy: the job named node gets numNodes - 1 = 3 pods; the launcher keeps
    # mlPolicy.numNodes = 1. newRuntimeInfo merges resourcesPerNode onto both node containers: their
    # limits are cpu 4, memory 16Gi, nvidia.com/gpu 2 (node's own); requests stay the runtime's.
    assert (jobs["node"]["pods"], jobs["launcher"]["pods"]) == (3, 1)
    assert jobs["node"]["podRequests"] == {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "2"}
    assert jobs["launcher"]["podRequests"] == {"cpu": "1", "memory": "2Gi"}
    # requests: 3 x (2, 8Gi, 2 GPUs) + 1 x (1, 2Gi); limits: 3 x (4, 16Gi, 2 GPUs) + 1 x (4, 16Gi)
    assert view["totalRequests"] == {"cpu": "7", "memory": "26Gi", "nvidia.com/gpu": "6"}
    # ... but the runtime's ssh-keys init container has no limit: the pods' cpu and memory limits are
    # unbounded (the kubelet sets a pod-level limit only when every container has one), so only the
    # GPUs have a total limit.
    assert view["totalLimits"] == {"nvidia.com/gpu": "6"}
    assert view["unboundedLimits"] == ["cpu", "memory"]


def test_explain_runtime_without_ml_policy_by_hand() -> None:
    rt = runtime(
        [rjob("node", [container("node", {"limits": {"cpu": "1", "memory": "1Gi"}})], TRAINER_LABELS, parallelism=2)],
        None,
    )
    tj = trainjob(
        [patch("node", containers=[{"name": "node", "resources": {"limits": {"memory": "4Gi"}}}])], {"numNodes": 3}
    )
    (job,) = explain([rt, tj])["replicatedJobs"]
    # plainml.go EnforceMLPolicy: numNodes (3) replaces the trainer job's parallelism (2). No mlPolicy:
    # the node container is not the trainer's, the patch sizes it: limits cpu 1, memory 4Gi, requests
    # defaulted from them; 3 pods.
    assert job["pods"] == 3
    assert job["containers"][0]["sources"]["limits"] == {"cpu": "runtime", "memory": "patch user.example.com/me"}
    assert job["podRequests"] == {"cpu": "1", "memory": "4Gi"}


SIDECAR = container("sidecar", {"requests": {"cpu": "1"}}, restartPolicy="Always")
SETUP = container("setup", {"requests": {"cpu": "4"}})


@pytest.mark.parametrize(
    ("entries", "mode", "order", "cpu"),
    [
        # env stays on the TrainJob: the patch lists setup before sidecar, and the pod does too.
        (
            [
                {"name": "setup", "env": [{"name": "A", "value": "1"}]},
                {"name": "sidecar", "env": [{"name": "B", "value": "2"}]},
            ],
            "materialize",
            ["setup", "sidecar"],
            "4",
        ),
        # only resources: materialize takes them out, and keeps the names, which reorder as written
        # (removing them would give the runtime's order: sidecar, setup, 5; tests/cluster/test_move_and_order.py).
        (
            [
                {"name": "setup", "resources": {"requests": {"cpu": "4"}}},
                {"name": "sidecar", "resources": {"requests": {"cpu": "1"}}},
            ],
            "materialize",
            ["setup", "sidecar"],
            "4",
        ),
        # native keeps every entry.
        (
            [
                {"name": "setup", "resources": {"requests": {"cpu": "4"}}},
                {"name": "sidecar", "resources": {"requests": {"cpu": "1"}}},
            ],
            "native",
            ["setup", "sidecar"],
            "4",
        ),
    ],
    ids=["kept entries reorder", "resources-only entries keep their names", "native mode"],
)
def test_explain_init_order_by_hand(entries: list[dict[str, Any]], mode: str, order: list[str], cpu: str) -> None:
    rt = runtime(
        [rjob("node", [container("node", {"requests": {"cpu": "2"}})], TRAINER_LABELS, init=[SIDECAR, SETUP])],
        {"torch": {}},
    )
    (job,) = explain([rt, trainjob([patch("node", initContainers=entries)])], config(mode=mode))["replicatedJobs"]
    assert [c["name"] for c in job["containers"]] == [*order, "node"]
    # sidecar, then setup: setup runs beside the sidecar, 4 + 1 = 5 > node + sidecar = 3.
    # setup, then sidecar: setup alone, 4 > 3.
    assert job["podRequests"]["cpu"] == cpu


# Claims: a runtime patch replaces the list (ResourceRequirements.claims has no patch strategy),
# in the derived runtime as kubectl's strategic merge computes it, and in native mode's effective resources.
CLAIMED = {"limits": {"cpu": "1"}, "claims": [{"name": "gpu"}, {"name": "nic", "request": "a"}]}
CLAIM_PATCHES = [{"claims": [{"name": "nic", "request": "b"}]}, {"limits": {"cpu": "2"}}]


def claimed_runtime() -> dict[str, Any]:
    rt = runtime(
        [rjob("node", [container("node")], TRAINER_LABELS, init=[container("loader", copy.deepcopy(CLAIMED))])],
        {"torch": {}},
    )
    pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "g"}, {"name": "nic", "resourceClaimName": "n"}]
    return rt


@pytest.mark.kubectl
def test_materialized_claims_match_kubectl(kubectl: str, tmp_path: Any) -> None:
    rt = claimed_runtime()
    patches = [
        patch("node", f"m{i}.example.com/p", initContainers=[{"name": "loader", "resources": r}])
        for i, r in enumerate(CLAIM_PATCHES)
    ]
    out = render([rt, trainjob(patches)])
    assert out.code == 0, out.errors()
    (derived,) = out.of_kind("TrainingRuntime")
    loader = derived["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "initContainers"
    ][0]
    pod: Any = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"initContainers": [container("loader", copy.deepcopy(CLAIMED))], "containers": [container("node")]},
    }
    for one in CLAIM_PATCHES:
        pod = kubectl_patch(
            kubectl, pod, {"spec": {"initContainers": [{"name": "loader", "resources": one}]}}, tmp_path / "pod.json"
        )
    expected = pod["spec"]["initContainers"][0]["resources"]
    assert loader["resources"]["claims"] == expected["claims"] == [{"name": "nic", "request": "b"}]
    assert loader["resources"]["limits"] == {"cpu": "2"} and expected["limits"] == {"cpu": "2"}


def test_native_claims_are_replaced() -> None:
    patches = [
        patch("node", f"m{i}.example.com/p", initContainers=[{"name": "loader", "resources": r}])
        for i, r in enumerate(CLAIM_PATCHES)
    ]
    raw = trainjob(patches)
    tj, _ = parse_trainjob(raw)
    bundle = index([Item(from_python(claimed_runtime()))])
    (entry,) = bundle.runtimes.values()
    assert tj is not None and entry.model is not None
    sites = list(container_sites(tj, raw))
    topo = topology(entry.model, tj, sites)
    effective = effective_resources(entry.jobs, sites, None, topo, native=True)
    assert effective[("node", "initContainers", "loader")].requirements["claims"] == [{"name": "nic", "request": "b"}]


# Where upstream reads resourcesPerNode and where it merges it differ. pkg/runtime/runtime.go
# ExtractResourcePerNodeFromRuntime reads the node container of the first job *named* node or
# trainer-labelled; pkg/runtime/core/trainingruntime.go newRuntimeInfo merges resourcesPerNode only
# into the trainer containers. On an MPI runtime without runLauncherAsNode the first is the
# workers' job, the second the launcher's: a move would hand the workers' GPUs to the launcher.
LAUNCHER_PATCH = patch("launcher", containers=[{"name": "node", "resources": {"requests": {"memory": "4Gi"}}}])


@pytest.mark.parametrize("mode", ["error", "moveToResourcesPerNode"])
def test_a_move_is_refused_where_upstream_reads_another_container(mode: str) -> None:
    out = render(
        [deepspeed(launcher_as_node=False), trainjob([copy.deepcopy(LAUNCHER_PATCH)])], config(trainerResources=mode)
    )
    assert out.code == 1
    ((path, message),) = [(p, m) for p, m in errors(out) if "cannot be moved" in m]
    assert path == f"{PODSPEC}.containers[0].resources"
    assert "ExtractResourcePerNodeFromRuntime" in message and "'node'" in message and "'launcher'" in message
    assert "runLauncherAsNode" in message
    assert out.named("TrainJob", "tj").get("spec", {}).get("trainer") is None, "nothing is moved"
    assert [p for p, m in errors(out)] == [path], "one message, in every mode"
    assert "is sized by spec.trainer.resourcesPerNode" in message
    assert all("proposedValue" not in r["field"] for r in out.errors()), (
        "no proposal that sizes the launcher with 2 GPUs"
    )


def test_upstream_reads_the_first_node_container_even_without_resources() -> None:
    """ExtractResourcePerNodeFromRuntime returns the first match: a typed container's resources are
    never nil once pkg/apply/apply.go FromTypedObjWithFields has converted it, so an empty trainer
    container is read as empty, and a later job named node is not read."""
    rt = runtime(
        [
            rjob("trainer", [container("node")], TRAINER_LABELS),
            rjob("node", [container("node", {"limits": {"nvidia.com/gpu": 8, "cpu": "16"}})]),
        ],
        {"torch": {}},
    )
    tj = trainjob([patch("trainer", containers=[{"name": "node", "resources": {"limits": {"memory": "4Gi"}}}])], {})
    out = render([rt, tj], config(trainerResources="moveToResourcesPerNode"))
    assert out.code == 0, out.errors()
    assert out.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"] == {"limits": {"memory": "4Gi"}}


def claimed_trainer_runtime() -> dict[str, Any]:
    rt = runtime(
        [
            rjob(
                "node",
                [container("node", {"limits": {"nvidia.com/gpu": 1}, "claims": [{"name": "nic"}]})],
                TRAINER_LABELS,
            )
        ],
        {"torch": {}},
    )
    pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["resourceClaims"] = [{"name": "nic", "resourceClaimTemplateName": "rdma-nic"}]
    return rt


def test_resources_per_node_drops_the_trainer_container_s_claims() -> None:
    """newRuntimeInfo sets the trainer container's resources to the merged limits and requests only."""
    per_node = {"limits": {"memory": "8Gi"}, "claims": [{"name": "nic"}]}
    out = render([claimed_trainer_runtime(), trainjob([], {"resourcesPerNode": per_node})])
    assert out.code == 0, out.errors()
    said = {(r["field"]["path"], r["severity"]) for r in out.results if "claims" in r["message"] and "field" in r}
    assert said == {("spec.trainer.resourcesPerNode", "warning"), ("spec.trainer.resourcesPerNode.claims", "warning")}
    tj, _ = parse_trainjob(trainjob([], {"resourcesPerNode": per_node}))
    spec, _ = parse_runtime(claimed_trainer_runtime())
    assert tj is not None and spec is not None
    (entry,) = index([Item(from_python(claimed_trainer_runtime()))]).runtimes.values()
    effective = effective_resources(entry.jobs, [], per_node, topology(spec, tj, []))
    assert effective[("node", "containers", "node")].requirements == {"limits": {"nvidia.com/gpu": 1, "memory": "8Gi"}}
    shown = explain([claimed_trainer_runtime(), trainjob([], {"resourcesPerNode": per_node})])
    (node,) = shown["replicatedJobs"][0]["containers"]
    assert node["claimsDroppedByResourcesPerNode"] == ["nic"] and "claims" not in node


@pytest.mark.parametrize(
    "resources",
    [{"limits": {"memory": "4Gi"}}, {"limits": {"memory": "4Gi"}, "claims": [{"name": "nic"}]}],
    ids=["keeps the runtime's claims", "claims of its own"],
)
def test_a_move_that_would_drop_claims_is_refused(resources: dict[str, Any]) -> None:
    tj = trainjob([patch("node", containers=[{"name": "node", "resources": resources}])], {})
    out = render([claimed_trainer_runtime(), tj], config(trainerResources="moveToResourcesPerNode"))
    assert out.code == 1
    ((_, message),) = [(p, m) for p, m in errors(out) if "cannot be moved" in m]
    assert "claims nic" in message and "newRuntimeInfo" in message


# What the cluster refuses and the function must too (issue 22).
def test_a_patched_claim_must_name_one_of_the_pod_s_resource_claims() -> None:
    """Kubernetes' pod validation: a container claim names an entry of pod.spec.resourceClaims,
    which a PodSpecPatch cannot add (pkg/apis/trainer/v1alpha1/trainjob_types.go PodSpecPatch)."""
    claim = {"name": "loader", "resources": {"claims": [{"name": "gpu"}, {"name": "fpga"}]}}
    out = render([claimed_runtime(), trainjob([patch("node", initContainers=[claim])])])
    assert out.code == 1
    ((path, message),) = errors(out)
    assert path == f"{PODSPEC}.initContainers[0].resources.claims[1].name"
    assert "resourceClaims" in message and "gpu, nic" in message


SPEC_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    ("managedBy outside the enum", {"managedBy": "example.com/mine"}, "spec.managedBy"),
    ("managedBy: kueue", {"managedBy": "kueue.x-k8s.io/multikueue"}, None),
    ("managedBy: the trainer's", {"managedBy": "trainer.kubeflow.org/trainjob-controller"}, None),
    ("activeDeadlineSeconds 0", {"activeDeadlineSeconds": 0}, "spec.activeDeadlineSeconds"),
    ("activeDeadlineSeconds 1", {"activeDeadlineSeconds": 1}, None),
    (
        "storageUri without a scheme",
        {"initializer": {"model": {"storageUri": "hf//x"}}},
        "spec.initializer.model.storageUri",
    ),
    # CEL's matches is RE2, whose "." is not a newline: the control plane refuses it
    # (tests/cluster/test_crd_differential.py).
    (
        "storageUri with a newline",
        {"initializer": {"dataset": {"storageUri": "hf://a\n"}}},
        "spec.initializer.dataset.storageUri",
    ),
    ("storageUri empty", {"initializer": {"dataset": {"storageUri": ""}}}, None),
    ("storageUri hf://", {"initializer": {"dataset": {"storageUri": "hf://org/ds"}}}, None),
    (
        "storageUri too long",
        {"initializer": {"dataset": {"storageUri": "s3://" + "a" * 2044}}},
        "spec.initializer.dataset.storageUri",
    ),
]


@pytest.mark.parametrize(("spec", "path"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_the_trainjob_crd_s_enum_minimum_and_cel_rules(spec: dict[str, Any], path: str | None) -> None:
    """pkg/apis/trainer/v1alpha1/trainjob_types.go: managedBy's CEL enum, activeDeadlineSeconds' Minimum,
    the initializers' storageUri CEL rule and MaxLength."""
    rt = load_fixture("torchtune")  # its initializers mount the volume "initializer", as upstream's do
    tj = trainjob([], runtime_name=rt["metadata"]["name"])
    tj["spec"].update(copy.deepcopy(spec))
    out = render([rt, tj])
    assert [p for p, _ in errors(out)] == ([path] if path else [])


INIT_CASES: list[tuple[str, str, dict[str, Any], list[dict[str, Any]], str | None]] = [
    (
        "no dataset-initializer job",
        "torch-plain",
        {"dataset": {"storageUri": "hf://a/b"}},
        [],
        "must have dataset-initializer job",
    ),
    ("the runtime has it, mounted", "torchtune", {"dataset": {}, "model": {}}, [], None),
    ("mounted under another name", "torch-initializers", {"model": {}}, [], "in container model-initializer"),
    (
        "the container does not mount the volume",
        "torch-data-cache",
        {"dataset": {"storageUri": "cache://x"}},
        [],
        "must have volumeMount with name - initializer",
    ),
    (
        "a patch mounts it",
        "torch-data-cache",
        {"dataset": {"storageUri": "cache://x"}},
        [
            patch(
                "dataset-initializer",
                containers=[
                    {
                        "name": "dataset-initializer",
                        "volumeMounts": [{"name": "initializer", "mountPath": "/workspace"}],
                    }
                ],
            )
        ],
        None,
    ),
]


@pytest.mark.parametrize(
    ("fixture", "initializer", "patches", "said"), [c[1:] for c in INIT_CASES], ids=[c[0] for c in INIT_CASES]
)
def test_jobset_validate_s_initializer_checks(
    fixture: str, initializer: dict[str, Any], patches: list[dict[str, Any]], said: str | None
) -> None:
    """pkg/runtime/framework/plugins/jobset/jobset.go Validate, on the runtime as patched."""
    rt = load_fixture(fixture)
    tj = trainjob(copy.deepcopy(patches), runtime_name=rt["metadata"]["name"])
    tj["spec"]["initializer"] = copy.deepcopy(initializer)
    out = render([rt, tj])
    found = [(p, m) for p, m in errors(out) if "jobset.go Validate" in m]
    if said is None:
        assert found == [], out.errors()
    else:
        ((path, message),) = found
        assert path == "spec.runtimeRef" and said in message


@pytest.mark.parametrize("version", ["v2.2.0", "v2.2.1"])
def test_v2_2_needs_no_initializer_volume_mount(version: str) -> None:
    """jobset.go Validate at v2.2.x checks the job and the container only: the data-cache runtime, which
    mounts no volume ``initializer``, runs a TrainJob with spec.initializer.dataset there (and the job or
    container missing is still refused)."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"trainerVersion": version}}
    rt = load_fixture("torch-data-cache")
    tj = trainjob([], runtime_name=rt["metadata"]["name"])
    tj["spec"]["initializer"] = {"dataset": {"storageUri": "cache://x"}}
    assert [m for _, m in errors(render([rt, tj], config)) if "jobset.go Validate" in m] == []
    tj["spec"]["initializer"] = {"model": {}}
    [message] = [m for _, m in errors(render([rt, tj], config)) if "jobset.go Validate" in m]
    assert "must have model-initializer job" in message


WEBHOOK_OFF = {"trainer.kubeflow.org/webhook-validation": "disabled"}
WEBHOOK_SIDECAR = {"name": "loader", "resources": {"limits": {"memory": "2Gi"}}}


def unvalidated(replicas: int | None, trainer_container: str) -> dict[str, Any]:
    job = rjob("node", [container(trainer_container)], TRAINER_LABELS, init=[container("loader")])
    if replicas is not None:
        job["replicas"] = replicas
    rt = runtime([job], {"torch": {}})
    rt["metadata"]["labels"] = dict(WEBHOOK_OFF)
    return rt


@pytest.mark.parametrize(
    ("replicas", "name", "said"),
    [(2, "node", "has replicas 2"), (None, "trainer", "has no container 'node'"), (1, "node", None)],
    ids=["two replicas", "no node container", "valid"],
)
def test_a_derived_runtime_passes_the_runtime_webhook(replicas: int | None, name: str, said: str | None) -> None:
    """pkg/webhooks/trainingruntime_webhook.go validateReplicatedJobs runs on every derived runtime's
    create: it never carries the label that let the base in."""
    rt = unvalidated(replicas, name)
    out = render([rt, trainjob([patch("node", initContainers=[copy.deepcopy(WEBHOOK_SIDECAR)])])])
    found = [m for _, m in errors(out) if "validateReplicatedJobs" in m]
    if said is None:
        assert out.code == 0, out.errors()
        return
    (message,) = found
    assert said in message and "webhook-validation: disabled" in message
    assert out.of_kind("TrainingRuntime") == [], "nothing derived"
    untouched = render([rt, trainjob([])])
    assert untouched.code == 0, "without overrides nothing new is created: the base's label is the cluster's business"


# trainjob_types.go: CEL self == oldSelf on spec.trainer. A move that changes resourcesPerNode of a
# TrainJob that was rendered before (kpt write-back keeps the records) is refused by a cluster that has it.
def test_a_move_on_a_rendered_trainjob_warns_that_spec_trainer_is_immutable() -> None:
    move = config(trainerResources="moveToResourcesPerNode")
    rt = torch_runtime({"numNodes": 1, "torch": {}})
    loader = {"name": "loader", "resources": {"requests": {"memory": "2Gi"}}}
    first = render([rt, trainjob([patch("node", initContainers=[loader])], {})], move)
    assert first.code == 0, first.errors()
    assert not [r for r in first.results if r["severity"] == "warning"]
    again = render(first.items, move)
    assert again.items == first.items and not [r for r in again.results if r["severity"] == "warning"]
    edited = copy.deepcopy(first.items)
    tj = next(i for i in edited if i["kind"] == "TrainJob")
    assert "runtimePatches" not in tj["spec"], "the render dropped the patch: it set only resources"
    tj["spec"]["runtimePatches"] = [
        patch("node", "b.example.com/m", containers=[{"name": "node", "resources": {"limits": {"memory": "64Gi"}}}])
    ]
    warned = render(edited, move)
    assert warned.code == 0, warned.errors()
    (warning,) = [r for r in warned.results if r["severity"] == "warning"]
    assert "spec.trainer is immutable" in warning["message"]
    assert (
        warning["field"]["path"]
        == JOBS.replace("[0]", "[1]", 1) + "[0].template.spec.template.spec.containers[0].resources"
    )
    fresh = render(
        [rt, trainjob([patch("node", containers=[{"name": "node", "resources": {"limits": {"memory": "64Gi"}}}])], {})],
        move,
    )
    assert fresh.code == 0 and not [r for r in fresh.results if r["severity"] == "warning"], (
        "no records: nothing to compare"
    )
    sidecar = {"name": "loader", "resources": {"requests": {"memory": "2Gi"}}}
    trainer = {"name": "node", "resources": {"limits": {"memory": "64Gi"}}}
    both = render([rt, trainjob([patch("node", initContainers=[sidecar], containers=[trainer])], {})], move)
    assert both.code == 0 and not [r for r in both.results if r["severity"] == "warning"], (
        "a first render that derives a runtime and moves the trainer's resources writes records: they are not an "
        "earlier render's"
    )


# trainingruntime.go newRuntimeInfo merges resourcesPerNode over the trainer container: a patched
# value resourcesPerNode also sets never reaches a pod, and the move keeps resourcesPerNode's.
@pytest.mark.parametrize("mode", ["error", "moveToResourcesPerNode"])
def test_a_patched_value_resources_per_node_overrides_is_named(mode: str) -> None:
    trainer_patch = {"name": "node", "resources": {"limits": {"memory": "64Gi", "cpu": "8"}}}
    per_node = {"limits": {"memory": "32Gi", "cpu": "8000m"}}
    out = render(
        [
            torch_runtime({"torch": {}}),
            trainjob([patch("node", containers=[trainer_patch])], {"resourcesPerNode": per_node}),
        ],
        config(trainerResources=mode),
    )
    warned = [r for r in out.results if r["severity"] == "warning" and "never reaches a pod" in r["message"]]
    assert [r["field"]["path"] for r in warned] == [f"{PODSPEC}.containers[0].resources.limits.memory"], (
        "memory only: cpu 8 and 8000m are the same value"
    )
    assert "64Gi" in warned[0]["message"] and "32Gi" in warned[0]["message"]
    if mode == "moveToResourcesPerNode":
        assert out.code == 0, out.errors()
        assert out.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"]["limits"]["memory"] == "32Gi"
    else:
        (proposal,) = [r for r in out.errors() if "proposedValue" in r.get("field", {})]
        assert proposal["field"]["proposedValue"]["spec"]["trainer"]["resourcesPerNode"]["limits"]["memory"] == "32Gi"


def test_a_patched_value_resources_per_node_repeats_is_not_warned() -> None:
    trainer_patch = {"name": "node", "resources": {"limits": {"memory": "32Gi"}}}
    out = render(
        [
            torch_runtime({"torch": {}}),
            trainjob(
                [patch("node", containers=[trainer_patch])], {"resourcesPerNode": {"limits": {"memory": "32768Mi"}}}
            ),
        ],
        config(trainerResources="moveToResourcesPerNode"),
    )
    assert out.code == 0, out.errors()
    assert not [r for r in out.results if "never reaches a pod" in r["message"]]


# EnforceMLPolicy of plugins/torch/torch.go, jax/jax.go, xgboost/xgboost.go, flux/flux.go: with
# spec.trainer set, the trainer container gets the distributed env and a port; a move that creates
# spec.trainer would change the pods beyond their resources (tests/cluster/test_move_and_order.py).
@pytest.mark.parametrize(
    ("policy", "refused"),
    [({"torch": {}}, True), ({"jax": {}}, True), ({"xgboost": {}}, True), ({"numNodes": 2}, False)],
    ids=["torch", "jax", "xgboost", "plain"],
)
@pytest.mark.parametrize("trainer", [None, {}], ids=["no spec.trainer", "spec.trainer"])
def test_a_move_never_creates_spec_trainer_where_a_plugin_reads_it(
    policy: dict[str, Any], refused: bool, trainer: dict[str, Any] | None
) -> None:
    node = {"name": "node", "resources": {"limits": {"memory": "64Gi"}}}
    tj = trainjob([patch("node", containers=[node])], trainer)
    out = render([torch_runtime(policy), tj], config(trainerResources="moveToResourcesPerNode"))
    if refused and trainer is None:
        assert out.code == 1
        ((path, message),) = errors(out)
        assert path == f"{PODSPEC}.containers[0].resources"
        assert "has no spec.trainer" in message and "spec.trainer: {} is enough" in message
        assert f"plugins/{next(iter(policy))}/" in message
    else:
        assert out.code == 0, out.errors()
        assert out.named("TrainJob", "tj")["spec"]["trainer"]["resourcesPerNode"]["limits"]["memory"] == "64Gi"


# mergeRuntimePatches (pkg/runtime/core/trainingruntime.go): a patch's list reorders the containers it
# names; an entry left with only its name once resources are folded into the derived runtime stays
# where removing it would change the order, and only there.
@pytest.mark.parametrize(
    ("written", "kept"),
    [(["setup", "sidecar"], ["setup", "sidecar"]), (["sidecar", "setup"], None), (["setup"], None)],
    ids=["reordering: names kept", "the runtime's order: removed", "one entry: removed"],
)
def test_a_resources_only_entry_keeps_its_name_where_it_orders(written: list[str], kept: list[str] | None) -> None:
    rt = runtime(
        [rjob("node", [container("node", {"requests": {"cpu": "2"}})], TRAINER_LABELS, init=[SIDECAR, SETUP])],
        {"torch": {}},
    )
    entries = [{"name": n, "resources": {"requests": {"cpu": "3"}}} for n in written]
    out = render([rt, trainjob([patch("node", initContainers=entries)])])
    assert out.code == 0, out.errors()
    patches = out.named("TrainJob", "tj")["spec"].get("runtimePatches")
    if kept is None:
        assert all("trainingRuntimeSpec" not in p for p in patches or []), patches
    else:
        (job,) = patches[0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
        assert job["template"]["spec"]["template"]["spec"]["initContainers"] == [{"name": n} for n in kept]
    again = render(out.items)
    assert again.code == 0 and again.items == out.items, "a re-render gives the same output"


# kustomize's exec and container functions get no file annotation; with buildMetadata: [originAnnotations]
# an object carries config.kubernetes.io/origin, whose path is then the result's file (issue 32).
@pytest.mark.parametrize(
    ("origin", "path"),
    [
        ("path: ../base/trainjob.yaml\n", "../base/trainjob.yaml"),
        ("repo: https://example.com/x\npath: https://example.com/x\n", None),
    ],
    ids=["a file", "a URL is not one"],
)
def test_under_kustomize_exec_the_origin_annotation_names_the_file(origin: str, path: str | None) -> None:
    tj = trainjob([patch("node", initContainers=[{"name": "loader", "resources": {"limits": {"memory": "1Gx"}}}])])
    tj["metadata"]["annotations"] = {"config.kubernetes.io/origin": origin}
    out = render([torch_runtime({"torch": {}}), tj])
    (error,) = out.errors()
    assert error.get("file", {}).get("path") == path, error
