"""The bundle's runtimes, indexed once, and the resolution of a TrainJob's ``spec.runtimeRef``.

A runtime renamed by kustomize (``namePrefix``, ``nameSuffix``) is found by the names it had:
kustomize fixes name references only after every transformer ran, this function included, and it
records each object's earlier names in ``internal.config.kubernetes.io/previousNames`` (older
releases: ``config.kubernetes.io/previousNames``), a comma-separated list.
"""

from __future__ import annotations

from typing import Final

from ..krm.resource_list import Item
from ..trainer.api import CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND, RUNTIME_KINDS, TRAINER_GROUP, TRAINJOB_KIND
from ..trainer.runtime_view import JobInfo, RuntimeSpec, jobs_of, parse_runtime
from ..trainer.trainjob_view import RuntimeRef
from ..values.records import MutableRecord, Record
from ..values.violations import Severity, Violation
from .provenance import DERIVED_FROM, old

Identity = tuple[str, str, str]  # kind, namespace, name


def identity_of(item: Item) -> Identity:
    """Kind, namespace, name; a ClusterTrainingRuntime has no namespace, even if one was stamped on
    it (kustomize's ``namespace:`` does that to kinds it does not know are cluster-scoped)."""
    namespace = "" if item.kind == CLUSTER_RUNTIME_KIND else item.namespace
    return (item.kind, namespace, item.name)


NAMESPACE_POLICY_KINDS = ("LimitRange", "ResourceQuota")
PREVIOUS_NAMES = ("internal.config.kubernetes.io/previousNames", "config.kubernetes.io/previousNames")
PREVIOUS_KINDS = ("internal.config.kubernetes.io/previousKinds", "config.kubernetes.io/previousKinds")
# How a team supplies a runtime the platform installs in the cluster (the same words everywhere).
SUPPLY_RUNTIME = (
    "add it to the kustomization or package; for a runtime installed in the cluster, add a copy annotated "
    'config.kubernetes.io/local-config: "true" (read, never emitted), or pass one to '
    "`trainjob-resources render` or `explain` with --runtimes PATH"
)


def previous_names(item: Item) -> list[str]:
    """The names kustomize renamed ``item`` from, of its own kind (earliest first)."""
    for key, kinds_key in zip(PREVIOUS_NAMES, PREVIOUS_KINDS, strict=True):
        names = item.annotation(key)
        if names:
            kinds = (item.annotation(kinds_key) or "").split(",")
            return [n for i, n in enumerate(names.split(",")) if n and (i >= len(kinds) or kinds[i] in ("", item.kind))]
    return []


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
    __slots__ = ("_namespace_policy", "_previous", "derived", "names", "runtimes", "trainjobs")

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
    __slots__ = ("absent", "entry", "renamed", "violation")

    def __init__(
        self,
        entry: RuntimeEntry | None,
        violation: Violation | None = None,
        renamed: bool = False,
        absent: bool = False,
    ) -> None:
        self.entry: Final = entry
        self.violation: Final = violation
        self.renamed: Final = renamed  # found by a name kustomize renamed it from: the ref needs its new name
        self.absent: Final = absent  # not in the bundle at all: the cluster may have it


def resolve(bundle: Bundle, ref: RuntimeRef, namespace: str, overrides: bool = True) -> Resolution:
    """The runtime a TrainJob in ``namespace`` names, or why it cannot be used. A TrainJob without
    ``overrides`` (no resources in its patches) needs its runtime for nothing but checks: when the
    runtime is not in the bundle the violation is an info (the cluster may well have it)."""
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
    renamed = bundle.renamed((kind, where, ref.name))
    if len(renamed) == 1:
        return Resolution(renamed[0], renamed=True)
    if renamed:
        names = ", ".join(repr(e.item.name) for e in renamed)
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.name",
                f"{kind} {ref.name!r} was renamed by kustomize to several runtimes ({names}): "
                "set runtimeRef.name to the one this TrainJob uses",
                current_value=ref.name,
            ),
        )
    if kind == NAMESPACED_RUNTIME_KIND:
        elsewhere = sorted(ns for (k, ns, n) in bundle.runtimes if k == kind and n == ref.name)
        if elsewhere:
            return Resolution(
                None,
                Violation(
                    "spec.runtimeRef.name",
                    f"TrainingRuntime {ref.name!r} is in namespace {', '.join(repr(n) for n in elsewhere)}, "
                    f"but a TrainingRuntime must be in the TrainJob's namespace {namespace or '(none)'!r}",
                    "error" if overrides else "warning",
                    current_value=ref.name,
                ),
            )
    other = NAMESPACED_RUNTIME_KIND if kind == CLUSTER_RUNTIME_KIND else CLUSTER_RUNTIME_KIND
    hints = ""
    if any(k == other and n == ref.name for (k, _, n) in bundle.runtimes):
        hints += f" A {other} of that name exists: set runtimeRef.kind: {other}."
    close = _close_name(bundle, kind, where, ref.name)
    if close is not None:
        hints += f" Did you mean {close!r}?"
    scope = "" if kind == CLUSTER_RUNTIME_KIND else f" in namespace {namespace or '(none)'!r}"
    missing = f"{kind} {ref.name!r}{scope} is not in the bundle"
    if not overrides:
        # A near miss is most likely a typo the cluster would reject too: say so louder than an info.
        severity: Severity = "warning" if close is not None else "info"
        message = (
            f"{missing}.{hints} The TrainJob sets no resources, so it is passed through unchanged, but its "
            f"runtimePatches could not be checked against the runtime (to check them, {SUPPLY_RUNTIME})"
        )
        violation = Violation("spec.runtimeRef.name", message, severity, ref.name, close)
        return Resolution(None, violation, absent=True)
    message = (
        f"{missing}, and the TrainJob's runtimePatches set resources, which need the runtime to be "
        f"validated and materialized.{hints} To supply it, {SUPPLY_RUNTIME}"
    )
    return Resolution(None, Violation("spec.runtimeRef.name", message, "error", ref.name, close), absent=True)


def _close_name(bundle: Bundle, kind: str, namespace: str, name: str) -> str | None:
    """The runtime name of ``kind`` (in ``namespace``) closest to a misspelled ``name``, if one is close."""
    import difflib  # only for an error (as in models): not worth its import on every render

    names = sorted({n for (k, ns, n) in bundle.runtimes if k == kind and ns == namespace})
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return close[0] if close else None
