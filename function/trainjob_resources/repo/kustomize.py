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

This module screens the kustomizations (``plan``); the copy is ``private_copy``, the build's marks
``relabel``, and the build itself, a sandboxed child, ``sandbox``.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..values import keys
from ..values.keys import FUNCTION_ANNOTATIONS
from .sources import MAX_FOLDER_DEPTH, Reader, RenderError, Root, shown

if TYPE_CHECKING:
    from yaml.nodes import MappingNode, Node


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
    from ..options.options import CONFIG_API_VERSION, CONFIG_KIND
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
