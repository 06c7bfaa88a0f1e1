"""The pipeline: index the bundle, then for each TrainJob resolve, validate and materialize.

Pure: it takes a ResourceList and returns it with items rewritten and results added. A TrainJob
with an error is returned exactly as written, and so is the derived runtime it still uses.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .checks.bundle import Bundle, Identity, Resolution, identity_of, index, path_of, resolve
from .checks.context import TrainJobContext
from .checks.materialize import (
    BOUND_MESSAGE,
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
from .checks.moving import by_value
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
from .checks.rules import registry
from .checks.rules.framework import run, stops_at_error
from .checks.rules.reads import CONTAINER_SITES, MODE, PATCHED_RESOURCES, RESOURCES_PER_NODE, RUNTIME, TOPOLOGY
from .checks.rules.stages import DERIVE, EFFECTIVE, PATCHES, POLICY, RUNTIME_FREE, TRAINJOB
from .krm.resource_list import Field, FileRef, Item, ItemState, ResourceList, Result
from .kube.merge import without_nulls
from .trainer.api import CLUSTER_RUNTIME_KIND, RUNTIME_KINDS
from .trainer.crd_rules import stored_spellings
from .trainer.effective import RESOURCES_PER_NODE_PATH, ContainerKey, Effective, effective_resources
from .trainer.sites import ContainerSite, container_sites, writes_resources
from .trainer.topology import names_kept_for_order, topology
from .trainer.trainjob_view import parse_trainjob, resources_per_node
from .values import fieldpath
from .values.keys import LOCAL_CONFIG, SYNC_WAVE
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
    for entry in bundle.runtimes.values():
        for v in entry.violations:
            resource_list.results.append(
                entry.item.result(f"runtime cannot be read: {v.message}", "error", v.path, v.current_value)
            )
        for v in entry.invalid:
            resource_list.results.append(
                entry.item.result(
                    f"{v.message} (Kubernetes refuses it; no runtime is derived from this one)",
                    "error",
                    v.path,
                    v.current_value,
                )
            )
    memo = Memo()
    trainjobs = bundle.trainjobs
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
        item.result(v.message, v.severity, v.path or None, v.current_value, v.proposed_value)
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
_POLICY_RULES: Final = registry.of(POLICY)
_POLICY_READS: Final = registry.reads(POLICY)
_DERIVE_RULES: Final = registry.of(DERIVE)


def process_trainjob(
    item: Item, bundle: Bundle, config: Options, memo: Memo | None = None, records: bool = True
) -> Outcome:
    """Resolve, validate and (in materialize mode) rewrite one TrainJob; ``item`` itself is not changed.
    ``records``: undo a previous render's records first (``provenance.restore``)."""
    assert isinstance(item.node, MappingNode)
    work: MappingNode | None = None
    if records and has_provenance(item.node):
        work = _copy(item.node)
        try:
            restore(work)
        except ProvenanceError as err:
            return Outcome([Violation("metadata.annotations", str(err))])
    raw = yn.to_python(work) if work is not None else item.value()
    trainjob, violations = parse_trainjob(raw)
    if not item.name:
        violations.append(Violation("metadata.name", "a TrainJob needs a name (metadata.name)"))
    if trainjob is None or violations:
        return Outcome(violations)
    context = TrainJobContext(item, trainjob, raw, bundle, config, memo or Memo())
    context.work = work
    context.sites = list(container_sites(trainjob, raw))
    context.overrides = any(s.resources is not None for s in context.sites) or writes_resources(raw)
    resolution = context.resolution = resolve(
        bundle, trainjob.spec.runtime_ref, item.namespace, context.overrides, path_of(item)
    )
    if resolution.entry is None:
        return _unresolved(context, resolution)
    entry = resolution.entry
    if entry.model is None:
        return Outcome([Violation("spec.runtimeRef", f"{entry.display} cannot be read (see its errors)")])
    if entry.invalid and context.overrides and not context.native:
        return Outcome(
            [
                Violation(
                    "spec.runtimeRef",
                    f"{entry.display} has container resources the API server refuses (see its errors): "
                    "no runtime is derived from it",
                )
            ]
        )
    # A local-config runtime is a reference copy, never emitted: the cluster has it under the name
    # the ref already says (kustomize's previousNames), so the ref keeps that name.
    renamed = resolution.renamed and entry.item.annotation(LOCAL_CONFIG) != "true"
    if renamed:
        context.work = work if work is not None else _copy(item.node)
        context.raw = _rename_ref(context.work, raw, entry.item.name)
    context.resolved(entry, resources_per_node(trainjob), topology(entry.model, trainjob, context.sites))
    remembered = context.memo
    found, effective = remembered.remember(PATCHES, _PATCH_READS, context, lambda: _validate(context))
    outcome = Outcome(run(_TRAINJOB_RULES, context) + found)
    if not outcome.failed:
        outcome.violations += remembered.remember(POLICY, _POLICY_READS, context, lambda: run(_POLICY_RULES, context))
    if outcome.failed:
        return outcome
    if context.native or not context.overrides:
        if renamed:
            outcome.node = context.work
            outcome.changes.append(f"runtimeRef.name set to {entry.item.name!r}, the runtime's name after kustomize")
        elif context.work is not None and not context.native:
            outcome.node = context.work
            outcome.changes.append("no resources in runtimePatches any more: runtimeRef restored")
        if not context.native:
            _as_stored(context, outcome)
        _warn_if_repointed(item, outcome)
        return outcome
    _materialize(context, effective, outcome)
    if not outcome.failed:
        _as_stored(context, outcome)
        _warn_if_repointed(item, outcome)
    return outcome


