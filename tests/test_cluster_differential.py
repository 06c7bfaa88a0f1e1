"""The function's output against upstream Trainer itself (tests/cluster/): every success golden and every
example, rendered, is applied to the control plane as Argo CD applies it (server-side, field manager
argocd-controller); Trainer's controller makes the JobSet; every container's requests and limits in it must be
what ``trainjob-resources explain --format json`` says of the input, and every override the user wrote must be
there. And admission: what the error goldens refuse for an upstream rule, the cluster refuses too."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainjob_resources.kube.quantity import parse_quantity

from tests.cluster.apply import (
    apply_all,
    cleanup,
    create_namespaces,
    deployable,
    namespace_map,
    placed,
    platform_runtimes,
)
from tests.cluster.controlplane import ControlPlane
from tests.cluster.lifecycle import Prediction, differences, jobset_containers
from tests.examples import CMP, EXAMPLES, KPT_PACKAGE, VENV_BIN, argocd_env, documents
from tests.goldens import cases
from tests.kit import build

pytestmark = pytest.mark.cluster

TESTDATA = Path(__file__).parent / "testdata"
TRAINER_GROUP = "trainer.kubeflow.org/"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")

# Goldens that cannot run on v2.3.0 as they are: why.
NOT_ON_V2_3_0 = {
    "native-mode": "native mode is for a Trainer whose ContainerPatch has resources; v2.3.0's has none",
    "native-kep-2782": "KEP-2782's fields: v2.3.0's CRD refuses them, and no release's controller applies them "
    "(tests/cluster/test_check_mode.py applies them to a simulated CRD)",
}
# Goldens whose output the control plane refuses today: the finding (xfail, strict: fixed, they fail).
REFUSED_TODAY: dict[str, str] = {}


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def explain_json(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(VENV_BIN / "trainjob-resources"), "explain", "--format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env or _env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    jobs: list[dict[str, Any]] = json.loads(done.stdout)["trainJobs"]
    return jobs


def predictions(jobs: list[dict[str, Any]]) -> dict[tuple[str, str], Prediction]:
    """explain's requests and limits per container; values a LimitRange would default at Pod admission
    are left out (the JobSet's template never has them)."""
    out: dict[tuple[str, str], Prediction] = {}
    for job in jobs:
        prediction: Prediction = {}
        for replicated in job.get("replicatedJobs") or []:
            containers = {}
            for c in replicated.get("containers") or []:
                sources = c.get("sources") or {}
                containers[c["name"]] = {
                    key: {
                        k: v
                        for k, v in (c.get(key) or {}).items()
                        if not str((sources.get(key) or {}).get(k, "")).startswith("LimitRange")
                    }
                    for key in ("requests", "limits")
                }
            prediction[replicated["name"]] = containers
        out[(job.get("namespace") or "", job["name"])] = prediction
    return out


def overrides(trainjob: dict[str, Any]) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """What the user wrote in the patches' resources, composed in order (null deletes): per (job, container)."""
    out: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for patch in (trainjob.get("spec") or {}).get("runtimePatches") or []:
        spec = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {}
        for job in spec.get("replicatedJobs") or []:
            pod = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
                resources = container.get("resources")
                if not isinstance(resources, dict):
                    continue
                mine = out.setdefault((job["name"], container["name"]), {"requests": {}, "limits": {}})
                for key in ("requests", "limits"):
                    for name, value in (resources.get(key) or {}).items():
                        if not str(name).startswith("$"):
                            mine[key][name] = value
    return out


def check_overrides(trainjob: dict[str, Any], jobset: dict[str, Any]) -> list[str]:
    """Every override the user wrote is in the JobSet (a trainer container's keys that resourcesPerNode sets
    excepted: it wins there)."""
    per_node = ((trainjob.get("spec") or {}).get("trainer") or {}).get("resourcesPerNode") or {}
    actual = jobset_containers(jobset)
    problems = []
    for (job, container), wanted in overrides(trainjob).items():
        got = actual.get(job, {}).get(container)
        if got is None:
            problems.append(f"{job}/{container}: not in the JobSet")
            continue
        for key in ("requests", "limits"):
            for name, value in wanted[key].items():
                if container == "node" and name in (per_node.get(key) or {}):
                    continue
                if value is None:
                    if name in got[key] and name not in (per_node.get(key) or {}):
                        problems.append(f"{job}/{container} {key}.{name}: deleted by the patch, JobSet has it")
                elif name not in got[key] or parse_quantity(str(got[key][name])) != parse_quantity(str(value)):
                    problems.append(f"{job}/{container} {key}.{name}: patch {value}, JobSet {got[key].get(name)}")
    return problems


def run_case(
    cp: ControlPlane,
    case: str,
    rendered: list[dict[str, Any]],
    predicted: dict[tuple[str, str], Prediction],
    sources: list[dict[str, Any]],
) -> None:
    """Applies the rendered objects in the case's namespaces, then checks every TrainJob's JobSet."""
    objects = [o for o in deployable(rendered) if str(o.get("apiVersion", "")).count("/") <= 1]
    namespaces = namespace_map([*objects, *sources], case)
    placed_objects = [placed(o, namespaces) for o in objects]
    refs = {o["spec"]["runtimeRef"]["name"] for o in objects if o["kind"] == "TrainJob"}
    bundled = {o["metadata"]["name"] for o in objects if o["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime")}
    installed = platform_runtimes(refs - bundled)
    create_namespaces(cp, namespaces)
    try:
        refused = apply_all(cp, [*installed, *placed_objects])
        assert not refused, f"the rendered {case} was refused: {json.dumps(refused, indent=1)}"
        source_jobs = {
            (namespaces[str(o["metadata"].get("namespace") or "")], o["metadata"]["name"]): o
            for o in sources
            if o.get("kind") == "TrainJob" and str(o.get("apiVersion", "")).startswith(TRAINER_GROUP)
        }
        assert source_jobs, f"{case}: no TrainJob"
        problems = []
        for (namespace, name), source in sorted(source_jobs.items()):
            prediction = predicted.get((str(source["metadata"].get("namespace") or ""), name))
            assert prediction is not None, f"{case}: explain said nothing of TrainJob {name}"
            jobset = cp.wait_for_jobset(name, namespace, timeout=30)
            problems += [f"{namespace}/{name}: {p}" for p in differences(prediction, jobset_containers(jobset))]
            problems += [f"{namespace}/{name}: {p}" for p in check_overrides(source, jobset)]
        assert not problems, f"{case}: the JobSet disagrees with explain:\n" + "\n".join(problems)
    finally:
        cleanup(cp, [*installed, *placed_objects])


# success goldens


def _resource_list(case: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((case / name).read_text())
    return data


SUCCESS = {c.name: c for c in cases("success")}


def _golden_params() -> list[object]:
    params = []
    for name in SUCCESS:
        marks = []
        if name in NOT_ON_V2_3_0:
            marks.append(pytest.mark.skip(reason=NOT_ON_V2_3_0[name]))
        if name in REFUSED_TODAY:
            marks.append(pytest.mark.xfail(strict=True, reason=REFUSED_TODAY[name]))
        params.append(pytest.param(name, marks=marks))
    return params


@pytest.mark.parametrize("golden", _golden_params())
def test_success_golden_on_the_control_plane(control_plane: ControlPlane, golden: str, tmp_path: Path) -> None:
    case = SUCCESS[golden]
    source = _resource_list(case, "input.yaml")
    items = source.get("items") or []
    (tmp_path / "input.yaml").write_text(yaml.safe_dump_all(items, sort_keys=False))
    args = ["input.yaml"]
    if source.get("functionConfig"):
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(source["functionConfig"], sort_keys=False))
        args = ["--config", "config.yaml", *args]
    # A runtime the platform installs (run_case installs upstream's): explain reads it as the platform's.
    refs = {o["spec"]["runtimeRef"]["name"] for o in items if o.get("kind") == "TrainJob"}
    installed = platform_runtimes(refs - {o["metadata"]["name"] for o in items if o.get("kind") in RUNTIME_KINDS})
    if installed:
        (tmp_path / "runtimes.yaml").write_text(yaml.safe_dump_all(installed, sort_keys=False))
        args = ["--runtimes", "runtimes.yaml", *args]
    predicted = predictions(explain_json(args, tmp_path))
    output = _resource_list(case, "expected.yaml").get("items") or []
    run_case(control_plane, f"g-{golden}", output, predicted, items)


# examples


def _example_cases() -> dict[str, tuple[Path, list[str], dict[str, str] | None, Path]]:
    """Each example: (folder explain runs in, its arguments, its environment, the golden of the output)."""
    cmp_env = {**_env(), **argocd_env()}
    overlay_env = {**_env(), **argocd_env("argocd-cmp-kustomize")}
    overlay = EXAMPLES / "argocd-cmp-kustomize" / "overlays" / "prod"
    return {
        "exec-data-loader": (EXAMPLES / "exec-data-loader", ["."], None, EXAMPLES / "exec-data-loader"),
        "overlay-multi-prod": (
            EXAMPLES / "overlay-multi" / "overlays" / "prod",
            ["--root", "../..", "."],
            None,
            EXAMPLES / "overlay-multi",
        ),
        "overlay-multi-team-a": (
            EXAMPLES / "overlay-multi" / "overlays" / "team-a",
            ["--root", "../..", "."],
            None,
            EXAMPLES / "overlay-multi" / "overlays" / "team-a",
        ),
        "kpt": (KPT_PACKAGE, ["--config", "trainjob-resources.yaml", "."], None, EXAMPLES / "kpt"),
        "argocd-cmp": (CMP / "app", ["--config-from-env", "--root", str(EXAMPLES.parent), "."], cmp_env, CMP),
        "argocd-cmp-kustomize": (
            overlay,
            ["--config-from-env", "--root", str(EXAMPLES.parent), "."],
            overlay_env,
            EXAMPLES / "argocd-cmp-kustomize",
        ),
        "helm-post-renderer": (EXAMPLES / "helm-post-renderer", ["input.yaml"], None, EXAMPLES / "helm-post-renderer"),
    }  # fmt: skip


EXAMPLE_CASES = _example_cases()


@pytest.mark.parametrize("example", list(EXAMPLE_CASES))
def test_example_on_the_control_plane(control_plane: ControlPlane, example: str) -> None:
    folder, args, env, golden = EXAMPLE_CASES[example]
    predicted = predictions(explain_json(args, folder, env))
    rendered = documents((golden / "expected.yaml").read_text())
    # The TrainJobs as written come from the rendered ones: their recorded resources are the user's overrides.
    sources = []
    for obj in rendered:
        if obj.get("kind") != "TrainJob":
            continue
        written = json.loads(
            ((obj["metadata"].get("annotations") or {}).get("fn.trainjob-resources.io/resources")) or "[]"
        )
        source = json.loads(json.dumps(obj))
        patches: dict[str, dict[str, Any]] = {}
        for entry in written:
            patch = patches.setdefault(entry["manager"], build.runtime_patch(manager=entry["manager"]))
            jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
            container = {"name": entry["container"], "resources": entry["resources"]}
            jobs.append(build.replicated_job(entry["replicatedJob"], {entry["list"]: [container]}))
        source["spec"]["runtimePatches"] = list(patches.values())
        sources.append(source)
    assert sources, f"{example}: no TrainJob in its golden"
    assert {(s["metadata"].get("namespace") or "", s["metadata"]["name"]) for s in sources} == set(predicted)
    run_case(control_plane, f"x-{example}", rendered, predicted, sources)


# bundles of our own: the trainer container (resourcesPerNode and claims)

BUNDLES = sorted((TESTDATA / "cluster").glob("*.yaml"))


def _render(path: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(VENV_BIN / "trainjob-resources"), "render", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return documents(done.stdout)


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda p: p.stem)
def test_bundle_on_the_control_plane(control_plane: ControlPlane, bundle: Path) -> None:
    predicted = predictions(explain_json([str(bundle)], bundle.parent))
    run_case(control_plane, f"b-{bundle.stem}", _render(bundle), predicted, documents(bundle.read_text()))


def test_resources_per_node_drops_the_trainer_containers_claims(control_plane: ControlPlane) -> None:
    """Trainer v2.3.0 rebuilds the trainer container's resources from resourcesPerNode's limits and requests
    (pkg/runtime/core/trainingruntime.go newRuntimeInfo): the runtime's claim 'gpu' and the TrainJob's 'nic'
    are both gone from the JobSet, as docs/merge.md 'Merge behavior' and explain's claimsDroppedByResourcesPerNode
    say."""
    bundle = TESTDATA / "cluster" / "trainer-claims.yaml"
    objects = documents(bundle.read_text())
    namespaces = namespace_map(objects, "claims-dropped")
    placed_objects = [placed(o, namespaces) for o in objects]
    create_namespaces(control_plane, namespaces)
    try:
        assert not apply_all(control_plane, placed_objects)
        claims = {}
        for name in ("per-node-without-claims", "per-node-with-claims"):
            jobset = control_plane.wait_for_jobset(name, namespaces[""], timeout=30)
            pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
            (node,) = [c for c in pod["containers"] if c["name"] == "node"]
            claims[name] = sorted(c["name"] for c in (node.get("resources") or {}).get("claims") or [])
        assert claims == {"per-node-without-claims": [], "per-node-with-claims": []}
    finally:
        cleanup(control_plane, placed_objects)
