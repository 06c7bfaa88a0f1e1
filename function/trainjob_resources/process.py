"""The pipeline: index the bundle, then for each TrainJob resolve, validate and materialize.

Pure: it takes a ResourceList and returns it with items rewritten and results added. A TrainJob
with an error is returned exactly as written, and so is the derived runtime it still uses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from yaml.nodes import MappingNode, Node

from .checks.bundle import Bundle, Identity, Resolution, RuntimeEntry, identity_of, index, path_of, resolve
from .checks.explain import PodParts
from .checks.materialize import (
    BOUND_MESSAGE,
    Derived,
    OutputBound,
    canonical_patch,
    canonical_quantity,
    clean_requirements,
    derive_runtime,
    derived_name,
    overrides_of,
    place_next_to,
    point_at,
    set_sync_wave,
    strip_resources,
    sync_wave,
    with_internal_annotations,
)
from .checks.options import DEFAULTS, Options
from .checks.policy import evaluate
from .checks.provenance import (
    DERIVED_FROM,
    SYNC_WAVE,
    ProvenanceError,
    dump,
    has_provenance,
    old,
    recheck_as_written,
    restore,
)
from .checks.reporting import EMPTY_INPUT, Tally, reported
from .checks.runtime_name import name_keyed_violations
from .checks.validate import (
    claim_violations,
    foreign_runtime_resources,
    initializer_violations,
    runtime_free_violations,
    validate_container_site,
    validate_effective,
    validate_job_site,
    validate_managers,
    webhook_violations,
)
from .krm.resource_list import FileRef, Item, ItemState, ResourceList, Result
from .kube.merge import compose_patches, merge_requirements, without_nulls
from .trainer.api import CLUSTER_RUNTIME_KIND, JOB_CHAIN, POD_CHAIN, RUNTIME_KINDS
from .trainer.crd_rules import crd_violations
from .trainer.effective import ContainerKey, Effective, effective_resources
from .trainer.per_node import (
    dropped_claims,
    ignored_per_node,
    moved_resources,
    pruned_nulls,
    reader_differs,
    runtime_node_resources,
)
from .trainer.runtime_view import TRAINER_CONTAINER
from .trainer.sites import ContainerSite, container_sites, job_sites
from .trainer.topology import Topology, topology
from .trainer.trainjob_view import TrainJob, parse_trainjob, resources_per_node
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

    __slots__ = ("identity", "namespace", "plan", "runtime")

    def __init__(self, identity: Identity, runtime: Identity, namespace: str, plan: Plan) -> None:
        self.identity: Final = identity
        self.runtime: Final = runtime  # the base runtime's key in Bundle.runtimes
        self.namespace: Final = namespace
        self.plan: Final = plan

    def __reduce__(self) -> tuple[type[DeriveRequest], tuple[Identity, Identity, str, Plan]]:
        return DeriveRequest, (self.identity, self.runtime, self.namespace, self.plan)


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
                    memo.derive(request.identity, bundle.runtimes[request.runtime], request.namespace, request.plan)
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
                        v.path,
                        v.current_value,
                        None,
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
                memo.derive(request.identity, bundle.runtimes[request.runtime], request.namespace, request.plan)
            first_file.setdefault(request.identity, contribution.file)
            waves.setdefault(request.identity, []).append(contribution.wave)
    for identity, derived in memo.derived.items():
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


LOCAL_CONFIG: Final = "config.kubernetes.io/local-config"


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
    sites = list(container_sites(trainjob, raw))
    overrides = any(s.resources is not None for s in sites) or _writes_resources(raw)
    resolution = resolve(bundle, trainjob.spec.runtime_ref, item.namespace, overrides, path_of(item))
    if resolution.entry is None:
        assert resolution.violation is not None
        outcome = Outcome([resolution.violation])
        if resolution.violation.severity != "error":
            outcome.violations += _unresolved_violations(item, trainjob, raw, sites, config, resolution, overrides)
            if outcome.failed and resolution.violation.severity == "info":
                del outcome.violations[0]  # "passed through unchanged": not with an error
        outcome.unchecked = resolution.absent and not overrides and not outcome.failed
        return outcome
    entry = resolution.entry
    if entry.model is None:
        return Outcome([Violation("spec.runtimeRef", f"{entry.display} cannot be read (see its errors)")])
    if entry.invalid and overrides and config.mode != "native":
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
        work = work if work is not None else _copy(item.node)
        raw = _rename_ref(work, raw, entry.item.name)
    per_node = resources_per_node(trainjob)
    topo = topology(entry.model, trainjob, sites, config.mode)
    memo = memo or Memo()
    found, effective = memo.validate(trainjob, per_node, entry, sites, config, topo)
    outcome = Outcome(
        crd_violations(raw, config.mode, _may_have_directives(item))
        + initializer_violations(raw, entry.model, sites, entry.display)
        + found
    )
    if not outcome.failed:
        outcome.violations += memo.evaluate(trainjob, per_node, item.namespace, entry, sites, bundle, config, topo)
    if outcome.failed:
        return outcome
    if config.mode == "native" or not overrides:
        if renamed:
            outcome.node = work
            outcome.changes.append(f"runtimeRef.name set to {entry.item.name!r}, the runtime's name after kustomize")
        elif work is not None and config.mode != "native":
            outcome.node = work
            outcome.changes.append("no resources in runtimePatches any more: runtimeRef restored")
        _warn_if_repointed(item, outcome)
        return outcome
    _materialize(item, work, trainjob, raw, entry, sites, effective, config, outcome, bundle, memo, topo)
    if not outcome.failed:
        _warn_if_repointed(item, outcome)
    return outcome


def _unresolved_violations(
    item: Item,
    trainjob: TrainJob,
    raw: Any,
    sites: list[ContainerSite],
    config: Options,
    resolution: Resolution,
    overrides: bool,
) -> list[Violation]:
    """The rules that need no runtime, for a TrainJob passed through without its runtime: the CRD's, and,
    for a Trainer runtime, those of upstream's TrainJob webhook that read no runtime (``jobset.go``
    ``Validate``). A runtime of another API group: the resources its patches set are errors."""
    out = crd_violations(raw, config.mode, _may_have_directives(item))
    if resolution.foreign is not None:
        if overrides:
            out += foreign_runtime_resources(resolution.foreign, list(_resources_paths(raw)))
        return out
    return out + runtime_free_violations([p.manager for p in trainjob.spec.runtime_patches or []], sites)


def _may_have_directives(item: Item) -> bool:
    """Whether a key of the TrainJob may start with ``$``: not when the text it was read from holds
    no ``$`` and no escape (a double-quoted ``"\\x24patch"`` is one too); its provenance annotations,
    which restore() reads, are part of that text."""
    source = item.source
    return source is None or "$" in source or "\\" in source


def _validate(
    trainjob: TrainJob,
    per_node: dict[str, Any] | None,
    entry: RuntimeEntry,
    sites: list[ContainerSite],
    config: Options,
    memo: Memo,
    topo: Topology,
) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
    """Violations, and the effective resources of every container a patch or resourcesPerNode sizes."""
    display = entry.display
    assert entry.model is not None
    out = validate_managers([p.manager for p in trainjob.spec.runtime_patches or []])
    for job_site in job_sites(trainjob):
        out += validate_job_site(job_site, entry.jobs, display)
    out += ignored_per_node(entry.model, per_node, display)
    out += pruned_nulls(per_node, sites, native=config.mode == "native")
    moved, problem = _moved(entry, sites, without_nulls(per_node), topo)
    for site in sites:
        out += validate_container_site(site, entry.jobs, display, config.trainer_resources, topo, moved)
        out += claim_violations(site, entry.model, display)
    out += dropped_claims(entry.jobs, sites, per_node, topo)
    # Also under the default error: say why it proposes no resourcesPerNode.
    if problem is not None:
        first = next(s for s in sites if s.resources is not None and topo.is_trainer(*s.key))
        out.append(Violation(first.resources_path, f"cannot be moved to spec.trainer.resourcesPerNode: {problem}"))
    if any(v.severity == "error" for v in out):
        return out, {}
    effective = effective_resources(entry.jobs, sites, per_node, topo, native=config.mode == "native")
    for one in effective.values():
        out += memo.validate_effective(one)
    return out, effective


class Memo:
    """What one render computes once and reuses: bundles repeat the same few sizes across many
    TrainJobs, so validating, naming and deriving each distinct case once keeps the cost in what
    is distinct, not in what is repeated."""

    __slots__ = (
        "bound",
        "checked",
        "clean",
        "derived",
        "dumped",
        "evaluated",
        "managers",
        "names",
        "plans",
        "pod_parts",
        "quiet",
        "spellings",
        "validated",
    )

    def __init__(self) -> None:
        self.derived: dict[Identity, Derived] = {}
        self.spellings: dict[Identity, str] = {}  # the overrides as written into each derived runtime
        self.validated: dict[Any, tuple[list[Violation], dict[ContainerKey, Effective]]] = {}
        self.clean: dict[Any, dict[ContainerKey, Effective]] = {}
        self.managers: dict[tuple[str, ...], bool] = {}
        self.quiet: dict[Any, list[Violation]] = {}
        # the last item keeps the effective resources alive, so that their ids in the key stay theirs
        self.plans: dict[Any, tuple[Plan, Any]] = {}
        self.checked: dict[str, list[Violation]] = {}
        self.names: dict[tuple[int, str, str, str], str] = {}
        self.dumped: dict[int, tuple[str, dict[str, Any]]] = {}
        self.evaluated: dict[tuple[int, str, Topology, tuple[str, ...], int | None, str], list[Violation]] = {}
        self.pod_parts: dict[Any, PodParts] = {}
        self.bound = OutputBound()  # the derived runtimes admitted, in the TrainJobs' order

    def validate(
        self,
        trainjob: TrainJob,
        per_node: dict[str, Any] | None,
        entry: RuntimeEntry,
        sites: list[ContainerSite],
        config: Options,
        topo: Topology,
    ) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
        """``_validate``, once per distinct case. What it reads: the runtime, the managers, where each
        patched job and container is (indices, names, lists), whether a container patch sets env,
        the resources and resourcesPerNode as written (``repr`` keeps key order and types apart),
        and the topology (trainer containers)."""
        patches = trainjob.spec.runtime_patches or []
        managers = tuple(p.manager for p in patches)
        # Where things are (indices, managers) only decides where violations point and what they
        # say. A case without violations is reused for any TrainJob of the same shape, whatever
        # its managers are called (as long as they are valid): its effective resources remember
        # another TrainJob's managers, which only messages would show.
        jobs = list(job_sites(trainjob))
        written = (repr([s.resources for s in sites]), repr(per_node), topo)
        shape = (
            id(entry),
            config.trainer_resources,
            tuple(s.job for s in jobs),
            tuple((s.container_list, s.name, bool(s.patch.env)) for s in sites),
            *written,
        )
        clean = self.clean.get(shape)
        if clean is not None and self._valid_managers(managers):
            return [], clean
        key = (
            id(entry),  # entries live as long as this render
            config.trainer_resources,
            managers,
            tuple((s.patch_index, s.job_index, s.job) for s in jobs),
            tuple(
                (s.job_site.patch_index, s.job_site.job_index, s.container_list, s.index, s.name, bool(s.patch.env))
                for s in sites
            ),
            *written,
        )
        found = self.validated.get(key)
        if found is None:
            found = self.validated[key] = _validate(trainjob, per_node, entry, sites, config, self, topo)
            if not found[0]:
                self.clean[shape] = found[1]
        return list(found[0]), found[1]

    def _valid_managers(self, managers: tuple[str, ...]) -> bool:
        valid = self.managers.get(managers)
        if valid is None:
            valid = self.managers[managers] = not validate_managers(list(managers))
        return valid

    def validate_effective(self, effective: Effective) -> list[Violation]:
        sources = sorted((f"{s}/{k}", src.label, src.path or "") for (s, k), src in effective.sources.items())
        patched = [(src.label, src.path or "") for src in effective.patched_by]
        key = dump([effective.requirements, sources, patched])
        found = self.checked.get(key)
        if found is None:
            found = self.checked[key] = validate_effective(effective)
        return found

    def evaluate(
        self,
        trainjob: TrainJob,
        per_node: dict[str, Any] | None,
        namespace: str,
        entry: RuntimeEntry,
        sites: list[ContainerSite],
        bundle: Bundle,
        config: Options,
        topo: Topology,
    ) -> list[Violation]:
        """Policy and the resource summary read only the namespace, the runtime, ``trainer.numNodes``,
        ``trainer.resourcesPerNode``, the patches' resources (where they are, what they say, and
        which manager's patch they are from: findings name it) and the topology (labels, trainer
        containers, container order). How many pods there are is the last step: TrainJobs that
        differ in ``numNodes`` alone share the pods' parts (``explain.PodParts``)."""
        trainer = trainjob.spec.trainer
        policed = bundle.namespace_policy("LimitRange", namespace) or bundle.namespace_policy(
            "ResourceQuota", namespace
        )
        where = namespace if policed else ""  # without policy objects the namespace changes nothing
        num_nodes = trainer.num_nodes if trainer else None
        # Where the patched resources are only decides where violations point: a case whose only
        # finding is the summary (which names no field) is reused whatever the paths.
        shape = (
            id(entry),
            where,
            topo,
            repr([num_nodes, per_node, [(s.key, s.resources) for s in sites if s.resources is not None]]),
        )
        quiet = self.quiet.get(shape)
        if quiet is not None:
            return quiet
        patched = [(s.resources_path, s.key, s.resources) for s in sites if s.resources is not None]
        try:
            written = dump([per_node, patched])
        except (TypeError, ValueError):  # keys JSON cannot sort: compute, do not remember
            return evaluate(trainjob, namespace, entry, sites, bundle, config)
        # Findings name the patch (its manager) each value is from.
        managers = tuple(p.manager for p in trainjob.spec.runtime_patches or [])
        key = (id(entry), where, topo, managers, num_nodes, written)
        found = self.evaluated.get(key)
        if found is None:
            # The pods themselves, but for how many, read what the key reads less numNodes.
            reuse = (self.pod_parts, (id(entry), where, topo, managers, written))
            found = self.evaluated[key] = evaluate(trainjob, namespace, entry, sites, bundle, config, reuse)
            if all(v.severity == "info" and not v.path for v in found):
                self.quiet[shape] = found
        return found

    def plan(
        self,
        entry: RuntimeEntry,
        all_effective: dict[ContainerKey, Effective],
        sites: list[ContainerSite],
        topo: Topology,
    ) -> Plan:
        """What a derived runtime folds in (the effective resources of all but the trainer
        container), the canonical overrides its name hashes, and the description of each change;
        once per distinct case (the effective resources come from this memo, so their identity
        stands for their content, the resources as written included)."""
        key = (id(entry), topo.trainers, tuple((k, id(e)) for k, e in all_effective.items()))
        found = self.plans.get(key)
        if found is None:
            found = self.plans[key] = (_plan(all_effective, sites, topo), all_effective)
        return found[0]

    def derived_name(self, entry: RuntimeEntry, kind: str, namespace: str, overrides: dict[str, Any]) -> str:
        # A memoized plan's overrides are one object for all its TrainJobs: dumped once per object
        # (``dumped`` keeps it alive, so that its id stays its own).
        known = self.dumped.get(id(overrides))
        if known is None:
            known = self.dumped[id(overrides)] = (dump(overrides), overrides)
        key = (id(entry), kind, namespace, known[0])  # entries live as long as this render
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = derived_name(entry.item, kind, namespace, overrides, entry.cluster_name)
        return name

    def derive(self, identity: Identity, entry: RuntimeEntry, namespace: str, plan: Plan) -> Derived:
        """The derived runtime of ``identity``, made once. TrainJobs that spell one override
        differently (``64Gi``, ``65536Mi``) share it: it is written with the spelling that sorts
        first, so that the order of the input changes nothing."""
        current = self.derived.get(identity)
        if current is not None and self.spellings[identity] <= plan.spelling:
            return current
        kind, _, name = identity
        derived = derive_runtime(entry.item, kind, namespace, plan.effective, name, plan.overrides, entry.cluster_name)
        self.derived[identity] = derived
        self.spellings[identity] = plan.spelling
        return derived