def _unresolved(context: TrainJobContext, resolution: Resolution) -> Outcome:
    """A TrainJob whose runtime is not in the bundle: passed through, checked by the rules that
    need no runtime (the CRD's, and those of upstream's TrainJob webhook that read none)."""
    assert resolution.violation is not None
    outcome = Outcome([resolution.violation])
    if resolution.violation.severity != "error":
        outcome.violations += run(_RUNTIME_FREE_RULES, context)
        if outcome.failed and resolution.violation.severity == "info":
            del outcome.violations[0]  # "passed through unchanged": not with an error
    outcome.unchecked = resolution.absent and not context.overrides and not outcome.failed
    return outcome


def _validate(context: TrainJobContext) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
    """The patches' findings, and (when none is an error) the effective resources of every container
    a patch or resourcesPerNode sizes, with theirs."""
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
    return [v for rule in _EFFECTIVE_RULES for v in rule.check(context, effective)]


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
        too_much = context.memo.bound.admit(context.derived_identity, entry.item, entry.display, len(plan.spelling))
        if too_much is not None:
            outcome.violations.append(too_much)
            return
        request = DeriveRequest(context.derived_identity, entry.identity, plan)
    work = context.work
    if work is None:
        assert isinstance(item.node, MappingNode)
        work = item.node
    assert entry.model is not None
    removed, dropped = strip_resources(work, names_kept_for_order(topo, entry.model, context.sites))
    if trainer_sites:
        written = without_nulls(context.per_node)
        moved = context.moved[0]
        assert moved is not None  # the patches' rules refused the patches that cannot move
        if has_provenance(item.node) and by_value(moved) != by_value(written or {}):
            outcome.violations.append(_trainer_changed(trainer_sites[0]))
        _move_to_resources_per_node(work, moved, outcome)
        removed = [r for r in removed if not any(r.container == s.name and r.job == s.job for s in trainer_sites)]
    removed = restored_places(removed, dropped)
    if request is not None:
        _, scope, derived_name = request.identity
        target = Item(work)  # edits of its own: the TrainJob's item stays as read if it fails after all
        if work is item.node:
            target.read_like(item)
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


_RECREATE = (
    "spec.runtimeRef is immutable (trainjob_types.go), so a cluster that has this TrainJob refuses the "
    "change: recreate the TrainJob (delete and apply; Argo CD: argocd.argoproj.io/sync-options: "
    "Force=true,Replace=true; README, Lifecycle on a live cluster)"
)


