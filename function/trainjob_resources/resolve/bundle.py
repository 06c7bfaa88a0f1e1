"""The bundle's runtimes, indexed once, and what a TrainJob's ``spec.runtimeRef`` resolves to
(``Resolution``; resolved by ``rules/runtime_ref.py``).

A runtime renamed by kustomize (``namePrefix``, ``nameSuffix``) is found by the names it had:
kustomize fixes name references only after every transformer ran, this function included, and it
records each object's earlier names in ``internal.config.kubernetes.io/previousNames`` (older
releases: ``config.kubernetes.io/previousNames``), a comma-separated list.
"""

from __future__ import annotations

from typing import Final

from ..derive.provenance import DERIVED_FROM, old
from ..krm.resource_list import Item
from ..kube.resource_rules import default_requests, validate_resource_requirements
from ..trainer.api import CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND, RUNTIME_KINDS, TRAINER_GROUP, TRAINJOB_KIND
from ..trainer.releases import NEWEST
from ..trainer.runtime_view import JobInfo, RuntimeSpecView, jobs_of, parse_runtime
from ..values.keys import LOCAL_CONFIG, PATH_ANNOTATIONS, PREVIOUS_KINDS, PREVIOUS_NAMES
from ..values.records import MutableRecord, Record
from ..values.violations import Violation

Identity = tuple[str, str, str]  # kind, namespace, name


def identity_of(item: Item) -> Identity:
    """Kind, namespace, name; a ClusterTrainingRuntime has no namespace, even if one was stamped on
    it (kustomize's ``namespace:`` does that to kinds it does not know are cluster-scoped)."""
    namespace = "" if item.kind == CLUSTER_RUNTIME_KIND else item.namespace
    return (item.kind, namespace, item.name)


NAMESPACE_POLICY_KINDS = ("LimitRange", "ResourceQuota")


def previous_names(item: Item) -> list[str]:
    """The names kustomize renamed ``item`` from, of its own kind (earliest first)."""
    for key, kinds_key in zip(PREVIOUS_NAMES, PREVIOUS_KINDS, strict=True):
        names = item.annotation(key)
        if names:
            kinds = (item.annotation(kinds_key) or "").split(",")
            return [n for i, n in enumerate(names.split(",")) if n and (i >= len(kinds) or kinds[i] in ("", item.kind))]
    return []


class RuntimeEntry(MutableRecord):
    __slots__ = ("cluster_name", "invalid", "item", "jobs", "local", "model", "platform", "violations")

    def __init__(
        self,
        item: Item,
        model: RuntimeSpecView | None,
        violations: list[Violation],
        jobs: dict[str, JobInfo],
        platform: bool = False,
    ) -> None:
        self.item = item
        self.model = model
        self.violations = violations
        self.jobs = jobs
        # A reference copy of a runtime installed in the cluster (never emitted).
        self.local = item.annotation(LOCAL_CONFIG) == "true"
        # Supplied by the platform (``render --runtimes``), not by the repository.
        self.platform = platform
        # The name the cluster knows it by: a local-config copy is never emitted, so a kustomize
        # rename (namePrefix, nameSuffix) of it names nothing in the cluster; its first name does.
        earlier = previous_names(item) if self.local else []
        self.cluster_name: str = earlier[0] if earlier else item.name
        # Container resources the API server would refuse (the pods of any TrainJob on it).
        self.invalid = runtime_resource_violations(jobs)

    @property
    def identity(self) -> Identity:
        return identity_of(self.item)

    @property
    def cluster_identity(self) -> Identity:
        kind, namespace, _ = identity_of(self.item)
        return (kind, namespace, self.cluster_name)

    @property
    def renamed_copy(self) -> bool:
        """A local-config copy that kustomize renamed: its name in the bundle is not the cluster's."""
        return self.cluster_name != self.item.name

    @property
    def display(self) -> str:
        kind, namespace, name = self.cluster_identity
        where = f"{namespace}/" if namespace else ""
        return f"{kind} {where}{name}"


def runtime_resource_violations(jobs: dict[str, JobInfo]) -> list[Violation]:
    """Kubernetes' rules on each container's ``resources`` in the runtime, at the runtime's own
    fields (pkg/apis/core/validation/validation.go ``validateResourceRequirements``, as
    ``kube.resource_rules`` ports it): the runtime is a template of the pods, which the API server
    refuses with such resources."""
    out: list[Violation] = []
    for info in sorted(jobs.values(), key=lambda j: j.index):
        for container in sorted(info.containers.values(), key=lambda c: (c.container_list, c.index)):
            if not container.resources:
                continue
            path = "spec.template.spec.replicatedJobs"
            path += f"[{info.index}].template.spec.template.spec.{container.container_list}[{container.index}]"
            found = validate_resource_requirements(default_requests(container.resources), "")
            said = {(v.path, v.message) for v in found}
            written = container.resources.get("requests") or {}
            for v in found:
                section, _, rest = v.path.partition(".") if "[" not in v.path.split(".")[0] else v.path.partition("[")
                name = rest.rstrip("]").split(".")[0] if rest else ""
                # A request defaulted from a bad limit repeats the limit's error: reported once, at the limit.
                limit = (v.path.replace("requests", "limits", 1), v.message)
                if section == "requests" and name and name not in written and limit in said:
                    continue
                full = f"{path}.resources.{v.path}" if v.path else f"{path}.resources"
                message = f"container {container.name!r} of replicated job {info.name!r}: {v.message}"
                out.append(Violation(full, message, v.severity, v.current_value, v.proposed_value))
    return out


