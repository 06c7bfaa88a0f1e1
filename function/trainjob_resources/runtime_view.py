"""What a runtime's JobSet template says about its replicated jobs and containers."""

from __future__ import annotations

from typing import Any, Final, Literal

from . import fieldpath
from .models import Runtime, RuntimeContainer
from .records import Record

ContainerList = Literal["initContainers", "containers"]

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_ANCESTOR = "trainer"
TRAINER_CONTAINER = "node"
RESERVED_ENV_CONTAINERS = ("node", "dataset-initializer", "model-initializer")


class ContainerInfo(Record):
    __slots__ = ("container_list", "index", "job", "job_index", "name", "resources", "restart_policy")

    def __init__(
        self,
        job: str,
        job_index: int,
        container_list: ContainerList,
        index: int,
        name: str,
        resources: dict[str, Any],
        restart_policy: str | None,
    ) -> None:
        self.job: Final = job
        self.job_index: Final = job_index
        self.container_list: Final = container_list
        self.index: Final = index
        self.name: Final = name
        self.resources: Final = resources
        self.restart_policy: Final = restart_policy

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
    __slots__ = ("containers", "index", "is_mpi_launcher_node", "is_trainer", "name")

    def __init__(
        self,
        name: str,
        index: int,
        is_trainer: bool,
        is_mpi_launcher_node: bool,
        containers: dict[tuple[ContainerList, str], ContainerInfo],
    ) -> None:
        self.name: Final = name
        self.index: Final = index
        self.is_trainer: Final = is_trainer
        self.is_mpi_launcher_node: Final = is_mpi_launcher_node
        self.containers: Final = containers

    def trainer_container(self, container_list: ContainerList, name: str) -> bool:
        """Whether ``resourcesPerNode`` sizes this container (upstream's rule)."""
        return (
            (self.is_trainer or self.is_mpi_launcher_node)
            and container_list == "containers"
            and (name == TRAINER_CONTAINER)
        )

    def find(self, name: str) -> ContainerInfo | None:
        return self.containers.get(("containers", name)) or self.containers.get(("initContainers", name))


def jobs_of(runtime: Runtime) -> dict[str, JobInfo]:
    ml_policy = runtime.spec.ml_policy
    launcher_as_node = bool(ml_policy and ml_policy.mpi and ml_policy.mpi.run_launcher_as_node)
    jobs: dict[str, JobInfo] = {}
    for j, job in enumerate(runtime.spec.template.spec.replicated_jobs):
        pod = job.template.spec.template.spec
        containers: dict[tuple[ContainerList, str], ContainerInfo] = {}
        lists: tuple[tuple[ContainerList, list[RuntimeContainer]], ...] = (
            ("initContainers", pod.init_containers),
            ("containers", pod.containers),
        )
        for list_name, entries in lists:
            for i, c in enumerate(entries):
                containers[(list_name, c.name)] = ContainerInfo(
                    job.name, j, list_name, i, c.name, dict(c.resources or {}), c.restart_policy
                )
        is_trainer = job.template.metadata.labels.get(ANCESTOR_LABEL) == TRAINER_ANCESTOR
        jobs[job.name] = JobInfo(job.name, j, is_trainer, launcher_as_node and job.name == "launcher", containers)
    return jobs
