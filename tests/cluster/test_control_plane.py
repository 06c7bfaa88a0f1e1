"""Smoke test of the local control plane: upstream Trainer's controller, webhooks and CRD rules answer.

What a GitOps tool meets when it applies our output: server-side apply as Argo CD does it, the TrainJob
webhook reading runtimes from the controller's cache, the CRD's CEL immutability rules, and the JobSet
Trainer's controller creates (no JobSet controller runs: the JobSet is the object we read).
"""

from __future__ import annotations

import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.controlplane import JOBSET, TRAINJOB, ControlPlane, KubectlError, tool_paths, tools
from tests.kit import build

pytestmark = pytest.mark.cluster

RUNTIMES = Path(__file__).resolve().parents[1] / "testdata" / "runtimes"
NS = "default"
MUST_EXIST = "must be created before the TrainJob is created"


def _trainjob(name: str, runtime: str = "torch-distributed", **spec: Any) -> str:
    return yaml.safe_dump(build.trainjob(name, runtime, namespace=NS, **spec))


def _runtime(name: str) -> str:
    doc = yaml.safe_load((RUNTIMES / "torch-plain.yaml").read_text())
    doc["metadata"]["name"] = name
    return yaml.safe_dump(doc)


def _apply_until_admitted(cp: ControlPlane, text: str, timeout: float = 15.0) -> tuple[int, float, list[str]]:
    """Apply until the webhook admits it: (attempts, seconds, refusals). The webhook reads runtimes from
    the controller's cache, so a TrainJob applied right after its runtime can be refused a moment."""
    started = time.monotonic()
    refusals: list[str] = []
    while True:
        done = cp.apply_server_side(text, check=False)
        if done.returncode == 0:
            return len(refusals) + 1, time.monotonic() - started, refusals
        refusals.append(done.stderr.strip())
        assert MUST_EXIST in done.stderr, done.stderr
        if time.monotonic() - started > timeout:
            pytest.fail(f"the TrainJob was still refused after {timeout:.0f}s: {refusals[-1]}")
        time.sleep(0.1)


def _containers(jobset: dict[str, Any], replicated_job: str) -> dict[str, dict[str, Any]]:
    for job in jobset["spec"]["replicatedJobs"]:
        if job["name"] == replicated_job:
            return {c["name"]: c for c in job["template"]["spec"]["template"]["spec"]["containers"]}
    names = [job["name"] for job in jobset["spec"]["replicatedJobs"]]
    raise AssertionError(f"no replicatedJob {replicated_job} in {names}")


def test_paths_name_every_binary(cluster_paths: dict[str, Any]) -> None:
    """paths.json names each binary `make cluster` built, and each says the version it is built from."""
    assert tool_paths() == cluster_paths
    built = cluster_paths["kustomize"]
    assert tools.kustomize("v5.4") == built[next(v for v in built if v.startswith("v5.4."))]
    assert tools.kustomize() == built[tools.kustomize_versions()[-1]]
    for version, path in built.items():
        assert subprocess.run([path, "version"], capture_output=True, text=True, check=True).stdout.strip() == version
    apiserver = subprocess.run([cluster_paths["kube-apiserver"], "--version"], capture_output=True, text=True)
    assert apiserver.stdout.split() == ["Kubernetes", cluster_paths["versions"]["kubernetes"]]


