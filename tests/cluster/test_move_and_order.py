"""Two things the function changes in a TrainJob, and what upstream Kubeflow Trainer v2.3.0 then does with it,
on the running control plane (tests/cluster/README.md; no mocks). The upstream code is cited from the module
cache ($(go env GOMODCACHE)/github.com/kubeflow/trainer/v2@v2.3.0/); the value seen wins over the reading.

1. A move of the trainer container's patched resources to spec.trainer.resourcesPerNode creates spec.trainer on
   a TrainJob that had none (issue 33). Several ML-policy plugins give the trainer container more once
   spec.trainer exists (`if trainJob.Spec.Trainer != nil` in EnforceMLPolicy of
   pkg/runtime/framework/plugins/torch/torch.go, jax/jax.go, xgboost/xgboost.go); mpi/mpi.go and
   plainml/plainml.go do not. flux/flux.go reads spec.trainer without a check, and spec.trainer.numNodes too.
2. The order of init containers. mergeRuntimePatches (pkg/runtime/core/trainingruntime.go) applies each
   runtimePatch with a strategic merge patch; the containers a patch lists come out in the patch's relative
   order (k8s.io/apimachinery pkg/util/strategicpatch/patch.go, mergeSlice, normalizeElementOrder), and the
   order decides the pod's requests (a sidecar, a restartPolicy Always init container, started before a
   regular init container adds to it). The function, in materialize mode, keeps a `- name: x` entry where
   removing it would change that order (trainer/topology.py, names_kept_for_order).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.kube.quantity import parse_quantity

from tests.cluster.apply import submit
from tests.cluster.controlplane import JOBSET, TRAINJOB, ControlPlane
from tests.cluster.lifecycle import differences, documents, explain, jobset_containers
from tests.examples import VENV_BIN
from tests.kit import build
from tests.support import load_fixture

pytestmark = pytest.mark.cluster

MANAGER = "user.example.com/me"
TRAINER_LABEL = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
# What every runtime's `node` containers ask for, and what the TrainJobs' patches give them.
RUNTIME_NODE = {"requests": {"cpu": "4", "memory": "8Gi"}, "limits": {"nvidia.com/gpu": "2"}}
PATCHED_NODE = {"limits": {"nvidia.com/gpu": 4}, "requests": {"memory": "16Gi"}}
MOVE = build.function_config(trainerResources="moveToResourcesPerNode")


def _namespace(cp: ControlPlane, name: str) -> str:
    cp.kubectl("create", "namespace", name)
    return name


def _runtime(policy: str, name: str, namespace: str, node: dict[str, Any] | None = None) -> dict[str, Any]:
    """A TrainingRuntime of `policy` in `namespace`, each `node` container sized `node` (RUNTIME_NODE).

    mpi: tests/testdata/runtimes/mpi-launcher-as-node.yaml (upstream's manifests/base/runtimes/
    deepspeed_distributed.yaml shape: workers `node`, the trainer-labelled `launcher`, runLauncherAsNode).
    The others: tests/testdata/runtimes/torch-plain.yaml (manifests/base/runtimes/torch_distributed.yaml) with
    mlPolicy's torch replaced, as jax_distributed.yaml, xgboost_distributed.yaml and examples/flux/
    flux-runtime.yaml differ from it; plain: mlPolicy numNodes alone (the plainml plugin)."""
    rt = load_fixture("mpi-launcher-as-node" if policy == "mpi" else "torch-plain")
    if policy != "mpi":
        rt["spec"]["mlPolicy"] = {"numNodes": 1, **({} if policy == "plain" else {policy: {}})}
    rt["kind"] = "TrainingRuntime"
    rt["metadata"] = {"name": name, "namespace": namespace}
    for job in rt["spec"]["template"]["spec"]["replicatedJobs"]:
        for container in job["template"]["spec"]["template"]["spec"]["containers"]:
            if container["name"] == "node":
                container["resources"] = copy.deepcopy(RUNTIME_NODE if node is None else node)
    return rt


def _trainjob(name: str, namespace: str, runtime: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return build.trainjob(name, runtime["metadata"]["name"], namespace=namespace, kind=runtime["kind"], **spec)


def _patch(lists_by_job: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """One runtimePatches entry: per replicated job, its pod's container lists as given."""
    jobs = [build.replicated_job(job, lists) for job, lists in lists_by_job.items()]
    return build.runtime_patch(*jobs, manager=MANAGER)


