"""The bundle's runtimes, indexed once, and the resolution of a TrainJob's ``spec.runtimeRef``.

A runtime renamed by kustomize (``namePrefix``, ``nameSuffix``) is found by the names it had:
kustomize fixes name references only after every transformer ran, this function included, and it
records each object's earlier names in ``internal.config.kubernetes.io/previousNames`` (older
releases: ``config.kubernetes.io/previousNames``), a comma-separated list.
"""

from __future__ import annotations

from typing import Final

from ..krm.resource_list import Item
from ..kube.resource_rules import default_requests, validate_resource_requirements
from ..trainer.api import CLUSTER_RUNTIME_KIND, NAMESPACED_RUNTIME_KIND, RUNTIME_KINDS, TRAINER_GROUP, TRAINJOB_KIND
from ..trainer.runtime_view import JobInfo, RuntimeSpecView, jobs_of, parse_runtime
from ..trainer.trainjob_view import RuntimeRefView
from ..values.keys import LOCAL_CONFIG, NAME_PREFIXES, NAME_SUFFIXES, PATH_ANNOTATIONS, PREVIOUS_KINDS, PREVIOUS_NAMES
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


def resolve(
    bundle: Bundle,
    ref: RuntimeRefView,
    namespace: str,
    overrides: bool = True,
    file: str | None = None,
    referrer: Item | None = None,
) -> Resolution:
    """The runtime a TrainJob in ``namespace`` names, or why it cannot be used. A TrainJob without
    ``overrides`` (no resources in its patches) needs its runtime for nothing but checks: when the
    runtime is not in the bundle the violation is an info (the cluster may well have it). A runtime
    of another API group is a warning either way: the caller reports the resources its patches set
    (``validate.foreign_runtime_resources``). ``file``: the file the TrainJob was read from, if known;
    ``referrer``: the TrainJob's item (kustomize's record of its own renames)."""
    group = ref.api_group or TRAINER_GROUP
    kind = ref.kind or CLUSTER_RUNTIME_KIND
    if group != TRAINER_GROUP:
        # Left alone for a Trainer that knows such a runtime; v2.3.0's webhook knows only its own two.
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.apiGroup",
                f"runtimeRef names apiGroup {group!r}, not {TRAINER_GROUP!r}: left unchanged (Trainer v2.3.0's "
                f"TrainJob webhook knows only the runtimes of {TRAINER_GROUP} and refuses it: 'unsupported "
                "runtime', pkg/webhooks/trainjob_webhook.go)",
                severity="warning",
                current_value=group,
            ),
            foreign=group,
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
    if entry is not None and entry.renamed_copy:
        # The cluster has that runtime under its own name: a ref to the copy's new name names nothing there.
        return Resolution(
            None,
            Violation(
                "spec.runtimeRef.name",
                f"{kind} {ref.name!r} is the name kustomize gave a local-config copy (read, never emitted) of "
                f"{entry.display}, which the cluster has as {entry.cluster_name!r}: set runtimeRef.name: "
                f"{entry.cluster_name}",
                current_value=ref.name,
                proposed_value=entry.cluster_name,
            ),
        )
    if entry is not None:
        return Resolution(entry)
    renamed = bundle.renamed((kind, where, ref.name))
    if len(renamed) == 1:
        foreign = _renamed_elsewhere(renamed[0], namespace, file, referrer)
        if foreign is not None:
            return Resolution(None, Violation("spec.runtimeRef.name", foreign, current_value=ref.name))
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
        elsewhere = sorted(ns for (k, ns, n) in bundle.usable() if k == kind and n == ref.name)
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
    if any(k == other and n == ref.name for (k, _, n) in bundle.usable()):
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


def path_of(item: Item) -> str | None:
    """The file an item was read from, as the KRM input says (kpt: each item's; kustomize: none)."""
    return next((p for p in map(item.annotation, PATH_ANNOTATIONS) if p), None)


