"""The pipeline: index the bundle, then for each TrainJob resolve, validate and materialize.

Pure: it takes a ResourceList and returns it with items rewritten and results added. A TrainJob
with an error is returned exactly as written, and so is the derived runtime it still uses.
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node

from . import textedit
from . import yamlnodes as yn
from .bundle import Bundle, Identity, RuntimeEntry, identity_of, index, resolve
from .config import ConfigError, FunctionConfig, parse_config
from .crd_rules import crd_violations
from .effective import ContainerKey, Effective, effective_resources
from .krm import Item, ResourceList, Result
from .materialize import (
    Derived,
    derive_runtime,
    derived_name,
    overrides_of,
    place_next_to,
    point_at,
    strip_resources,
    with_internal_annotations,
)
from .merge import without_nulls
from .models import CLUSTER_RUNTIME_KIND, TrainJob, parse_trainjob, resources_per_node
from .per_node import ignored_per_node, moved_resources, pruned_nulls, runtime_node_resources
from .policy import evaluate
from .provenance import DERIVED_FROM, ProvenanceError, dump, has_provenance, restore
from .records import MutableRecord
from .runtime_name import name_keyed_violations
from .sites import ContainerSite, container_sites, job_sites
from .topology import Topology, topology
from .validate import (
    validate_container_site,
    validate_effective,
    validate_job_site,
    validate_managers,
)
from .violations import Violation


class Outcome(MutableRecord):
    """What processing one TrainJob produced."""

    __slots__ = ("changes", "derived", "node", "violations")

    def __init__(self, violations: list[Violation] | None = None) -> None:
        self.violations = [] if violations is None else violations
        self.node: MappingNode | None = None  # the rewritten TrainJob, when it changed
        self.derived: Derived | None = None
        self.changes: list[str] = []

    @property
    def failed(self) -> bool:
        return any(v.severity == "error" for v in self.violations)


def process(resource_list: ResourceList) -> ResourceList:
    config_item = resource_list.function_config
    try:
        config = parse_config(config_item.value() if config_item is not None else None)
    except ConfigError as err:
        for v in err.violations:
            ref = config_item.ref if config_item is not None else None
            file = config_item.file if config_item is not None else None
            resource_list.results.append(
                Result(f"functionConfig: {v.message}", "error", ref, v.path, v.current_value, None, file)
            )
        return resource_list
    bundle = index(resource_list.items)
    for entry in bundle.runtimes.values():
        for v in entry.violations:
            resource_list.results.append(
                entry.item.result(f"runtime cannot be read: {v.message}", "error", v.path, v.current_value)
            )
    memo = Memo()
    derived_out = memo.derived
    still_used: set[Identity] = set()
    for item in bundle.trainjobs:
        unusable = item.verify()
        if unusable is not None:
            resource_list.results.append(unusable)
            item.settle()
            continue
        outcome = process_trainjob(item, bundle, config, memo)
        for v in outcome.violations:
            resource_list.results.append(
                item.result(v.message, v.severity, v.path or None, v.current_value, v.proposed_value)
            )
        if outcome.failed or outcome.node is None:
            still_used.add(_current_ref(item))
        else:
            item.node = outcome.node
            if outcome.derived is not None:
                if outcome.derived.identity not in derived_out:
                    derived_out[outcome.derived.identity] = outcome.derived
                    place_next_to(outcome.derived, item)
                still_used.add(outcome.derived.identity)
            resource_list.results.append(item.result("; ".join(outcome.changes), "info"))
        item.settle()  # one TrainJob's tree at a time: a 5,000-TrainJob bundle stays small in memory
    resource_list.items = _with_derived(resource_list.items, bundle, derived_out, still_used)
    return resource_list


def _current_ref(item: Item) -> Identity:
    ref = yn.get_path(item.node, "spec", "runtimeRef")
    kind = yn.scalar(yn.get(ref, "kind")) or CLUSTER_RUNTIME_KIND
    name = yn.scalar(yn.get(ref, "name")) or ""
    return (kind, "" if kind == CLUSTER_RUNTIME_KIND else item.namespace, name)


def _with_derived(
    items: list[Item], bundle: Bundle, derived_out: dict[Identity, Derived], still_used: set[Identity]
) -> list[Item]:
    """Replace regenerated derived runtimes in place, drop orphans, append new ones."""
    out: list[Item] = []
    placed: set[Identity] = set()
    for item in items:
        identity = identity_of(item)
        if identity in bundle.derived and bundle.derived[identity] is item:
            fresh = derived_out.get(identity)
            if fresh is not None:
                with_internal_annotations(fresh.node, item)
                out.append(fresh.item())
                placed.add(identity)
            elif identity in still_used:
                out.append(item)
            continue
        out.append(item)
    out.extend(d.item() for identity, d in derived_out.items() if identity not in placed)
    return out


def process_trainjob(item: Item, bundle: Bundle, config: FunctionConfig, memo: Memo | None = None) -> Outcome:
    """Resolve, validate and (in materialize mode) rewrite one TrainJob; ``item`` itself is not changed."""
    assert isinstance(item.node, MappingNode)
    work: MappingNode | None = None
    if has_provenance(item.node):
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
    resolution = resolve(bundle, trainjob.spec.runtime_ref, item.namespace)
    if resolution.entry is None:
        assert resolution.violation is not None
        return Outcome([resolution.violation])
    entry = resolution.entry
    if entry.model is None:
        return Outcome([Violation("spec.runtimeRef", f"{entry.display} cannot be read (see its errors)")])
    sites = list(container_sites(trainjob, raw))
    per_node = resources_per_node(trainjob)
    topo = topology(entry.model, trainjob, sites, config.mode)
    memo = memo or Memo()
    found, effective = memo.validate(trainjob, per_node, entry, sites, config, topo)
    outcome = Outcome(crd_violations(raw, config.mode) + found)
    if not outcome.failed:
        outcome.violations += memo.evaluate(trainjob, per_node, item.namespace, entry, sites, bundle, config, topo)
    if outcome.failed or config.mode == "native":
        return outcome
    if not any(s.resources is not None for s in sites):
        if work is not None:
            outcome.node = work
            outcome.changes.append("no resources in runtimePatches any more: runtimeRef restored")
        return outcome
    _materialize(item, work, trainjob, raw, entry, sites, effective, config, outcome, bundle, memo, topo)
    return outcome


def _validate(
    trainjob: TrainJob,
    per_node: dict[str, Any] | None,
    entry: RuntimeEntry,
    sites: list[ContainerSite],
    config: FunctionConfig,
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
    if problem is not None and config.trainer_resources == "moveToResourcesPerNode":
        first = next(s for s in sites if s.resources is not None and topo.is_trainer(*s.key))
        out.append(Violation(first.resources_path, f"cannot be moved to spec.trainer.resourcesPerNode: {problem}"))
    if config.mode == "materialize":
        out += name_keyed_violations(trainjob, entry, sites, topo, config.derived_runtime_kind)
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

    __slots__ = ("checked", "clean", "derived", "evaluated", "managers", "names", "plans", "quiet", "validated")

    def __init__(self) -> None:
        self.derived: dict[Identity, Derived] = {}
        self.validated: dict[Any, tuple[list[Violation], dict[ContainerKey, Effective]]] = {}
        self.clean: dict[Any, dict[ContainerKey, Effective]] = {}
        self.managers: dict[tuple[str, ...], bool] = {}
        self.quiet: dict[Any, list[Violation]] = {}
        # the last item keeps the effective resources alive, so that their ids in the key stay theirs
        self.plans: dict[Any, tuple[dict[ContainerKey, Effective], str, list[str], Any]] = {}
        self.checked: dict[str, list[Violation]] = {}
        self.names: dict[tuple[int, str], str] = {}
        self.evaluated: dict[tuple[int, str, Topology, str], list[Violation]] = {}

    def validate(
        self,
        trainjob: TrainJob,
        per_node: dict[str, Any] | None,
        entry: RuntimeEntry,
        sites: list[ContainerSite],
        config: FunctionConfig,
        topo: Topology,
    ) -> tuple[list[Violation], dict[ContainerKey, Effective]]:
        """``_validate``, once per distinct case. What it reads: the runtime, the managers, where each
        patched job and container is (indices, names, lists), whether a container patch sets env,
        the resources and resourcesPerNode as written (``repr`` keeps key order and types apart),
        the topology (trainer containers), and for torchtune the trainer's command."""
        patches = trainjob.spec.runtime_patches or []
        managers = tuple(p.manager for p in patches)
        # Where things are (indices, managers) only decides where violations point and what they
        # say. A case without violations is reused for any TrainJob of the same shape, whatever
        # its managers are called (as long as they are valid): its effective resources remember
        # another TrainJob's managers, which only messages would show.
        jobs = list(job_sites(trainjob))
        written = (repr([s.resources for s in sites]), repr(per_node), topo, _command(trainjob))
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
        config: FunctionConfig,
        topo: Topology,
    ) -> list[Violation]:
        """Policy and the resource summary read only the namespace, the runtime, ``trainer.numNodes``,
        ``trainer.resourcesPerNode``, the patches' resources (where they are and what they say) and
        the topology (labels, trainer containers, container order)."""
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
            key = (id(entry), where, topo, dump([num_nodes, per_node, patched]))
        except (TypeError, ValueError):  # keys JSON cannot sort: compute, do not remember
            return evaluate(trainjob, namespace, entry, sites, bundle, config)
        found = self.evaluated.get(key)
        if found is None:
            found = self.evaluated[key] = evaluate(trainjob, namespace, entry, sites, bundle, config)
            if all(v.severity == "info" and not v.path for v in found):
                self.quiet[shape] = found
        return found

    def plan(
        self, entry: RuntimeEntry, kind: str, all_effective: dict[ContainerKey, Effective], topo: Topology
    ) -> tuple[dict[ContainerKey, Effective], str, list[str]]:
        """What a derived runtime folds in (the effective resources of all but the trainer
        container), its name and the description of each change; once per distinct case (the
        effective resources come from this memo, so their identity stands for their content)."""
        key = (id(entry), kind, topo.trainers, tuple((k, id(e)) for k, e in all_effective.items()))
        found = self.plans.get(key)
        if found is None:
            effective = {k: e for k, e in all_effective.items() if not topo.is_trainer(*k)}
            name = self.derived_name(entry, kind, overrides_of(effective)) if effective else ""
            described = [_describe(k, e) for k, e in sorted(effective.items())]
            found = self.plans[key] = (effective, name, described, all_effective)
        return found[0], found[1], found[2]

    def derived_name(self, entry: RuntimeEntry, kind: str, overrides: dict[str, Any]) -> str:
        key = (id(entry), dump([kind, overrides]))  # entries live as long as this render
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = derived_name(entry.item, kind, overrides)
        return name


