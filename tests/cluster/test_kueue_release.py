"""Kueue by release, run: upstream Kueue v0.17.0 (tests/cluster/kueue) and v0.19.2 (tests/cluster/kueue-v0.19)
beside Trainer v2.3.0, each on a control plane of its own.

What the tests hold ``check`` to: it names the Kueue release it followed (``kueue-release``: from the CRD's
``app.kubernetes.io/version`` label where Kueue's Helm chart put one, else from the served API versions),
and the pod sets it sizes for ``queue-exceeded`` (live/queues.py ``kueue_pod_requests`` under that
release's rule) are, pod set by pod set, what the Workload Kueue made reserves: generated TrainJobs
(hypothesis), with and without ``resourcesPerNode``, through the function's render. v0.20 is not served:
its API (v1beta1 unserved) is simulated on the CRD, and its rule (merge) reached with ``--kueue-version``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from trainjob_resources.cli.explain import explain_item
from trainjob_resources.krm.resource_list import Item
from trainjob_resources.live.kueue_release import CRD, VERSION_LABEL
from trainjob_resources.live.queues import kueue_pod_requests
from trainjob_resources.options.config import parse_config
from trainjob_resources.resolve.bundle import index
from trainjob_resources.yamltext import yamlnodes as yn

from tests.cluster.controlplane import KUEUE_RELEASES, ControlPlane
from tests.cluster.test_check import apply, check, dump, render, write
from tests.cluster.test_kueue import QUEUE_LABEL, TRAINER, condition, milli, namespace, queues, settled, wait_for
from tests.cluster.test_kueue_apply import plane
from tests.kit import build

pytestmark = pytest.mark.cluster
__all__ = ["plane"]  # the module-scoped control plane with Kueue v0.17.0, one per Trainer release


CONFIG_API = "fn.trainjob-resources.io/v1alpha1"
ON_EACH_RELEASE = pytest.mark.parametrize("kueue_release_plane", KUEUE_RELEASES, indirect=True)
REPLACE = {"op": "replace", "path": "/spec/versions/0/served"}


def discovered(cp: ControlPlane, version: str) -> str:
    return cp.kubectl("get", "--raw", f"/apis/kueue.x-k8s.io/{version}", check=False).stdout


def node_runtime(name: str, cpu: str, memory: str, limits: dict[str, str], nodes: int, initializer: bool) -> Any:
    container = {"name": "node", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if limits:
        container["resources"]["limits"] = limits
    jobs = []
    if initializer:
        step = {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}
        loader = {"name": "dataset-initializer", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
        jobs.append(build.replicated_job("dataset-initializer", {"containers": [loader]}, labels=step))
    loader = {"name": "loader", "image": "busybox", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}
    pod = {"initContainers": [loader], "containers": [container]}
    node = build.replicated_job("node", pod, labels=build.trainer_labels())
    if initializer:
        node["dependsOn"] = [{"name": "dataset-initializer", "status": "Complete"}]
    jobs.append(node)
    return build.training_runtime(name, jobs, {"numNodes": nodes, "torch": {}})


QUANTITIES = {"cpu": ("500m", "1", "2", "3"), "memory": ("1Gi", "2Gi", "8Gi")}
# resourcesPerNode's limits: at least any request (the runtime's, or resourcesPerNode's), which the function
# (and the API server) would refuse otherwise.
LIMITS = {"cpu": ("3", "4"), "memory": ("8Gi", "16Gi")}


@st.composite
def trainjob_specs(draw: st.DrawFn) -> dict[str, Any]:
    """A TrainJob's spec on runtime ``rt``: maybe ``resourcesPerNode`` (requests and limits, each a subset of
    cpu and memory, limits at least the requests), maybe a runtimePatch of the node pod's sidecar's requests
    (the trainer container is resourcesPerNode's alone), maybe ``numNodes``."""

    def some(values: dict[str, tuple[str, ...]]) -> dict[str, str]:
        names = draw(st.sets(st.sampled_from(sorted(values))))
        return {n: draw(st.sampled_from(values[n])) for n in sorted(names)}

    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        requests, limits = some(QUANTITIES), some(LIMITS)
        per_node = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
        spec["trainer"] = {"resourcesPerNode": per_node}
    if draw(st.booleans()):
        patch = {"name": "loader", "resources": {"requests": some(QUANTITIES) or {"cpu": "2"}}}
        spec["runtimePatches"] = [build.runtime_patch(build.replicated_job("node", {"initContainers": [patch]}))]
    if draw(st.booleans()):
        spec.setdefault("trainer", {})["numNodes"] = draw(st.integers(1, 3))
    return spec


RUNTIMES = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(QUANTITIES["cpu"]),
        "memory": st.sampled_from(QUANTITIES["memory"]),
        "limits": st.sampled_from([{}, {"memory": "8Gi"}, {"cpu": "3", "memory": "16Gi"}]),
        "nodes": st.integers(1, 3),
        "initializer": st.booleans(),
    }
)
_examples = itertools.count()


