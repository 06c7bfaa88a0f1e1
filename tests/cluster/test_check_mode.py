"""`check` says which mode the cluster needs, read from the served TrainJob CRD's schema
(function/trainjob_resources/live/native_fields.py), on two control planes:

- the shared one, with Trainer v2.3.0's own CRD, which has no ``resources`` in a runtimePatches ContainerPatch;
- one of this module's own, whose TrainJob CRD is v2.3.0's plus KEP-2782's fields
  (tests/cluster/kep2782.py): a simulation of a future release, since no release serves them.

Each test also applies the TrainJob a native render writes, so that what the finding says the API server
does (refuse it, or drop the field; keep it on the simulated CRD) is what the real API server does.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from trainjob_resources.rules.pod_claims import _entries

from tests.cluster.controlplane import DEFAULT_TRAINER, ControlPlane, Unavailable, require_paths
from tests.cluster.kep2782 import TRAINJOB_CRD, simulated_crd
from tests.cluster.test_check import apply, check, dump, namespace, render, runtime, trainjob, write
from tests.kit import build

pytestmark = pytest.mark.cluster

NATIVE = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "native"}, "data": {"mode": "native"}}
LOADER = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A control plane of its own whose TrainJob CRD is the simulation of a future release (KEP-2782's fields)."""
    try:
        paths = copy.deepcopy(require_paths())
    except Unavailable as absent:
        pytest.skip(str(absent))
    release = paths["releases"][DEFAULT_TRAINER]
    crds = tmp_path_factory.mktemp("kep2782-crds")
    for found in Path(release["crds"]).iterdir():
        shutil.copy(found, crds / found.name)
    (crds / TRAINJOB_CRD).write_text(yaml.safe_dump(simulated_crd(Path(release["crds"])), sort_keys=False))
    release["crds"] = str(crds)
    cp = ControlPlane(paths=paths).start()
    try:
        yield cp
    finally:
        cp.stop()


def _setup(cp: ControlPlane, tmp_path: Path, ns: str) -> tuple[Path, Path]:
    """A namespace, the runtime installed, and a repository whose TrainJob sizes the data loader (a non-node
    container) in a runtimePatches ContainerPatch; the native config beside it, and a copy of the runtime
    (``base.yaml``) for ``render``."""
    namespace(cp, ns)
    base = runtime(f"{ns}-base")
    write(tmp_path / "base.yaml", base)
    apply(cp, dump(base))
    repo = write(tmp_path / "repo" / "trainjob.yaml", trainjob("train", ns, f"{ns}-base", memory="2Gi", suspend=True))
    return repo, write(tmp_path / "native.yaml", NATIVE)


def _native_render(repo: Path, native: Path, tmp_path: Path) -> str:
    return render(str(repo), "--config", str(native), "--runtimes", str(tmp_path / "base.yaml"), cwd=tmp_path)


def _loader(obj: dict[str, Any] | None) -> dict[str, Any]:
    assert obj is not None
    pod = obj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    loader: dict[str, Any] = pod["template"]["spec"]["template"]["spec"]["initContainers"][0]
    return loader


