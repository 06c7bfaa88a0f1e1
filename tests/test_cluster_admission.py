"""Admission on the control plane (tests/cluster/): each error golden applied unrendered. Where the function
refuses the golden for one of upstream's admission rules, the API server or Trainer's webhook must refuse it
too, for that rule: the golden is applied with the ``resources`` its patches set taken out (v2.3.0's
ContainerPatch has no ``resources``, which the server would refuse first; that is checked on its own). Where the
rule is the function's own (quantities, requests against limits, policy, a container the runtime lacks), the
cluster admits the TrainJob: the function is the only one to catch it before the Pods fail."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.apply import (
    apply_admitted,
    apply_all,
    cleanup,
    create_namespaces,
    deployable,
    namespace_map,
    placed,
    platform_runtimes,
)
from tests.cluster.controlplane import ControlPlane
from tests.goldens import cases
from tests.kit import build

pytestmark = pytest.mark.cluster

ERRORS = {c.name: c for c in cases("error")}
NOT_FOUND = "must be created before the TrainJob is created"

# golden -> what the cluster says when it refuses the golden's TrainJob for the same rule.
REFUSED_BY_THE_CLUSTER = {
    "bad-and-duplicate-manager": "duplicate entries for key [manager=",  # runtimePatches is a map keyed by manager
    # the runtime installed (INSTALLED): the webhook refuses the env by the container's name
    "cluster-installed-runtime-env-for-node": "must not have envs for the dataset-initializer, model-initializer, node",
    "cluster-installed-runtime-with-overrides": NOT_FOUND,  # the webhook needs the runtime (ValidateObjects)
    "env-for-reserved-container": "must not have envs for the dataset-initializer, model-initializer, node",
    "missing-runtime": NOT_FOUND,
    "misspelled-runtime-name": NOT_FOUND,
    "misspelled-runtime-ref": "trainingRuntimeRef: field not declared in schema",
    # KEP-2782's PodSpecPatch.resourceClaims (in native mode and out of it): no release's CRD declares it
    "native-kep-2782-claims": "resourceClaims: field not declared in schema",
    "pod-claims-materialized": "resourceClaims: field not declared in schema",
    # the function's warning: the webhook knows only Trainer's runtimes (its errors, the resources, are
    # test_resources_in_a_container_patch_are_refused_by_v2_3_0's)
    "other-api-group-with-resources": "unsupported runtime: ClusterTrainingRuntime.example.com",
    "resources-per-node-bad-quantity": "quantities must match the regular expression",
    # its runtime is refused (strict decoding error: unknown field "spec.mlPolicy.torch.numProcPerNode",
    # tests/cluster/test_crd_differential.py), so the TrainJob names a runtime the cluster lacks
    "runtime-field-the-crd-lacks": NOT_FOUND,
    "trainingruntime-in-another-namespace": NOT_FOUND,
    # the server names one of the unknown fields (image, command), whichever it meets first
    "unsupported-containerpatch-field": "field not declared in schema",
}
# Goldens whose premise is a runtime the platform installs (upstream's own, as the Trainer Helm chart does):
# installed before the golden is applied. Every other golden's runtime not in it is not in the cluster.
INSTALLED = {"cluster-installed-runtime-env-for-node"}
# The function's own rules: the cluster admits these TrainJobs (resources taken out).
ADMITTED_BY_THE_CLUSTER = {
    "container-in-wrong-list",
    "cpu-in-cores",
    # the webhook refuses the runtime derived from it, not this TrainJob (tests/cluster/test_upstream_parity.py)
    "derived-runtime-webhook-refused",
    # admitted: the controller then fails at every reconcile (tests/cluster/test_move_and_order.py)
    "flux-without-num-nodes",
    "fractional-gpu",
    "invalid-quantity",
    "invalid-resource-name",
    "limitrange-max-overridden-sidecar",
    "mpi-launcher-as-node-apart",  # the launcher is a node: resourcesPerNode cannot size it apart
    "mpi-launcher-move-refused",  # the function's refusal of a move that would size the launcher
    "negative-quantity",
    "one-bad-one-good",
    "platform-max-per-role",
    "platform-policy-configmap",
    # the TrainJob is admitted; the API server refuses its Pods (tests/cluster/test_pod_level.py)
    "pod-level-resources-exceeded",
    "requests-above-limits",
    "resourcequota-never-fits",
    "trainer-container-resources",
    "unequal-gpu",
    "unknown-config-option",
    "unknown-container",
    "unknown-replicated-job",
}


def test_every_error_golden_is_classified() -> None:
    assert set(REFUSED_BY_THE_CLUSTER) | ADMITTED_BY_THE_CLUSTER == set(ERRORS)
    assert not set(REFUSED_BY_THE_CLUSTER) & ADMITTED_BY_THE_CLUSTER
    assert set(INSTALLED) <= set(ERRORS)


def _without_resources(value: Any) -> Any:
    """The object with every container entry's ``resources`` taken out."""
    if isinstance(value, dict):
        return {k: _without_resources(v) for k, v in value.items() if not (k == "resources" and "name" in value)}
    if isinstance(value, list):
        return [_without_resources(v) for v in value]
    return value


