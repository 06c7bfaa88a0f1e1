"""`runtime-patches-immutable` on a suspended TrainJob against Trainer's webhook, on both releases' control
planes: a TrainJob synced running or suspended, its JobSet's status written through the status subresource
as the JobSet controller would (none runs here: `active` jobs or none, or no status), then `check` on the
next render (its patch moved or not, `spec.suspend` drawn), then the sync (server-side as Argo CD's
`argocd-controller`, or client-side). Asserted: Trainer's webhook refused the TrainJob exactly where `check`
said `runtime-patches-immutable` error. On a control plane without JobSet's CRD, the webhook refuses every
such change, as `check` says. And the PreSync hook's rule to list JobSets is needed.
"""

from __future__ import annotations

import copy
import itertools
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.cluster.controlplane import JOBSET, TRAINJOB, ControlPlane, require_paths
from tests.cluster.test_check import (
    SYNCER,
    _check_as,
    _hook_objects,
    _token_kubeconfig,
    apply,
    check,
    dump,
    namespace,
    render,
    runtime,
    take_each_rule_away,
    write,
)
from tests.cluster.test_check_differential import apply_each
from tests.cluster.test_check_sync import RELEASES, node_selector_job

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
COUNTER = itertools.count()
KIND = "TrainingRuntime"
JOBSET_GROUP = "jobset.x-k8s.io"
REFUSED = "RuntimePatches can"  # "... can only be modified when ..." and "... cannot be modified when ..."

situations = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["server-side", "client-side"]),
        "was_suspended": st.booleans(),
        "suspends": st.booleans(),
        "patch_changed": st.booleans(),
        "active": st.sampled_from([None, 0, 1, 2]),  # None: no status written
    }
)


def situation(**changes: Any) -> dict[str, Any]:
    plain = {"mode": "server-side", "was_suspended": False, "suspends": True, "patch_changed": True, "active": 1}
    return {**plain, **changes}


def write_jobset_status(cp: ControlPlane, ns: str, name: str, active: int, timeout: float = 30.0) -> None:
    """The JobSet controller's status: ``active`` jobs in replicated job ``node``; waits until Trainer's
    controller has mirrored it into the TrainJob's ``status.jobsStatus``, so its cache (which the webhook
    reads) holds it."""
    cp.wait_for_jobset(name, ns)
    row = {"name": "node", "active": active, "ready": active, "succeeded": 0, "failed": 0, "suspended": 0}
    patch = json.dumps({"status": {"replicatedJobsStatus": [row]}})
    cp.kubectl("patch", JOBSET, name, "-n", ns, "--subresource=status", "--type=merge", "-p", patch)
    deadline = time.monotonic() + timeout
    while True:
        status = (cp.get(TRAINJOB, name, ns) or {}).get("status") or {}
        if [(s.get("name"), s.get("active")) for s in status.get("jobsStatus") or []] == [("node", active)]:
            return
        assert time.monotonic() < deadline, f"Trainer never mirrored the JobSet's status: {status}"
        time.sleep(0.2)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(situation=situations)
# The gap: git suspends a running TrainJob and moves its patch in one sync, while its JobSet is active.
@example(situation=situation())
@example(situation=situation(active=0, mode="client-side"))
# A suspended TrainJob whose JobSet's jobs have not stopped yet; one whose JobSet never ran.
@example(situation=situation(was_suspended=True, active=2, mode="client-side"))
@example(situation=situation(was_suspended=True, suspends=False, active=None))
@pytest.mark.parametrize("trainer_control_plane", RELEASES, indirect=True)
def test_the_webhook_refuses_a_patch_change_while_the_jobset_is_active_exactly_where_check_says_so(
    trainer_control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory, situation: dict[str, Any]
) -> None:
    cp = trainer_control_plane
    tmp_path = tmp_path_factory.mktemp("jobset")
    ns = namespace(cp, f"jobset-{next(COUNTER)}")
    base = runtime("jobset-base", kind=KIND, namespace=ns)
    cp.apply_server_side(dump(base))
    runtimes = str(write(tmp_path / "base.yaml", base))
    repo = tmp_path / "repo"

    def job(zone: str, suspend: bool) -> dict[str, Any]:
        return node_selector_job("job", ns, "jobset-base", zone, kind=KIND, suspend=suspend)

    write(repo / "job.yaml", job("a", situation["was_suspended"]))
    first = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    assert apply_each(cp, first, situation["mode"], None) == {}
    if situation["active"] is not None:
        write_jobset_status(cp, ns, "job", situation["active"])

    write(repo / "job.yaml", job("b" if situation["patch_changed"] else "a", situation["suspends"]))
    checked = check(cp, str(repo), cwd=tmp_path)
    assert "the render fails" not in checked.stderr, checked.stderr
    said = {f["severity"] for f in checked.of("runtime-patches-immutable")}
    second = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    refused = apply_each(cp, second, situation["mode"], None)
    assert set(refused) <= {"TrainJob/job"}, refused
    happened = "TrainJob/job" in refused
    assert not happened or REFUSED in refused["TrainJob/job"], refused
    assert ("error" in said) == happened, (situation, checked.findings, refused)
    assert said <= {"error"}, checked.findings


