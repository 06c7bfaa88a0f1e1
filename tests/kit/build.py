"""Builders of the objects the tests feed the function: TrainJobs, training runtimes, their patches, bundles.

After upstream Trainer's test wrappers (kubeflow/trainer pkg/util/testing/wrapper.go: MakeTrainJobWrapper,
MakeClusterTrainingRuntimeWrapper, ...): one builder per kind whose defaults a test overrides, so that a
test writes only what it is about. Each call returns a new plain object (dicts and lists, as
``yaml.safe_load`` gives them) that the test may edit freely.
"""

from __future__ import annotations

from typing import Any

import yaml
from trainjob_resources.yamltext import yamlnodes as yn

API_VERSION = "trainer.kubeflow.org/v1alpha1"
CLUSTER_RUNTIME = "ClusterTrainingRuntime"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
MANAGER = "user.example.com/me"

Obj = dict[str, Any]


def trainer_labels() -> dict[str, str]:
    """The label that marks a replicated job as the trainer (kubeflow/trainer pkg/constants/constants.go:
    LabelTrainJobAncestor, valued AncestorTrainer)."""
    return {ANCESTOR: "trainer"}


def metadata(
    name: str, namespace: str | None = None, labels: dict[str, str] | None = None, annotations: Any = None
) -> Obj:
    out: Obj = {"name": name}
    if namespace:
        out["namespace"] = namespace
    if labels:
        out["labels"] = labels
    if annotations is not None:
        out["annotations"] = annotations
    return out


def replicated_job(
    name: str, pod_spec: Obj | None = None, *, labels: dict[str, str] | None = None, **job_spec: Any
) -> Obj:
    """A JobSet replicated job ``name`` whose pod template's spec is ``pod_spec`` (none: no pod template),
    its template labelled ``labels`` when given; ``job_spec``: other fields of the Job's spec."""
    template: Obj = {}
    if labels is not None:
        template["metadata"] = {"labels": labels}
    if pod_spec is not None:
        template["spec"] = {**job_spec, "template": {"spec": pod_spec}}
    elif job_spec:
        template["spec"] = job_spec
    return {"name": name, "template": template}


def runtime_patch(*jobs: Obj, manager: str = MANAGER) -> Obj:
    """One ``spec.runtimePatches[]`` entry patching the runtime's replicated ``jobs``."""
    return {"manager": manager, "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": list(jobs)}}}}


def container_patch(job: str, list_name: str, container: Obj, manager: str = MANAGER) -> Obj:
    """One runtimePatches entry that patches a single container."""
    return runtime_patch(replicated_job(job, {list_name: [container]}), manager=manager)


def trainjob(
    name: str,
    runtime: str,
    patches: list[Obj] | None = None,
    namespace: str | None = None,
    kind: str | None = None,
    labels: dict[str, str] | None = None,
    **fields: Any,
) -> Obj:
    """A TrainJob referring to ``runtime`` (of ``kind`` when given), with ``patches`` as its runtimePatches
    (none: no runtimePatches field) and the other ``fields`` of its spec."""
    ref: Obj = {"name": runtime}
    if kind:
        ref["kind"] = kind
    spec: Obj = {"runtimeRef": ref}
    if patches is not None:
        spec["runtimePatches"] = patches
    spec.update(fields)
    return {"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": metadata(name, namespace, labels), "spec": spec}


def training_runtime(
    name: str,
    jobs: list[Obj],
    ml_policy: Obj | None = None,
    kind: str = CLUSTER_RUNTIME,
    namespace: str | None = None,
    labels: dict[str, str] | None = None,
) -> Obj:
    """A (Cluster)TrainingRuntime with the replicated ``jobs`` and ``ml_policy`` (none: no mlPolicy)."""
    spec: Obj = {} if ml_policy is None else {"mlPolicy": ml_policy}
    spec["template"] = {"spec": {"replicatedJobs": jobs}}
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata(name, namespace, labels), "spec": spec}


def trainer_runtime(
    name: str,
    init_containers: list[Obj],
    image: str = "pytorch",
    labels: dict[str, str] | None = None,
    pod: Obj | None = None,
) -> Obj:
    """A ClusterTrainingRuntime with one replicated job, ``node`` (the trainer), whose pod has
    ``init_containers`` and the trainer container ``node``; ``pod`` adds other pod fields."""
    pod_spec = {"initContainers": init_containers, "containers": [{"name": "node", "image": image}], **(pod or {})}
    job = replicated_job("node", pod_spec, labels=trainer_labels())
    return training_runtime(name, [job], {"numNodes": 1, "torch": {}}, labels=labels)


class GoSafeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, but a string go-yaml would read as another type (``n``, ``0o17``, ``1e3``)
    is double-quoted: what it writes reads the same to kubectl and kustomize (issue 30)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if yn.needs_quotes(value) else None)


GoSafeDumper.add_representer(str, _represent_str)


def resource_list(items: list[Any], config: Obj | None = None) -> bytes:
    """The bundle: a ResourceList of ``items`` (and ``config`` as its functionConfig), as kustomize writes it."""
    body: Obj = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        body["functionConfig"] = config
    return yaml.dump(body, Dumper=GoSafeDumper, sort_keys=False).encode()