def _without_pod_claims(value: Any) -> Any:
    """KEP-2782's PodSpecPatch.resourceClaims taken out: v2.3.0's schema lacks it too, and which unknown
    fields the server names follows its walk of a Go map (of 10 applies of native-kep-2782-claims, 3 named
    resourceClaims alone)."""
    if isinstance(value, dict):
        return {k: _without_pod_claims(v) for k, v in value.items() if k != "resourceClaims"}
    if isinstance(value, list):
        return [_without_pod_claims(v) for v in value]
    return value


def _has_patch_resources(trainjob: dict[str, Any]) -> bool:
    return _without_resources(trainjob.get("spec")) != trainjob.get("spec")


def _objects(golden: str) -> list[dict[str, Any]]:
    source = yaml.safe_load((ERRORS[golden] / "input.yaml").read_text())
    return deployable(source.get("items") or [])


def _apply(cp: ControlPlane, golden: str, objects: list[dict[str, Any]], suffix: str) -> dict[str, str]:
    namespaces = namespace_map(objects, f"a{suffix}-{golden}")
    placed_objects = [placed(o, namespaces) for o in objects]
    create_namespaces(cp, namespaces)
    # The golden's premise: a ClusterTrainingRuntime its TrainJobs name and it lacks is not in the cluster
    # (another test of the session may have installed one of that name), or, for INSTALLED, the platform's.
    bundled = {o["metadata"]["name"] for o in objects if o.get("kind") == "ClusterTrainingRuntime"}
    lacking = set()
    for obj in objects:
        ref = (obj.get("spec") or {}).get("runtimeRef") or {}
        cluster_scoped = ref.get("kind", "ClusterTrainingRuntime") == "ClusterTrainingRuntime"
        if obj.get("kind") == "TrainJob" and cluster_scoped and ref.get("name") and ref["name"] not in bundled:
            lacking.add(ref["name"])
    installed = platform_runtimes(lacking) if golden in INSTALLED else []
    assert len(installed) == (len(lacking) if golden in INSTALLED else 0), f"{golden}: {lacking} not upstream's"
    for name in sorted(lacking):
        cp.delete("clustertrainingruntimes.trainer.kubeflow.org", name, wait=True)
    try:
        return apply_all(cp, [*installed, *placed_objects])
    finally:
        cleanup(cp, [*installed, *placed_objects])


@pytest.mark.parametrize("golden", sorted(ERRORS))
def test_error_golden_applied_unrendered(control_plane: ControlPlane, golden: str) -> None:
    objects = _objects(golden)
    stripped = [_without_resources(o) if o.get("kind") == "TrainJob" else o for o in objects]
    refused = {k: v for k, v in _apply(control_plane, golden, stripped, "s").items() if k.startswith("TrainJob ")}
    if golden in REFUSED_BY_THE_CLUSTER:
        assert refused, f"{golden}: the function refuses it for an upstream rule, the cluster admitted it"
        assert any(REFUSED_BY_THE_CLUSTER[golden] in message for message in refused.values()), refused
    else:
        assert not refused, f"{golden}: the cluster refused what only the function's own rules should: {refused}"


def _goldens_with_patch_resources() -> list[str]:
    out = []
    # The server names only the first unknown field it meets: not resources, in these.
    other_unknown_fields = {"misspelled-runtime-ref", "unsupported-containerpatch-field"}
    for golden in sorted(set(ERRORS) - other_unknown_fields):
        if any(o.get("kind") == "TrainJob" and _has_patch_resources(o) for o in _objects(golden)):
            out.append(golden)
    return out


@pytest.mark.parametrize("golden", _goldens_with_patch_resources())
def test_resources_in_a_container_patch_are_refused_by_v2_3_0(control_plane: ControlPlane, golden: str) -> None:
    """Upstream issue 3999, the reason the function exists: v2.3.0's ContainerPatch has no resources."""
    objects = [_without_pod_claims(o) if o.get("kind") == "TrainJob" else copy.deepcopy(o) for o in _objects(golden)]
    refused = {k: v for k, v in _apply(control_plane, golden, objects, "r").items() if k.startswith("TrainJob ")}
    assert any("resources: field not declared in schema" in m for m in refused.values()), refused


def test_the_goldens_folder_is_the_one_tests_goldens_reads() -> None:
    assert all((Path(c) / "input.yaml").is_file() for c in ERRORS.values())


PLACER = "example.com/placer"


def numeric_per_node(namespace: str, runtime: str, tag: str, cpu: object, patched: bool) -> str:
    """A TrainJob whose resourcesPerNode limits ``cpu`` (a number or a string), with a runtimePatch that places
    its pods (no resources) when ``patched``."""
    trainer = {"image": f"example.com/train:{tag}", "resourcesPerNode": {"limits": {"cpu": cpu}}}
    patches = [placing_patch()] if patched else None
    return build.yaml_text(build.trainjob("numeric", runtime, patches, namespace=namespace, trainer=trainer))