class Plan(Record):
    __slots__ = ("described", "effective", "overrides", "spelling")

    def __init__(
        self,
        effective: dict[ContainerKey, Effective],
        overrides: dict[str, Any],
        described: list[str],
        spelling: str | None = None,
    ) -> None:
        # Empty when no patch says anything: nothing is derived. An override that says something
        # derives even when it equals the runtime's value today: the name must not depend on the
        # base's content (the stateless paths never see their earlier output).
        self.effective: Final = effective
        self.overrides: Final = overrides
        self.described: Final = described
        self.spelling: Final = dump(overrides_of(effective)) if spelling is None else spelling

    def __reduce__(self) -> tuple[type[Plan], tuple[Any, ...]]:
        # Across processes (cli/fan_out.py) only what Memo.derive reads: where each container is,
        # its resources, the overrides and their spelling.
        folded = {key: Effective(one.container, one.requirements) for key, one in self.effective.items()}
        return Plan, (folded, self.overrides, self.described, self.spelling)


def _plan(all_effective: dict[ContainerKey, Effective], sites: list[ContainerSite], topo: Topology) -> Plan:
    composed: dict[ContainerKey, dict[str, Any]] = {}
    for site in sites:
        if site.resources is not None and site.key in all_effective and not topo.is_trainer(*site.key):
            composed[site.key] = compose_patches(composed.get(site.key), site.resources)
    # A container whose patches say nothing (``{}``, ``limits: {}``) is not touched, nor named.
    canonical = {k: patch for k in sorted(composed) if (patch := canonical_patch(composed[k]))}
    effective = {k: all_effective[k] for k in canonical}
    if not effective:
        return Plan({}, {}, [])
    overrides = {"/".join(k): patch for k, patch in canonical.items()}
    described = [_describe(k, e) for k, e in sorted(effective.items())]
    return Plan(effective, overrides, described)