def predicted(docs: list[dict[str, Any]], replaces: bool) -> dict[str, dict[str, dict[str, int]]]:
    """Per TrainJob, per pod set: count x the pod's requests as ``queue-exceeded`` sizes them (milli-units)."""
    bundle = index([Item(yn.from_python(d)) for d in docs])
    out: dict[str, dict[str, dict[str, int]]] = {}
    for item in bundle.trainjobs:
        explained = explain_item(item, bundle, parse_config(None))
        assert explained is not None
        out[item.name] = {
            job.name: {r: milli(q.canonical()) * job.pods for r, q in kueue_pod_requests(job, replaces).items()}
            for job in explained[0].jobs
        }
    return out


@ON_EACH_RELEASE
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runtime=RUNTIMES, specs=st.lists(trainjob_specs(), min_size=1, max_size=4))
@example(  # where replace and merge differ: the runtime's memory is in the JobSet, not in the Workload
    runtime={"cpu": "1", "memory": "8Gi", "limits": {}, "nodes": 2, "initializer": True},
    specs=[{"trainer": {"resourcesPerNode": {"requests": {"cpu": "3"}}}}, {}],
)
def test_the_pod_sets_check_sizes_are_what_the_workload_kueue_made_reserves(
    kueue_release_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory, runtime: Any, specs: Any
) -> None:
    cp = kueue_release_plane
    release = cp.versions["kueue"]
    n = next(_examples)
    ns = namespace(cp, f"kr-{release.replace('.', '-')}-{n}")
    apply(cp, dump(*queues(ns, f"kr-{release.replace('.', '-')}-{n}", "1000", "10000Gi")))
    rt = node_runtime(f"kr-{ns}", **runtime)
    jobs = [
        {
            "apiVersion": TRAINER,
            "kind": "TrainJob",
            "metadata": {"name": f"job-{i}", "namespace": ns, "labels": {QUEUE_LABEL: "team"}},
            "spec": {"runtimeRef": {"name": rt["metadata"]["name"]}, **spec},
        }
        for i, spec in enumerate(specs)
    ]
    tmp = tmp_path_factory.mktemp("kr")
    source = write(tmp / "repo" / "bundle.yaml", rt, *jobs)
    apply(cp, render(str(source), cwd=tmp))
    expected = predicted([rt, *jobs], replaces=True)  # Kueue v0.17.0 and v0.19.2: Trainer v2.2.x inside
    found = settled(cp, ns, len(jobs), "Admitted")
    for name, workload in found.items():
        reserved = {
            a["name"]: {r: milli(q) for r, q in a["resourceUsage"].items()}
            for a in workload["status"]["admission"]["podSetAssignments"]
        }
        assert reserved == {job: {r: v for r, v in usage.items() if v} for job, usage in expected[name].items()}, (
            release,
            name,
            dump(*jobs),
        )


