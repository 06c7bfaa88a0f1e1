"""`check` against the sync, on generated situations (issue 49): for each, on both Trainer releases' control
planes, a namespace is built (a runtime with or without a RuntimeClass and a memory request, a LimitRange or
none, a ResourceQuota or none, a running or suspended TrainJob synced before), `check` runs as the identity
that syncs (its verbs drawn), then the sync is made (server-side or client-side) as that identity and as
the admin, and the new TrainJob's pods are created through admission as the JobSet controller would (none
runs here). Asserted: every refusal the sync met had its error finding, and every
`runtime-patches-immutable` and `quota-exceeded` error had its refusal (and `forbidden` where the verb is
one the apply mode uses on that object).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.cluster.controlplane import ControlPlane
from tests.cluster.test_check import MUST_EXIST, check, dump, namespace, render, runtime, write
from tests.cluster.test_check_release import publish
from tests.cluster.test_check_sync import RELEASES, grant, node_selector_job, quota, start_pods

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
SYNCER = "differential-syncer"
KATA = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "diff-kata"},
    "handler": "kata",
    "overhead": {"podFixed": {"memory": "1Gi"}},
}
COUNTER = itertools.count()
KIND = "TrainingRuntime"

situations = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["server-side", "client-side"]),
        "suspended": st.booleans(),
        "patch_changed": st.booleans(),
        "verbs": st.sets(st.sampled_from(["get", "create", "patch"])),
        "limit_range": st.booleans(),
        "runtime_class": st.booleans(),
        "trainer_memory": st.booleans(),
        "quota": st.sampled_from([None, "4Gi", "7Gi", "12Gi"]),
        "nodes": st.sampled_from([1, 2]),
    }
)


def apply_each(cp: ControlPlane, docs: list[dict[str, Any]], mode: str, as_user: str | None) -> dict[str, str]:
    """Each object applied on its own, runtimes first (as Argo CD's waves); the refusals by kind/name."""
    refused: dict[str, str] = {}
    ordered = sorted(docs, key=lambda d: d["kind"] != "TrainingRuntime")
    for doc in ordered:
        args = ["apply", "--server-side", "--field-manager=argocd-controller"] if mode == "server-side" else ["apply"]
        if as_user:
            args += ["--as", as_user]
        deadline = time.monotonic() + (20 if not refused else 0)
        while True:
            done = cp.kubectl(*args, "-f", "-", input=dump(doc), check=False)
            if done.returncode == 0 or MUST_EXIST not in done.stderr or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if done.returncode != 0:
            refused[f"{doc['kind']}/{doc['metadata']['name']}"] = done.stderr
    return refused


def consequences(refusals: dict[str, str]) -> set[str]:
    """The finding codes the refusals are the consequences of."""
    out = set()
    for stderr in refusals.values():
        if "forbidden: User" in stderr or "cannot get resource" in stderr or MUST_EXIST in stderr:
            out.add("forbidden")  # MUST_EXIST: the runtime the identity could not create
        elif "RuntimePatches can only be modified" in stderr:
            out.add("runtime-patches-immutable")
        else:
            out.add(f"unexplained: {stderr}")
    return out


def situation(**changes: Any) -> dict[str, Any]:
    plain = {
        "mode": "server-side",
        "suspended": False,
        "patch_changed": False,
        "verbs": {"get", "create", "patch"},
        "limit_range": False,
        "runtime_class": False,
        "trainer_memory": True,
        "quota": None,
        "nodes": 1,
    }
    return {**plain, **changes}


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(situation=situations)
# The audit's: a running TrainJob's nodeSelector moved; a client-side sync without get; the RuntimeClass
# overhead under a quota; LimitRange defaults under a quota, the trainer container without a request.
@example(situation=situation(patch_changed=True))
@example(situation=situation(mode="client-side", verbs={"create", "patch"}))
@example(situation=situation(runtime_class=True, quota="7Gi", nodes=2, suspended=True))
@example(situation=situation(limit_range=True, trainer_memory=False, quota="7Gi", nodes=2, mode="client-side"))
@pytest.mark.parametrize("trainer_control_plane", RELEASES, indirect=True)
def test_every_refusal_had_its_finding_and_every_error_its_refusal(
    trainer_control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory, situation: dict[str, Any]
) -> None:
    cp = trainer_control_plane
    tmp_path = tmp_path_factory.mktemp("diff")
    ns = namespace(cp, f"diff-{next(COUNTER)}")
    grant(cp, ns, SYNCER, sorted({"list", "watch", "update", *situation["verbs"]}))
    publish(cp, ns, cp.trainer)
    cp.apply_server_side(dump(KATA))
    resources = {"resources": {"requests": {"memory": "1Gi"}}} if situation["trainer_memory"] else {}
    base = runtime("diff-base", kind="TrainingRuntime", namespace=ns, **resources)
    if situation["runtime_class"]:
        pod = base["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        pod["runtimeClassName"] = "diff-kata"
    cp.apply_server_side(dump(base))
    if situation["limit_range"]:
        limits = {"type": "Container", "defaultRequest": {"memory": "1Gi"}, "default": {"memory": "2Gi"}}
        spec = {"limits": [limits]}
        cp.apply_server_side(
            dump({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "d", "namespace": ns}, "spec": spec})
        )
    if situation["quota"]:
        quota(cp, ns, {"requests.memory": situation["quota"]})
    runtimes = str(write(tmp_path / "base.yaml", base))
    extra = {"suspend": True} if situation["suspended"] else {}
    trainer = {"numNodes": situation["nodes"]}

    # Before: the TrainJob synced by the admin, its pods started where it runs.
    repo = tmp_path / "repo"
    write(repo / "job.yaml", node_selector_job("job", ns, "diff-base", "a", kind=KIND, trainer=trainer, **extra))
    first = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    assert apply_each(cp, first, situation["mode"], None) == {}
    if not situation["suspended"]:
        start_pods(cp, ns, "job")

    # The change: the patch moved (or not), and a new TrainJob.
    zone = "b" if situation["patch_changed"] else "a"
    write(repo / "job.yaml", node_selector_job("job", ns, "diff-base", zone, kind=KIND, trainer=trainer, **extra))
    new = node_selector_job("new", ns, "diff-base", "a", kind=KIND, trainer=trainer)
    new["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"][
        "spec"
    ]["template"]["spec"]["initContainers"][0]["resources"] = {
        "requests": {"memory": "2Gi"},
        "limits": {"memory": "2Gi"},
    }
    write(repo / "new.yaml", new)
    deadline = time.monotonic() + 10
    while (
        cp.kubectl(
            "auth", "can-i", "list", "trainjobs.trainer.kubeflow.org", "--as", SYNCER, "-n", ns, check=False
        ).stdout.strip()
        != "yes"
    ):
        assert time.monotonic() < deadline, "RBAC never reached the authorizer"
        time.sleep(0.2)
    checked = check(cp, str(repo), "--as", SYNCER, cwd=tmp_path)
    assert "the render fails" not in checked.stderr, checked.stderr
    errors = {f["code"] for f in checked.findings if f["severity"] == "error"}
    forbidden = {(f["object"].split("/")[0], f["message"].split(" ")[3]) for f in checked.of("forbidden")}

    second = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    as_syncer = apply_each(cp, second, situation["mode"], SYNCER)
    as_admin = apply_each(cp, second, situation["mode"], None)
    happened = consequences(as_syncer) | consequences(as_admin)
    started = "TrainJob/new" not in as_admin and cp.get("trainjobs.trainer.kubeflow.org", "new", ns) is not None
    if started and any("quota" in r for r in start_pods(cp, ns, "new")):
        happened.add("quota-exceeded")
    said = (situation, checked.findings, as_syncer, as_admin)
    assert happened <= errors, said  # every refusal had its error finding
    for code in ("runtime-patches-immutable", "quota-exceeded"):
        assert code not in errors or code in happened, said  # and each of these errors its refusal
    # forbidden, where the apply mode uses the verb on that object: patch of the live TrainJob and create of
    # the new one (both modes), get (client-side only).
    used = {("TrainJob", "patch"), ("TrainJob", "create")}
    if situation["mode"] == "client-side":
        used |= {("TrainJob", "get"), ("TrainingRuntime", "get")}
    if forbidden & used:
        assert "forbidden" in happened, said