def test_the_presync_hooks_rule_to_list_jobsets_is_needed_where_a_suspended_trainjobs_patch_changes(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    ns = namespace(cp, "jobset-hook")
    rbac = [o for o in _hook_objects(tmp_path, ns) if o["kind"] not in ("ConfigMap", "Job")]
    apply(cp, dump(*rbac))
    base = runtime("jobset-hook-base", kind=KIND, namespace=ns)
    cp.apply_server_side(dump(base))
    runtimes = str(write(tmp_path / "base.yaml", base))
    repo = tmp_path / "repo"
    write(repo / "job.yaml", node_selector_job("job", ns, "jobset-hook-base", "a", kind=KIND, suspend=True))
    cp.apply_server_side(render(str(repo), "--runtimes", runtimes, cwd=tmp_path))
    write(repo / "job.yaml", node_selector_job("job", ns, "jobset-hook-base", "b", kind=KIND, suspend=True))
    kubeconfig = _token_kubeconfig(cp, ns, "trainjob-resources-check", tmp_path / "hook-kubeconfig")
    # With every rule check reads what it needs (the runtime from the cluster, the JobSets) and says what
    # Argo CD's controller, which may do nothing here, may not do.
    ok = _check_as(kubeconfig, str(repo), "--as", SYNCER, cwd=tmp_path)
    assert ok.code == 1 and {f["code"] for f in ok.findings} == {"forbidden", "trainer-version"}, ok.stderr
    taken = take_each_rule_away(cp, rbac, kubeconfig, repo, tmp_path, lambda r: r["apiGroups"] == [JOBSET_GROUP])
    assert taken == 1


@pytest.fixture(scope="module", params=RELEASES)
def without_jobsets(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of the release whose CRDs leave JobSet's out (Trainer runs; its JobSet plugin's
    watches are not set up)."""
    paths = copy.deepcopy(require_paths())
    release = paths["releases"][request.param]
    crds = tmp_path_factory.mktemp("crds-without-jobset")
    for crd in Path(release["crds"]).iterdir():
        if not crd.name.startswith(JOBSET_GROUP):
            shutil.copy(crd, crds)
    release["crds"] = str(crds)
    cp = ControlPlane(paths=paths, trainer=request.param).start()
    try:
        yield cp
    finally:
        cp.stop()


def test_without_jobsets_served_the_webhook_refuses_every_patch_change_of_a_suspended_trainjob(
    without_jobsets: ControlPlane, tmp_path: Path
) -> None:
    cp = without_jobsets
    ns = namespace(cp, "no-jobsets")
    base = runtime("no-jobsets-base", kind=KIND, namespace=ns)
    cp.apply_server_side(dump(base))
    runtimes = str(write(tmp_path / "base.yaml", base))
    repo = tmp_path / "repo"
    write(repo / "job.yaml", node_selector_job("job", ns, "no-jobsets-base", "a", kind=KIND, suspend=True))
    first = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    assert apply_each(cp, first, "server-side", None) == {}
    assert check(cp, str(repo), cwd=tmp_path).codes() == []  # nothing changes: the webhook reads no JobSet

    write(repo / "job.yaml", node_selector_job("job", ns, "no-jobsets-base", "b", kind=KIND, suspend=True))
    checked = check(cp, str(repo), cwd=tmp_path)
    [finding] = checked.of("runtime-patches-immutable")
    assert finding["severity"] == "error" and "serves no JobSets" in finding["message"], finding
    second = list(yaml.safe_load_all(render(str(repo), "--runtimes", runtimes, cwd=tmp_path)))
    refused = apply_each(cp, second, "server-side", None)
    assert set(refused) == {"TrainJob/job"} and 'no matches for kind "JobSet"' in refused["TrainJob/job"], refused