def _by_value(requirements: dict[str, Any]) -> dict[str, Any]:
    out = clean_requirements(requirements)
    for section in ("limits", "requests"):
        if isinstance(out.get(section), dict):
            out[section] = {k: canonical_quantity(v) for k, v in out[section].items()}
    return out


def _writes_resources(raw: Any) -> bool:
    """Whether any ContainerPatch has a ``resources`` key, ``null`` included (which the models read
    as absent): upstream's ContainerPatch has no such field, so it must not reach the cluster."""
    return next(_resources_paths(raw), None) is not None


def _resources_paths(raw: Any) -> Iterator[str]:
    """The field path of every ContainerPatch's ``resources`` key, ``null`` included, in order."""
    patches = raw.get("spec", {}).get("runtimePatches") if isinstance(raw, dict) else None
    for p, patch in enumerate(patches if isinstance(patches, list) else []):
        jobs: Any = patch
        for key in JOB_CHAIN:
            jobs = jobs.get(key) if isinstance(jobs, dict) else None
        for j, job in enumerate(jobs if isinstance(jobs, list) else []):
            pod: Any = job
            for key in POD_CHAIN:
                pod = pod.get(key) if isinstance(pod, dict) else None
            for list_name in ("initContainers", "containers"):
                entries = pod.get(list_name) if isinstance(pod, dict) else None
                for c, entry in enumerate(entries if isinstance(entries, list) else []):
                    if isinstance(entry, dict) and "resources" in entry:
                        job_path = ".".join([f"spec.runtimePatches[{p}]", *JOB_CHAIN])
                        pod_path = ".".join([f"{job_path}[{j}]", *POD_CHAIN])
                        yield f"{pod_path}.{list_name}[{c}].resources"