def _renamed_elsewhere(entry: RuntimeEntry, namespace: str, file: str | None, referrer: Item | None) -> str | None:
    """Why a TrainJob must not follow ``entry``'s previousNames, or None. kustomize renames the
    objects of one build, which reach a function as one stream (api/internal/plugins/fnplugin:
    the ResMap as one document stream, no file of its own per object); a previousNames that leads
    from a TrainJob of one file, or namespace, to a runtime of another was written by hand (kpt
    never renames: it passes each file's objects with their path). Where the stream says no file,
    the rename is followed only where kustomize's own record ties it to the TrainJob (``_same_rename``).
    render's own renames are believed wherever the objects came from (``Item.renamed_by_build``: set
    from its own build only)."""
    item = entry.item
    if item.renamed_by_build:
        return None
    here = path_of(item)
    runtime_namespace = item.namespace
    claim = f"{entry.display} says it was renamed from this name (annotation {PREVIOUS_NAMES[0]}"
    if file is not None and here is not None and file != here:
        why = f"is in {here!r} and the TrainJob in {file!r}"
    elif runtime_namespace and runtime_namespace != namespace:
        why = f"is in namespace {runtime_namespace!r} and the TrainJob in {namespace or '(none)'!r}"
    elif (file is None or here is None) and not _same_rename(item, referrer):
        return (
            f"{claim}), but nothing ties that rename to this TrainJob: the objects come without their files, and "
            f"the TrainJob does not carry the runtime's name prefixes and suffixes ({NAME_PREFIXES[0]}, "
            f"{NAME_SUFFIXES[0]}), as kustomize records them on both when one kustomization's namePrefix or "
            "nameSuffix renames both, so this TrainJob is not re-pointed to it. If kustomize renamed the runtime "
            "this TrainJob uses, set runtimeRef.name to the runtime's name after kustomize, or put the TrainJob in "
            "the kustomization that renames it; otherwise remove the annotation (kustomize did not write it)"
        )
    else:
        return None
    return (
        f"{claim} or its older spelling), but it {why}: kustomize renames within one build, so this TrainJob is "
        "not re-pointed to it. Set runtimeRef.name to the runtime this TrainJob uses, or remove the annotation if "
        "kustomize did not write it"
    )


def _same_rename(runtime: Item, referrer: Item | None) -> bool:
    """Whether kustomize's record ties a renamed runtime to the TrainJob, as its name reference fixer picks
    among renamed candidates (api/filters/nameref/nameref.go ``selectReferral``, ``prefixSuffixEquals``;
    api/resource/resource.go ``PrefixesSuffixesEquals`` with allowEmpty false): the name prefixes and
    suffixes recorded on both end the same way. kustomize records them (``AddNamePrefix``,
    ``AddNameSuffix``) on every object a namePrefix or nameSuffix renames; a runtime with none recorded
    was renamed otherwise (a patch, or by hand) and ties to nothing."""
    if referrer is None:
        return False
    mine = [_listed(runtime, keys) for keys in (NAME_PREFIXES, NAME_SUFFIXES)]
    if not any(mine):
        return False
    theirs = [_listed(referrer, keys) for keys in (NAME_PREFIXES, NAME_SUFFIXES)]
    return all(_same_ending(a, b) for a, b in zip(mine, theirs, strict=True))


def _listed(item: Item, keys: tuple[str, ...]) -> list[str]:
    """A comma-separated build annotation, in its newer spelling else its older one."""
    value = next((v for v in map(item.annotation, keys) if v is not None), None)
    return value.split(",") if value is not None else []


def _same_ending(a: list[str], b: list[str]) -> bool:
    """kustomize's ``SameEndingSubSlice`` (api/internal/utils/stringslice.go): one list ends as the other;
    an empty list matches only an empty one."""
    shorter, longer = sorted((a, b), key=len)
    return longer[len(longer) - len(shorter) :] == shorter if shorter else not longer


def _close_name(bundle: Bundle, kind: str, namespace: str, name: str) -> str | None:
    """The runtime name of ``kind`` (in ``namespace``) closest to a misspelled ``name``, if one is close."""
    import difflib  # only for an error (as in models): not worth its import on every render

    names = sorted({n for (k, ns, n) in bundle.usable() if k == kind and ns == namespace})
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
    return close[0] if close else None
