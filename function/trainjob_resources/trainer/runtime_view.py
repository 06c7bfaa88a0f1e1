"""What a runtime's JobSet template says about its replicated jobs and containers.

A runtime is read directly from its plain data, without building pydantic models (start-up time:
the function runs on every render). The reading takes only what ``runtime_models`` would accept
unchanged; any other runtime (a value pydantic coerces, such as ``replicas: "2"``, or rejects) is
validated by those models, so results and error messages are theirs in every case. A class that
reads what a ``runtime_models`` class is has its name with ``View`` after it (``RuntimeSpecView``).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from ..values import fieldpath
from ..values.records import Record
from ..values.violations import Violation

ContainerList = Literal["initContainers", "containers"]

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_ANCESTOR = "trainer"
TRAINER_CONTAINER = "node"
RESERVED_ENV_CONTAINERS = ("node", "dataset-initializer", "model-initializer")


class ContainerInfo(Record):
    __slots__ = ("container_list", "index", "job", "job_index", "name", "resources", "restart_policy")

    def __init__(
        self, job: str, job_index: int, container_list: ContainerList, index: int, container: RuntimeContainerView
    ) -> None:
        self.job: Final = job
        self.job_index: Final = job_index
        self.container_list: Final = container_list
        self.index: Final = index
        self.name: Final = container.name
        self.resources: Final[dict[str, Any]] = dict(container.resources or {})
        self.restart_policy: Final = container.restart_policy

    @property
    def role(self) -> str:
        if self.container_list == "containers":
            return "container"
        return "sidecar" if self.restart_policy == "Always" else "initContainer"

    @property
    def path(self) -> str:
        """The container's path inside the runtime object."""
        job = fieldpath.index("spec.template.spec.replicatedJobs", self.job_index)
        return fieldpath.index(f"{job}.template.spec.template.spec.{self.container_list}", self.index)


class JobInfo(Record):
    """A replicated job's containers. Which of them is the trainer's depends on the TrainJob's
    patches too: ``topology`` decides it."""

    __slots__ = ("containers", "index", "name")

    def __init__(self, name: str, index: int, containers: dict[tuple[ContainerList, str], ContainerInfo]) -> None:
        self.name: Final = name
        self.index: Final = index
        self.containers: Final = containers

    def find(self, name: str) -> ContainerInfo | None:
        return self.containers.get(("containers", name)) or self.containers.get(("initContainers", name))


class RuntimeContainerView(Record):
    __slots__ = ("mounts", "name", "resources", "restart_policy")

    def __init__(
        self,
        name: str,
        resources: dict[str, Any] | None,
        restart_policy: str | None,
        mounts: tuple[str, ...] = (),  # the names of its volumeMounts
    ) -> None:
        self.name: Final = name
        self.resources: Final = resources
        self.restart_policy: Final = restart_policy
        self.mounts: Final = mounts


class ReplicatedJob(Record):
    """One replicated job of the runtime's JobSet template, in the order the template lists them."""

    __slots__ = (
        "completions",
        "containers",
        "init_containers",
        "labels",
        "name",
        "parallelism",
        "pod_spec",
        "replicas",
    )

    def __init__(
        self,
        name: str,
        replicas: int | None,
        labels: dict[str, str],
        counts: tuple[int | None, Any],  # the Job spec's parallelism and completions, as written
        pod_spec: dict[str, Any],  # the pod template's other fields (priorityClassName, overhead, ...)
        containers: tuple[list[RuntimeContainerView], list[RuntimeContainerView]],  # initContainers, containers
    ) -> None:
        self.name: Final = name
        self.replicas: Final = replicas
        self.labels: Final = labels
        self.parallelism: Final = counts[0]
        self.completions: Final = counts[1]
        self.pod_spec: Final = pod_spec
        self.init_containers: Final = containers[0]
        self.containers: Final = containers[1]