def _materialize(
    item: Item,
    work: MappingNode | None,
    trainjob: TrainJob,
    raw: Any,
    entry: RuntimeEntry,
    sites: list[ContainerSite],
    all_effective: dict[ContainerKey, Effective],
    config: Options,
    outcome: Outcome,
    bundle: Bundle,
    memo: Memo,
    topo: Topology,
) -> None:
    """Rewrite the TrainJob (in place when nothing was restored: it is valid, so it changes anyway)."""
    trainer_sites = [s for s in sites if s.resources is not None and topo.is_trainer(*s.key)]
    kind = config.derived_runtime_kind
    plan = memo.plan(entry, all_effective, sites, topo)
    request: DeriveRequest | None = None
    # runtimeRef is immutable (CEL self == oldSelf, pkg/apis/trainer/v1alpha1/trainjob_types.go), and
    # kustomize, Argo CD and Helm render from the source every time: whether an override derives,
    # and the name, depend on the TrainJob's text alone, never on the base's content.
    if plan.effective:
        if kind == CLUSTER_RUNTIME_KIND and entry.local and not entry.platform:
            outcome.violations.append(_tenant_cluster_runtime(entry, sites, plan))
            return
        keyed = name_keyed_violations(trainjob, entry, [s for s in sites if s.key in plan.effective], kind)
        outcome.violations += keyed
        if any(v.severity == "error" for v in keyed):
            return
        name = memo.derived_name(entry, kind, item.namespace, plan.overrides)
        identity = (kind, "" if kind == CLUSTER_RUNTIME_KIND else item.namespace, name)
        clash = bundle.names.get(identity)
        if clash is not None and clash.annotation(DERIVED_FROM) is None and clash.annotation(old(DERIVED_FROM)) is None:
            outcome.violations.append(
                Violation(
                    "spec.runtimeRef",
                    f"the derived runtime would be {kind} {name!r}, but an unrelated object of that name is in "
                    "the bundle: rename that object (nothing was changed)",
                )
            )
            return
        assert entry.model is not None
        refused = webhook_violations(entry.model, entry.display, kind)
        if refused:
            outcome.violations += refused
            return
        too_much = memo.bound.admit(identity, entry.item, entry.display, len(plan.spelling))
        if too_much is not None:
            outcome.violations.append(too_much)
            return
        request = DeriveRequest(identity, entry.identity, item.namespace, plan)
    if work is None:
        assert isinstance(item.node, MappingNode)
        work = item.node
    removed = strip_resources(work)
    if trainer_sites:
        written = without_nulls(resources_per_node(trainjob))
        moved = _moved(entry, trainer_sites, written, topo)[0]
        assert moved is not None  # _validate refused the patches that cannot move
        if has_provenance(item.node) and _by_value(moved) != _by_value(written or {}):
            outcome.violations.append(_trainer_changed(trainer_sites[0]))
        _move_to_resources_per_node(work, moved, outcome)
        removed = [r for r in removed if not any(r.container == s.name and r.job == s.job for s in trainer_sites)]
    if request is not None:
        _, scope, derived_name = request.identity
        target = Item(work)  # edits of its own: the TrainJob's item stays as read if it fails after all
        if work is item.node:
            target.read_like(item)
        point_at(target, kind, scope, derived_name, raw["spec"]["runtimeRef"], removed)
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


