"""What one render computes once and reuses: bundles repeat the same few sizes across many
TrainJobs, so validating, naming and deriving each distinct case once keeps the cost in what is
distinct, not in what is repeated. A stage's findings are kept under the key of what its rules
declare they read (``rules/framework.py``), never under a key written by hand."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..derive.derived_bound import OutputBound
from ..derive.materialize import Derived, derive_runtime, derived_name
from ..derive.plan import Plan, make_plan
from ..derive.provenance import dump
from ..resolve.bundle import Identity
from ..rules.framework import Read, Stage, key_of, shape_of
from ..trainer.effective import ContainerKey, Effective

if TYPE_CHECKING:
    from ..report.explain import PodParts
    from ..resolve.bundle import RuntimeEntry
    from ..resolve.context import TrainJobContext

R = TypeVar("R")


class Memo:
    __slots__ = (
        "_dumped",
        "_names",
        "_plans",
        "_results",
        "_shared",
        "bound",
        "derived",
        "managers",
        "pod_parts",
        "spellings",
    )

    def __init__(self) -> None:
        self._results: dict[tuple[str, Hashable], Any] = {}
        self._shared: dict[tuple[str, Hashable], Any] = {}
        self.managers: dict[tuple[str, ...], bool] = {}  # whether a list of managers is valid
        self.pod_parts: dict[Any, PodParts] = {}  # report/explain.py's, by what they read
        # the last item keeps the effective resources alive, so that their ids in the key stay theirs
        self._plans: dict[Any, tuple[Plan, Any]] = {}
        self._names: dict[tuple[int, str, str, str], str] = {}
        self._dumped: dict[int, tuple[str, dict[str, Any]]] = {}
        self.derived: dict[Identity, Derived] = {}
        self.spellings: dict[Identity, str] = {}  # the overrides as written into each derived runtime
        self.bound = OutputBound()  # the derived runtimes admitted, in the TrainJobs' order

    def remember(
        self,
        stage: Stage,
        reads: Sequence[Read],
        context: TrainJobContext,
        compute: Callable[[], R],
        subject: Any = None,
    ) -> R:
        """``compute()``, once per key of ``reads``; where the stage allows it, a result it calls
        shareable serves every TrainJob of the same shape."""
        shape: tuple[str, Hashable] | None = None
        if stage.shareable is not None:
            shape = (stage.name, shape_of(reads, context, subject))
            shared = self._shared.get(shape)
            if shared is not None:
                return shared  # type: ignore[no-any-return]
        key = (stage.name, key_of(reads, context, subject))
        found = self._results.get(key)
        if found is None:
            found = self._results[key] = compute()
            if shape is not None and stage.shareable is not None and stage.shareable(found):
                self._shared[shape] = found
        return found

    def valid_managers(self, managers: tuple[str, ...]) -> bool:
        valid = self.managers.get(managers)
        if valid is None:
            from ..rules.managers import validate_managers

            valid = self.managers[managers] = not validate_managers(list(managers))
        return valid

    def plan(self, context: TrainJobContext, all_effective: dict[ContainerKey, Effective]) -> Plan:
        """``make_plan``, once per distinct case (the effective resources come from this memo, so
        their identity stands for their content, the resources as written included)."""
        topo = context.topo
        key = (id(context.entry), topo.trainers, tuple((k, id(e)) for k, e in all_effective.items()))
        found = self._plans.get(key)
        if found is None:
            found = self._plans[key] = (make_plan(all_effective, context.sites, topo), all_effective)
        return found[0]

    def derived_name(self, entry: RuntimeEntry, kind: str, namespace: str, overrides: dict[str, Any]) -> str:
        # A memoized plan's overrides are one object for all its TrainJobs: dumped once per object
        # (``_dumped`` keeps it alive, so that its id stays its own).
        known = self._dumped.get(id(overrides))
        if known is None:
            known = self._dumped[id(overrides)] = (dump(overrides), overrides)
        key = (id(entry), kind, namespace, known[0])  # entries live as long as this render
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = derived_name(entry.item, kind, namespace, overrides, entry.cluster_name)
        return name

    def derive(self, identity: Identity, entry: RuntimeEntry, plan: Plan) -> Derived:
        """The derived runtime of ``identity``, made once. TrainJobs that spell one override
        differently (``64Gi``, ``65536Mi``) share it: it is written with the spelling that sorts
        first, so that the order of the input changes nothing."""
        current = self.derived.get(identity)
        if current is not None and self.spellings[identity] <= plan.spelling:
            return current
        # Made when the bound admitted this derived runtime (in this process, or at the merge).
        written_base = self.bound.written_base(entry.item)
        assert written_base is not None
        derived = derive_runtime(entry.item, identity, plan.effective, plan.overrides, entry.cluster_name, written_base)
        self.derived[identity] = derived
        self.spellings[identity] = plan.spelling
        return derived