@ON_EACH_RELEASE
def test_check_names_the_kueue_release_it_followed(kueue_release_plane: ControlPlane, tmp_path: Path) -> None:
    cp = kueue_release_plane
    release = cp.versions["kueue"]
    ns = namespace(cp, f"kr-named-{release.replace('.', '-')}")
    apply(cp, dump(*queues(ns, ns, "100", "100Gi")))
    rt = node_runtime(f"kr-{ns}", "1", "1Gi", {}, 1, False)
    job = {
        "apiVersion": TRAINER,
        "kind": "TrainJob",
        "metadata": {"name": "job", "namespace": ns, "labels": {QUEUE_LABEL: "team"}},
        "spec": {"runtimeRef": {"name": rt["metadata"]["name"]}},
    }
    source = write(tmp_path / "repo" / "bundle.yaml", rt, job)
    crd = f"CustomResourceDefinition/{CRD}"
    # Installed from Kueue's kustomize manifests (the CRDs carry no version): the served API versions tell.
    [named] = check(cp, str(source), cwd=tmp_path).of("kueue-release")
    assert named["severity"] == "info" and named["object"] == crd
    assert named["message"].startswith(
        f"Kueue v0.19 or older (kueue.x-k8s.io serves v1beta1, v1beta2; no {VERSION_LABEL} label on CRD {CRD}) "
        "builds a TrainJob's pod sets with Trainer v2.2 or older: resourcesPerNode replaces the trainer container's "
        "resources"
    ), named
    # As Kueue's Helm chart labels its CRDs (charts/kueue/templates/_helpers.tpl, kueue.labels).
    cp.kubectl("label", "crd", CRD, f"{VERSION_LABEL}={release}", "--overwrite")
    try:
        [named] = check(cp, str(source), cwd=tmp_path).of("kueue-release")
    finally:
        cp.kubectl("label", "crd", CRD, f"{VERSION_LABEL}-")
    trainer = {"v0.17.0": "v2.2.0", "v0.19.2": "v2.2.1"}[release]
    assert named["message"].startswith(
        f"Kueue {release} (CRD {CRD} label {VERSION_LABEL}: {release}) builds a TrainJob's pod sets with Trainer "
        f"{trainer}: resourcesPerNode replaces"
    ), named
    # v0.20's API as Kueue PR 14558 serves it, simulated: v1beta1 of the CRD unserved. check reads the queues
    # through v1beta2 and takes the release for v0.20 or later (Kueue v0.19.2 itself goes on replacing).
    served = [{"op": "test", "path": "/spec/versions/0/name", "value": "v1beta1"}]
    cp.kubectl("patch", "crd", CRD, "--type=json", "-p", json.dumps([*served, {**REPLACE, "value": False}]))
    try:
        wait_for("v1beta1 unserved", lambda: "clusterqueues" not in discovered(cp, "v1beta1"))
        ran = check(cp, str(source), cwd=tmp_path)
    finally:
        cp.kubectl("patch", "crd", CRD, "--type=json", "-p", json.dumps([*served, {**REPLACE, "value": True}]))
        wait_for("v1beta1 served", lambda: "clusterqueues" in discovered(cp, "v1beta1"))
    [named] = ran.of("kueue-release")
    assert named["message"].startswith(
        f"Kueue v0.20 or later (kueue.x-k8s.io serves v1beta2, not v1beta1; no {VERSION_LABEL} label on CRD {CRD}) "
        "builds a TrainJob's pod sets with Trainer v2.3.0 or later: resourcesPerNode is merged onto"
    ), named
    assert ran.code == 0 and ran.of("queue-exceeded") == [], ran.findings
    # Pinned by check's caller (a platform's hook, a CI job): its word over the cluster's.
    [named] = check(cp, str(source), "--kueue-version", "v0.20.0", cwd=tmp_path).of("kueue-release")
    assert named["message"].startswith(
        "Kueue v0.20.0 (--kueue-version) builds a TrainJob's pod sets with Trainer v2.3.0: resourcesPerNode is "
        "merged onto"
    ), named


def test_pinned_to_v0_20_check_sizes_the_pod_sets_as_trainer_v2_3_merges_whatever_trainer_the_cluster_runs(
    plane: ControlPlane, tmp_path: Path
) -> None:
    """Kueue v0.20 sizes pod sets with its own Trainer v2.3.0 (merge), also beside Trainer v2.2.1, whose JobSet
    replaces: ``check --kueue-version v0.20.0`` explains the queued TrainJobs under v2.3.0 for Kueue. The Kueue
    that runs (v0.17.0) replaces, and admits what the unpinned check lets through."""
    ns = namespace(plane, f"kr-pin-{plane.trainer.replace('.', '-')}")
    apply(plane, dump(*queues(ns, ns, "100", "10Gi")))
    rt = node_runtime(f"kr-{ns}", "1", "8Gi", {}, 2, False)
    job = {
        "apiVersion": TRAINER,
        "kind": "TrainJob",
        "metadata": {"name": "job", "namespace": ns, "labels": {QUEUE_LABEL: "team"}},
        "spec": {
            "runtimeRef": {"name": rt["metadata"]["name"]},
            "trainer": {"resourcesPerNode": {"requests": {"cpu": "3"}}},
        },
    }
    source = write(tmp_path / "repo" / "bundle.yaml", rt, job)
    # The platform's config names the Trainer the cluster runs: the render (and explain) follow it.
    config = {"apiVersion": CONFIG_API, "kind": "TrainJobResources", "metadata": {"name": "platform"}}
    config["spec"] = {"trainerVersion": plane.trainer}
    platform = ["--config", str(write(tmp_path / "platform.yaml", config))]
    unpinned = check(plane, str(source), *platform, cwd=tmp_path)
    assert unpinned.of("queue-exceeded") == [], unpinned.findings  # replaced: 2 x (4 cpu, no memory)
    pinned = check(plane, str(source), *platform, "--kueue-version", "v0.20.0", cwd=tmp_path)
    [found] = pinned.of("queue-exceeded")
    assert "pod set node (2 pods) needs memory 16Gi where flavor" in found["message"], found  # merged: 2 x 8Gi
    assert pinned.code == 1
    apply(plane, render(str(source), cwd=tmp_path))
    admitted = settled(plane, ns, 1, "Admitted")["job"]
    assert (condition(admitted, "Admitted") or {}).get("status") == "True"