class MPIPolicyView(Record):
    __slots__ = ("run_launcher_as_node",)

    def __init__(self, run_launcher_as_node: bool | None) -> None:
        self.run_launcher_as_node: Final = run_launcher_as_node


# The ML policies whose plugins read spec.trainer's presence: torch, JAX and XGBoost give the trainer
# container env and port 29500 only when the TrainJob has one (``if trainJob.Spec.Trainer != nil`` in
# EnforceMLPolicy of pkg/runtime/framework/plugins/torch/torch.go, jax/jax.go, xgboost/xgboost.go), and
# flux (flux/flux.go) needs spec.trainer.numNodes (seen on the control plane).
SPEC_TRAINER_POLICIES: Final = ("torch", "jax", "xgboost", "flux")


class MLPolicyView(Record):
    __slots__ = ("mpi", "num_nodes", "policies", "torch")

    def __init__(
        self, num_nodes: int | None, mpi: MPIPolicyView | None, torch: bool = False, policies: tuple[str, ...] = ()
    ) -> None:
        self.num_nodes: Final = num_nodes
        self.mpi: Final = mpi
        self.torch: Final = torch  # mlPolicy.torch is set: the torch plugin (and torchtune) applies
        self.policies: Final = policies  # which of SPEC_TRAINER_POLICIES mlPolicy sets


class RuntimeSpecView(Record):
    """What the function reads of a runtime's ``spec``."""

    __slots__ = ("ml_policy", "replicated_jobs")

    def __init__(self, ml_policy: MLPolicyView | None, replicated_jobs: list[ReplicatedJob]) -> None:
        self.ml_policy: Final = ml_policy
        self.replicated_jobs: Final = replicated_jobs


def parse_runtime(value: Any) -> tuple[RuntimeSpecView | None, list[Violation]]:
    """The runtime's spec as the function reads it, or a violation for every field the models reject."""
    try:
        return _runtime(value, trusted=False), []
    except _Unusual:
        pass
    from pydantic import ValidationError

    from .models import violations_from
    from .runtime_models import Runtime

    try:
        model = Runtime.model_validate(value)
    except ValidationError as err:
        return None, violations_from(err, Runtime)
    return _runtime(model.model_dump(by_alias=True), trusted=True), []


class _Unusual(Exception):
    """A value the direct reading leaves to the pydantic models."""


_ABSENT: Final = object()
_POD_FIELDS = ("containers", "initContainers")


def _runtime(value: Any, trusted: bool) -> RuntimeSpecView:
    """``trusted``: ``value`` is a validated model's dump, so a snake_case key in it is an extra field."""
    runtime = _model(value, required=True)
    metadata = _model(runtime.get("metadata", _ABSENT))
    for key in ("name", "namespace"):
        if type(metadata.get(key, "")) is not str:
            raise _Unusual
    spec = _model(runtime.get("spec", _ABSENT), required=True)
    ml_policy = _optional_model(_get(spec, "mlPolicy", "ml_policy", trusted))
    policy: MLPolicyView | None = None
    if ml_policy is not None:
        mpi = _optional_model(ml_policy.get("mpi"))
        launcher = _get(mpi, "runLauncherAsNode", "run_launcher_as_node", trusted) if mpi is not None else None
        if launcher not in (None, _ABSENT) and type(launcher) is not bool:
            raise _Unusual
        num_nodes = _optional_int(_get(ml_policy, "numNodes", "num_nodes", trusted))
        torch = ml_policy.get("torch") is not None
        policies = tuple(p for p in SPEC_TRAINER_POLICIES if ml_policy.get(p) is not None)
        policy = MLPolicyView(
            num_nodes,
            None if mpi is None else MPIPolicyView(None if launcher is _ABSENT else launcher),
            torch,
            policies,
        )
    jobset = _model(_model(spec.get("template", _ABSENT)).get("spec", _ABSENT))
    jobs = [_job(job, trusted) for job in _models(_get(jobset, "replicatedJobs", "replicated_jobs", trusted))]
    return RuntimeSpecView(policy, jobs)