def _tenant_cluster_runtime(entry: RuntimeEntry, sites: list[ContainerSite], plan: Plan) -> Violation:
    """derivedRuntimeKind ClusterTrainingRuntime from a repository's local-config copy: two
    Applications with different copies of one base would emit one cluster-scoped object (one name:
    the name hashes the base's identity, not its content) with different contents."""
    site = next(s for s in sites if s.resources is not None and s.key in plan.effective)
    return Violation(
        site.resources_path,
        f"derivedRuntimeKind ClusterTrainingRuntime needs the base runtime from the platform, but "
        f"{entry.display} is this repository's local-config copy: another repository's copy (another "
        "version) would give the same cluster-scoped name with other content, and the two deployers would "
        "overwrite each other. Use derivedRuntimeKind: TrainingRuntime (the default), or let the platform "
        "supply the runtime (`trainjob-resources render --runtimes PATH`, or the runtime itself in the bundle)",
    )


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


def _moved(
    entry: RuntimeEntry, sites: list[ContainerSite], per_node: dict[str, Any] | None, topo: Topology
) -> tuple[dict[str, Any] | None, str | None]:
    """The resourcesPerNode that moving the trainer containers' patches would write (``per_node``)."""
    assert entry.model is not None
    patches = [s.resources for s in sites if s.resources is not None and topo.is_trainer(*s.key)]
    if not patches:
        return None, None
    differ = reader_differs(entry.model, entry.jobs, topo) or _trainers_differ(entry, sites, topo)
    if differ is not None:
        return None, differ
    claims = []
    for job in sorted(topo.trainers):
        info = entry.jobs.get(job)
        container = info.containers.get(("containers", TRAINER_CONTAINER)) if info else None
        for claim in (container.resources.get("claims") if container is not None else None) or []:
            claims.append(str(claim.get("name")) if isinstance(claim, dict) else str(claim))
    return moved_resources(patches, per_node, runtime_node_resources(entry.model, entry.jobs, topo), claims)