def test_a_native_render_is_an_error_on_v2_3_0s_crd_which_refuses_or_drops_the_resources(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    cp = control_plane
    repo, native = _setup(cp, tmp_path, "mode-native-v230")
    checked = check(cp, str(repo), "--config", str(native), cwd=tmp_path)
    assert checked.code == 1, (checked.findings, checked.stderr)
    [finding] = checked.of("mode")
    assert finding["severity"] == "error" and finding["object"] == "TrainJob/mode-native-v230/train"
    assert f"{LOADER}.initContainers[0].resources" in finding["message"]
    assert "mode: materialize" in finding["message"]
    # What the API server does with the TrainJob the native render writes, as the finding says.
    written = _native_render(repo, native, tmp_path)
    refused = cp.apply_server_side(written, check=False)
    assert refused.returncode != 0 and "field not declared in schema" in refused.stderr, refused.stderr
    strict = cp.kubectl("apply", "-f", "-", input=written, check=False)
    assert strict.returncode != 0 and 'unknown field "spec.runtimePatches' in strict.stderr, strict.stderr
    cp.kubectl("apply", "--validate=false", "-f", "-", input=written)
    assert _loader(cp.get("trainjob", "train", "mode-native-v230")) == {"name": "data-loader"}  # pruned


def test_a_materialized_render_on_v2_3_0s_crd_has_no_mode_finding(control_plane: ControlPlane, tmp_path: Path) -> None:
    repo, _ = _setup(control_plane, tmp_path, "mode-materialize-v230")
    checked = check(control_plane, str(repo), cwd=tmp_path)
    assert checked.code == 0 and checked.of("mode") == [], (checked.findings, checked.stderr)


def test_a_native_render_on_the_simulated_future_release_keeps_the_resources(
    simulated: ControlPlane, tmp_path: Path
) -> None:
    repo, native = _setup(simulated, tmp_path, "mode-native-sim")
    checked = check(simulated, str(repo), "--config", str(native), cwd=tmp_path)
    assert checked.code == 0 and checked.of("mode") == [], (checked.findings, checked.stderr)
    apply(simulated, _native_render(repo, native, tmp_path))
    kept = _loader(simulated.get("trainjob", "train", "mode-native-sim"))
    assert kept["resources"] == {"requests": {"memory": "2Gi"}, "limits": {"memory": "2Gi"}}


def test_a_materialized_render_on_the_simulated_future_release_is_an_info(
    simulated: ControlPlane, tmp_path: Path
) -> None:
    repo, _ = _setup(simulated, tmp_path, "mode-materialize-sim")
    checked = check(simulated, str(repo), cwd=tmp_path)
    assert checked.code == 0, (checked.findings, checked.stderr)
    [finding] = checked.of("mode")
    assert finding["severity"] == "info"
    assert finding["object"] == "CustomResourceDefinition/trainjobs.trainer.kubeflow.org"
    assert "mode: native" in finding["message"] and "TrainJobDynamicResourceAllocation" in finding["message"]


def test_pod_claims_on_the_simulated_future_release_as_the_pod_claims_rule_checks_them(
    simulated: ControlPlane, tmp_path: Path
) -> None:
    """A PodSpecPatch's resourceClaims, as the simulated CRD declares them (the KEP's listMapKey=name and
    MaxItems=32): kept when valid; a duplicate name and a 33rd claim refused by the API server, and by the
    pod-claims rule before it."""
    ns = "mode-claims-sim"
    repo, native = _setup(simulated, tmp_path, ns)
    doc = yaml.safe_load(repo.read_text())
    pod = doc["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    pod = pod["template"]["spec"]["template"]["spec"]
    pod["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "h100"}]
    pod["initContainers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    write(repo, doc)
    apply(simulated, _native_render(repo, native, tmp_path))
    kept = simulated.get("trainjob", "train", ns)
    assert kept is not None and _loader(kept)["resources"]["claims"] == [{"name": "gpu"}]
    for claims, ours, refusal in (
        (
            [{"name": "gpu", "resourceClaimTemplateName": "a"}, {"name": "gpu", "resourceClaimTemplateName": "b"}],
            "duplicate name",
            'duplicate entries for key [name="gpu"]',
        ),
        (
            [{"name": f"c{i}", "resourceClaimTemplateName": "a"} for i in range(33)],
            "must have at most 32 items",
            "must have at most 32 items",
        ),
    ):
        pod["resourceClaims"] = claims
        doc["metadata"]["name"] = "refused"
        write(repo, doc)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "trainjob_resources",
                "render",
                str(repo),
                "--config",
                str(native),
                "--runtimes",
                str(tmp_path / "base.yaml"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 1 and ours in done.stderr, done.stderr
        refused = simulated.apply_server_side(dump(doc), check=False)
        assert refused.returncode != 0 and refusal in refused.stderr, refused.stderr


CLAIM_NAMES = st.sampled_from(["gpu", "nic", "a", "b"])


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    names=st.lists(CLAIM_NAMES, max_size=3)
    | st.lists(st.sampled_from([f"c{i}" for i in range(40)]), min_size=30, max_size=34, unique=True)
    | st.lists(CLAIM_NAMES, min_size=31, max_size=33)
)
@example(names=[f"c{i}" for i in range(33)])
@example(names=["gpu", "gpu"])
def test_the_pod_claims_rule_refuses_what_the_simulated_crd_refuses(simulated: ControlPlane, names: list[str]) -> None:
    """Differential, on generated claim lists: the API server refuses (dry run) exactly the lists the pod-claims
    rule finds a duplicate name or too many claims in (the schema's part; the rule's other checks are pod
    validation's, which the TrainJob's schema does not make)."""
    claims = [{"name": n, "resourceClaimTemplateName": "t"} for n in names]
    loader = {"name": "data-loader", "resources": {"claims": [{"name": names[0]}]} if names else {}}
    apply(simulated, dump(runtime("mode-differential-base")))  # server-side: the same object every example
    doc = trainjob("claims", "default", "mode-differential-base")
    patch = build.container_patch("node", "initContainers", loader, manager="example.com/team")
    pod = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["resourceClaims"] = claims
    doc["spec"]["runtimePatches"] = [patch]
    ours = [v.message for v in _entries(claims, "resourceClaims")]
    schema_refusal = any(m.startswith(("duplicate name", "must have at most")) for m in ours)
    done = simulated.apply_server_side(dump(doc), dry_run=True, check=False)
    assert (done.returncode != 0) == schema_refusal, (ours, done.stderr)
