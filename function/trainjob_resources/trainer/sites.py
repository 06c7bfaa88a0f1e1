"""Every ContainerPatch of a TrainJob, in the order upstream applies them, with its field path.

The order is ``runtimePatches`` list order, then each patch's entries as written
(kubeflow/trainer ``pkg/runtime/core/trainingruntime.go`` ``mergeRuntimePatches``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..kube.merge import MAPPINGS
from ..values import fieldpath
from ..values.keys import CONTAINER_LISTS
from ..values.records import Record
from .api import JOB_CHAIN, POD_CHAIN
from .runtime_view import ContainerList
from .trainjob_view import ContainerPatchView, TrainJobView

RESOURCES = "resources"


class JobPatchSite(Record):
    __slots__ = ("job", "job_index", "manager", "patch_index")

    def __init__(self, patch_index: int, manager: str, job_index: int, job: str) -> None:
        self.patch_index: Final = patch_index
        self.manager: Final = manager
        self.job_index: Final = job_index
        self.job: Final = job

    @property
    def path(self) -> str:
        patch = fieldpath.index("spec.runtimePatches", self.patch_index)
        return fieldpath.index(f"{patch}.trainingRuntimeSpec.template.spec.replicatedJobs", self.job_index)


class ContainerSite(Record):
    """One ContainerPatch; ``resources`` is the raw patch (None values delete keys) or None."""

    __slots__ = ("container_list", "index", "job_site", "patch", "resources")

    def __init__(
        self,
        job_site: JobPatchSite,
        container_list: ContainerList,
        index: int,
        patch: ContainerPatchView,
        resources: Mapping[str, Any] | None,
    ) -> None:
        self.job_site: Final = job_site
        self.container_list: Final = container_list
        self.index: Final = index
        self.patch: Final = patch
        self.resources: Final = resources

    @property
    def name(self) -> str:
        return self.patch.name

    @property
    def job(self) -> str:
        return self.job_site.job

    @property
    def manager(self) -> str:
        return self.job_site.manager

    @property
    def path(self) -> str:
        return fieldpath.index(f"{self.job_site.path}.template.spec.template.spec.{self.container_list}", self.index)

    @property
    def resources_path(self) -> str:
        return f"{self.path}.{RESOURCES}"

    @property
    def key(self) -> tuple[str, ContainerList, str]:
        return (self.job, self.container_list, self.name)


def _raw(value: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            value = value[key] if isinstance(value, list) and key < len(value) else None
        else:
            value = value.get(key) if isinstance(value, MAPPINGS) else None
    return value


def job_sites(trainjob: TrainJobView) -> Iterator[JobPatchSite]:
    for p, patch in enumerate(trainjob.spec.runtime_patches or []):
        spec = patch.training_runtime_spec
        jobset = spec.template.spec if spec and spec.template else None
        for j, job in enumerate((jobset.replicated_jobs if jobset else None) or []):
            yield JobPatchSite(p, patch.manager, j, job.name)


def container_sites(trainjob: TrainJobView, raw: Mapping[str, Any]) -> Iterator[ContainerSite]:
    """``raw`` is the TrainJob as plain data: resources are read from it so that nulls survive."""
    patches = trainjob.spec.runtime_patches or []
    for site in job_sites(trainjob):
        spec = patches[site.patch_index].training_runtime_spec
        assert spec is not None and spec.template is not None and spec.template.spec is not None
        job = (spec.template.spec.replicated_jobs or [])[site.job_index]
        pod = (
            job.template.spec.template.spec
            if job.template and job.template.spec and job.template.spec.template
            else None
        )
        if pod is None:
            continue
        raw_pod = _raw(raw, "spec", "runtimePatches", site.patch_index, *JOB_CHAIN, site.job_index, *POD_CHAIN)
        lists: tuple[tuple[ContainerList, list[ContainerPatchView] | None], ...] = (
            ("initContainers", pod.init_containers),
            ("containers", pod.containers),
        )
        for list_name, entries in lists:
            for c, container in enumerate(entries or []):
                resources = None
                if container.resources is not None:
                    resources = _raw(raw_pod, list_name, c, RESOURCES)
                yield ContainerSite(site, list_name, c, container, resources)


def writes_resources(raw: Any) -> bool:
    """Whether any ContainerPatch has a ``resources`` key, ``null`` included (which the models read
    as absent): upstream's ContainerPatch has no such field, so it must not reach the cluster."""
    return next(resources_paths(raw), None) is not None


def resources_paths(raw: Any) -> Iterator[str]:
    """The field path of every ContainerPatch's ``resources`` key, ``null`` included, in order."""
    patches = raw.get("spec", {}).get("runtimePatches") if isinstance(raw, dict) else None
    for p, patch in enumerate(patches if isinstance(patches, list) else []):
        jobs: Any = patch
        for key in JOB_CHAIN:
            jobs = jobs.get(key) if isinstance(jobs, dict) else None
        for j, job in enumerate(jobs if isinstance(jobs, list) else []):
            pod: Any = job
            for key in POD_CHAIN:
                pod = pod.get(key) if isinstance(pod, dict) else None
            for list_name in CONTAINER_LISTS:
                entries = pod.get(list_name) if isinstance(pod, dict) else None
                for c, entry in enumerate(entries if isinstance(entries, list) else []):
                    if isinstance(entry, dict) and RESOURCES in entry:
                        job_path = ".".join([f"spec.runtimePatches[{p}]", *JOB_CHAIN])
                        pod_path = ".".join([f"{job_path}[{j}]", *POD_CHAIN])
                        yield f"{pod_path}.{list_name}[{c}].{RESOURCES}"
