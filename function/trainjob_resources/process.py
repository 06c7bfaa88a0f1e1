"""The pipeline: the stages of ``rules/stages.py``, in order, each in its module of ``pipeline/``.

Once per render: the functionConfig read, the bundle indexed, each TrainJob processed (here, or by
ranges in a fork: ``cli/fan_out.py``), the items and results emitted. Per TrainJob: parse, resolve,
then either the runtime-free stage or the trainjob, patches (with effective) and policy stages, then
derive (or pass through) and rewrite. A stage's findings come from its rules
(``rules/registry.py``); a TrainJob as every stage sees it is its context (``resolve/context.py``,
upstream's ``runtime.Info``).

Pure: it takes a ResourceList and returns it with items rewritten and results added. A TrainJob
with an error is returned exactly as written, and so is the derived runtime it still uses.
"""

from __future__ import annotations

from .krm.resource_list import Item, ResourceList
from .options.function_config import options_of
from .options.options import Options
from .pipeline.derive import derive
from .pipeline.emit import emit
from .pipeline.index import index
from .pipeline.memo import Memo
from .pipeline.outcome import Outcome
from .pipeline.parse import parse
from .pipeline.resolve import resolve, runtime_free
from .pipeline.rewrite import pass_through, rewrite
from .pipeline.validate import patches, policy, trainjob
from .pipeline.work import FanOut, TrainJobWork, in_process
from .resolve.bundle import Bundle


def process(
    resource_list: ResourceList, platform: frozenset[int] = frozenset(), fan_out: FanOut = in_process
) -> ResourceList:
    """``platform``: the ids of the items the platform supplied (``render --runtimes``), not the
    repository. ``fan_out`` runs the TrainJobs' processing (by default here, in order)."""
    config = options_of(resource_list)  # the functionConfig; None: it is invalid, its errors reported
    if config is None:
        return resource_list
    bundle = index(resource_list, platform, config.trainer_version)
    memo = Memo()
    memo.bound.count_metadata(config.derived_runtime_metadata)  # before a fork: its copy counts it too
    contributions = fan_out(TrainJobWork(bundle, config, memo, process_trainjob))
    return emit(resource_list, bundle, config, memo, contributions)


def process_trainjob(
    item: Item, bundle: Bundle, config: Options, memo: Memo | None = None, records: bool = True
) -> Outcome:
    """One TrainJob through the stages; ``item`` itself is not changed. ``records``: undo a previous
    render's records first (``derive/provenance.py``)."""
    context = parse(item, bundle, config, memo or Memo(), records)
    if isinstance(context, Outcome):
        return context
    found = resolve(context)
    assert context.resolution is not None
    if context.resolution.entry is None:
        return runtime_free(context, found)
    if found:
        return Outcome(found)  # a runtime it cannot use
    found, effective = patches(context)  # and the effective stage, remembered with it
    outcome = Outcome(trainjob(context) + found)
    if outcome.failed:
        return outcome
    outcome.violations += policy(context)
    if outcome.failed:
        return outcome
    if context.native or not context.overrides:
        pass_through(context, outcome)
    else:
        derive(context, effective, outcome)
        if outcome.failed:
            return outcome
    rewrite(context, outcome)
    return outcome
