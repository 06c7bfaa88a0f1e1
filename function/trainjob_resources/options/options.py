"""The options the checks read, as a protocol, and their defaults without pydantic.

Most renders have no functionConfig: they run on the defaults, and importing pydantic for them
would cost more than a small render. ``config.FunctionConfig`` (pydantic) validates a
functionConfig when there is one and has these attributes; ``DEFAULTS`` holds what
``FunctionConfig()`` holds (tests/test_trainjob_view.py compares them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, Protocol

from ..krm.resource_list import Item
from ..trainer.releases import NEWEST

CONFIG_API_VERSION: Final = "fn.trainjob-resources.io/v1alpha1"
CONFIG_KIND: Final = "TrainJobResources"
# The roles ``maxPerRole`` caps (rules/max_per_role.py ``container_role`` says which container has which).
ROLES = ("trainer", "initializer", "container", "sidecar", "initContainer")
DEFAULT_GPU_RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-*", "amd.com/gpu", "gpu.intel.com/*")


class Options(Protocol):
    @property
    def mode(self) -> Literal["materialize", "native"]: ...
    @property
    def derived_runtime_kind(self) -> Literal["TrainingRuntime", "ClusterTrainingRuntime"]: ...
    @property
    def trainer_version(self) -> str: ...
    @property
    def trainer_resources(self) -> Literal["error", "moveToResourcesPerNode"]: ...
    @property
    def namespace_policy(self) -> Literal["error", "warning", "off"]: ...
    @property
    def max_per_container(self) -> dict[str, str]: ...
    @property
    def max_per_role(self) -> dict[str, dict[str, str]]: ...
    @property
    def allowed_resources(self) -> tuple[str, ...] | None: ...
    @property
    def allow_gpu_in_sidecars(self) -> bool: ...
    @property
    def gpu_resources(self) -> tuple[str, ...]: ...
    @property
    def derived_runtime_metadata(self) -> Mapping[str, Mapping[str, str]]: ...
    @property
    def results(self) -> Literal["all", "summary", "problems"]: ...
    def is_gpu(self, resource: str) -> bool: ...


class Defaults:
    """``FunctionConfig()``'s values."""

    __slots__ = ()
    mode: Final = "materialize"
    derived_runtime_kind: Final = "TrainingRuntime"
    trainer_version: Final = NEWEST
    trainer_resources: Final = "error"
    namespace_policy: Final = "error"
    allowed_resources: Final[tuple[str, ...] | None] = None
    allow_gpu_in_sidecars: Final = True
    gpu_resources: Final = DEFAULT_GPU_RESOURCES
    results: Final = "all"

    @property
    def max_per_container(self) -> dict[str, str]:
        return {}

    @property
    def max_per_role(self) -> dict[str, dict[str, str]]:
        return {}

    @property
    def derived_runtime_metadata(self) -> Mapping[str, Mapping[str, str]]:
        return {}

    def is_gpu(self, resource: str) -> bool:
        """Whether ``gpuResources`` names ``resource`` (an entry ending in ``*`` is a prefix)."""
        return any(resource.startswith(p[:-1]) if p.endswith("*") else resource == p for p in self.gpu_resources)


DEFAULTS: Final = Defaults()


def with_option(config: Item | None, option: str, value: str) -> Item:
    """The functionConfig with ``option`` set to ``value``, or a ConfigMap holding only that option
    when there was none (a command-line flag, or what ``check`` reads from the cluster)."""
    from yaml.nodes import MappingNode

    from ..yamltext import yamlnodes as yn

    if config is None:
        node = yn.from_python({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "trainjob-resources"}})
        config = Item(node)
    section = "spec" if config.kind == CONFIG_KIND else "data"
    node = config.node
    assert isinstance(node, MappingNode)
    yn.set_key(yn.ensure_map(node, section), option, yn.str_node(value))
    config.touched()
    return config
