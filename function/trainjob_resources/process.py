"""The pipeline, in the stages of ``checks/rules/stages.py``: ``process`` indexes the bundle, has
each TrainJob processed (``process_trainjob``: parse, resolve, then the runtime-free stage or the
trainjob, patches, effective and policy stages, then derive and rewrite), and emits the items with
each derived runtime placed before its first TrainJob. A stage's findings come from its rules
(``checks/rules/registry.py``).

Pure: it takes a ResourceList and returns it with items rewritten and results added. A TrainJob
with an error is returned exactly as written, and so is the derived runtime it still uses.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final

from yaml.nodes import MappingNode, Node

from .checks.bundle import Bundle, Identity, identity_of, index, path_of
from .checks.context import TrainJobContext
from .checks.derived_bound import BOUND_MESSAGE
from .checks.materialize import (
    Derived,
    add_metadata,
    place_next_to,
    point_at,
    set_sync_wave,
    strip_resources,
    sync_wave,
    with_internal_annotations,
)
from .checks.memo import Memo
from .checks.options import DEFAULTS, Options
from .checks.plan import Plan
from .checks.provenance import (
    ProvenanceError,
    dump,
    has_provenance,
    recheck_as_written,
    restore,
    restored_places,
)
from .checks.reporting import EMPTY_INPUT, Tally, reported
from .checks.rules import policy_stage, registry, trainjob_schema
from .checks.rules.framework import run, stops_at_error
from .checks.rules.reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, RUNTIME, TOPOLOGY
from .checks.rules.runtime_ref import follows_rename, rename_ref, resolve
from .checks.rules.stages import (
    DERIVE,
    EFFECTIVE,
    INDEX,
    PARSE,
    PATCHES,
    POLICY,
    RESOLVE,
    REWRITE,
    RUNTIME_FREE,
    TRAINJOB,
)
from .checks.rules.stored_quantities import respell
from .krm.resource_list import Field, FileRef, Item, ItemState, ResourceList, Result
from .trainer.api import CLUSTER_RUNTIME_KIND, RUNTIME_KINDS
from .trainer.effective import ContainerKey, Effective, effective_resources
from .trainer.sites import container_sites, writes_resources
from .trainer.topology import names_kept_for_order, topology
from .trainer.trainjob_view import TrainJobView, parse_trainjob, resources_per_node
from .values.keys import SYNC_WAVE
from .values.records import MutableRecord, Record
from .values.violations import Violation
from .yamltext import textedit
from .yamltext import yamlnodes as yn


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


class Contribution(MutableRecord):
    """What one TrainJob adds to the render: its results, the runtime it points at, the derived
    runtime that must exist and, when it was processed in another process, what its item became.
    Plain data (it can be pickled), merged in input order by ``process``: where a TrainJob was
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

    __slots__ = ("_bundle", "_config", "_memo", "derives", "trainjobs")

    def __init__(self, trainjobs: list[Item], bundle: Bundle, config: Options, memo: Memo) -> None:
        self.trainjobs = trainjobs
        self._bundle = bundle
        self._config = config
        self._memo = memo
        # Whether ``run`` makes the derived runtimes its TrainJobs request as it goes (``process``
        # makes any still missing when it merges): not in another process, which would make them
        # for nothing.
        self.derives = True

    def __len__(self) -> int:
        return len(self.trainjobs)

    def run(self, start: int, stop: int) -> list[Contribution]:
        bundle, config, memo = self._bundle, self._config, self._memo
        out = [contribute(item, bundle, config, memo) for item in self.trainjobs[start:stop]]
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


