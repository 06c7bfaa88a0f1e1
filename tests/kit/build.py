"""Builders of the objects the tests feed the function: TrainJobs, training runtimes, their patches, bundles.

After upstream Trainer's test wrappers (kubeflow/trainer pkg/util/testing/wrapper.go: MakeTrainJobWrapper,
MakeClusterTrainingRuntimeWrapper, ...): one builder per kind whose defaults a test overrides, so that a
test writes only what it is about. Each call returns a new plain object (dicts and lists, as
``yaml.safe_load`` gives them) that the test may edit freely; ``yaml_text``, ``items_text`` and
``resource_list`` write them as a file, the entries of a ResourceList's items, or the ResourceList.
"""

from __future__ import annotations

from typing import Any

import yaml
from trainjob_resources.yamltext import yamlnodes as yn

API_VERSION = "trainer.kubeflow.org/v1alpha1"
CLUSTER_RUNTIME = "ClusterTrainingRuntime"
CONFIG_API_VERSION = "fn.trainjob-resources.io/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
FRAMEWORK = "trainer.kubeflow.org/framework"
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


def function_config(name: str = "trainjob-resources", **spec: Any) -> Obj:
    """The function's typed functionConfig, ``TrainJobResources`` ``name``, with the options ``spec``."""
    return {"apiVersion": CONFIG_API_VERSION, "kind": "TrainJobResources", "metadata": {"name": name}, "spec": spec}


def torch_policy() -> Obj:
    """The mlPolicy of a one-node torch runtime."""
    return {"numNodes": 1, "torch": {}}


def trainer_job(pod_spec: Obj) -> Obj:
    """The replicated job ``node`` labelled as the trainer, whose pod template's spec is ``pod_spec``."""
    return replicated_job("node", pod_spec, labels=trainer_labels())


def trainer_runtime(
    name: str,
    init_containers: list[Obj] | None = None,
    image: str = "pytorch",
    labels: dict[str, str] | None = None,
    pod: Obj | None = None,
    containers: list[Obj] | None = None,
) -> Obj:
    """A one-node torch ClusterTrainingRuntime with one replicated job, ``node`` (the trainer), whose pod
    has ``init_containers`` (none: no initContainers field) and ``containers`` (none: the trainer
    container ``node`` of ``image``); ``pod`` adds other pod fields."""
    pod_spec: Obj = {} if init_containers is None else {"initContainers": init_containers}
    pod_spec["containers"] = [{"name": "node", "image": image}] if containers is None else containers
    return training_runtime(name, [trainer_job({**pod_spec, **(pod or {})})], torch_policy(), labels=labels)


def sized_trainjob(name: str, limits: Obj, requests: Obj | None = None, namespace: str = "team-a") -> Obj:
    """A TrainJob of runtime ``torch`` that sizes its trainer's ``loader`` sidecar (as the hostile and bound
    suites' runtime has it) to ``limits`` (and ``requests``), by the manager ``user.example.com/tuner``."""
    resources: Obj = {"limits": limits} if requests is None else {"limits": limits, "requests": requests}
    patch = container_patch(
        "node", "initContainers", {"name": "loader", "resources": resources}, "user.example.com/tuner"
    )
    return trainjob(name, "torch", [patch], namespace=namespace)


class Anchored(str):
    """A string that ``yaml_text`` writes once with an anchor and, where the same object stands again, as
    an alias of it (``&id001 …`` then ``*id001``): how a tenant makes a small file expand."""


def aliased_env(value_bytes: int, aliases: int) -> list[Obj]:
    """Env entries ``E0`` to ``E<aliases>`` whose one value, ``value_bytes`` of ``x``, is anchored at ``E0``
    and aliased by every other."""
    value = Anchored("x" * value_bytes)
    return [{"name": f"E{i}", "value": value} for i in range(aliases + 1)]


def aliased_runtime(value_bytes: int, aliases: int) -> Obj:
    """Issue 46's runtime ``torch``: a ``loader`` sidecar, and a trainer whose one env value of ``value_bytes``
    is anchored and aliased ``aliases`` times (a small file that is large as written)."""
    loader = {"name": "loader", "image": "busybox", "restartPolicy": "Always"}
    trainer = {"name": "node", "image": "pytorch/pytorch", "env": aliased_env(value_bytes, aliases)}
    return trainer_runtime("torch", [loader], containers=[trainer])


class GoSafeDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, but a string go-yaml would read as another type (``n``, ``0o17``, ``1e3``)
    is double-quoted: what it writes reads the same to kubectl and kustomize (issue 30); an ``Anchored``
    string is anchored and aliased, as a mapping or a list is."""

    def ignore_aliases(self, data: Any) -> bool:
        return not isinstance(data, Anchored) and super().ignore_aliases(data)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"' if yn.needs_quotes(value) else None)


GoSafeDumper.add_representer(str, _represent_str)
GoSafeDumper.add_representer(Anchored, _represent_str)


def yaml_text(*documents: Any) -> str:
    """The documents as one YAML stream, ``---`` between them, block style, keys in the order given."""
    return yaml.dump_all(documents, Dumper=GoSafeDumper, sort_keys=False, width=1 << 20)


def items_text(*documents: Any) -> str:
    """The documents as the entries of a YAML block sequence (items of a ResourceList, as ``hostile.bundle``
    takes them)."""
    return yaml.dump(list(documents), Dumper=GoSafeDumper, sort_keys=False, width=1 << 20)


def resource_list(items: list[Any], config: Obj | None = None) -> bytes:
    """The bundle: a ResourceList of ``items`` (and ``config`` as its functionConfig), as kustomize writes it."""
    body: Obj = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        body["functionConfig"] = config
    return yaml.dump(body, Dumper=GoSafeDumper, sort_keys=False).encode()
