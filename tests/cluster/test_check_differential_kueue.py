"""`check` against the sync under Kueue, on generated situations (issue 49): on the control plane with
upstream Kueue v0.17.0 beside each Trainer release, a namespace with a LocalQueue on a ClusterQueue of a
drawn memory quota, a runtime, and (drawn) a queued TrainJob synced before and admitted; `check` runs on
the next render (that TrainJob unchanged or its patch moved, and a new queued TrainJob, ``suspend: true``
in git or not), then the sync is made (server-side as Argo CD's ServerSideApply=true runs it, or
client-side) and Kueue decides. Asserted: the error findings are exactly the consequences, by object:
``runtime-patches-immutable`` where Trainer's webhook refused the apply, ``queue-exceeded`` where the new
TrainJob's Workload did not get its quota, ``running-suspended`` where the prior TrainJob stopped.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import check, dump, namespace, render, runtime, trainjob, write
from tests.cluster.test_check_sync import PATCHES_IMMUTABLE
from tests.cluster.test_kueue import QUEUE_LABEL, condition, queues, reserving_workloads, settled, wait_for
from tests.cluster.test_kueue_apply import ARGOCD, KUEUE_MANAGER, TRAINJOBS, not_yet, plane  # noqa: F401
from tests.kit import build

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
COUNTER = itertools.count()
KIND = "TrainingRuntime"
BASE = "kdiff-base"
# What the API server's refusal says, by the finding that predicts it.
REFUSALS = [
    ("runtime-patches-immutable", PATCHES_IMMUTABLE),
    ("runtime-ref-immutable", "field is immutable"),
    # Trainer's webhook while the JobSet has active jobs (pkg/runtime/framework/plugins/jobset/jobset.go)
    ("runtime-patches-immutable", "is still active"),
]
JOB_MEMORY = "6Gi"  # each TrainJob's Workload: the data loader's 6Gi (torch-plain's trainer sets none)

situations = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["server-side", "client-side"]),
        "suspended": st.booleans(),
        "prior": st.sampled_from([None, "unchanged", "changed"]),
        "pinned": st.booleans(),
        # 4Gi: no TrainJob fits; 8Gi: one does; 100Gi: both do.
        "queue_memory": st.sampled_from(["4Gi", "8Gi", "100Gi"]),
        # The control plane runs no JobSet controller: a prior TrainJob's JobSet has active jobs where the test
        # writes its status (``activate``).
        "jobset_active": st.booleans(),
    }
)


def situation(**changes: Any) -> dict[str, Any]:
    return {
        "mode": "server-side",
        "suspended": False,
        "prior": None,
        "queue_memory": "100Gi",
        "pinned": True,
        "jobset_active": False,
        **changes,
    }


def queued(name: str, ns: str, memory: str, zone: str | None, **spec: Any) -> dict[str, Any]:
    """A queued TrainJob, its data loader sized through the function (a derived runtime); with ``zone``, a
    nodeSelector patch of another manager, which keeps ``runtimePatches`` in the render (without, the render
    has none: the function's patch goes into the derived runtime)."""
    job = trainjob(name, ns, BASE, memory, KIND, **spec)
    if zone is not None:
        selector = build.replicated_job("node", {"nodeSelector": {"zone": zone}})
        job["spec"]["runtimePatches"].append(build.runtime_patch(selector, manager="example.com/pin"))
    job["metadata"]["labels"] = {QUEUE_LABEL: "team"}
    return job


def sync(cp: ControlPlane, docs: list[dict[str, Any]], mode: str) -> dict[str, str]:
    """Each object applied on its own, runtimes first (as Argo CD's waves), again while a webhook's cache
    lacks the new runtime; the refusals by ``Kind/namespace/name``."""
    args = ["apply"]
    if mode == "server-side":
        args += ["--server-side", f"--field-manager={ARGOCD}", "--force-conflicts"]
    refused = {}
    for doc in sorted(docs, key=lambda d: d["kind"] != KIND):
        started = time.monotonic()
        while True:
            done = cp.kubectl(*args, "-f", "-", input=dump(doc), check=False)
            if done.returncode == 0 or not not_yet(done.stderr) or time.monotonic() - started > 20:
                break
            time.sleep(0.2)
        if done.returncode != 0:
            meta = doc["metadata"]
            refused[f"{doc['kind']}/{meta.get('namespace', '')}/{meta['name']}"] = done.stderr
    return refused


def running(cp: ControlPlane, ns: str, name: str) -> bool:
    live = cp.get(TRAINJOBS, name, ns)
    patches = (live or {}).get("spec", {}).get("runtimePatches") or []
    return (
        live is not None and live["spec"].get("suspend") is False and KUEUE_MANAGER in [p["manager"] for p in patches]
    )


def activate(cp: ControlPlane, ns: str, name: str) -> None:
    """The TrainJob's JobSet with one active job in each replicated job, as the JobSet controller writes it."""
    jobset = wait_for("the JobSet", lambda: cp.get("jobsets.jobset.x-k8s.io", name, ns))
    counts = {"ready": 0, "succeeded": 0, "failed": 0, "suspended": 0, "active": 1}
    rows = [{"name": job["name"], **counts} for job in jobset["spec"]["replicatedJobs"]]
    patch = json.dumps({"status": {"replicatedJobsStatus": rows}})
    cp.kubectl("patch", "jobsets.jobset.x-k8s.io", name, "-n", ns, "--subresource=status", "--type=merge", "-p", patch)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(situation=situations)
# The audit's: an admitted TrainJob synced again unchanged, client-side (Kueue's entry dropped, refused);
# a suspended TrainJob in git that does not fit beside an admitted one.
@example(situation=situation(mode="client-side", prior="unchanged"))
@example(situation=situation(suspended=True, prior="unchanged", queue_memory="8Gi"))
# Found here: a client-side re-sync of a render without runtimePatches leaves Kueue's entry alone.
@example(situation=situation(mode="client-side", pinned=False, prior="unchanged", queue_memory="8Gi"))
@example(situation=situation(mode="server-side", suspended=True, prior="unchanged"))
# Suspended in git, re-synced client-side without runtimePatches: Kueue's entry stays, Kueue restarts it
# (a running-suspended warning, no error).
@example(situation=situation(mode="client-side", suspended=True, pinned=False, prior="unchanged"))
def test_every_kueue_consequence_had_its_error_finding_and_every_error_its_consequence(
    plane: ControlPlane,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
    situation: dict[str, Any],
) -> None:
    assume(not (situation["prior"] and situation["queue_memory"] == "4Gi"))  # the prior one is admitted
    differential(plane, tmp_path_factory, situation)


@pytest.mark.parametrize("prior", ["unchanged", "changed"])
def test_a_client_side_resync_of_suspend_true_stops_a_running_queued_trainjob_with_a_finding(
    plane: ControlPlane,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
    prior: str,
) -> None:
    differential(plane, tmp_path_factory, situation(mode="client-side", suspended=True, prior=prior))


def test_while_its_jobset_is_active_the_client_side_resync_of_suspend_true_is_refused_with_the_finding(
    plane: ControlPlane,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """On a cluster the JobSet of a running TrainJob has active jobs (here its status is written as the
    JobSet controller, which the control plane does not run, writes it): the update that drops Kueue's entry
    is refused instead, and the sync fails on it."""
    differential(
        plane, tmp_path_factory, situation(mode="client-side", suspended=True, prior="unchanged", jobset_active=True)
    )


def differential(cp: ControlPlane, tmp_path_factory: pytest.TempPathFactory, situation: dict[str, Any]) -> None:
    """The situation built, checked, synced and decided on; the error findings are the consequences."""
    tmp_path: Path = tmp_path_factory.mktemp("kdiff")
    ns = namespace(cp, f"kdiff-{cp.trainer.replace('.', '-')}-{next(COUNTER)}")
    cp.apply_server_side(dump(*queues(ns, ns, "100", situation["queue_memory"])))
    base = runtime(BASE, kind=KIND, namespace=ns)
    cp.apply_server_side(dump(base))
    runtimes = str(write(tmp_path / "base.yaml", base))
    repo = tmp_path / "repo"

    # Before: the prior TrainJob synced, admitted and running (Kueue's entry filled in). Changed: its pinned
    # zone moved, or (unpinned) its data loader resized, so its runtimeRef names another derived runtime.
    extra = {"suspend": True} if situation["suspended"] else {}
    pin = "a" if situation["pinned"] else None
    if situation["prior"]:
        write(repo / "a-prior.yaml", queued("prior", ns, JOB_MEMORY, pin, **extra))
        first = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
        assert sync(cp, first, situation["mode"]) == {}
        wait_for("the prior TrainJob running", lambda: running(cp, ns, "prior"))
        # check counts the Workloads' reservations, as Kueue's scheduler does (not the ClusterQueue's status).
        assert reserving_workloads(cp, ns) == ["prior"]
        if situation["jobset_active"]:
            activate(cp, ns, "prior")
        if situation["prior"] == "changed":
            moved = queued("prior", ns, JOB_MEMORY, "b", **extra) if pin else queued("prior", ns, "5Gi", None, **extra)
            write(repo / "a-prior.yaml", moved)
    write(repo / "b-new.yaml", queued("new", ns, JOB_MEMORY, pin, **extra))

    checked = check(cp, str(repo), cwd=tmp_path)
    assert "the render fails" not in checked.stderr, checked.stderr
    errors = {(f["code"], f["object"]) for f in checked.findings if f["severity"] == "error"}

    second = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    refused = sync(cp, second, situation["mode"])
    happened = set()
    for subject, stderr in refused.items():
        codes = {code for code, said in REFUSALS if said in stderr}
        happened |= {(code, subject) for code in codes or {f"unexplained: {stderr}"}}
    created = f"TrainJob/{ns}/new" not in refused
    if created:
        decided = settled(cp, ns, 2 if situation["prior"] else 1, "QuotaReserved")
        if (condition(decided["new"], "QuotaReserved") or {}).get("status") != "True":
            happened.add(("queue-exceeded", f"TrainJob/{ns}/new"))
        if situation["prior"] and (condition(decided["prior"], "Admitted") or {}).get("status") != "True":
            happened.add(("unexplained: the prior TrainJob's Workload lost its admission", f"TrainJob/{ns}/prior"))
    if situation["prior"]:
        try:
            wait_for("the prior TrainJob running after the sync", lambda: running(cp, ns, "prior"))
        except TimeoutError:
            happened.add(("running-suspended", f"TrainJob/{ns}/prior"))
    assert happened == errors, (situation, checked.findings, refused)