def test_trainer_controller_creates_the_jobset(control_plane: ControlPlane) -> None:
    cp = control_plane
    cp.apply_server_side((RUNTIMES / "torch-plain.yaml").read_text())
    trainjob = yaml.safe_load((RUNTIMES / "trainjob-runtime-patches.yaml").read_text())
    trainjob["metadata"]["namespace"] = NS
    attempts, seconds, _ = _apply_until_admitted(cp, yaml.safe_dump(trainjob))
    print(f"TrainJob admitted after {attempts} attempt(s), {seconds:.2f}s after its runtime was applied")

    jobset = cp.wait_for_jobset("patched-by-the-platform", NS)
    node = _containers(jobset, "node")["node"]
    assert node["resources"] == {
        "requests": {"cpu": "4", "memory": "16Gi"},
        "limits": {"cpu": "8", "memory": "32Gi"},
    }
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["spec"]["serviceAccountName"] == "trainer"
    assert pod["spec"]["nodeSelector"] == {"example.com/pool": "training"}
    owner = jobset["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner.get("controller")) == ("TrainJob", "patched-by-the-platform", True)
    live = cp.get(TRAINJOB, "patched-by-the-platform", NS, managed_fields=True)
    assert live is not None
    assert {(m["manager"], m["operation"]) for m in live["metadata"]["managedFields"]} >= {
        ("argocd-controller", "Apply")
    }


def test_first_render_dry_run_is_refused(control_plane: ControlPlane) -> None:
    """`render | kubectl apply --dry-run=server -f -` on a first render: dry-run stores no runtime, and the
    TrainJob webhook looks its runtime up, so the TrainJob is refused though a real apply would pass."""
    cp = control_plane
    stream = _runtime("first-render") + "---\n" + _trainjob("first-render-job", runtime="first-render")
    done = cp.apply_server_side(stream, dry_run=True, check=False)
    assert done.returncode != 0
    assert MUST_EXIST in done.stderr, done.stderr
    assert cp.get("clustertrainingruntimes.trainer.kubeflow.org", "first-render") is None


def test_webhook_refuses_a_missing_runtime(control_plane: ControlPlane) -> None:
    done = control_plane.apply_server_side(_trainjob("no-runtime", runtime="no-such-runtime"), check=False)
    assert done.returncode != 0
    assert "admission webhook" in done.stderr and MUST_EXIST in done.stderr, done.stderr


def test_webhook_refuses_a_bad_runtime_patches_manager(control_plane: ControlPlane) -> None:
    cp = control_plane
    cp.apply_server_side(_runtime("torch-distributed"))
    patches = [{"manager": "not a domain-prefixed path", "trainingRuntimeSpec": {"template": {"metadata": {}}}}]
    text = _trainjob("bad-manager", runtimePatches=patches)
    deadline = time.monotonic() + 15
    while True:
        done = cp.apply_server_side(text, check=False)
        assert done.returncode != 0, "a runtimePatches manager that is no domain-prefixed path was admitted"
        if MUST_EXIST not in done.stderr or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert "admission webhook" in done.stderr and "runtimePatches" in done.stderr, done.stderr
    assert cp.get(TRAINJOB, "bad-manager", NS) is None


def test_cel_keeps_runtime_ref_immutable(control_plane: ControlPlane) -> None:
    cp = control_plane
    cp.apply_server_side(_runtime("torch-distributed"))
    cp.apply_server_side(_runtime("torch-distributed-other"))
    _apply_until_admitted(cp, _trainjob("immutable-ref"))
    _apply_until_admitted(cp, _trainjob("probe-other", runtime="torch-distributed-other"))  # the cache has it
    with pytest.raises(KubectlError) as refused:
        cp.apply_server_side(_trainjob("immutable-ref", runtime="torch-distributed-other"))
    assert "field is immutable" in str(refused.value) and "runtimeRef" in str(refused.value)
    trainjob = cp.get(TRAINJOB, "immutable-ref", NS)
    assert trainjob is not None and trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed"
    cp.delete(TRAINJOB, "immutable-ref", NS)
    assert cp.get(TRAINJOB, "immutable-ref", NS) is None
    # The JobSet is garbage-collected by the owner reference only where a garbage collector runs
    # (kube-controller-manager); envtest runs none, so it stays: tests read, and clean up, explicitly.
    cp.delete(JOBSET, "immutable-ref", NS)


def test_a_trainjob_applied_in_the_same_wave_as_its_runtime(control_plane: ControlPlane) -> None:
    """Argo CD applies the objects of one sync wave concurrently: the TrainJob can reach the webhook
    before the controller's cache holds its runtime, and is refused; a later sync (retry) admits it.
    Applied one after the other (kubectl apply of one stream) the cache had always caught up here."""
    cp = control_plane
    refused = 0
    with ThreadPoolExecutor(2) as pool:
        for i in range(5):
            runtime = pool.submit(cp.apply_server_side, _runtime(f"same-wave-{i}"))
            job = pool.submit(cp.apply_server_side, _trainjob(f"same-wave-{i}", runtime=f"same-wave-{i}"), check=False)
            runtime.result()
            done = job.result()
            if done.returncode != 0:
                assert MUST_EXIST in done.stderr, done.stderr
                refused += 1
                _apply_until_admitted(cp, _trainjob(f"same-wave-{i}", runtime=f"same-wave-{i}"))
            assert cp.get(TRAINJOB, f"same-wave-{i}", NS) is not None
    print(f"same sync wave: {refused}/5 TrainJobs refused at first, all admitted on retry")


def test_the_api_servers_own_log_goes_into_the_harnesss(control_plane: ControlPlane) -> None:
    """kube-apiserver's klog lines (the controllers log JSON), for a failed test's report (tests/conftest.py)."""
    log = control_plane.log_path.read_text(errors="replace")
    assert re.search(r"^I\d{4} .*Version: v\d", log, re.MULTILINE), log[-2000:]
