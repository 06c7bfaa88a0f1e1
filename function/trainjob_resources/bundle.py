"""The bundle's runtimes, indexed once, and the resolution of a TrainJob's ``spec.runtimeRef``."""

from __future__ import annotations

from typing import Final

from .krm import Item
from .models import (
    CLUSTER_RUNTIME_KIND,
    NAMESPACED_RUNTIME_KIND,
    RUNTIME_KINDS,
    TRAINER_GROUP,
    TRAINJOB_KIND,
    RuntimeRef,
)
from .provenance import DERIVED_FROM, old
from .records import MutableRecord, Record
from .runtime_view import JobInfo, RuntimeSpec, jobs_of, parse_runtime
from .violations import Violation

Identity = tuple[str, str, str]  # kind, namespace, name


def identity_of(item: Item) -> Identity:
    """Kind, namespace, name; a ClusterTrainingRuntime has no namespace, even if one was stamped on
    it (kustomize's ``namespace:`` does that to kinds it does not know are cluster-scoped)."""
    namespace = "" if item.kind == CLUSTER_RUNTIME_KIND else item.namespace
    return (item.kind, namespace, item.name)


NAMESPACE_POLICY_KINDS = ("LimitRange", "ResourceQuota")


class RuntimeEntry(MutableRecord):
    __slots__ = ("item", "jobs", "model", "violations")

    def __init__(
        self, item: Item, model: RuntimeSpec | None, violations: list[Violation], jobs: dict[str, JobInfo]
    ) -> None:
        self.item = item
        self.model = model
        self.violations = violations
        self.jobs = jobs

    @property
    def identity(self) -> Identity:
        return identity_of(self.item)

    @property
    def display(self) -> str:
        return self.item.ref.display()


class Bundle(MutableRecord):
    __slots__ = ("_namespace_policy", "derived", "names", "runtimes", "trainjobs")

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

    def namespace_policy(self, kind: str, namespace: str) -> list[Item]:
        """The v1 LimitRanges or ResourceQuotas of ``namespace`` in the bundle, by name (indexed on first use)."""
        if self._namespace_policy is None:
            found: dict[tuple[str, str], list[Item]] = {}
            for (k, ns, _), item in self.names.items():
                if k in NAMESPACE_POLICY_KINDS and item.api_version == "v1":
                    found.setdefault((k, ns), []).append(item)
            self._namespace_policy = {key: sorted(items, key=lambda i: i.name) for key, items in found.items()}
        return self._namespace_policy.get((kind, namespace), [])

    def add(self, item: Item) -> None:
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
            if item.annotation(DERIVED_FROM) is not None or item.annotation(old(DERIVED_FROM)) is not None:
                self.derived[identity] = item
                return
            model, violations = parse_runtime(item.value())
            jobs = jobs_of(model) if model is not None else {}
            self.runtimes[identity] = RuntimeEntry(item, model, violations, jobs)


def index(items: list[Item]) -> Bundle:
    bundle = Bundle()
    for item in items:
        bundle.add(item)
    return bundle


class Resolution(Record):
    __slots__ = ("entry", "violation")

    def __init__(self, entry: RuntimeEntry | None, violation: Violation | None = None) -> None:
        self.entry: Final = entry
        self.violation: Final = violation


def resolve(bundle: Bundle, ref: RuntimeRef, namespace: str) -> Resolution:
    """The runtime a TrainJob in ``namespace`` names, or why it cannot be used."""
    group = ref.api_group or TRAINER_GROUP
    kind = ref.kind or CLUSTER_RUNTIME_KIND
    if group != TRAINER_GROUP:
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.apiGroup",
                f"runtimeRef names apiGroup {group!r}, not {TRAINER_GROUP!r}: left unchanged",
                severity="warning",
                current_value=group,
            ),
        )
    if kind not in RUNTIME_KINDS:
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.kind",
                f"runtimeRef.kind must be {CLUSTER_RUNTIME_KIND} or {NAMESPACED_RUNTIME_KIND}",
                current_value=kind,
            ),
        )
    where = "" if kind == CLUSTER_RUNTIME_KIND else namespace
    entry = bundle.runtimes.get((kind, where, ref.name))
    if entry is not None:
        return Resolution(entry)
    if kind == NAMESPACED_RUNTIME_KIND:
        elsewhere = sorted(ns for (k, ns, n) in bundle.runtimes if k == kind and n == ref.name)
        if elsewhere:
            return Resolution(
                None,
                Violation(
                    "spec.runtimeRef",
                    f"TrainingRuntime {ref.name!r} is in namespace {', '.join(repr(n) for n in elsewhere)}, "
                    f"but a TrainingRuntime must be in the TrainJob's namespace {namespace or '(none)'!r}",
                    current_value=ref.name,
                ),
            )
    other = NAMESPACED_RUNTIME_KIND if kind == CLUSTER_RUNTIME_KIND else CLUSTER_RUNTIME_KIND
    hint = ""
    if any(k == other and n == ref.name for (k, _, n) in bundle.runtimes):
        hint = f"; a {other} of that name exists: set runtimeRef.kind: {other}"
    scope = "" if kind == CLUSTER_RUNTIME_KIND else f" in namespace {namespace or '(none)'!r}"
    return Resolution(
        None,
        Violation(
            "spec.runtimeRef",
            f"{kind} {ref.name!r}{scope} is not in the bundle: it cannot be validated or materialized "
            f"(add it to the kustomization or package){hint}",
            current_value=ref.name,
        ),
    )
