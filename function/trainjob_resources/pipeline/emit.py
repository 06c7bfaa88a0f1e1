"""The emit stage: once per render, the TrainJobs' contributions merged in input order (their items
restored when another process settled them, the derived runtimes made that it did not make), each
derived runtime placed before its first TrainJob, and the results reported (``report/reporting.py``)."""

from __future__ import annotations

from ..derive.materialize import (
    Derived,
    add_metadata,
    place_next_to,
    set_sync_wave,
    sync_wave,
    with_internal_annotations,
)
from ..krm.resource_list import FileRef, Item, ResourceList
from ..options.options import Options
from ..report.reporting import Tally, reported
from ..resolve.bundle import Bundle, Identity, identity_of
from ..trainer.api import RUNTIME_KINDS
from .memo import Memo
from .work import Contribution


def emit(
    resource_list: ResourceList, bundle: Bundle, config: Options, memo: Memo, contributions: list[Contribution]
) -> ResourceList:
    """``resource_list`` with its items rewritten and the derived runtimes placed, and the results."""
    trainjobs = bundle.trainjobs
    assert len(contributions) == len(trainjobs)
    uses: dict[int, Identity] = {}  # id(TrainJob item) -> the derived runtime it points at
    first_file: dict[Identity, FileRef | None] = {}  # where the first TrainJob using it was read from
    waves: dict[Identity, list[str | None]] = {}  # the Argo CD waves of the TrainJobs using it
    tally = Tally()
    tally.total = len(trainjobs)
    for item, contribution in zip(trainjobs, contributions, strict=True):
        if contribution.state is not None:
            item.restore(contribution.state)
        tally.count(contribution.failed, contribution.changed, contribution.unchecked)
        resource_list.results += contribution.results
        if contribution.use is not None:
            uses[id(item)] = contribution.use
        request = contribution.derive
        if request is not None:
            if contribution.state is not None:  # processed in another process: made here (run made the rest)
                memo.derive(request.identity, bundle.runtimes[request.runtime], request.plan)
            first_file.setdefault(request.identity, contribution.file)
            waves.setdefault(request.identity, []).append(contribution.wave)
    for identity, derived in memo.derived.items():
        add_metadata(derived, config.derived_runtime_metadata)
        set_sync_wave(derived, sync_wave(waves.get(identity, [])))
    resource_list.items = _with_derived(resource_list.items, bundle, memo.derived, uses, first_file)
    tally.derived = len(memo.derived)
    resource_list.results = reported(resource_list.results, config.results, tally)
    return resource_list


def _with_derived(
    items: list[Item],
    bundle: Bundle,
    fresh: dict[Identity, Derived],
    uses: dict[int, Identity],
    first_file: dict[Identity, FileRef | None],
) -> list[Item]:
    """The items with each derived runtime before the first TrainJob using it (the TrainJob webhook
    reads the runtime when the TrainJob is created: ``render | kubectl apply -f -`` applies in
    order): regenerated ones replace the input's, where that is earlier; orphans are dropped."""
    out: list[Item] = []
    placed: set[Identity] = set()

    def place(identity: Identity) -> None:
        if identity in placed:
            return
        placed.add(identity)
        derived, previous = fresh.get(identity), bundle.derived.get(identity)
        if derived is not None:
            if previous is not None:
                with_internal_annotations(derived.node, previous)
            else:
                place_next_to(derived, first_file.get(identity))
            out.append(derived.item())
        elif previous is not None:
            out.append(previous)

    used = set(uses.values())
    for item in items:
        identity = uses.get(id(item))
        if identity is not None:
            place(identity)
            out.append(item)
            continue
        if item.kind in RUNTIME_KINDS:
            identity = identity_of(item)
            if bundle.derived.get(identity) is item:
                if identity in used:
                    place(identity)
                continue  # no TrainJob of the bundle uses it any more
        out.append(item)
    for identity in fresh:
        place(identity)
    return out