def placing_patch() -> dict[str, Any]:
    """A runtimePatches entry without resources (it places the pods): the render keeps it."""
    return build.runtime_patch(build.replicated_job("node", {"nodeSelector": {"pool": "a"}}), manager=PLACER)


@pytest.mark.parametrize("patched", [True, False], ids=["with-runtime-patches", "without"])
@pytest.mark.parametrize("value", [1, "1"], ids=["number", "string"])
def test_a_numeric_resources_per_node_quantity_fails_the_next_apply(
    control_plane: ControlPlane, patched: bool, value: int | str
) -> None:
    """What the crd rule warns of (rules/crd.py ``_numeric_quantities``): on a TrainJob with
    runtimePatches the webhook stores the number as a string, and the next apply of the same number fails
    spec.trainer's self == oldSelf. Quoted, or without runtimePatches, it passes."""
    from trainjob_resources.krm import resource_list as krm
    from trainjob_resources.process import process

    quoted = isinstance(value, str)
    namespace = name = f"numeric-{'patched' if patched else 'plain'}-{'string' if quoted else 'number'}"
    runtime = (Path(__file__).parent / "testdata" / "runtimes" / "torch-plain.yaml").read_text()
    runtime = runtime.replace("name: torch-distributed", f"name: {name}")
    control_plane.kubectl("create", "namespace", namespace)
    try:
        control_plane.apply_server_side(runtime)
        text = {tag: numeric_per_node(namespace, name, tag, value, patched) for tag in ("v1", "v2")}
        apply_admitted(control_plane, text["v1"])  # the webhook reads runtimes from the controller's cache
        stored = control_plane.get("trainjobs.trainer.kubeflow.org", "numeric", namespace)
        assert stored is not None
        kept = stored["spec"]["trainer"]["resourcesPerNode"]["limits"]["cpu"]
        # Timestamping the patches re-encodes the object: a Quantity is then a string. Without patches, as sent.
        assert kept == ("1" if patched or quoted else 1)
        again = control_plane.apply_server_side(text["v1"], check=False)
        if patched and not quoted:
            assert again.returncode != 0 and "field is immutable" in again.stderr, again
        else:
            assert again.returncode == 0, again.stderr
        # The function warns of the number, at its field, and of nothing in the quoted one.
        data = build.resource_list([yaml.safe_load(text["v1"])])
        found = [r for r in process(krm.read(data)).results if r.severity == "warning"]
        paths = [r.field_path for r in found]
        assert paths == (["spec.trainer.resourcesPerNode.limits.cpu"] if patched and not quoted else []), found
    finally:
        control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
        control_plane.delete("clustertrainingruntimes.trainer.kubeflow.org", name, wait=False)


def test_what_the_function_moves_to_resources_per_node_re_syncs(control_plane: ControlPlane) -> None:
    """A trainer patch's number (cpu: 2) moved to resourcesPerNode is written as a string: the rendered
    TrainJob applies again (an Argo CD re-sync) where the number would fail spec.trainer's self == oldSelf."""
    from trainjob_resources.krm import resource_list as krm
    from trainjob_resources.process import process

    namespace = name = "moved-number"
    runtime = yaml.safe_load((Path(__file__).parent / "testdata" / "runtimes" / "torch-plain.yaml").read_text())
    runtime["metadata"]["name"] = name
    sized = {"name": "node", "resources": {"limits": {"cpu": 2, "memory": "8Gi"}}}
    patch = build.container_patch("node", "containers", sized, manager="example.com/sizing")
    trainjob = build.trainjob("moved", name, [patch], namespace=namespace, trainer={"image": "example.com/train:v1"})
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    data = build.resource_list([runtime, trainjob], {**config, "data": {"trainerResources": "moveToResourcesPerNode"}})
    rendered = process(krm.read(data))
    assert not [r for r in rendered.results if r.severity in ("error", "warning")], rendered.results
    items = [yaml.safe_load(item.text().lstrip()[2:].replace("\n  ", "\n")) for item in rendered.items]
    (trainjob,) = [i for i in items if i["kind"] == "TrainJob"]
    assert trainjob["spec"]["trainer"]["resourcesPerNode"] == {"limits": {"cpu": "2", "memory": "8Gi"}}
    control_plane.kubectl("create", "namespace", namespace)
    try:
        stream = "---\n".join(yaml.safe_dump(i) for i in items)
        control_plane.apply_server_side("---\n".join(yaml.safe_dump(i) for i in items if i["kind"] != "TrainJob"))
        apply_admitted(control_plane, stream)  # the webhook reads runtimes from the controller's cache
        again = control_plane.apply_server_side(stream, check=False)
        assert again.returncode == 0, again.stderr
    finally:
        control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
        control_plane.delete("clustertrainingruntimes.trainer.kubeflow.org", name, wait=False)