def process(
    resource_list: ResourceList, platform: frozenset[int] = frozenset(), fan_out: FanOut = in_process
) -> ResourceList:
    """``platform``: the ids of the items the platform supplied (``render --runtimes``), not the
    repository. ``fan_out`` runs the TrainJobs' processing (by default here, in order)."""
    config_item = resource_list.function_config
    config: Options = DEFAULTS  # no functionConfig: the defaults, without importing pydantic
    if config_item is not None:
        from .checks.config import ConfigError, parse_config

        try:
            config = parse_config(config_item.value())
        except ConfigError as err:
            for v in err.violations:
                resource_list.results.append(
                    Result(
                        f"functionConfig: {v.message}",
                        "error",
                        config_item.ref,
                        Field(v.path, v.current_value) if v.path is not None else None,
                        config_item.file,
                    )
                )
            return resource_list
    if not resource_list.items:
        resource_list.results.append(Result(EMPTY_INPUT, "warning"))
    bundle = index(resource_list.items, platform)
    bundle.trainer_version = config.trainer_version
    for entry in bundle.runtimes.values():
        for v in (v for rule in _INDEX_RULES for v in rule.findings(bundle, entry)):
            resource_list.results.append(entry.item.result(v.message, v.severity, v.path, v.current_value, rule=v.rule))
    memo = Memo()
    memo.bound.count_metadata(config.derived_runtime_metadata)  # before a fork: its copy counts it too
    trainjobs = bundle.trainjobs
    if trainjobs:
        trainjob_schema.prepare_for(config.trainer_version)  # once, before a fork: both processes use it
    contributions = fan_out(TrainJobWork(trainjobs, bundle, config, memo))
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


def contribute(item: Item, bundle: Bundle, config: Options, memo: Memo) -> Contribution:
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


_INDEX_RULES: Final = registry.of(INDEX)
_PARSE_RULES: Final = registry.of(PARSE)
_RESOLVE_RULES: Final = registry.of(RESOLVE)
_RUNTIME_FREE_RULES: Final = registry.of(RUNTIME_FREE)
_TRAINJOB_RULES: Final = registry.of(TRAINJOB)
_PATCH_RULES: Final = registry.of(PATCHES)
# The effective resources, remembered with the patches' findings, read the sites, the resources as
# written, resourcesPerNode, the topology and the mode besides.
_PATCH_READS: Final = registry.reads(
    PATCHES, RUNTIME, MODE, CONTAINER_SITES, PATCHED_RESOURCES, RESOURCES_PER_NODE, TOPOLOGY
)
_EFFECTIVE_RULES: Final = registry.of(EFFECTIVE)
_EFFECTIVE_READS: Final = registry.reads(EFFECTIVE)
_DERIVE_RULES: Final = registry.of(DERIVE)
_REWRITE_RULES: Final = registry.of(REWRITE)


def process_trainjob(
    item: Item, bundle: Bundle, config: Options, memo: Memo | None = None, records: bool = True
) -> Outcome:
    """One TrainJob through the stages (``checks/rules/stages.py``); ``item`` itself is not changed.
    ``records``: undo a previous render's records first (``provenance.restore``)."""
    context = _parse(item, bundle, config, memo or Memo(), records)
    if isinstance(context, Outcome):
        return context
    found = _resolve(context)
    assert context.resolution is not None
    if context.resolution.entry is None:
        return _unresolved(context, found)  # the runtime-free stage
    if found:
        return Outcome(found)  # a runtime it cannot use
    outcome, effective = _validate(context)  # the trainjob, patches, effective and policy stages
    if outcome.failed:
        return outcome
    if context.native or not context.overrides:
        _pass_through(context, outcome)
    else:
        _materialize(context, effective, outcome)  # the derive stage, then the rewrite
        if outcome.failed:
            return outcome
    _rewritten(context, outcome)
    return outcome