class Bundle(MutableRecord):
    __slots__ = (
        "_namespace_policy",
        "_previous",
        "derived",
        "names",
        "refusals",
        "runtimes",
        "trainer_version",
        "trainjobs",
    )

    def __init__(
        self,
        runtimes: dict[Identity, RuntimeEntry] | None = None,
        derived: dict[Identity, Item] | None = None,
        trainjobs: list[Item] | None = None,
        names: dict[Identity, Item] | None = None,
    ) -> None:
        self.runtimes = {} if runtimes is None else runtimes
        self.derived = {} if derived is None else derived
        self.trainjobs = [] if trainjobs is None else trainjobs
        self.names = {} if names is None else names
        self._namespace_policy: dict[tuple[str, str], list[Item]] | None = None
        self._previous: dict[Identity, list[RuntimeEntry]] | None = None
        # The release whose CRDs the runtimes are checked against (``trainerVersion``; set by the
        # pipeline), and what its API server refuses of each runtime (``rules/runtime_schema.py``).
        self.trainer_version: str = NEWEST
        self.refusals: dict[Identity, list[Violation]] = {}

    def renamed(self, identity: Identity) -> list[RuntimeEntry]:
        """The runtimes that were called ``identity`` before kustomize renamed them (indexed on first use)."""
        if self._previous is None:
            found: dict[Identity, list[RuntimeEntry]] = {}
            for (kind, namespace, name), entry in self.runtimes.items():
                for old in dict.fromkeys(previous_names(entry.item)):
                    if old != name:
                        found.setdefault((kind, namespace, old), []).append(entry)
            self._previous = found
        return self._previous.get(identity, [])

    def usable(self) -> set[Identity]:
        """The runtimes' identities a TrainJob can name in the cluster that a message (a near miss, another
        namespace, another kind) may name to the repository: a local-config copy's cluster name, never the
        name kustomize renamed it to (which the cluster does not have); an emitted runtime's names after
        kustomize and before (the ref is rewritten to the new one). Not the namespaced runtimes the
        platform supplies (``render --runtimes``): another team's, perhaps, and a TrainJob's namespace is
        the repository's to write, so it could fish for their names."""
        shown = [e for e in self.runtimes.values() if not (e.platform and e.item.kind == NAMESPACED_RUNTIME_KIND)]
        out = {entry.cluster_identity for entry in shown}
        for entry in shown:
            if not entry.local:
                kind, namespace, _ = entry.identity
                out.update((kind, namespace, name) for name in previous_names(entry.item))
        return out

    def namespace_policy(self, kind: str, namespace: str) -> list[Item]:
        """The v1 LimitRanges or ResourceQuotas of ``namespace`` in the bundle, by name (indexed on first use)."""
        if self._namespace_policy is None:
            found: dict[tuple[str, str], list[Item]] = {}
            for (k, ns, _), item in self.names.items():
                if k in NAMESPACE_POLICY_KINDS and item.api_version == "v1":
                    found.setdefault((k, ns), []).append(item)
            self._namespace_policy = {key: sorted(items, key=lambda i: i.name) for key, items in found.items()}
        return self._namespace_policy.get((kind, namespace), [])

    def add(self, item: Item, platform: bool = False) -> None:
        if item.problem is not None:
            return  # read() reported it; it passes through exactly as written
        if item.kind == TRAINJOB_KIND and item.group == TRAINER_GROUP:
            self.trainjobs.append(item)  # read lazily: nothing else here needs its fields
            return
        identity = identity_of(item)
        self.names.setdefault(identity, item)
        if item.group != TRAINER_GROUP:
            return
        if item.kind in RUNTIME_KINDS:
            # Derived by an earlier render (or saying so: anyone can write the annotation), so this
            # one replaces it when it derives that runtime again; to a TrainJob that names it, it
            # is an ordinary runtime all the same, checked like any other (the trust model, krm.trust).
            if item.annotation(DERIVED_FROM) is not None or item.annotation(old(DERIVED_FROM)) is not None:
                self.derived[identity] = item
            model, violations = parse_runtime(item.value())
            jobs = jobs_of(model) if model is not None else {}
            self.runtimes[identity] = RuntimeEntry(item, model, violations, jobs, platform)


def index(items: list[Item], platform: frozenset[int] = frozenset()) -> Bundle:
    """The bundle; ``platform``: the ids of the items the platform supplied (``render --runtimes``)."""
    bundle = Bundle()
    for item in items:
        bundle.add(item, id(item) in platform)
    return bundle


class Resolution(Record):
    __slots__ = ("absent", "entry", "foreign", "renamed", "violation")

    def __init__(
        self,
        entry: RuntimeEntry | None,
        violation: Violation | None = None,
        renamed: bool = False,
        absent: bool = False,
        foreign: str | None = None,
    ) -> None:
        self.entry: Final = entry
        self.violation: Final = violation
        self.renamed: Final = renamed  # found by a name kustomize renamed it from: the ref needs its new name
        self.absent: Final = absent  # not in the bundle at all: the cluster may have it
        self.foreign: Final = foreign  # the API group of a runtime that is not Trainer's


def path_of(item: Item) -> str | None:
    """The file an item was read from, as the KRM input says (kpt: each item's; kustomize: none)."""
    return next((p for p in map(item.annotation, PATH_ANNOTATIONS) if p), None)