def _job(job: dict[str, Any], trusted: bool) -> ReplicatedJob:
    template = _model(job.get("template", _ABSENT))
    labels = _model(template.get("metadata", _ABSENT)).get("labels", _ABSENT)
    labels = {} if labels is _ABSENT else _model(labels)
    if any(type(v) is not str for v in labels.values()):
        raise _Unusual
    job_spec = _model(template.get("spec", _ABSENT))
    pod = _model(_model(job_spec.get("template", _ABSENT)).get("spec", _ABSENT))
    lists = [
        [_container(c, trusted) for c in _models(_get(pod, alias, name, trusted))]
        for alias, name in (("initContainers", "init_containers"), ("containers", "containers"))
    ]
    return ReplicatedJob(
        _string(job.get("name", _ABSENT)),
        _optional_int(job.get("replicas", _ABSENT)),
        labels,
        (_optional_int(job_spec.get("parallelism", _ABSENT)), job_spec.get("completions")),
        {k: v for k, v in pod.items() if k not in _POD_FIELDS},
        (lists[0], lists[1]),
    )


def _container(container: dict[str, Any], trusted: bool) -> RuntimeContainerView:
    resources = container.get("resources")
    if resources is not None:
        resources = _model(resources)
        if any(resources.get(key) is not None and type(resources[key]) is not dict for key in ("limits", "requests")):
            raise _Unusual
    restart_policy = _get(container, "restartPolicy", "restart_policy", trusted)
    if restart_policy is _ABSENT or restart_policy is None:
        restart_policy = None
    elif type(restart_policy) is not str:
        raise _Unusual
    mounts = _get(container, "volumeMounts", "volume_mounts", trusted)
    names = (
        tuple(m["name"] for m in mounts if type(m) is dict and type(m.get("name")) is str)
        if type(mounts) is list
        else ()
    )
    return RuntimeContainerView(_string(container.get("name", _ABSENT)), resources, restart_policy, names)


def _get(mapping: dict[str, Any], alias: str, name: str, trusted: bool) -> Any:
    if not trusted and name != alias and name in mapping:
        raise _Unusual  # the models read a field by its Python name too
    return mapping.get(alias, _ABSENT)


def _model(value: Any, required: bool = False) -> dict[str, Any]:
    """A nested model's data: a dict with string keys (the models reject any other key); {} when absent."""
    if value is _ABSENT and not required:
        return {}
    if type(value) is not dict or not all(type(key) is str for key in value):
        raise _Unusual
    return value


def _optional_model(value: Any) -> dict[str, Any] | None:
    return None if value is None or value is _ABSENT else _model(value)


def _models(value: Any) -> list[dict[str, Any]]:
    if value is _ABSENT:
        return []
    if type(value) is not list:
        raise _Unusual
    return [_model(entry, required=True) for entry in value]


def _optional_int(value: Any) -> int | None:
    if value is None or value is _ABSENT:
        return None
    if type(value) is not int:
        raise _Unusual
    return value


def _string(value: Any) -> str:
    if type(value) is not str:
        raise _Unusual
    return value


def jobs_of(runtime: RuntimeSpecView) -> dict[str, JobInfo]:
    jobs: dict[str, JobInfo] = {}
    for j, job in enumerate(runtime.replicated_jobs):
        containers: dict[tuple[ContainerList, str], ContainerInfo] = {}
        lists: tuple[tuple[ContainerList, list[RuntimeContainerView]], ...] = (
            ("initContainers", job.init_containers),
            ("containers", job.containers),
        )
        for list_name, entries in lists:
            for i, c in enumerate(entries):
                containers[(list_name, c.name)] = ContainerInfo(job.name, j, list_name, i, c)
        jobs[job.name] = JobInfo(job.name, j, containers)
    return jobs