def _materialize(
    item: Item,
    work: MappingNode | None,
    trainjob: TrainJob,
    raw: Any,
    entry: RuntimeEntry,
    sites: list[ContainerSite],
    all_effective: dict[ContainerKey, Effective],
    config: FunctionConfig,
    outcome: Outcome,
    bundle: Bundle,
    memo: Memo,
    topo: Topology,
) -> None:
    """Rewrite the TrainJob (in place when nothing was restored: it is valid, so it changes anyway)."""
    trainer_sites = [s for s in sites if s.resources is not None and topo.is_trainer(*s.key)]
    kind = config.derived_runtime_kind
    effective, name, described = memo.plan(entry, kind, all_effective, topo)
    derived: Derived | None = None
    if effective:
        identity = (kind, "" if kind == CLUSTER_RUNTIME_KIND else item.namespace, name)
        clash = bundle.names.get(identity)
        if clash is not None and clash.annotation(DERIVED_FROM) is None:
            outcome.violations.append(
                Violation(
                    "spec.runtimeRef",
                    f"the derived runtime would be {kind} {name!r}, but an unrelated object of that name is in "
                    "the bundle: rename that object (nothing was changed)",
                )
            )
            return
        derived = memo.derived.get(identity) or derive_runtime(entry.item, kind, item.namespace, effective, name)
    if work is None:
        assert isinstance(item.node, MappingNode)
        work = item.node
    removed = strip_resources(work)
    if trainer_sites:
        moved = _moved(entry, trainer_sites, without_nulls(resources_per_node(trainjob)), topo)[0]
        assert moved is not None  # _validate refused the patches that cannot move
        _move_to_resources_per_node(work, moved, outcome)
        removed = [r for r in removed if not any(r.container == s.name and r.job == s.job for s in trainer_sites)]
    if derived is not None:
        point_at(Item(work), derived, raw["spec"]["runtimeRef"], removed)
        outcome.derived = derived
        where = f"{derived.namespace}/" if derived.namespace else ""
        outcome.changes.insert(0, f"runtime {entry.display} materialized as {derived.kind} {where}{derived.name}")
        outcome.changes += described
    outcome.node = work


def _copy(node: Node) -> MappingNode:
    copied = textedit.copy(node)
    assert isinstance(copied, MappingNode)
    return copied


def _command(trainjob: TrainJob) -> Any:
    trainer = trainjob.spec.trainer
    return repr((trainer.model_extra or {}).get("command")) if trainer is not None else None


def _moved(
    entry: RuntimeEntry, sites: list[ContainerSite], per_node: dict[str, Any] | None, topo: Topology
) -> tuple[dict[str, Any] | None, str | None]:
    """The resourcesPerNode that moving the trainer containers' patches would write (``per_node``)."""
    assert entry.model is not None
    patches = [s.resources for s in sites if s.resources is not None and topo.is_trainer(*s.key)]
    if not patches:
        return None, None
    return moved_resources(patches, per_node, runtime_node_resources(entry.model, entry.jobs, topo))


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