def _trainer_jobs(policy: str) -> list[str]:
    """The replicated jobs whose `node` resourcesPerNode sizes on v2.3.0: the trainer-labelled one, and with
    MPI's runLauncherAsNode the `node` workers too (newRuntimeInfo in pkg/runtime/core/trainingruntime.go)."""
    return ["node", "launcher"] if policy == "mpi" else ["node"]


def _pod(jobset: dict[str, Any], job: str) -> dict[str, Any]:
    replicated = next(j for j in jobset["spec"]["replicatedJobs"] if j["name"] == job)
    pod: dict[str, Any] = replicated["template"]["spec"]["template"]["spec"]
    return pod


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]


def _shape(jobset: dict[str, Any], *names: str, without: tuple[str, ...] = ("resources",)) -> Any:
    """The JobSet's spec with the TrainJob's (and runtime's) names replaced and the containers' `without`
    fields removed: what two TrainJobs' JobSets share beyond their names."""
    spec = copy.deepcopy(jobset["spec"])
    for job in spec["replicatedJobs"]:
        for container in _containers(job["template"]["spec"]["template"]["spec"]):
            for key in without:
                container.pop(key, None)
    text = json.dumps(spec, sort_keys=True)
    for name in names:
        text = text.replace(name, "<name>")
    return json.loads(text)


def _env_and_ports(jobset: dict[str, Any]) -> dict[tuple[str, str], tuple[list[str], list[int]]]:
    """Per (replicated job, container): the env var names and container ports, as the JobSet has them."""
    out = {}
    for job in jobset["spec"]["replicatedJobs"]:
        for c in _containers(job["template"]["spec"]["template"]["spec"]):
            env = [e["name"] for e in c.get("env") or []]
            out[(job["name"], c["name"])] = (env, [p["containerPort"] for p in c.get("ports") or []])
    return out


