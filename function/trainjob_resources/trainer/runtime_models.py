"""Pydantic models of the runtime fields the function reads, open to every other field.

Imported only for a runtime that ``runtime_view`` does not read directly: one that pydantic would
coerce (``replicas: "2"``) or reject. Their results and error messages are the function's rules
for runtimes; the direct reading accepts only what these models take unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel

from .models import ObjectMeta


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", alias_generator=to_camel, populate_by_name=True, frozen=True)


class RuntimeContainer(_Open):
    name: str
    resources: dict[str, Any] | None = None
    restart_policy: str | None = None

    @field_validator("resources")
    @classmethod
    def _resource_maps(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        for key in ("limits", "requests"):
            if value is not None and value.get(key) is not None and not isinstance(value[key], dict):
                raise ValueError(f"{key} must be a map of resource names to quantities")
        return value


class RuntimePodSpec(_Open):
    containers: list[RuntimeContainer] = []
    init_containers: list[RuntimeContainer] = []


class RuntimePodTemplate(_Open):
    spec: RuntimePodSpec = RuntimePodSpec()


class RuntimeJobSpec(_Open):
    parallelism: int | None = None
    template: RuntimePodTemplate = RuntimePodTemplate()


class RuntimeJobMeta(_Open):
    labels: dict[str, str] = {}


class RuntimeJobTemplate(_Open):
    metadata: RuntimeJobMeta = RuntimeJobMeta()
    spec: RuntimeJobSpec = RuntimeJobSpec()


class RuntimeReplicatedJob(_Open):
    name: str
    replicas: int | None = None
    template: RuntimeJobTemplate = RuntimeJobTemplate()


class RuntimeJobSetSpec(_Open):
    replicated_jobs: list[RuntimeReplicatedJob] = []


class RuntimeJobSetTemplate(_Open):
    spec: RuntimeJobSetSpec = RuntimeJobSetSpec()


class MPIPolicy(_Open):
    run_launcher_as_node: bool | None = None


class MLPolicy(_Open):
    num_nodes: int | None = None
    mpi: MPIPolicy | None = None


class RuntimeSpec(_Open):
    ml_policy: MLPolicy | None = None
    template: RuntimeJobSetTemplate = RuntimeJobSetTemplate()


class Runtime(_Open):
    metadata: ObjectMeta = ObjectMeta()
    spec: RuntimeSpec