def _parse(item: Item, bundle: Bundle, config: Options, memo: Memo, records: bool) -> TrainJobContext | Outcome:
    """The TrainJob as Trainer's API reads it (its records of an earlier render undone first), or why it cannot be."""
    assert isinstance(item.node, MappingNode)
    context = TrainJobContext(item, None, None, bundle, config, memo)
    trainjob: TrainJobView | None = None
    # Read before any rewrite: the rewrite writes records into the item's own tree when nothing was restored.
    context.rendered_before = has_provenance(item.node)
    if records and context.rendered_before:
        context.work = _copy(item.node)
        try:
            restore(context.work)
        except ProvenanceError as err:
            context.records_error = str(err)
    if context.records_error is None:
        context.raw = yn.to_python(context.work) if context.work is not None else item.value()
        trainjob, context.api_violations = parse_trainjob(context.raw)
    found = run(_PARSE_RULES, context)
    if trainjob is None or found:
        return Outcome(found)
    context.trainjob = trainjob
    context.sites = list(container_sites(trainjob, context.raw))
    context.overrides = any(s.resources is not None for s in context.sites) or writes_resources(context.raw)
    return context


def _resolve(context: TrainJobContext) -> list[Violation]:
    """The runtime the TrainJob names, and the resolve stage's findings; without any, the context
    is ``resolved`` (and the ref follows a kustomize rename)."""
    item, trainjob = context.item, context.trainjob
    resolution = context.resolution = resolve(
        context.bundle, trainjob.spec.runtime_ref, item.namespace, context.overrides, path_of(item), item
    )
    found = run(_RESOLVE_RULES, context)
    entry = resolution.entry
    if entry is None or found:
        return found
    assert entry.model is not None  # runtime-ref refused it otherwise
    if follows_rename(context):
        if context.work is None:
            context.work = _copy(item.node)
        context.raw = rename_ref(context.work, context.raw, entry.item.name)
    context.resolved(entry, resources_per_node(trainjob), topology(entry.model, trainjob, context.sites))
    return []


def _validate(context: TrainJobContext) -> tuple[Outcome, dict[ContainerKey, Effective]]:
    """The trainjob stage, the patches and effective stages (remembered together), then, without an
    error so far, the policy stage."""
    memo = context.memo
    found, effective = memo.remember(PATCHES, _PATCH_READS, context, lambda: _patches(context))
    outcome = Outcome(run(_TRAINJOB_RULES, context) + found)
    if not outcome.failed:
        outcome.violations += memo.remember(POLICY, policy_stage.READS, context, lambda: policy_stage.findings(context))
    return outcome, effective


def _pass_through(context: TrainJobContext, outcome: Outcome) -> None:
    """A TrainJob that derives nothing (native mode, or no resources in its patches): rewritten only
    to follow a kustomize rename, or to restore what an earlier render changed."""
    if follows_rename(context):
        name = context.runtime.item.name
        outcome.node = context.work
        outcome.changes.append(f"runtimeRef.name set to {name!r}, the runtime's name after kustomize")
    elif context.work is not None and not context.native:
        outcome.node = context.work
        outcome.changes.append("no resources in runtimePatches any more: runtimeRef restored")


def _rewritten(context: TrainJobContext, outcome: Outcome) -> None:
    """The rewrite's last step (resourcesPerNode's quantities as stored, in materialize mode), then
    the rewrite stage's rules."""
    if not context.native:
        _as_stored(context, outcome)
    context.rewritten = outcome.node
    context.derives = outcome.derive is not None
    outcome.violations += run(_REWRITE_RULES, context)


def _unresolved(context: TrainJobContext, found: list[Violation]) -> Outcome:
    """A TrainJob whose runtime is not in the bundle (``found``: why): passed through, checked by the
    rules that need no runtime (the CRD's, and those of upstream's TrainJob webhook that read none)."""
    resolution = context.resolution
    assert resolution is not None and found  # runtime-ref says why first
    severity = found[0].severity
    outcome = Outcome(found)
    if severity != "error":
        outcome.violations += run(_RUNTIME_FREE_RULES, context)
        if outcome.failed and severity == "info":
            del outcome.violations[0]  # "passed through unchanged": not with an error
    outcome.unchecked = resolution.absent and not context.overrides and not outcome.failed
    return outcome


