"""The TrainJobs of a render as work to be processed by ranges, here or in a fork of this process
(``cli/fan_out.py``): each TrainJob processed on its own (``contribute``, by the per-TrainJob list of
stages that ``process.py`` hands in) into a ``Contribution``, plain data merged in input order by the
emit stage (``emit.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..derive.derived_bound import BOUND_MESSAGE
from ..derive.provenance import recheck_as_written
from ..krm.resource_list import FileRef, Item, ItemState, Result
from ..options.options import Options
from ..resolve.bundle import Bundle, Identity
from ..trainer.api import CLUSTER_RUNTIME_KIND
from ..values.keys import SYNC_WAVE
from ..values.records import MutableRecord
from ..yamltext import yamlnodes as yn
from .memo import Memo
from .outcome import DeriveRequest, Outcome


class ProcessTrainJob(Protocol):
    """One TrainJob through the stages (``process.process_trainjob``); ``records``: undo a previous
    render's records first."""

    def __call__(
        self, item: Item, bundle: Bundle, config: Options, memo: Memo | None = None, records: bool = True
    ) -> Outcome: ...


class Contribution(MutableRecord):
    """What one TrainJob adds to the render: its results, the runtime it points at, the derived
    runtime that must exist and, when it was processed in another process, what its item became.
    Plain data (it can be pickled), merged in input order by ``emit``: where a TrainJob was
    processed changes no byte."""

    __slots__ = ("changed", "derive", "failed", "file", "results", "state", "unchecked", "use", "wave")

    def __init__(self, results: list[Result], use: Identity | None) -> None:
        self.results = results
        # The runtime it points at, placed before it if that is a derived one (None: it needs no placing).
        self.use = use
        self.failed = True
        self.changed = False
        self.unchecked = False
        self.derive: DeriveRequest | None = None
        self.file: FileRef | None = None  # where it was read from: a new derived runtime goes there
        self.wave: str | None = None  # its Argo CD sync wave
        self.state: ItemState | None = None  # its item as settled there (``TrainJobWork.carried``)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickled as one tuple (cli/fan_out.py sends one per TrainJob): no state dict per object.
        return _contribution, tuple(getattr(self, name) for name in self.__slots__)


def _contribution(*values: Any) -> Contribution:
    contribution = Contribution.__new__(Contribution)
    for name, value in zip(Contribution.__slots__, values, strict=True):
        setattr(contribution, name, value)
    return contribution


class TrainJobWork:
    """The TrainJobs of a render, to be processed by ranges (``FanOut``): ``run`` processes a range
    in this process; in another process (a fork of this one), ``carried`` adds to its contributions
    what their items became, for ``process`` to restore here."""

    __slots__ = ("_bundle", "_config", "_memo", "_process", "derives", "trainjobs")

    def __init__(self, bundle: Bundle, config: Options, memo: Memo, process_trainjob: ProcessTrainJob) -> None:
        self.trainjobs = bundle.trainjobs
        self._bundle = bundle
        self._config = config
        self._memo = memo
        self._process = process_trainjob
        # Whether ``run`` makes the derived runtimes its TrainJobs request as it goes (``process``
        # makes any still missing when it merges): not in another process, which would make them
        # for nothing.
        self.derives = True

    def __len__(self) -> int:
        return len(self.trainjobs)

    def run(self, start: int, stop: int) -> list[Contribution]:
        bundle, config, memo = self._bundle, self._config, self._memo
        out = [contribute(item, bundle, config, memo, self._process) for item in self.trainjobs[start:stop]]
        if self.derives:
            for contribution in out:
                request = contribution.derive
                if request is not None:
                    memo.derive(request.identity, bundle.runtimes[request.runtime], request.plan)
        return out

    def fits(self, contributions: list[Contribution]) -> bool:
        """Whether the derived runtimes that another process's contributions request (for TrainJobs
        after all of this process's) fit the output bound, admitted here; False when that process
        refused one (its copy of the bound knew less): the range is then processed here, so that
        where a TrainJob was processed changes nothing."""
        if any(r.message.startswith(BOUND_MESSAGE) for c in contributions for r in c.results):
            return False
        requests = [
            (c.derive.identity, self._bundle.runtimes[c.derive.runtime].item, len(c.derive.plan.spelling))
            for c in contributions
            if c.derive is not None
        ]
        return self._memo.bound.admit_all(requests)

    def carriable(self) -> bool:
        """Whether every TrainJob settles to its text (read from a ResourceList's text by items), so
        that what it becomes is plain data."""
        return all(type(item) is Item and item.source is not None for item in self.trainjobs)

    def carried(self, start: int, contributions: list[Contribution]) -> list[Contribution]:
        for item, contribution in zip(self.trainjobs[start:], contributions, strict=False):
            contribution.state = item.state()
        return contributions


# Processes all of a TrainJobWork, by ranges in this process or in others, and returns the
# contributions in the TrainJobs' order (cli/fan_out.py).
FanOut = Callable[[TrainJobWork], list[Contribution]]


def in_process(work: TrainJobWork) -> list[Contribution]:
    return work.run(0, len(work))


def contribute(
    item: Item, bundle: Bundle, config: Options, memo: Memo, process_trainjob: ProcessTrainJob
) -> Contribution:
    """Process one TrainJob and settle its item (its tree dropped, its text kept: a 5,000-TrainJob
    bundle stays small in memory)."""
    unusable = item.verify()
    if unusable is not None:
        item.settle()
        return Contribution([unusable], None)
    outcome = process_trainjob(item, bundle, config, memo)
    if recheck_as_written(item.node, outcome.node, outcome.failed):
        outcome = process_trainjob(item, bundle, config, memo, records=False)
    results = [
        item.result(v.message, v.severity, v.path or None, v.current_value, v.proposed_value, v.rule)
        for v in outcome.violations
    ]
    if outcome.failed or outcome.node is None:
        use = _current_ref(item)
        item.settle()
        contribution = Contribution(results, use)
        contribution.failed = outcome.failed
        contribution.unchecked = outcome.unchecked
        return contribution
    # Read before the rewritten tree replaces the one read, whose name, namespace, file and wave
    # it keeps (the rewrite changes runtimeRef and the function's own annotations).
    request = outcome.derive
    results.append(item.result("; ".join(outcome.changes), "info"))
    where = item.file if request is not None else None
    wave = item.annotation(SYNC_WAVE) if request is not None else None
    item.node = outcome.node
    item.settle()
    contribution = Contribution(results, request.identity if request is not None else None)
    contribution.failed = False
    contribution.changed = True
    contribution.derive = request
    contribution.file = where
    contribution.wave = wave
    return contribution


def _current_ref(item: Item) -> Identity:
    ref = yn.get_path(item.node, "spec", "runtimeRef")
    kind = yn.scalar(yn.get(ref, "kind")) or CLUSTER_RUNTIME_KIND
    name = yn.scalar(yn.get(ref, "name")) or ""
    return (kind, "" if kind == CLUSTER_RUNTIME_KIND else item.namespace, name)