def _trainer_changed(site: ContainerSite) -> Violation:
    """A move that changes spec.trainer of a TrainJob the function rendered before (its records say
    so; without records, as under kustomize or Argo CD, the function cannot tell)."""
    return Violation(
        site.resources_path,
        "this TrainJob was rendered before, and moving these resources changes its "
        "spec.trainer.resourcesPerNode: spec.trainer is immutable (CEL self == oldSelf, trainjob_types.go, "
        "suspended or not), so a cluster that has this TrainJob refuses the change: recreate the TrainJob "
        "(delete and apply; Argo CD: argocd.argoproj.io/sync-options: Force=true,Replace=true; README, "
        "Lifecycle on a live cluster)",
        severity="warning",
    )


def _ref_name(node: Node | None) -> tuple[str, str]:
    ref = yn.get_path(node, "spec", "runtimeRef")
    return (yn.scalar(yn.get(ref, "kind")) or CLUSTER_RUNTIME_KIND, yn.scalar(yn.get(ref, "name")) or "")


def _warn_if_repointed(item: Item, outcome: Outcome) -> None:
    """A TrainJob rendered before (kpt writes the output back, records and all) whose runtimeRef this
    render changes: its overrides changed, or went, since. The API server refuses that change on an
    existing TrainJob (runtimeRef is immutable, trainjob_types.go)."""
    if outcome.node is None or not has_provenance(item.node):
        return
    before, after = _ref_name(item.node), _ref_name(outcome.node)
    if before == after:
        return
    if outcome.derive is None:
        what = f"no resources in runtimePatches any more, so runtimeRef goes back from {before[1]!r} to {after[1]!r}"
    else:
        what = f"the overrides changed since the last render, so runtimeRef goes from {before[1]!r} to {after[1]!r}"
    outcome.violations.append(Violation("spec.runtimeRef", f"{what}: {_RECREATE}", severity="warning"))


def _rename_ref(work: MappingNode, raw: Any, name: str) -> Any:
    """Point the TrainJob's runtimeRef at the name kustomize gave its runtime; ``raw`` with that
    name (what provenance records as the ref written), leaving the item's own value alone."""
    ref = yn.get_path(work, "spec", "runtimeRef")
    assert isinstance(ref, MappingNode)
    yn.set_key(ref, "name", yn.str_node(name))
    spec = raw["spec"]
    return {**raw, "spec": {**spec, "runtimeRef": {**spec["runtimeRef"], "name": name}}}


def _copy(node: Node) -> MappingNode:
    copied = textedit.copy(node)
    assert isinstance(copied, MappingNode)
    return copied


def _as_stored(context: TrainJobContext, outcome: Outcome) -> None:
    """Write the quantities of resourcesPerNode as the API server stores them, on a TrainJob that
    keeps runtimePatches (``crd_rules.stored_spellings``: any other spelling fails every re-sync)."""
    node = outcome.node or context.work or context.item.node
    assert isinstance(node, MappingNode)
    patches = yn.get_path(node, "spec", "runtimePatches")
    per_node = yn.get_path(node, "spec", "trainer", "resourcesPerNode")
    if not isinstance(patches, SequenceNode) or not patches.value or not isinstance(per_node, MappingNode):
        return
    found = stored_spellings(yn.to_python(per_node))
    for section, name, value, stored in found:
        values = yn.get(per_node, section)
        assert isinstance(values, MappingNode)
        written = yn.get(values, name)
        shown = written.value if isinstance(written, ScalarNode) else value
        yn.set_key(values, name, yn.text_node(stored))
        outcome.violations.append(
            Violation(
                fieldpath.child(f"{RESOURCES_PER_NODE_PATH}.{section}", name),
                f'{name}: {shown} written as "{stored}", the string the API server stores: upstream\'s TrainJob '
                "webhook, which timestamps runtimePatches, stores every quantity here in Kubernetes' canonical "
                "form, and spec.trainer is immutable (self == oldSelf, trainjob_types.go), so the spelling as "
                "written would fail every re-sync",
                "info",
                value,
                stored,
            )
        )
    if found:
        outcome.node = node
        outcome.changes.append("quantities in spec.trainer.resourcesPerNode written as the API server stores them")


def _move_to_resources_per_node(work: MappingNode, moved: dict[str, Any], outcome: Outcome) -> None:
    trainer = yn.ensure_map(yn.ensure_map(work, "spec"), "trainer")
    yn.set_key(trainer, "resourcesPerNode", yn.from_python(moved))
    outcome.changes.append(f"trainer container resources moved to spec.trainer.resourcesPerNode: {dump(moved)}")
