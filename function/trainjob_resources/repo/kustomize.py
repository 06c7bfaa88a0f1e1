"""Building a tenant's kustomization without running anything it names.

kustomize runs plugins only when asked (``--enable-alpha-plugins``, ``--enable-exec``,
``--enable-helm``); ``render`` never asks. So a kustomization that lists this function under
``transformers:`` (``generators:``, ``validators:``) would fail to build: ``render`` reads the
kustomizations first, takes this function's config out of them (to apply the function itself,
once, on the build's output) and refuses any other plugin, KRM function or Helm chart with a
message that says so. kustomize then builds a private copy of the kustomizations' folders that
holds only what the checks let through: regular files that resolve inside the root (copied, read
once and within the load's budget) and links between them; its bases (``resources``,
``components``) must be folders inside the root, so nothing is fetched and nothing outside is read.

The build runs with an empty environment, one deadline for all the builds of a render (wall clock,
and CPU time as a resource limit), a data limit (MAX_MEMORY), in its own process group and network
namespace (where the kernel allows one), killed with ``render`` even if render is killed (a
parent-death signal). The private copy is made outside the repository, or not at all.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..krm import trust
from ..trainer.api import RUNTIME_KINDS, TRAINER_GROUP
from ..values import keys
from ..values.keys import FUNCTION_ANNOTATIONS, LOCAL_CONFIG
from .sources import MAX_FOLDER_DEPTH, Reader, RenderError, Root, shown, unreadable

if TYPE_CHECKING:
    from yaml.nodes import MappingNode, Node

    from ..krm.resource_list import Item

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
BASE_FIELDS = ("resources", "bases", "components")
PLUGIN_FIELDS = ("generators", "transformers", "validators")
HELM_FIELDS = ("helmCharts", "helmChartInflationGenerator", "helmGlobals")
# kustomize's builtin plugins (apiVersion: builtin): Go code inside kustomize, no process. The Helm
# one is refused like helmCharts.
BUILTINS = frozenset(
    {
        "AnnotationsTransformer",
        "ConfigMapGenerator",
        "HashTransformer",
        "IAMPolicyGenerator",
        "ImageTagTransformer",
        "LabelTransformer",
        "LegacyOrderTransformer",
        "NamespaceTransformer",
        "PatchJson6902Transformer",
        "PatchStrategicMergeTransformer",
        "PatchTransformer",
        "PrefixSuffixTransformer",
        "PrefixTransformer",
        "ReplacementTransformer",
        "ReplicaCountTransformer",
        "SecretGenerator",
        "SortOrderTransformer",
        "SuffixTransformer",
        "ValueAddTransformer",
    }
)
ORIGIN_OPTION = "originAnnotations"
DEFAULT_TIMEOUT = 60.0
MAX_STDERR = 64 * 1024
# What kustomize's loader takes for a remote file or repository before it looks at the disk
# (api/internal/loader/fileloader.go: Load fetches what url.Parse gives an http or https scheme;
# New clones what git.NewRepoSpecFromURL parses: a git:: prefix, an ssh, https, http or file
# scheme, a user@ prefix, a github.com host; all case-insensitive). Any scheme-like prefix counts,
# whatever the disk holds (a folder named ``http:`` does not make ``http://host/x`` local).
_REMOTE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|[A-Za-z][A-Za-z0-9-]*@|github\.com[/:])", re.IGNORECASE)
_REMOTE_HINT = re.compile(r"^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/")
_NAME = "trainjob-resources"
# The fields of kustomize's Kustomization (api/types/kustomization.go), spelled exactly: Go decodes
# them case-insensitively, so ``Resources:`` would name a base this walker never checked.
KNOWN_FIELDS = frozenset(
    {
        "apiVersion", "kind", "metadata", "openapi", "namePrefix", "nameSuffix", "namespace",
        "commonLabels", "labels", "commonAnnotations", "patchesStrategicMerge", "patchesJson6902",
        "patches", "images", "replacements", "replicas", "vars", "sortOptions", "resources", "bases",
        "components", "crds", "configMapGenerator", "secretGenerator", "helmGlobals", "helmCharts",
        "helmChartInflationGenerator", "generatorOptions", "configurations", "generators",
        "transformers", "validators", "buildMetadata", "imageTags",
    }
)  # fmt: skip
# Values, not files (lowercased, at any depth): not looked into.
_NOT_FILES = frozenset({"metadata", "commonlabels", "labels", "commonannotations", "annotations", "images", "literals"})
# Fields (lowercased, at any depth) whose values kustomize loads as files, or fetches when a URL.
PATH_FIELDS = frozenset({"files", "envs", "env", "path", "patchesstrategicmerge", "crds", "configurations"})
# kustomize drops local-config objects from its output, but under kustomize this function sees them
# (kustomize removes them after its transformers): in the private copy the annotation is renamed to
# the build's local mark (Marks), and restored on the built objects before render applies the function.
# The same holds for the annotation a kustomization adds (commonAnnotations, patches, in the
# kustomization or in a component): there the key is renamed in the copies of the kustomizations
# and of their patch files, as an annotation's key and as a JSON pointer's path to it, never in data.
_POINTER = "/metadata/annotations/" + LOCAL_CONFIG.replace("~", "~0").replace("/", "~1")
# A plain build keeps no previousNames (kustomize strips its build annotations), so each runtime's
# name in its file is kept in the build's name mark and turned into the previousNames annotation the
# function resolves renamed runtimes through, as it does under kustomize.
PREVIOUS_NAMES = keys.PREVIOUS_NAMES[0]
PREVIOUS_KINDS = keys.PREVIOUS_KINDS[0]


@dataclass(frozen=True)
class Marks:
    """render's marks for one build, keyed with a random value no input knows (the trust model,
    ``krm.trust``): the only ``internal.trainjob-resources.io/*`` annotations it takes from a build's
    output; any other is the input's, and refused."""

    nonce: str = field(default_factory=lambda: secrets.token_hex(8))

    @property
    def local(self) -> str:
        return f"{keys.INTERNAL_PREFIX}local-config.{self.nonce}"

    @property
    def name(self) -> str:
        return f"{keys.INTERNAL_PREFIX}name.{self.nonce}"


@dataclass
class FoundConfig:
    """This function's config, found in a kustomization."""

    node: Node
    label: str


@dataclass
class Kustomization:
    real_dir: str
    label_dir: str
    file_name: str
    node: MappingNode
    drop: dict[str, set[int]] = field(default_factory=dict)  # plugin field -> entries that are ours


@dataclass
class BuildPlan:
    """The kustomizations a build reads, checked, and what they ask of this function."""

    root: Root
    top: str  # real folder of the kustomization to build
    label: str
    kustomizations: dict[str, Kustomization] = field(default_factory=dict)
    configs: list[FoundConfig] = field(default_factory=list)
    resource_files: set[str] = field(default_factory=set)  # real paths of files listed as resources
    patch_files: set[str] = field(default_factory=set)  # real paths of patch files the kustomizations name
    user_origins: bool = False  # the kustomization asks for origin annotations in its output itself
    marks: Marks = field(default_factory=Marks)  # this build's own marks


def kustomization_file(real_dir: str) -> str | None:
    for name in KUSTOMIZATION_FILES:
        if os.path.lexists(os.path.join(real_dir, name)):
            return name
    return None


def is_our_config(node: Node) -> bool:
    """Whether an object is this function's config: a TrainJobResources, or a ConfigMap whose
    function annotation runs this function (an image or executable named trainjob-resources)."""
    from ..checks.options import CONFIG_API_VERSION, CONFIG_KIND
    from ..yamltext import yamlnodes as yn

    kind, api_version = yn.scalar(yn.get(node, "kind")), yn.scalar(yn.get(node, "apiVersion"))
    if (kind, api_version) == (CONFIG_KIND, CONFIG_API_VERSION):
        return True
    return kind == "ConfigMap" and _NAME in (function_annotation(node) or "")


def function_annotation(node: Node) -> str | None:
    from ..yamltext import yamlnodes as yn

    annotations = yn.get_path(node, "metadata", "annotations")
    for key in FUNCTION_ANNOTATIONS:
        value = yn.scalar(yn.get(annotations, key))
        if value:
            return value
    return None


def plan(real_dir: str, label: str, root: Root, reader: Reader) -> BuildPlan:
    """Reads the kustomization in ``real_dir`` and every one it builds on; RenderError on the first
    thing ``render`` will not build (errors about links are in ``reader.errors``)."""
    result = BuildPlan(root, real_dir, label)
    walker = _Walker(result, reader)
    walker.walk(real_dir, label, plugins=False, depth=0)
    walker.count_repeated_reads()
    return result


class _Walker:
    def __init__(self, plan: BuildPlan, reader: Reader) -> None:
        self.plan = plan
        self.reader = reader
        self.reads: dict[str, list[tuple[str, str]]] = {}  # real path -> (where, entry) per naming

    def walk(self, real_dir: str, label: str, plugins: bool, depth: int) -> None:
        from yaml.nodes import MappingNode

        from ..yamltext import yamlnodes as yn

        if real_dir in self.plan.kustomizations:
            return
        if depth > MAX_FOLDER_DEPTH:
            raise RenderError(f"{shown(label)}: kustomizations nested more than {MAX_FOLDER_DEPTH} deep")
        name = kustomization_file(real_dir)
        if name is None:
            raise RenderError(f"{shown(label)}: a folder without a kustomization, named as a kustomize base")
        file_label = os.path.join(label, name)
        real_file = self.reader.resolve(os.path.join(real_dir, name), file_label, self.plan.root)
        node = _parse_one(self.reader, real_file, file_label)
        if not isinstance(node, MappingNode):
            raise RenderError(f"{shown(file_label)}: not a kustomization (the document is not a mapping)")
        _check_fields(node, file_label)
        kustomization = Kustomization(real_dir, label, name, node)
        self.plan.kustomizations[real_dir] = kustomization
        for key in HELM_FIELDS:
            if yn.get(node, key) is not None:
                raise RenderError(
                    f"{shown(file_label)}: {key}: render does not run Helm (a chart is a program the repository "
                    "names); commit the chart's manifests, or run `trainjob-resources render -` as Helm's post-renderer"
                )
        for key in BASE_FIELDS:
            for index, entry in _entries(node, key):
                found = self.reference(kustomization, f"{file_label}: {key}[{index}]", entry)
                if found[1]:
                    self.walk(found[0], os.path.join(label, entry), plugins=False, depth=depth + 1)
                    continue
                self.plan.resource_files.add(found[0])
                if plugins:
                    for doc in _parse_all(self.reader, found[0], os.path.join(label, entry)):
                        self.classify(doc, f"{file_label}: {key}[{index}] ({shown(entry)})", None)
        for where, entry in _patch_paths(node, file_label):
            if not os.path.lexists(os.path.join(real_dir, entry)):
                continue  # kustomize reports it, in its own words
            found = self.reference(kustomization, where, entry)
            if not found[1]:
                self.plan.patch_files.add(found[0])
                self.read_by_kustomize(real_dir, where, entry)
        for where, entry in _generator_files(node, file_label):
            self.read_by_kustomize(real_dir, where, entry)
        for key in PLUGIN_FIELDS:
            for index, entry in _entries(node, key):
                where = f"{file_label}: {key}[{index}]"
                inline = _inline(entry, where)
                if inline is not None:
                    for named, path in _generator_files(inline, where, plugin=True):
                        self.read_by_kustomize(real_dir, named, path)
                    if self.classify(inline, where, where):
                        kustomization.drop.setdefault(key, set()).add(index)
                    continue
                found = self.reference(kustomization, where, entry)
                if found[1]:
                    self.walk(found[0], os.path.join(label, entry), plugins=True, depth=depth + 1)
                    continue
                entry_label = os.path.join(label, entry)
                docs = _parse_all(self.reader, found[0], entry_label)
                for doc in docs:
                    for named, path in _generator_files(doc, f"{where} ({shown(entry)})", plugin=True):
                        self.read_by_kustomize(real_dir, named, path)
                ours = [self.classify(doc, f"{where} ({shown(entry)})", entry_label) for doc in docs]
                if any(ours) and not all(ours):
                    raise RenderError(
                        f"{where} ({shown(entry)}): trainjob-resources' config shares its file with other "
                        "plugin configs; give it a file of its own"
                    )
                if ours and all(ours):
                    kustomization.drop.setdefault(key, set()).add(index)

    def read_by_kustomize(self, real_dir: str, where: str, entry: str) -> None:
        """Notes a file that kustomize reads each time an entry names it (a generator's, a patch)."""
        path = os.path.join(real_dir, entry)
        real = os.path.realpath(path)
        if not os.path.isfile(real) or not self.plan.root.contains(real):
            return  # kustomize reports a missing file or a folder, the copy a link that leads out
        self.reads.setdefault(real, []).append((where, entry))

    def count_repeated_reads(self) -> None:
        """kustomize reads a generator's or a patch's file once for each entry that names it (and holds
        what it read: a 20 MB file named by 300 generators is 6 GB to it), while the copy reads it once:
        the input limit counts every read, and refuses before kustomize runs. kustomize's
        api/kv/kv.go loads each generator source (api/types/kvpairsources.go: ``[{key}=]{path}``)
        through its loader, which keeps nothing; measured: kubectl kustomize holds 690 MB for five
        generators of one 20 MB file."""
        for real, named in self.reads.items():
            if len(named) > 1:
                try:
                    size = os.stat(real).st_size
                except OSError:
                    continue  # gone since the walk: the copy reports it
                (where, entry), (first, _) = named[-1], named[0]
                label = (
                    f"{where} ({entry}, named {len(named)} times, first at {first}; kustomize reads it each "
                    "time, the copy once: these are the other reads)"
                )
                self.reader.budget.take_bytes(size * (len(named) - 1), label)

    def reference(self, kustomization: Kustomization, where: str, entry: str) -> tuple[str, bool]:
        """The real path an entry names and whether it is a folder; only local paths inside the root."""
        if is_remote(entry):
            raise RenderError(
                f"{where}: {shown(entry)}: a remote base or file; render fetches nothing (vendor it into the "
                "repository; kustomize takes a scheme, git:: or user@ prefix, or github.com for a URL or "
                "repository whatever is on disk)"
            )
        if os.path.isabs(entry):
            raise RenderError(f"{where}: {shown(entry)}: an absolute path; write it relative to the kustomization")
        path = os.path.join(kustomization.real_dir, entry)
        if not os.path.lexists(path):
            if _REMOTE_HINT.match(entry):
                raise RenderError(
                    f"{where}: {shown(entry)}: no such file or folder (a remote base? render fetches nothing: "
                    "vendor it into the repository)"
                )
            raise RenderError(f"{where}: {shown(entry)}: no such file or folder")
        real = self.reader.resolve(path, f"{where}: {entry}", self.plan.root)
        if not os.path.exists(real):
            raise RenderError(f"{where}: {shown(entry)}: a broken symbolic link")
        return real, os.path.isdir(real)

    def classify(self, node: Node, where: str, label: str | None) -> bool:
        """True for this function's config (recorded); an error for any other plugin."""
        from ..yamltext import yamlnodes as yn

        kind = yn.scalar(yn.get(node, "kind")) or "(no kind)"
        api_version = yn.scalar(yn.get(node, "apiVersion")) or "(no apiVersion)"
        if is_our_config(node):
            if label is None:
                raise RenderError(
                    f"{where}: trainjob-resources' config inside a folder of plugin configs; "
                    "list its file directly under transformers:"
                )
            self.plan.configs.append(FoundConfig(node, label))
            return True
        if api_version == "builtin" and kind in BUILTINS:
            return False
        if function_annotation(node) is not None:
            what = "a KRM function (exec, container or starlark)"
        elif api_version == "builtin" and kind == "HelmChartInflationGenerator":
            what = "Helm"
        else:
            what = "an external kustomize plugin"
        raise RenderError(
            f"{where}: {shown(api_version)} {shown(kind)} runs {what}; render runs no plugin or function a "
            "repository names (only trainjob-resources' own config is taken out and applied by render)"
        )


def _check_fields(node: MappingNode, label: str) -> None:
    """Refuses what kustomize would read differently from this walker (duplicate keys, merge keys,
    fields spelled otherwise) and any URL or absolute path among the files kustomize loads."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    try:
        yn.check_duplicate_keys(node)
    except yn.DuplicateKeyError as err:
        raise RenderError(f"{shown(label)}: {shown(err)}") from None
    for key, _ in node.value:
        name = yn.scalar(key)
        if key.tag == yn.MERGE_TAG or name == "<<":
            raise RenderError(f"{shown(label)}: a YAML merge key (<<): write the fields out")
        if name not in KNOWN_FIELDS:
            raise RenderError(
                f"{shown(label)}: {shown(name)}: not a kustomization field (spelled exactly) render knows"
            )
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, is_path = stack.pop()
        if isinstance(current, MappingNode):
            for key, value in current.value:
                if key.tag == yn.MERGE_TAG or yn.scalar(key) == "<<":
                    raise RenderError(f"{shown(label)}: a YAML merge key (<<): write the fields out")
                key_text = str(yn.scalar(key))
                if not key_text.isascii():
                    # Go's encoding/json matches field names with Unicode simple folding (``file\u017f`` is
                    # ``files``, ``\u212a`` is ``k``): no key of kustomize's needs anything but ASCII.
                    raise RenderError(
                        f"{shown(label)}: {shown(key_text)}: a field name with non-ASCII letters, which kustomize "
                        "may read as another field (Go matches names case-insensitively, with Unicode folding); "
                        "refused"
                    )
                field_name = key_text.lower()  # for ASCII, exactly Go's case-insensitive match
                if field_name not in _NOT_FILES:
                    stack.append((value, field_name in PATH_FIELDS))
        elif isinstance(current, SequenceNode):
            stack.extend((entry, is_path) for entry in current.value)
        elif is_path and isinstance(current, ScalarNode) and "\n" not in current.value:
            path = current.value.split("=", 1)[-1]  # a generator's files: entry may be key=path
            if is_remote(path) or is_remote(current.value) or os.path.isabs(path):
                raise RenderError(
                    f"{shown(label)}: {shown(current.value)}: a URL or absolute path; render reads only files "
                    "inside the repository and fetches nothing"
                )


def _patch_paths(node: MappingNode, label: str) -> Iterator[tuple[str, str]]:
    """The patch files a kustomization names: ``patches[].path``, ``patchesJson6902[].path`` and the
    ``patchesStrategicMerge`` entries that are not inline patches."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import SequenceNode

    from ..yamltext import yamlnodes as yn

    for key in ("patches", "patchesJson6902"):
        value = yn.get(node, key)
        for index, entry in enumerate(value.value if isinstance(value, SequenceNode) else []):
            path = yn.scalar(yn.get(entry, "path")) if isinstance(entry, Mapping) else None
            if path:
                yield f"{label}: {key}[{index}].path", path
    for index, entry in _entries(node, "patchesStrategicMerge"):
        if "\n" not in entry and ":" not in entry:
            yield f"{label}: patchesStrategicMerge[{index}]", entry


def relabeled(text: str, mark: str) -> str:
    """A kustomization's patch as render builds it: the local-config annotation's key renamed to
    ``mark`` (the build's, Marks.local), so that the objects it marks are not dropped. Only where
    the key is an annotation's: a strategic-merge patch's ``metadata.annotations`` (a List's items'
    too), and a JSON 6902 operation's ``path``/``from`` to it or its ``value`` holding it; never a
    value, a ConfigMap's data or a pod template's annotations. Documents that do not change are
    kept byte for byte; one that is not YAML too (kustomize reports it)."""
    from ..yamltext import yamlnodes as yn
    from ..yamltext.documents import split_documents

    if "local-config" not in text and "\\" not in text:  # a double-quoted key may spell it with escapes
        return text
    chunks: list[str] = []
    changed = False
    for _, chunk in split_documents(text):
        try:
            node = yn.compose(chunk)
        except yn.YamlInputError:
            node = None
        if node is not None and _relabel_patch(node, mark):
            chunks.append("---\n" + yn.serialize(node))
            changed = True
        else:
            chunks.append(chunk)
    return "".join(chunks) if changed else text


def _relabel_patch(node: Node, mark: str) -> bool:
    """``relabeled`` on one patch document: a strategic-merge patch (a mapping, or a List of them)
    or a JSON 6902 patch (a sequence of operations, api/filters/patchjson6902/patchjson6902.go);
    whether it changed."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    if isinstance(node, Mapping):
        changed = _rename_key(yn.get_path(node, "metadata", "annotations"), mark)
        if yn.scalar(yn.get(node, "kind")) == "List":
            items = yn.get(node, "items")
            for item in items.value if isinstance(items, SequenceNode) else []:
                changed = _rename_key(yn.get_path(item, "metadata", "annotations"), mark) or changed
        return changed
    if not isinstance(node, SequenceNode):
        return False
    pointer = "/metadata/annotations/" + mark.replace("~", "~0").replace("/", "~1")
    changed = False
    for op in node.value:
        if not isinstance(op, Mapping):
            continue
        for key in ("path", "from"):
            target = yn.get(op, key)
            if isinstance(target, ScalarNode) and target.value == _POINTER:
                target.value = pointer
                changed = True
        path = yn.scalar(yn.get(op, "path"))
        value = yn.get(op, "value")
        if path == "/metadata/annotations":
            changed = _rename_key(value, mark) or changed
        elif path == "/metadata":
            changed = _rename_key(yn.get(value, "annotations"), mark) or changed
        elif path in ("", "/"):
            changed = _rename_key(yn.get_path(value, "metadata", "annotations"), mark) or changed
    return changed


def _rename_key(annotations: Node | None, mark: str) -> bool:
    """The local-config key of an annotations mapping renamed to ``mark``; whether there was one."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode

    changed = False
    if isinstance(annotations, Mapping):
        for key, _ in annotations.value:
            if isinstance(key, ScalarNode) and key.value == LOCAL_CONFIG:
                key.value, key.style = mark, None
                changed = True
    return changed


def _relabel_kustomization(node: MappingNode, mark: str) -> None:
    """``relabeled`` on a kustomization: its commonAnnotations' key and its inline patches."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    _rename_key(yn.get(node, "commonAnnotations"), mark)
    for field_name in ("patches", "patchesJson6902", "patchesStrategicMerge"):
        value = yn.get(node, field_name)
        for entry in value.value if isinstance(value, SequenceNode) else []:
            patch = yn.get(entry, "patch") if isinstance(entry, Mapping) else entry
            if isinstance(patch, ScalarNode) and isinstance(patch.value, str):
                patch.value = relabeled(patch.value, mark)


def is_remote(entry: str) -> bool:
    """Whether kustomize's loader fetches or clones ``entry`` rather than reading a local path."""
    return bool(_REMOTE.match(entry.lstrip()))


GENERATOR_FIELDS = ("configMapGenerator", "secretGenerator")
_GENERATOR_KINDS = frozenset({"ConfigMapGenerator", "SecretGenerator"})


def _generator_files(node: Node, label: str, plugin: bool = False) -> Iterator[tuple[str, str]]:
    """The files a kustomization's generators (or, with ``plugin``, a builtin generator's config) load:
    ``files`` (``key=path`` or ``path``), ``envs`` and, in a kustomization only, ``env`` (kubectl
    kustomize ignores a builtin config's ``env``: tests/test_render_hostile.py builds both), their
    names matched as kustomize's Go decoder matches them (case-insensitively)."""
    from yaml.nodes import MappingNode as Mapping
    from yaml.nodes import ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    if not isinstance(node, Mapping):
        return
    if plugin:
        kind, api_version = yn.scalar(yn.get(node, "kind")), yn.scalar(yn.get(node, "apiVersion"))
        generators = [(label, node)] if api_version == "builtin" and kind in _GENERATOR_KINDS else []
    else:
        generators = []
        for key in GENERATOR_FIELDS:
            value = yn.get(node, key)
            for index, entry in enumerate(value.value if isinstance(value, SequenceNode) else []):
                generators.append((f"{label}: {key}[{index}]", entry))
    for where, generator in generators:
        if not isinstance(generator, Mapping):
            continue
        for key, value in generator.value:
            name = str(yn.scalar(key)).lower()
            if name == "env" and not plugin and isinstance(value, ScalarNode) and value.value:
                yield f"{where}.{yn.scalar(key)}", value.value
            elif name in ("files", "envs") and isinstance(value, SequenceNode):
                for index, entry in enumerate(value.value):
                    if isinstance(entry, ScalarNode) and entry.value:
                        path = entry.value.split("=", 1)[-1] if name == "files" else entry.value
                        yield f"{where}.{yn.scalar(key)}[{index}]", path


def _entries(node: MappingNode, key: str) -> Iterator[tuple[int, str]]:
    from yaml.nodes import ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    value = yn.get(node, key)
    if isinstance(value, SequenceNode):
        for index, entry in enumerate(value.value):
            if isinstance(entry, ScalarNode) and isinstance(entry.value, str):
                yield index, entry.value


def _inline(entry: str, where: str) -> Node | None:
    """An inline plugin config (kustomize accepts a YAML object as a string entry) or None. One that
    go-yaml would read otherwise (a tag, a disputed scalar: yamlnodes) is refused."""
    from yaml.nodes import MappingNode

    from ..yamltext import yamlnodes as yn

    if "\n" not in entry and ":" not in entry:
        return None
    try:
        node = yn.compose(entry)
    except yn.RefusedYamlError as err:
        raise RenderError(f"{where}: an inline config: {err}") from None
    except yn.YamlInputError:
        return None
    return node if isinstance(node, MappingNode) and yn.get(node, "kind") is not None else None


def _parse_one(reader: Reader, real: str, label: str) -> Node | None:
    from ..yamltext import yamlnodes as yn

    data = reader.read_bytes(real, label)
    if data is None:
        raise RenderError(f"{shown(label)}: not a regular file")
    try:
        return yn.compose(yn.decode(data))
    except yn.YamlInputError as err:
        raise RenderError(f"{shown(label)}: {err}") from None


def _parse_all(reader: Reader, real: str, label: str) -> list[Node]:
    from ..yamltext import yamlnodes as yn
    from ..yamltext.documents import split_documents

    data = reader.read_bytes(real, label)
    if data is None:
        raise RenderError(f"{shown(label)}: not a regular file")
    reader.kept[real] = data  # copied for kustomize from here, not read again
    out: list[Node] = []
    try:
        text = yn.decode(data)
    except yn.YamlInputError as err:
        raise RenderError(f"{shown(label)}: {err}") from None
    for first, chunk in split_documents(text):
        try:
            node = yn.compose(chunk)
        except yn.YamlInputError as err:
            raise RenderError(f"{shown(label)}: {err.moved(first)}") from None
        if node is not None and not yn.is_null(node):
            out.append(node)
    return out


# The private copy


def mirror(found: BuildPlan, reader: Reader, into: str) -> str:
    """Copies the folders of the plan's kustomizations into ``into`` (at their paths relative to the
    root), this function's entries taken out; returns the folder to build."""
    copier = _Copier(found, reader, into)
    for real_dir in found.kustomizations:
        copier.copy(real_dir, found.kustomizations[real_dir].label_dir, 0)
    return copier.target(found.top)


class _Copier:
    def __init__(self, found: BuildPlan, reader: Reader, into: str) -> None:
        self.plan = found
        self.reader = reader
        self.into = into
        self.done: set[str] = set()

    def target(self, real: str) -> str:
        relative = os.path.relpath(real, self.plan.root.real)
        return os.path.normpath(os.path.join(self.into, relative))

    def copy(self, real_dir: str, label: str, depth: int) -> None:
        if real_dir in self.done:
            return
        self.done.add(real_dir)
        if depth > MAX_FOLDER_DEPTH:
            raise RenderError(f"{shown(label)}: folders nested more than {MAX_FOLDER_DEPTH} deep")
        os.makedirs(self.target(real_dir), exist_ok=True)
        entries = self.reader.entries(real_dir, label)
        kustomization = self.plan.kustomizations.get(real_dir)
        for entry in entries:
            if entry.name == ".git":
                continue
            path, entry_label = os.path.join(real_dir, entry.name), os.path.join(label, entry.name)
            if kustomization is not None and entry.name == kustomization.file_name:
                with open(self.target(path), "w", encoding="utf-8") as out:
                    out.write(self.rewritten(kustomization))
            elif entry.is_symlink():
                real = self.reader.resolve(path, entry_label, self.plan.root)
                try:
                    os.stat(real)
                except OSError as err:
                    if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                        raise unreadable(entry_label, err) from None
                    self.reader.notes.append(f"note: {shown(entry_label)}: skipped: a broken symbolic link")
                    continue
                os.symlink(self.target(real), self.target(path))
            elif entry.is_dir(follow_symlinks=False):
                self.copy(path, entry_label, depth + 1)
            elif entry.is_file(follow_symlinks=False):
                data = self.reader.kept.pop(path, None) or self.reader.read_bytes(path, entry_label)
                marks = self.plan.marks
                if data is not None and path in self.plan.resource_files:
                    data = marked(data, marks)
                elif data is not None and path in self.plan.patch_files and (b"local-config" in data or b"\\" in data):
                    text = data.decode("utf-8", "surrogateescape")
                    data = relabeled(text, marks.local).encode("utf-8", "surrogateescape")
                if data is not None:
                    with open(self.target(path), "wb") as out:
                        out.write(data)
            else:
                self.reader.notes.append(f"note: {shown(entry_label)}: skipped: not a regular file")

    def rewritten(self, kustomization: Kustomization) -> str:
        """The kustomization without this function's entries; the one built also asks kustomize
        to annotate each object with the file it came from, so that messages can name it."""
        from yaml.nodes import MappingNode, SequenceNode

        from ..yamltext import yamlnodes as yn

        node = yn.deep_copy(kustomization.node)
        assert isinstance(node, MappingNode)
        _relabel_kustomization(node, self.plan.marks.local)
        for key, indexes in kustomization.drop.items():
            value = yn.get(node, key)
            assert isinstance(value, SequenceNode)
            value.value = [entry for index, entry in enumerate(value.value) if index not in indexes]
            if not value.value:
                yn.delete_key(node, key)
        if kustomization.real_dir == self.plan.top:
            metadata = yn.get(node, "buildMetadata")
            asked = [yn.scalar(n) for n in metadata.value] if isinstance(metadata, SequenceNode) else []
            self.plan.user_origins = ORIGIN_OPTION in asked
            if not self.plan.user_origins:
                kept = [n for n in metadata.value] if isinstance(metadata, SequenceNode) else []
                yn.set_key(node, "buildMetadata", SequenceNode(yn.SEQ_TAG, [*kept, yn.str_node(ORIGIN_OPTION)]))
        return yn.serialize(node)


def marked(data: bytes, marks: Marks) -> bytes:
    """A resource file as kustomize builds it for render: each object's local-config annotation
    key renamed to the build's local mark, each runtime's name kept in its name mark. Only documents
    that change are written anew; a file that is not YAML is left as it is (kustomize reports it)."""
    from ..yamltext import yamlnodes as yn
    from ..yamltext.documents import split_documents

    if b"local-config" not in data and b"TrainingRuntime" not in data:
        return data
    try:
        text = yn.decode(data)
    except yn.YamlInputError:
        return data
    chunks: list[str] = []
    changed = False
    for _, chunk in split_documents(text):
        try:
            node = yn.compose(chunk) if "local-config" in chunk or "TrainingRuntime" in chunk else None
        except yn.YamlInputError:
            node = None
        if node is not None and any([_mark(obj, marks) for obj in _objects_of(node)]):
            chunks.append("---\n" + yn.serialize(node))
            changed = True
        else:
            chunks.append(chunk)
    return "".join(chunks).encode() if changed else data


def _objects_of(node: Node) -> list[Node]:
    from yaml.nodes import SequenceNode

    from ..yamltext import yamlnodes as yn

    if yn.scalar(yn.get(node, "kind")) == "List":
        items = yn.get(node, "items")
        return list(items.value) if isinstance(items, SequenceNode) else []
    return [node]


def _mark(obj: Node, marks: Marks) -> bool:
    """Marks one object (see ``marked``); whether it changed."""
    from yaml.nodes import MappingNode

    from ..yamltext import yamlnodes as yn

    if not isinstance(obj, MappingNode):
        return False
    metadata = yn.get(obj, "metadata")
    if not isinstance(metadata, MappingNode):
        return False
    annotations = yn.get(metadata, "annotations")
    changed = _rename_key(annotations, marks.local)
    api_version = yn.scalar(yn.get(obj, "apiVersion")) or ""
    name = yn.scalar(yn.get(metadata, "name"))
    kind = yn.scalar(yn.get(obj, "kind"))
    if kind in RUNTIME_KINDS and api_version.split("/")[0] == TRAINER_GROUP and name:
        if annotations is None or yn.is_null(annotations):
            yn.delete_key(metadata, "annotations")
            annotations = yn.ensure_map(metadata, "annotations")
        if isinstance(annotations, MappingNode) and yn.get(annotations, marks.name) is None:
            yn.set_key(annotations, marks.name, yn.str_node(name))
            changed = True
    return changed


def restore(items: Iterable[Item], marks: Marks, label: str) -> list[str]:
    """Undoes ``marked`` on the built objects: the local-config annotation back, and a renamed
    runtime's earlier name as kustomize's previousNames annotation (``Item.renamed_by_build``).
    The errors (render's refusals, as ``inputs.errors`` holds them) for marks the build did not get
    from render: any other ``internal.trainjob-resources.io/*`` annotation, and a previousNames that
    a plain build keeps (its older spelling: kustomize strips only its own)."""
    errors: list[str] = []
    for item in items:
        keys = [key for key in item.annotations() if key not in (marks.local, marks.name)]
        found = trust.forged_mark(keys) or trust.untrusted_previous_names(keys)
        if found is not None:
            message, path = found
            errors.append(f"error: {shown(label)}: {item.kind} {shown(item.name)}: {path}: {message}")
            continue
        value = item.annotation(marks.local)
        if value is not None:
            item.remove_annotation(marks.local)
            item.set_annotation(LOCAL_CONFIG, value)
        name = item.annotation(marks.name)
        if name is not None:
            item.remove_annotation(marks.name)
            if name != item.name:
                item.set_annotation(PREVIOUS_NAMES, name)
                item.set_annotation(PREVIOUS_KINDS, item.kind)
                item.renamed_by_build = True
    return errors


# Running kustomize


def command(directory: str) -> list[str]:
    """kustomize's build, as plain as it gets: no plugin, exec, container, Helm flags; root-only loads."""
    kustomize = shutil.which("kustomize")
    if kustomize is not None:
        return [kustomize, "build", "--load-restrictor", "LoadRestrictionsRootOnly", directory]
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsRootOnly", directory]
    raise RenderError("building it needs kustomize or kubectl on PATH, and neither was found")


class Interrupted(BaseException):
    """render was asked to stop (SIGTERM, SIGHUP, SIGINT) while kustomize ran."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def build(found: BuildPlan, reader: Reader, timeout: float = DEFAULT_TIMEOUT) -> str:
    """kustomize's output for the plan, read within the load's budget; RenderError if it fails.
    ``timeout`` applies when the reader carries no deadline of its own (the render's, for all builds)."""
    from ..yamltext import yamlnodes as yn

    deadline = reader.deadline if reader.deadline is not None else time.monotonic() + timeout
    limit = reader.time_limit if reader.deadline is not None else timeout
    with _signals(), _work_dir(found.root) as work:  # handlers first: a stop during the copy cleans up too
        left = deadline - time.monotonic()
        if left <= 0:
            raise RenderError(
                f"{shown(found.label)}: the render's {limit:g} s for kustomize builds ran out before this one; stopped"
            )
        tree = os.path.join(work, "tree")
        os.mkdir(tree)
        directory = mirror(found, reader, tree)
        try:
            argv = command(directory)
        except RenderError as missing:
            raise RenderError(f"{shown(found.label)}: has a kustomization; {missing}") from None
        env = {
            "PATH": "/nonexistent",
            "HOME": work,
            "LC_ALL": "C",
            "KUSTOMIZE_PLUGIN_HOME": "/nonexistent",
            "GOMEMLIMIT": f"{MAX_MEMORY * 3 // 4}B",  # the Go runtime collects harder before the hard limit
            "GOMAXPROCS": "2",
        }
        left = deadline - time.monotonic()
        code, out, stderr, timed_out = _run(argv, env, work, left, reader.budget.bytes_left)
        tool = "kustomize build" if os.path.basename(argv[0]) == "kustomize" else "kubectl kustomize"
        if timed_out:
            raise RenderError(
                f"{shown(found.label)}: `{tool}` did not finish within the render's {limit:g} s for kustomize "
                "builds; stopped"
            )
        if out is None:
            raise RenderError(
                f"{shown(found.label)}: `{tool}` printed more than the {reader.budget.bytes_left} bytes left "
                "of the render's input limit; stopped"
            )
        if code != 0:
            if _out_of_memory(stderr):
                raise RenderError(
                    f"{shown(found.label)}: `{tool}` ran out of its {MAX_MEMORY // MiB} MiB of memory (YAML aliases "
                    "that expand, or a large file named many times?); stopped"
                )
            summary = _summary(stderr, tree, found.root)
            raise RenderError(f"{shown(found.label)}: `{tool}` failed (exit {code}): {summary}")
    reader.budget.take_bytes(len(out), found.label)
    try:
        return yn.decode(out)
    except yn.YamlInputError as err:
        raise RenderError(f"{shown(found.label)}: kustomize output: {err}") from None


MiB = 1024 * 1024
# kustomize's data segment (RLIMIT_DATA: the Go heap's private writable mappings; the Go runtime
# starts under 128 MiB of it, while an address-space limit under 1 GiB stops it reserving its arenas).
MAX_MEMORY = 1024 * MiB
WORK_PREFIX = "trainjob-resources-"  # then the PID namespace, the process id, mkdtemp's random part


def _out_of_memory(stderr: bytes) -> bool:
    return b"out of memory" in stderr or b"cannot allocate memory" in stderr


@contextlib.contextmanager
def _signals() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT raise Interrupted while a build is prepared and runs (the private
    copy is removed and kustomize killed on the way out); only the main thread may set handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def temp_candidates() -> list[str]:
    return [d for d in (os.environ.get("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm") if d]


@contextlib.contextmanager
def _work_dir(root: Root) -> Iterator[str]:
    """A private folder for the copy, outside the repository (never Python's fallback to the current
    folder); copies left by renders that were killed (SIGKILL: no clean-up ran) are removed first."""
    tried: list[str] = []
    for candidate in temp_candidates():
        real = os.path.realpath(candidate)
        if not os.path.isabs(candidate) or root.contains(real) or real in tried:
            continue
        tried.append(real)
        _remove_orphans(real)
        try:
            work = tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{_pid_namespace()}-{os.getpid()}-", dir=real)
        except OSError:
            continue
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    raise RenderError(
        "no temporary folder outside the repository is writable (TMPDIR, /tmp, /var/tmp, /dev/shm); render "
        "builds kustomizations in a private copy and writes nothing into the repository: refused"
    )


def _pid_namespace() -> int:
    """The PID namespace render runs in (its inode): a process id means something only within it."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _remove_orphans(folder: str) -> None:
    """Removes private copies of renders of this PID namespace, owned by this user, whose process is
    gone (a render killed by SIGKILL runs no clean-up). Copies of other namespaces (a /tmp shared by
    containers) are left alone: their process ids cannot be checked from here."""
    uid, namespace = os.getuid(), str(_pid_namespace())
    with contextlib.suppress(OSError), os.scandir(folder) as scan:
        for entry in scan:
            if not entry.name.startswith(WORK_PREFIX):
                continue
            parts = entry.name.removeprefix(WORK_PREFIX).split("-", 2)
            if len(parts) < 3 or parts[0] != namespace:
                continue
            pid_text = parts[1]
            with contextlib.suppress(OSError, ValueError):
                if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                try:
                    os.kill(int(pid_text), 0)
                except ProcessLookupError:
                    shutil.rmtree(entry.path, ignore_errors=True)


def _libc() -> object | None:
    """The C library render runs on (dlopen of no file: nothing new is loaded), for prctl and unshare."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000


def _child_setup(cpu_seconds: int, libc: object | None, parent: int) -> None:
    """In kustomize's process, before it runs: killed with render (a parent-death signal, set before
    the check that render is still there), CPU time and data limits, and a network namespace of its
    own (no interface but a down loopback) where the kernel allows one, as root or in a user namespace."""
    import resource

    if libc is not None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # type: ignore[attr-defined]
    if os.getppid() != parent:
        os._exit(137)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    hard = cpu_seconds + 1 if hard == resource.RLIM_INFINITY else min(hard, cpu_seconds + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (min(cpu_seconds, hard), hard))
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    data = MAX_MEMORY if hard == resource.RLIM_INFINITY else min(hard, MAX_MEMORY)
    resource.setrlimit(resource.RLIMIT_DATA, (data, data))
    if libc is not None and libc.unshare(_CLONE_NEWNET) != 0:  # type: ignore[attr-defined]
        libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET)  # type: ignore[attr-defined]


def _run(
    argv: list[str], env: dict[str, str], cwd: str, timeout: float, max_out: int
) -> tuple[int, bytes | None, bytes, bool]:
    """Exit code, stdout (None past ``max_out``), stderr (first 64 KiB) and whether time ran out."""
    cpu = max(1, int(timeout) + 1)
    libc, parent = _libc(), os.getpid()
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
        preexec_fn=lambda: _child_setup(cpu, libc, parent),
    )
    out, err = bytearray(), bytearray()
    too_much = timed_out = False
    try:
        deadline = time.monotonic() + timeout
        assert process.stdout is not None and process.stderr is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ, out)
            selector.register(process.stderr, selectors.EVENT_READ, err)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    buffer: bytearray = key.data
                    if buffer is err:
                        buffer.extend(chunk[: max(0, MAX_STDERR - len(buffer))])
                    else:
                        buffer.extend(chunk)
                        too_much = len(buffer) > max_out
                if too_much:
                    break
        if timed_out or too_much:
            _kill(process)
            return -1, None, bytes(err), timed_out
        code = process.wait(timeout=max(0.1, deadline - time.monotonic()))
        return code, bytes(out), bytes(err), False
    except subprocess.TimeoutExpired:
        _kill(process)
        return -1, None, bytes(err), True
    finally:
        if process.poll() is None:
            _kill(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _interrupt(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


_GO_ERR = re.compile(r'\berr="((?:[^"\\]|\\.)*)"')


def _summary(stderr: bytes, tree: str, root: Root) -> str:
    """kustomize's reason, in one line: its ``Error:`` or klog ``err=`` text, the private copy's
    paths named as the repository's, control characters escaped, cut at 500 characters."""
    text = stderr.decode(errors="replace")
    reason = ""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if line.rstrip().endswith("err=<"):  # klog's multi-line value: tab-indented lines, then " >"
            block = [row.strip() for row in lines[at + 1 :] if row.startswith("\t")]
            reason = " ".join(row for row in block if row and row != "`")
            break
        match = _GO_ERR.search(line)
        if match:
            reason = match.group(1).replace('\\"', '"').replace("\\\\", "\\")
            break
        if line.startswith("Error: "):
            reason = line.removeprefix("Error: ")
            break
    reason = reason or (text.strip().splitlines() or ["(no message)"])[-1]
    reason = reason.replace(tree, root.label.rstrip(os.sep) or os.sep)
    if "external plugins disabled" in reason:
        reason += " (render runs no plugin or KRM function a repository names)"
    reason = shown(reason)
    return reason if len(reason) <= 500 else reason[:500] + "…"