def _patches(context: TrainJobContext) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
    """The patches stage's findings, and (when none is an error) the effective resources of every
    container a patch or resourcesPerNode sizes, with the effective stage's findings."""
    out = run(_PATCH_RULES, context)
    if any(v.severity == "error" for v in out):
        return out, {}
    entry, memo = context.runtime, context.memo
    effective = effective_resources(
        entry.jobs,
        context.sites,
        context.per_node,
        context.topo,
        native=context.native,
        per_node_replaces=context.release.per_node_replaces,
    )
    for one in effective.values():
        out += memo.remember(EFFECTIVE, _EFFECTIVE_READS, context, partial(_effective_findings, context, one), one)
    return out, effective


def _effective_findings(context: TrainJobContext, effective: Effective) -> list[Violation]:
    return [v for rule in _EFFECTIVE_RULES for v in rule.findings(context, effective)]


def _materialize(context: TrainJobContext, all_effective: dict[ContainerKey, Effective], outcome: Outcome) -> None:
    """Rewrite the TrainJob (in place when nothing was restored: it is valid, so it changes anyway)."""
    item, entry, topo, kind = context.item, context.runtime, context.topo, context.kind
    trainer_sites = [s for s in context.sites if s.resources is not None and topo.is_trainer(*s.key)]
    plan = context.plan = context.memo.plan(context, all_effective)
    request: DeriveRequest | None = None
    # runtimeRef is immutable (CEL self == oldSelf, pkg/apis/trainer/v1alpha1/trainjob_types.go), and
    # kustomize, Argo CD and Helm render from the source every time: whether an override derives,
    # and the name, depend on the TrainJob's text alone, never on the base's content.
    if plan.effective:
        found = stops_at_error(_DERIVE_RULES, context)
        outcome.violations += found
        if any(v.severity == "error" for v in found):
            return
        request = DeriveRequest(context.derived_identity, entry.identity, plan)
    work = context.work
    if work is None:
        assert isinstance(item.node, MappingNode)
        work = item.node
    assert entry.model is not None
    removed, dropped = strip_resources(work, names_kept_for_order(topo, entry.model, context.sites))
    if trainer_sites:
        moved = context.moved[0]
        assert moved is not None  # the patches' rules refused the patches that cannot move
        _move_to_resources_per_node(work, moved, outcome)
        removed = [r for r in removed if not any(r.container == s.name and r.job == s.job for s in trainer_sites)]
    removed = restored_places(removed, dropped)
    if request is not None:
        _, scope, derived_name = request.identity
        target = Item(work)  # edits of its own: the TrainJob's item stays as read if it fails after all
        point_at(target, kind, scope, derived_name, context.raw["spec"]["runtimeRef"], removed)
        outcome.derive = request
        where = f"{scope}/" if scope else ""
        outcome.changes.insert(0, f"runtime {entry.display} materialized as {kind} {where}{derived_name}")
        outcome.changes += plan.described
    elif not trainer_sites:
        outcome.changes.append(
            f"resources that say nothing removed from runtimePatches; runtimeRef stays {entry.display}, "
            "no runtime derived"
        )
    outcome.node = work


def _copy(node: Node) -> MappingNode:
    copied = textedit.copy(node)
    assert isinstance(copied, MappingNode)
    return copied


def _as_stored(context: TrainJobContext, outcome: Outcome) -> None:
    """Write the quantities of resourcesPerNode as the API server stores them, on a TrainJob that
    keeps runtimePatches (``rules/stored_quantities.py``: any other spelling fails every re-sync)."""
    node = outcome.node or context.work or context.item.node
    assert isinstance(node, MappingNode)
    context.respelled = respell(node)
    if context.respelled:
        outcome.node = node
        outcome.changes.append("quantities in spec.trainer.resourcesPerNode written as the API server stores them")


def _move_to_resources_per_node(work: MappingNode, moved: dict[str, Any], outcome: Outcome) -> None:
    trainer = yn.ensure_map(yn.ensure_map(work, "spec"), "trainer")
    yn.set_key(trainer, "resourcesPerNode", yn.from_python(moved))
    outcome.changes.append(f"trainer container resources moved to spec.trainer.resourcesPerNode: {dump(moved)}")
