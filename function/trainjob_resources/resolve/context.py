"""One TrainJob as the pipeline and its rules see it, computed once and carried through: upstream's
``runtime.Info`` per job (``pkg/runtime/runtime.go``), which every plugin of
``pkg/runtime/framework`` reads in place of a parameter list of its own.

A context starts with what the TrainJob says (``item``, ``trainjob``, ``raw``, ``sites``) and the
render's ``bundle`` and ``config``; ``resolved`` adds the runtime it resolves to and what follows from
it (``per_node``, ``topology``); ``materialize`` adds the ``plan`` of its derived runtime, and the
rewrite what it wrote (``rewritten``, ``derives``, ``respelled``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

from yaml.nodes import MappingNode

from ..krm.resource_list import Item
from ..kube.merge import without_nulls
from ..options.options import Options
from ..trainer.api import CLUSTER_RUNTIME_KIND
from ..trainer.releases import TrainerRelease, release
from ..trainer.sites import ContainerSite, JobPatchSite, job_sites
from ..trainer.topology import Topology
from ..trainer.trainjob_view import TrainJobView
from ..values.records import MutableRecord, Record
from ..values.violations import Violation
from . import moving
from .bundle import Bundle, Identity, Resolution, RuntimeEntry

if TYPE_CHECKING:
    from ..derive.derived_bound import OutputBound
    from ..derive.plan import Plan

R = TypeVar("R")


class Remembering(Protocol):
    """What the rules and the pipeline ask of the render's memo (``pipeline/memo.py``; its
    ``remember`` takes a ``rules.framework`` Stage and Reads)."""

    pod_parts: dict[Any, Any]
    bound: OutputBound

    def remember(
        self, stage: Any, reads: Sequence[Any], context: TrainJobContext, compute: Callable[[], R], subject: Any = None
    ) -> R: ...

    def valid_managers(self, managers: tuple[str, ...]) -> bool: ...

    def derived_name(self, entry: RuntimeEntry, kind: str, namespace: str, overrides: dict[str, Any]) -> str: ...

    def plan(self, context: TrainJobContext, all_effective: dict[Any, Any]) -> Plan: ...


class Respelled(Record):
    """One quantity of resourcesPerNode the rewrite wrote as the API server stores it
    (``rules/stored_quantities.py``): as it was written, as it was shown, and as it is now."""

    __slots__ = ("name", "section", "shown", "stored", "value")

    def __init__(self, section: str, name: str, value: Any, shown: Any, stored: str) -> None:
        self.section: Final = section
        self.name: Final = name
        self.value: Final = value
        self.shown: Final = shown
        self.stored: Final = stored


class TrainJobContext(MutableRecord):
    """Everything one TrainJob's rules may read. Fields set by a later step are ``None`` before it."""

    __slots__ = (
        "_derived",
        "_job_sites",
        "_managers",
        "_moved",
        "_trainjob",
        "api_violations",
        "bundle",
        "config",
        "derives",
        "entry",
        "item",
        "kind",
        "memo",
        "overrides",
        "per_node",
        "plan",
        "policy",
        "raw",
        "records_error",
        "rendered_before",
        "resolution",
        "respelled",
        "rewritten",
        "sites",
        "topology",
        "work",
    )

    def __init__(
        self, item: Item, trainjob: TrainJobView | None, raw: Any, bundle: Bundle, config: Options, memo: Remembering
    ) -> None:
        self.item = item
        self._trainjob = trainjob
        # What the parse stage's rules report: why the records of an earlier render cannot be undone,
        # and the fields Trainer's API refuses (``trainer/trainjob_view.py``).
        self.records_error: str | None = None
        self.api_violations: list[Violation] = []
        self.raw = raw  # the TrainJob as plain data (restored from its records when it carries them)
        self.bundle = bundle
        self.config = config
        self.memo = memo
        self.work: MappingNode | None = None  # the tree being rewritten, when it is not the item's own
        self.rendered_before = False  # whether the TrainJob as read carries an earlier render's records
        self.sites: list[ContainerSite] = []
        self.overrides = False  # whether any ContainerPatch writes resources (null included)
        self.resolution: Resolution | None = None
        self.entry: RuntimeEntry | None = None
        self.per_node: dict[str, Any] | None = None  # spec.trainer.resourcesPerNode as written
        self.topology: Topology | None = None
        self.kind = config.derived_runtime_kind
        self.plan: Plan | None = None  # once materializing
        self.policy: Any = None  # the pods the policy stage checks, once it runs (``rules/policy_pods.py``)
        # Once rewritten: the TrainJob as it is written out (None: as read), whether it points at a
        # derived runtime, and the quantities of resourcesPerNode written as stored (``rules/stored_quantities``).
        self.rewritten: MappingNode | None = None
        self.derives = False
        self.respelled: list[Respelled] = []
        self._derived: Identity | None = None
        self._job_sites: list[JobPatchSite] | None = None
        self._managers: tuple[str, ...] | None = None
        self._moved: tuple[dict[str, Any] | None, str | None] | None = None

    def resolved(self, entry: RuntimeEntry, per_node: dict[str, Any] | None, topology: Topology) -> None:
        self.entry = entry
        self.per_node = per_node
        self.topology = topology

    @property
    def trainjob(self) -> TrainJobView:
        """The TrainJob as Trainer's API reads it (only once parsed)."""
        assert self._trainjob is not None
        return self._trainjob

    @trainjob.setter
    def trainjob(self, trainjob: TrainJobView) -> None:
        self._trainjob = trainjob

    @property
    def namespace(self) -> str:
        return self.item.namespace

    @property
    def native(self) -> bool:
        return self.config.mode == "native"

    @property
    def release(self) -> TrainerRelease:
        """The Kubeflow Trainer release the cluster runs (``trainerVersion``)."""
        return release(self.config.trainer_version)

    @property
    def runtime(self) -> RuntimeEntry:
        """The runtime the TrainJob resolved to (only after ``resolved``)."""
        assert self.entry is not None
        return self.entry

    @property
    def topo(self) -> Topology:
        assert self.topology is not None
        return self.topology

    @property
    def managers(self) -> tuple[str, ...]:
        if self._managers is None:
            self._managers = tuple(p.manager for p in self.trainjob.spec.runtime_patches or [])
        return self._managers

    @property
    def job_sites(self) -> list[JobPatchSite]:
        if self._job_sites is None:
            self._job_sites = list(job_sites(self.trainjob))
        return self._job_sites

    @property
    def patched_sites(self) -> list[ContainerSite]:
        return [s for s in self.sites if s.resources is not None]

    @property
    def moved(self) -> tuple[dict[str, Any] | None, str | None]:
        """What moving the trainer containers' patches would write to resourcesPerNode, or why it
        cannot (``resolve/moving.py``)."""
        if self._moved is None:
            self._moved = moving.moved(
                self.runtime,
                self.sites,
                without_nulls(self.per_node),
                self.topo,
                self.release.per_node_replaces,
                self.trainjob.spec.trainer is not None,
            )
        return self._moved

    @property
    def directives(self) -> bool:
        """Whether a key of the TrainJob may start with ``$``: not when the text it was read from holds
        no ``$`` and no escape (a double-quoted ``"\\x24patch"`` is one too); its provenance annotations,
        which restore() reads, are part of that text."""
        source = self.item.source
        return source is None or "$" in source or "\\" in source

    @property
    def derived_identity(self) -> Identity:
        """The derived runtime this TrainJob's ``plan`` makes (only once it has one)."""
        if self._derived is None:
            assert self.plan is not None
            name = self.memo.derived_name(self.runtime, self.kind, self.namespace, self.plan.overrides)
            self._derived = self.identity(name)
        return self._derived

    def identity(self, name: str) -> Identity:
        """The identity of a runtime of the derived kind called ``name``, for this TrainJob."""
        return (self.kind, "" if self.kind == CLUSTER_RUNTIME_KIND else self.namespace, name)