def _trainers_differ(entry: RuntimeEntry, sites: list[ContainerSite], topo: Topology) -> str | None:
    """resourcesPerNode sizes every trainer container (``newRuntimeInfo``,
    pkg/runtime/core/trainingruntime.go: with mpi.runLauncherAsNode, the labelled launcher and the
    ``node`` job both): a move keeps the pods as patched only when the patches leave them all equal."""
    if len(topo.trainers) < 2:
        return None
    composed: dict[str, dict[str, Any]] = {}
    for site in sites:
        if site.resources is not None and topo.is_trainer(*site.key):
            composed[site.job] = compose_patches(composed.get(site.job), site.resources)
    results: dict[str, dict[str, Any]] = {}
    for job in sorted(topo.trainers):
        info = entry.jobs.get(job)
        container = info.containers.get(("containers", TRAINER_CONTAINER)) if info else None
        results[job] = merge_requirements(container.resources if container is not None else {}, composed.get(job))
    values = [_by_value(r) for r in results.values()]
    if all(v == values[0] for v in values):
        return None
    named = ", ".join(f"{job}/containers/{TRAINER_CONTAINER} ({dump(r)})" for job, r in results.items())
    return (
        f"resourcesPerNode sizes all the trainer containers alike ({named}), but the patches leave them "
        "different: give each of them the same resources in the patches, or write "
        "spec.trainer.resourcesPerNode yourself (and no resources for these containers)"
    )


def _move_to_resources_per_node(work: MappingNode, moved: dict[str, Any], outcome: Outcome) -> None:
    trainer = yn.ensure_map(yn.ensure_map(work, "spec"), "trainer")
    yn.set_key(trainer, "resourcesPerNode", yn.from_python(moved))
    outcome.changes.append(f"trainer container resources moved to spec.trainer.resourcesPerNode: {dump(moved)}")


def _describe(key: ContainerKey, effective: Effective) -> str:
    job, list_name, name = key
    before = effective.container.resources
    after = effective.requirements
    changes = []
    for section in ("limits", "requests"):
        old = before.get(section) or {}
        new = after.get(section) or {}
        for resource in sorted(set(old) | set(new)):
            if old.get(resource) != new.get(resource):
                changes.append(f"{section}.{resource} {old.get(resource, '(none)')} -> {new.get(resource, '(none)')}")
    if (before.get("claims") or []) != (after.get("claims") or []):
        changes.append("claims changed")
    return f"{job}/{list_name}/{name}: {', '.join(changes) or 'unchanged'}"