def _panicked(cp: ControlPlane, namespace: str, name: str, where: str, timeout: float = 20.0) -> bool:
    """Whether the harness logged a recovered panic of the TrainJob controller for namespace/name whose
    stack names `where` (controller-runtime's "Observed a panic", with the reconcile's request)."""
    deadline = time.monotonic() + timeout
    while True:
        for line in cp.log_path.read_text(errors="replace").splitlines():
            if '"Observed a panic"' not in line:
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            ours = (entry.get("namespace"), entry.get("name")) == (namespace, name)
            if ours and where in entry.get("stacktrace", ""):
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.3)


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def _render(tmp_path: Path, objects: list[dict[str, Any]], config: dict[str, Any] | None = None) -> Any:
    """`trainjob-resources render [--config fc.yaml] in.yaml` in tmp_path; the completed process."""
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(objects))
    args = ["in.yaml"]
    if config is not None:
        (tmp_path / "fc.yaml").write_text(yaml.safe_dump(config))
        args = ["--config", "fc.yaml", *args]
    return _cli(tmp_path, "render", *args)


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed command, in tmp_path."""
    return subprocess.run(
        [str(VENV_BIN / "trainjob-resources"), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
        check=False,
    )


def _explain_json(tmp_path: Path, *args: str) -> dict[str, Any]:
    done = _cli(tmp_path, "explain", "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


# 1. A move to resourcesPerNode onto a TrainJob without spec.trainer ------------------------------------------

# What spec.trainer alone adds to the JobSet (seen on v2.3.0), per policy: (replicated job, container) ->
# (env names, container ports). torch.go: PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR,
# PET_MASTER_PORT and port 29500 (constants.ContainerTrainerPort); jax.go: JAX_NUM_PROCESSES, JAX_PROCESS_ID,
# JAX_COORDINATOR_ADDRESS and 29500; xgboost.go: DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID,
# DMLC_NUM_WORKER and 29500. plainml.go upserts spec.trainer.env only; mpi.go's OpenMPI env (OMPI_MCA_*) on the
# launcher's `node` does not depend on spec.trainer.
SPEC_TRAINER_ADDS: dict[str, dict[tuple[str, str], tuple[list[str], list[int]]]] = {
    "torch": {
        ("node", "node"): (
            ["PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"],
            [29500],
        )
    },
    "jax": {("node", "node"): (["JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"], [29500])},
    "xgboost": {
        ("node", "node"): (["DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"], [29500])
    },
    "plain": {},
    "mpi": {},
}


@pytest.mark.parametrize("policy", list(SPEC_TRAINER_ADDS))
def test_spec_trainer_with_the_runtime_s_own_resources_changes_the_pods_on_some_policies(
    control_plane: ControlPlane, policy: str
) -> None:
    """Two TrainJobs on one runtime: without spec.trainer, and with spec.trainer.resourcesPerNode equal to
    what the runtime's `node` containers already ask for. Their JobSets differ exactly by SPEC_TRAINER_ADDS:
    the same resources (v2.3.0 merges resourcesPerNode per resource name), and nothing else."""
    cp = control_plane
    ns = _namespace(cp, f"mo-spec-trainer-{policy}")
    rt = _runtime(policy, policy, ns)
    cp.apply_server_side(yaml.safe_dump(rt))
    for name, spec in (("tj-bare", {}), ("tj-trainer", {"trainer": {"resourcesPerNode": RUNTIME_NODE}})):
        done = submit(cp, _trainjob(name, ns, rt, **spec))
        assert done.returncode == 0, done.stderr
    bare, trainer = cp.wait_for_jobset("tj-bare", ns), cp.wait_for_jobset("tj-trainer", ns)

    before, after = _env_and_ports(bare), _env_and_ports(trainer)
    assert before.keys() == after.keys()
    added = {}
    for key, (env, ports) in after.items():
        new_env = [e for e in env if e not in before[key][0]]
        new_ports = [p for p in ports if p not in before[key][1]]
        assert [e for e in env if e not in new_env] == before[key][0], key  # spec.trainer removes nothing
        if new_env or new_ports:
            added[key] = (new_env, new_ports)
    assert added == SPEC_TRAINER_ADDS[policy]
    assert jobset_containers(bare) == jobset_containers(trainer), "the same resources"
    if not added:
        assert _shape(bare, "tj-bare") == _shape(trainer, "tj-trainer")
    else:
        assert _shape(bare, "tj-bare", without=("resources", "env", "ports")) == _shape(
            trainer, "tj-trainer", without=("resources", "env", "ports")
        ), "beyond the env and the ports, nothing differs"


def test_a_flux_trainjob_needs_spec_trainer_num_nodes(control_plane: ControlPlane) -> None:
    """flux.go's EnforceMLPolicy reads spec.trainer unchecked (brokerSettingsFromEnvironment ranges over
    trainJob.Spec.Trainer.Env) and its Build dereferences spec.trainer.numNodes (generateInitEntrypoint): a
    Flux TrainJob without spec.trainer, or with spec.trainer.resourcesPerNode alone, makes the TrainJob
    controller panic (controller-runtime recovers it and retries) and gets no JobSet. With numNodes,
    resourcesPerNode equal to the runtime's changes nothing: flux gives the trainer `node` no env and no port
    either way (it wraps its command, mounts its volumes and adds the `flux-installer` init container)."""
    cp = control_plane
    ns = _namespace(cp, "mo-flux")
    rt = _runtime("flux", "flux", ns)
    cp.apply_server_side(yaml.safe_dump(rt))
    cases = {
        "tj-bare": ({}, "flux.(*Flux).brokerSettingsFromEnvironment"),
        "tj-per-node": ({"trainer": {"resourcesPerNode": RUNTIME_NODE}}, "flux.generateInitEntrypoint"),
        "tj-nodes": ({"trainer": {"numNodes": 1}}, None),
        "tj-nodes-per-node": ({"trainer": {"numNodes": 1, "resourcesPerNode": RUNTIME_NODE}}, None),
    }
    for name, (spec, _) in cases.items():
        done = submit(cp, _trainjob(name, ns, rt, **spec))
        assert done.returncode == 0, done.stderr
    try:
        for name, (_, where) in cases.items():
            if where is not None:
                assert _panicked(cp, ns, name, where), f"{name}: no panic in {where} logged"
                assert cp.get(JOBSET, name, ns) is None
        nodes, sized = cp.wait_for_jobset("tj-nodes", ns), cp.wait_for_jobset("tj-nodes-per-node", ns)
        assert _shape(nodes, "tj-nodes") == _shape(sized, "tj-nodes-per-node")
        assert jobset_containers(nodes) == jobset_containers(sized)
        assert _env_and_ports(sized) == {("node", "flux-installer"): ([], []), ("node", "node"): ([], [])}
    finally:  # the controller retries the panicking TrainJobs with backoff for as long as they exist
        for name, (_, where) in cases.items():
            if where is not None:
                cp.delete(TRAINJOB, name, ns, wait=False)


# Where a move would create spec.trainer: refused where SPEC_TRAINER_ADDS (or flux's panic) shows the pods
# would change, moved where they would not.
MOVE_CASES = {"torch": True, "jax": True, "xgboost": True, "flux": True, "plain": False, "mpi": False}


@pytest.mark.parametrize(("policy", "refused"), list(MOVE_CASES.items()), ids=list(MOVE_CASES))
def test_a_move_that_would_create_spec_trainer(
    control_plane: ControlPlane, policy: str, refused: bool, tmp_path: Path
) -> None:
    """`trainerResources: moveToResourcesPerNode` on a TrainJob without spec.trainer whose runtimePatches size
    the trainer container(s). Refused (exit 1, the message names spec.trainer and the plugin) on torch, jax,
    xgboost and flux; on plain and MPI (runLauncherAsNode: both jobs' `node` sized alike) moved: the JobSet is
    what explain predicts on the input, with the env and ports of a TrainJob without spec.trainer, and equals
    the JobSet of a TrainJob without spec.trainer on the runtime sized as the patches say."""
    cp = control_plane
    ns = _namespace(cp, f"mo-move-{policy}")
    rt = _runtime(policy, policy, ns, node={"requests": {"cpu": "4", "memory": "8Gi"}})
    sized = {"containers": [{"name": "node", "resources": PATCHED_NODE}]}
    tj = _trainjob("tj-moved", ns, rt, runtimePatches=[_patch({job: sized for job in _trainer_jobs(policy)})])
    done = _render(tmp_path, [rt, tj], MOVE)
    if refused:
        assert done.returncode == 1, done.stdout
        assert done.stdout.strip() == "", "nothing rendered"
        assert "the TrainJob has no spec.trainer" in done.stderr, done.stderr
        assert f"pkg/runtime/framework/plugins/{policy}/{policy}.go" in done.stderr, done.stderr
        return
    assert done.returncode == 0, done.stderr
    rendered = documents(done.stdout)
    (moved,) = [o for o in rendered if o["kind"] == "TrainJob"]
    assert "resourcesPerNode" in moved["spec"]["trainer"]
    assert "resources" not in json.dumps(moved["spec"].get("runtimePatches")), "every patched value moved"
    cp.apply_server_side(yaml.safe_dump_all(rendered))
    jobset = cp.wait_for_jobset("tj-moved", ns)
    predicted = explain(["--config", "fc.yaml", "in.yaml"], tmp_path, _env())[(ns, "tj-moved")]
    assert not differences(predicted, jobset_containers(jobset))

    # The env and ports of a TrainJob without spec.trainer on the same runtime.
    assert submit(cp, _trainjob("tj-bare", ns, rt)).returncode == 0
    assert _env_and_ports(jobset) == _env_and_ports(cp.wait_for_jobset("tj-bare", ns))
    # All of the JobSet (resources, env values, ports) of a TrainJob without spec.trainer on the runtime whose
    # `node` containers carry the patched resources merged in, as a strategic merge of `resources` would.
    merged = {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": "4"}}
    oracle_rt = _runtime(policy, f"{policy}-sized", ns, node=merged)
    cp.apply_server_side(yaml.safe_dump(oracle_rt))
    assert submit(cp, _trainjob("tj-sized", ns, oracle_rt)).returncode == 0
    oracle = cp.wait_for_jobset("tj-sized", ns)
    assert _shape(jobset, "tj-moved", without=()) == _shape(oracle, "tj-sized", without=())


@pytest.mark.parametrize("policy", ["torch", "jax", "xgboost", "flux"])
def test_the_refusal_s_advice_spec_trainer_written(control_plane: ControlPlane, policy: str, tmp_path: Path) -> None:
    """The refusal says what to write: `spec.trainer: {}` on torch, jax and xgboost, spec.trainer.numNodes on
    flux (whose plugin panics without it: test_a_flux_trainjob_needs_spec_trainer_num_nodes; the function
    refuses `spec.trainer: {}` there, rule flux-num-nodes). Written, the move goes through, and the JobSet is
    what explain predicts (with the plugin's env and port on torch, jax and xgboost, which the job now asks for)."""
    cp = control_plane
    ns = _namespace(cp, f"mo-advice-{policy}")
    rt = _runtime(policy, policy, ns, node={"requests": {"cpu": "4", "memory": "8Gi"}})
    patch = _patch({"node": {"containers": [{"name": "node", "resources": PATCHED_NODE}]}})
    refused = _render(tmp_path, [rt, _trainjob("tj-advised", ns, rt, runtimePatches=[patch])], MOVE)
    advice = "write spec.trainer.numNodes" if policy == "flux" else "spec.trainer: {} is enough"
    assert refused.returncode == 1 and advice in refused.stderr, refused.stderr
    trainer: dict[str, Any] = {"numNodes": 1} if policy == "flux" else {}
    if policy == "flux":
        empty = _render(tmp_path, [rt, _trainjob("tj-advised", ns, rt, trainer={}, runtimePatches=[patch])], MOVE)
        assert empty.returncode == 1 and "Set spec.trainer.numNodes" in empty.stderr, empty.stderr
    tj = _trainjob("tj-advised", ns, rt, trainer=trainer, runtimePatches=[patch])
    done = _render(tmp_path, [rt, tj], MOVE)
    assert done.returncode == 0, done.stderr
    cp.apply_server_side(done.stdout)
    jobset = cp.wait_for_jobset("tj-advised", ns)
    predicted = explain(["--config", "fc.yaml", "in.yaml"], tmp_path, _env())[(ns, "tj-advised")]
    seen = jobset_containers(jobset)
    if policy == "flux":
        # flux.go adds the init container flux-installer, without resources: explain does not show it, and
        # it adds nothing to the pod's requests.
        assert seen["node"].pop("flux-installer") == {"requests": {}, "limits": {}}
    assert not differences(predicted, seen)
    if policy != "flux":
        env, ports = _env_and_ports(jobset)[("node", "node")]
        assert (env, ports) == SPEC_TRAINER_ADDS[policy][("node", "node")]


# 2. The order of init containers --------------------------------------------------------------------------------


def _ordered_runtime(namespace: str) -> dict[str, Any]:
    """tests/testdata/runtimes/torch-plain.yaml with init containers [loader (regular), sidecar (restartPolicy
    Always)] before the trainer `node`."""
    rt = _runtime("torch", "ordered", namespace, node={"requests": {"cpu": "2", "memory": "4Gi"}})
    pod = rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["initContainers"] = [
        {"name": "loader", "image": "example.com/loader", "resources": {"requests": {"cpu": "1", "memory": "12Gi"}}},
        {
            "name": "sidecar",
            "image": "example.com/sidecar",
            "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
        },
    ]
    return rt


def _value(quantity: Any) -> Fraction:
    q = parse_quantity(str(quantity))
    return Fraction(q.coefficient) * Fraction(10) ** q.exponent


def _requests(container: dict[str, Any]) -> dict[str, Fraction]:
    """A container's requests after the API server's defaulting (a limit without a request is the request)."""
    resources = container.get("resources") or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {name: _value(v) for name, v in merged.items()}


def _add(a: dict[str, Fraction], b: dict[str, Fraction]) -> dict[str, Fraction]:
    return {k: a.get(k, Fraction(0)) + b.get(k, Fraction(0)) for k in a.keys() | b.keys()}


def _most(a: dict[str, Fraction], b: dict[str, Fraction]) -> dict[str, Fraction]:
    return {k: max(a.get(k, Fraction(0)), b.get(k, Fraction(0))) for k in a.keys() | b.keys()}


def _pod_requests(pod: dict[str, Any]) -> dict[str, Fraction]:
    """Kubernetes' pod requests with sidecars (KEP-753; k8s.io/component-helpers resource.PodRequests): the
    larger of each init container's step (the sidecars started before it, plus itself; a sidecar's step is
    the sidecars up to and including it) and the sidecars plus the containers."""
    sidecars: dict[str, Fraction] = {}
    init: dict[str, Fraction] = {}
    for container in pod.get("initContainers") or []:
        if container.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, _requests(container))
            step = sidecars
        else:
            step = _add(sidecars, _requests(container))
        init = _most(init, step)
    running = sidecars
    for container in pod.get("containers") or []:
        running = _add(running, _requests(container))
    return _most(init, running)


def _gi(n: int) -> Fraction:
    return Fraction(n * 2**30)


def test_a_runtime_patch_orders_the_init_containers_it_lists(control_plane: ControlPlane) -> None:
    """A runtimePatch listing the runtime's init containers [sidecar, loader] by name alone: the JobSet has
    them in the patch's order (strategic merge, mergeRuntimePatches), so the loader starts after the sidecar
    and the pod asks for the sidecar's memory on top of the loader's: 13Gi, not 12Gi."""
    cp = control_plane
    ns = _namespace(cp, "mo-order")
    rt = _ordered_runtime(ns)
    cp.apply_server_side(yaml.safe_dump(rt))
    reordered = _patch({"node": {"initContainers": [{"name": "sidecar"}, {"name": "loader"}]}})
    for name, spec in (("tj-unpatched", {}), ("tj-names-only", {"runtimePatches": [reordered]})):
        done = submit(cp, _trainjob(name, ns, rt, **spec))
        assert done.returncode == 0, done.stderr
    unpatched = _pod(cp.wait_for_jobset("tj-unpatched", ns), "node")
    reordered_pod = _pod(cp.wait_for_jobset("tj-names-only", ns), "node")
    assert [c["name"] for c in unpatched["initContainers"]] == ["loader", "sidecar"]
    assert [c["name"] for c in reordered_pod["initContainers"]] == ["sidecar", "loader"]
    assert _pod_requests(unpatched) == {"cpu": Fraction(5, 2), "memory": _gi(12)}
    assert _pod_requests(reordered_pod) == {"cpu": Fraction(5, 2), "memory": _gi(13)}


def test_materialize_keeps_the_names_that_order_the_init_containers(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    """The same reordering patch with resources on both entries, rendered in materialize mode (the default):
    the derived runtime carries the resources and the TrainJob keeps `- name: sidecar`, `- name: loader`. The
    JobSet has the patch's order; explain's prediction, its container order and its podRequests are the
    JobSet's, and the pod requests by Kubernetes' formula are cpu 2500m, memory 2Gi + 16Gi = 18Gi (16Gi in the
    runtime's order)."""
    cp = control_plane
    ns = _namespace(cp, "mo-order-rendered")
    rt = _ordered_runtime(ns)
    entries = [
        {"name": "sidecar", "resources": {"requests": {"cpu": "500m", "memory": "2Gi"}}},
        {"name": "loader", "resources": {"requests": {"cpu": "1", "memory": "16Gi"}}},
    ]
    tj = _trainjob("tj-ordered", ns, rt, runtimePatches=[_patch({"node": {"initContainers": entries}})])
    done = _render(tmp_path, [rt, tj])
    assert done.returncode == 0, done.stderr
    rendered = documents(done.stdout)
    (out,) = [o for o in rendered if o["kind"] == "TrainJob"]
    kept = out["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    assert kept["template"]["spec"]["template"]["spec"]["initContainers"] == [{"name": "sidecar"}, {"name": "loader"}]
    assert out["spec"]["runtimeRef"]["name"] != "ordered", "a derived runtime carries the resources"
    cp.apply_server_side(yaml.safe_dump_all(rendered))
    jobset = cp.wait_for_jobset("tj-ordered", ns)
    pod = _pod(jobset, "node")
    assert [c["name"] for c in _containers(pod)] == ["sidecar", "loader", "node"]

    assert not differences(explain(["in.yaml"], tmp_path, _env())[(ns, "tj-ordered")], jobset_containers(jobset))
    (job,) = _explain_json(tmp_path, "in.yaml")["trainJobs"]
    (node,) = [r for r in job["replicatedJobs"] if r["name"] == "node"]
    assert [c["name"] for c in node["containers"]] == ["sidecar", "loader", "node"]
    requests = _pod_requests(pod)
    assert requests == {"cpu": Fraction(5, 2), "memory": _gi(18)}
    assert {k: _value(v) for k, v in node["podRequests"].items()} == requests
