"""What processing one TrainJob produced (``Outcome``), and the derived runtime it points at
(``DeriveRequest``)."""

from __future__ import annotations

from typing import Final

from yaml.nodes import MappingNode

from ..derive.plan import Plan
from ..resolve.bundle import Identity
from ..values.records import MutableRecord, Record
from ..values.violations import Violation


class Outcome(MutableRecord):
    """What processing one TrainJob produced."""

    __slots__ = ("changes", "derive", "node", "unchecked", "violations")

    def __init__(self, violations: list[Violation] | None = None, unchecked: bool = False) -> None:
        self.violations = [] if violations is None else violations
        self.node: MappingNode | None = None  # the rewritten TrainJob, when it changed
        self.derive: DeriveRequest | None = None  # the derived runtime it now points at
        self.changes: list[str] = []
        self.unchecked = unchecked  # passed through: its runtime is not in the bundle

    @property
    def failed(self) -> bool:
        return any(v.severity == "error" for v in self.violations)


class DeriveRequest(Record):
    """A derived runtime a rewritten TrainJob points at, made once (``Memo.derive``) in this process:
    by ``TrainJobWork.run`` for the TrainJobs processed here, at the merge for those processed in
    another process; in input order either way."""

    __slots__ = ("identity", "plan", "runtime")

    def __init__(self, identity: Identity, runtime: Identity, plan: Plan) -> None:
        self.identity: Final = identity
        self.runtime: Final = runtime  # the base runtime's key in Bundle.runtimes
        self.plan: Final = plan

    def __reduce__(self) -> tuple[type[DeriveRequest], tuple[Identity, Identity, Plan]]:
        return DeriveRequest, (self.identity, self.runtime, self.plan)
