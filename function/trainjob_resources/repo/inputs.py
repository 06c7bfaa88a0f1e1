"""A tenant's manifests read into one ResourceList, as ``render`` and ``explain`` read them.

Files, folders (kustomizations built by ``sandbox``), stdin and ``--runtimes``; each object
annotated with its file, so that messages name it (``collected``); this function's configs found
among them or in the kustomizations, combined with the platform's ``--config`` and
``ARGOCD_ENV_*`` (``configs``); the objects to print are ``printing``'s.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..trainer.api import NAMESPACED_RUNTIME_KIND
from ..values.keys import LOCAL_CONFIG
from ..values.records import MutableRecord
from ..yamltext.documents import split_documents
from .collected import INDEX_KEY, PATH_KEY, STDIN_LABEL, Inputs, object_key
from .configs import effective_config, platform_config, take_configs
from .sources import RenderError, decode_text, shown

if TYPE_CHECKING:
    from yaml.nodes import Node

    from ..krm.resource_list import Item, ResourceList
    from .kustomize import BuildPlan
    from .sources import Root

DEFAULTED_KINDS = {("trainer.kubeflow.org", "TrainJob"), ("trainer.kubeflow.org", "TrainingRuntime")}
DEFAULTED_KINDS |= {("", "LimitRange"), ("", "ResourceQuota")}


class ReadRequest(MutableRecord):
    """What ``load`` reads: ``render``'s and ``explain``'s paths and options. ``left_to_platform``
    (set after construction, empty by default): files or folders the inputs may hold that are the
    platform's, read from elsewhere (the base's copy of the ``--runtimes`` of ``explain --against``):
    skipped, as a ``--runtimes`` path is."""

    __slots__ = ("config", "left_to_platform", "namespace", "paths", "root", "runtimes", "timeout")

    def __init__(
        self,
        paths: Sequence[str],
        config: str | None = None,
        namespace: str | None = None,
        runtimes: Sequence[str] = (),
        root: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.left_to_platform: Sequence[str] = ()
        self.paths: Final = paths
        self.config: Final = config
        self.namespace: Final = namespace
        self.runtimes: Final = runtimes
        self.root: Final = root
        self.timeout: Final = timeout


def load(request: ReadRequest, environ: Mapping[str, str] | None = None) -> tuple[ResourceList, Inputs]:
    """The inputs as one ResourceList, read as ``render`` and ``explain`` read them; problems that
    stop reading are in ``Inputs.errors``, entries skipped in ``Inputs.notes``. Objects that name
    no namespace get ``namespace``; objects read from ``runtimes`` are marked local-config."""
    import time

    from ..krm import resource_list as krm

    config, namespace, timeout = request.config, request.namespace, request.timeout
    inputs = Inputs()
    inputs.reader.time_limit = timeout
    inputs.reader.deadline = time.monotonic() + timeout  # one limit for all the render's kustomize builds
    default_root = _default_root(request.root, environ)
    platform = platform_config(config, inputs.reader)
    if config:
        inputs.skip.add(os.path.realpath(config))
    platform_paths = [*request.runtimes, *request.left_to_platform]
    inputs.platform_paths = {os.path.realpath(raw): raw for raw in platform_paths if raw != "-"}
    for raw in request.paths:
        _refuse_platform_path(raw, inputs.platform_paths)
        _read_path(raw, inputs, default_root, timeout)
    inputs.platform_paths = {}
    if request.runtimes:
        _read_runtimes(request.runtimes, inputs, default_root, timeout)
    take_configs(inputs)
    config_item = None
    if not inputs.errors:
        config_item = effective_config(platform, inputs, environ)
    if namespace and not inputs.errors:
        _default_namespace(inputs.items, namespace)
    return krm.ResourceList(items=inputs.items, function_config=config_item), inputs


def _default_root(root: str | None, environ: Mapping[str, str] | None) -> Root:
    """The folder reads stay inside: ``--root``; under Argo CD the repository's root (the current
    folder is ARGOCD_APP_SOURCE_PATH inside it); else the current folder."""
    from .sources import Root

    if root is not None:
        if not os.path.isdir(root):
            raise RenderError(f"--root {shown(root)}: not a folder")
        return Root(os.path.realpath(root), root)
    cwd = os.getcwd()
    source = (environ or {}).get("ARGOCD_APP_SOURCE_PATH", "")
    parts = [p for p in source.split("/") if p not in ("", ".")]
    if parts and ".." not in parts and not source.startswith("/"):
        here = cwd.split(os.sep)
        if here[-len(parts) :] == parts:
            repository = os.sep.join(here[: -len(parts)]) or os.sep
            if os.path.realpath(repository) == os.sep:
                # Argo CD checks repositories out below a folder of its own (/tmp/_argocd-repo/<id>):
                # a source path that spells the whole current folder is not Argo CD's.
                raise RenderError(
                    f"ARGOCD_APP_SOURCE_PATH {shown(source)}: spells the whole current folder, so the repository "
                    "root would be /; refused (pass --root)"
                )
            return Root(os.path.realpath(repository), os.path.relpath(repository, cwd), widened_by_flag=False)
    return Root(os.path.realpath(cwd), ".")


def _refuse_platform_path(raw: str, platform_paths: Mapping[str, str]) -> None:
    """An input that is (or is inside) a ``--runtimes`` path cannot be both the repository's and the
    platform's; one inside the folder being read is left to the platform by ``_walk``."""
    if raw == "-":
        return
    real = os.path.realpath(raw)
    for platform_real, given in platform_paths.items():
        if real == platform_real or real.startswith(platform_real.rstrip(os.sep) + os.sep):
            raise RenderError(
                f"{shown(raw)}: also given as --runtimes {shown(given)}: the platform's runtimes are read, never "
                "rendered; give the repository's folder as the input, or drop it from --runtimes"
            )


def _left_to_platform(real: str, label: str, inputs: Inputs) -> bool:
    """Whether a file or folder met while reading the inputs was given to ``--runtimes`` (then it is
    read as the platform's, once, and not as the repository's: noted)."""
    given = inputs.platform_paths.get(real)
    if given is None:
        return False
    inputs.notes.append(
        f"note: {shown(label)}: not an input: read as the platform's runtimes (--runtimes {shown(given)})"
    )
    return True


def _read_path(raw: str, inputs: Inputs, default_root: Root, timeout: float) -> None:
    try:
        _read_path_or_fail(raw, inputs, default_root, timeout)
    except OSError as err:
        raise RenderError(f"{shown(raw)}: cannot read: {err.strerror or err}") from None


def _read_path_or_fail(raw: str, inputs: Inputs, default_root: Root, timeout: float) -> None:
    from .sources import root_for

    reader = inputs.reader
    if raw == "-":
        data = sys.stdin.buffer.read(reader.budget.bytes_left + 1)
        reader.budget.take_bytes(len(data), STDIN_LABEL)
        _read_text(decode_text(data, STDIN_LABEL), STDIN_LABEL, inputs)
        return
    if not os.path.lexists(raw):
        raise RenderError(f"{shown(raw)}: no such file or folder")
    root = root_for(raw, default_root)
    real = reader.resolve(raw, raw, root)
    if os.path.isdir(real):
        _read_dir(real, raw, root, inputs, timeout)
    elif os.path.isfile(real):
        if reader.first_time(real, raw):
            _read_file(real, raw, inputs)
    elif os.path.exists(real):
        raise RenderError(f"{shown(raw)}: not a regular file or folder")
    else:
        raise RenderError(f"{shown(raw)}: a broken symbolic link")


def _read_dir(real_dir: str, label: str, root: Root, inputs: Inputs, timeout: float) -> None:
    """A folder: first walked whole (each real folder and file once, every size from stat, the sum
    checked against the budget), then read in name order, kustomizations built where found."""
    from . import kustomize, relabel, sandbox

    tasks: list[tuple[str, str, int | None]] = []
    _walk(real_dir, label, root, inputs, tasks, 0)
    inputs.reader.budget.take_bytes(sum(size or 0 for _, _, size in tasks), label)
    for real, entry_label, size in tasks:
        if size is not None:
            data = inputs.reader.read_bytes(real, entry_label, reserved=size)
            if data is not None:
                _read_text(decode_text(data, entry_label), shown(entry_label), inputs)
            continue
        plan = kustomize.plan(real, entry_label, root, inputs.reader)
        text = sandbox.build(plan, inputs.reader, timeout)
        inputs.configs.extend((found.node, found.label) for found in plan.configs)
        if not plan.configs:
            inputs.unconfigured.append(entry_label)
        start = len(inputs.items)
        _read_text(text, shown(entry_label), inputs, built=True)
        inputs.errors.extend(relabel.restore(inputs.items[start:], plan.marks, entry_label))
        inputs.built.update(object_key(item) for item in inputs.items[start:])
        _name_origins(inputs, start, entry_label, plan)


def _name_origins(inputs: Inputs, start: int, label: str, plan: BuildPlan) -> None:
    """Each object of a kustomize build named by the file it came from (kustomize's origin
    annotation, which render asked for), so that messages say ``overlays/prod/../../base/x.yaml``
    rather than the build's document number, with the line of the field in that file
    (``_source_lines``); the annotation is removed unless the user asked for it."""
    from yaml.nodes import MappingNode

    from ..values.keys import ORIGIN
    from ..yamltext import yamlnodes as yn
    from .kustomize import PREVIOUS_KINDS, PREVIOUS_NAMES
    from .textitems import DocumentItem

    keep = plan.user_origins
    documents: dict[str, list[tuple[int, Node]]] = {}
    for item in inputs.items[start:]:
        item.origin = None  # its lines are the build's, not its file's
        origin = item.annotation(ORIGIN)
        if origin is None:
            continue
        try:
            value = yn.get(yn.compose(origin), "path") or yn.get(yn.compose(origin), "configuredIn")
        except yn.YamlInputError:
            value = None
        path = yn.scalar(value)
        if path and not path.startswith(("http://", "https://")):
            item.set_annotation(PATH_KEY, shown(os.path.normpath(os.path.join(label, path))))
            item.set_annotation(INDEX_KEY, "0")
            _source_lines(item, os.path.normpath(os.path.join(plan.top, path)), plan, inputs, documents)
        if not keep:
            item.remove_annotation(ORIGIN)
            annotations = yn.get_path(item.node, "metadata", "annotations")
            made = {PATH_KEY, INDEX_KEY, PREVIOUS_NAMES, PREVIOUS_KINDS}  # render's, removed before printing
            if isinstance(annotations, MappingNode) and {yn.scalar(k) for k, _ in annotations.value} <= made:
                inputs.created_annotations[id(item.node)] = item.node  # kustomize made it for the origin
                if isinstance(item, DocumentItem):
                    item.created_annotations = True  # what the entry by id says, when its tree is dropped


def _source_lines(
    item: Item, real: str, plan: BuildPlan, inputs: Inputs, documents: dict[str, list[tuple[int, Node]]]
) -> None:
    """Where the object's fields are in the resource file the build read it from: the document of its
    kind and name there (before a prefix or suffix: its previousNames), composed again. Only files the
    build's plan listed as resources (read within the root); nothing when the file or the object is not
    found there, or the file cannot be read as written."""
    from ..yamltext import yamlnodes as yn
    from .kustomize import PREVIOUS_NAMES

    if real not in plan.resource_files:
        return
    if real not in documents:
        documents[real] = []
        try:
            data = inputs.reader.read_bytes(real, real)
            for first_line, chunk in split_documents(decode_text(data, real)) if data is not None else ():
                node = yn.compose(chunk)
                if node is not None and not yn.is_null(node):
                    documents[real].append((first_line, node))
        except (OSError, RenderError, yn.YamlInputError):
            documents[real] = []
    names = {item.name, *(n for n in (item.annotation(PREVIOUS_NAMES) or "").split(",") if n)}
    kind = [(line, node) for line, node in documents[real] if yn.scalar(yn.get(node, "kind")) == item.kind]
    found = [(line, node) for line, node in kind if yn.scalar(yn.get_path(node, "metadata", "name")) in names]
    if not found:  # a namePrefix or nameSuffix: kustomize keeps no previousNames of every kind
        found = [
            (line, node)
            for line, node in kind
            if (yn.scalar(yn.get_path(node, "metadata", "name")) or "\0") in item.name
        ]
    if len(found) == 1:
        item.origin, item.lines_from = found[0]


def _walk(
    real_dir: str,
    label: str,
    root: Root,
    inputs: Inputs,
    tasks: list[tuple[str, str, int | None]],
    depth: int,
) -> None:
    """What a folder holds to read, in order: files (with their size) and kustomization folders (None)."""
    from . import kustomize
    from .sources import MAX_FOLDER_DEPTH

    reader = inputs.reader
    if _left_to_platform(real_dir, label, inputs) or not reader.first_time(real_dir, label):
        return
    if depth > MAX_FOLDER_DEPTH:
        raise RenderError(f"{shown(label)}: folders nested more than {MAX_FOLDER_DEPTH} deep")
    if kustomize.kustomization_file(real_dir) is not None:
        tasks.append((real_dir, label, None))
        return
    for real, entry_label, size in reader.walk(real_dir, label, root):
        if size is None:
            _walk(real, entry_label, root, inputs, tasks, depth + 1)
        elif (
            real not in inputs.skip
            and not _left_to_platform(real, entry_label, inputs)
            and reader.first_time(real, entry_label)
        ):
            tasks.append((real, entry_label, size))


def _read_file(real: str, label: str, inputs: Inputs) -> None:
    data = inputs.reader.read_bytes(real, label)
    if data is not None:
        _read_text(decode_text(data, label), shown(label), inputs)


def _read_runtimes(paths: Sequence[str], inputs: Inputs, default_root: Root, timeout: float) -> None:
    """Reference runtimes: read like inputs (a kustomization built, its local-config objects kept as
    a build under kustomize leaves them to a function), marked local-config (never printed); other
    kinds are skipped. Each path must give at least one runtime."""
    from ..trainer.api import RUNTIME_KINDS

    for raw in paths:
        if raw == "-":
            raise RenderError("--runtimes -: give a file or folder (stdin is for the inputs)")
        start, unconfigured = len(inputs.items), len(inputs.unconfigured)
        _read_path(raw, inputs, default_root, timeout)
        del inputs.unconfigured[unconfigured:]  # runtimes, not a repository the function's config applies to
        read = inputs.items[start:]
        del inputs.items[start:]
        found = 0
        for item in read:
            if (item.group, item.kind) not in {("trainer.kubeflow.org", kind) for kind in RUNTIME_KINDS}:
                where = item.annotation(PATH_KEY) or "--runtimes"
                inputs.notes.append(f"note: {where}: skipped {item.kind} {item.name}: --runtimes reads only runtimes")
                continue
            item.set_annotation(LOCAL_CONFIG, "true")
            inputs.items.append(item)
            inputs.platform.append(item)
            found += 1
        if not found and not inputs.errors:
            raise RenderError(
                f"--runtimes {shown(raw)}: no TrainingRuntime or ClusterTrainingRuntime found there "
                "(trainer.kubeflow.org)"
            )
    _compare_copies(inputs)


def _cluster_identity(item: Item) -> tuple[str, str, str, str]:
    """A runtime as the cluster names it: a ClusterTrainingRuntime has no namespace, whatever an
    overlay's ``namespace:`` wrote into the copy (kustomize's namespace transformer sets it on every
    object it does not know to be cluster-scoped, and it does not know Trainer's kinds)."""
    return (item.group, item.kind, item.namespace if item.kind == NAMESPACED_RUNTIME_KIND else "", item.name)


def _compare_copies(inputs: Inputs) -> None:
    """A repository's local-config copy of a runtime the platform supplies: the same runtime (spec and
    labels) is dropped, the platform's is read; another is an error naming the copy's file and the
    first field where they differ, as the copy has it, with the copy's value (the caps would be
    checked on the copy, the cluster runs the platform's). Nothing of the platform's runtime is
    shown, not its file, a value, a key or a name: the copy may be one team's probe of another
    team's runtime."""
    from ..kube.compare import first_written_difference

    supplied = {_cluster_identity(item): item for item in inputs.platform}
    platform = {id(item) for item in inputs.platform}
    kept = []
    for item in inputs.items:
        theirs = supplied.get(_cluster_identity(item))
        if theirs is None or id(item) in platform or item.annotation(LOCAL_CONFIG) != "true":
            kept.append(item)
            continue
        mine, its = item.value(), theirs.value()
        difference = first_written_difference(_content(mine), _content(its))
        if difference is None:
            continue
        path, here = difference
        inputs.errors.append(
            f"error: {item.annotation(PATH_KEY) or STDIN_LABEL}: {item.kind} {shown(item.name)}: a local-config "
            f"copy of a runtime the platform supplies (--runtimes) that differs from it at {path}: "
            f"{_shown_value(here)} in the copy (the platform's value is not shown); remove the copy (the "
            "platform's runtime is what the cluster runs)"
        )
    inputs.items[:] = kept


def _content(runtime: Mapping[str, Any]) -> dict[str, Any]:
    metadata = runtime.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return {"metadata": {"labels": labels or {}}, "spec": runtime.get("spec")}


def _shown_value(value: Any) -> str:
    if value is None:
        return "nothing"
    text = json.dumps(value, sort_keys=True, separators=(", ", ": "))
    return shown(text if len(text) <= 120 else text[:117] + "...")


def _read_text(text: str, label: str, inputs: Inputs, built: bool = False) -> None:
    """``built``: kustomize's output (render's marks in it: ``relabel.restore`` checks and takes them)."""
    from yaml.nodes import MappingNode

    from ..krm.resource_list import Item
    from ..yamltext import yamlnodes as yn
    from .textitems import read_document

    is_json = text.lstrip().startswith(("{", "["))
    index = 0
    for first_line, chunk in [(0, text)] if is_json else split_documents(text):
        try:
            node = yn.compose(chunk)
        except yn.YamlInputError as err:
            inputs.errors.append(f"error: {label}: {_shift(err, first_line)}")
            continue
        if yn.is_null(node):
            continue
        assert node is not None
        where = f"{label}#{index}" if index else label
        index += 1
        if is_json:
            _block_style(node)
        objects, problem = _objects(node)
        if problem is not None:
            inputs.errors.append(f"error: {where}: {problem}")
            continue
        inputs.reader.budget.take_items(len(objects), label)
        for obj in objects:
            problem = _problem(obj, first_line, built)
            if problem is not None:
                inputs.errors.append(f"error: {where}: {problem}")
                continue
            assert isinstance(obj, MappingNode)
            if obj is node and not is_json:  # a whole document: held as its text (textitems)
                inputs.items.append(read_document(chunk, obj, first_line, label, index - 1))
                continue
            metadata = yn.get(obj, "metadata")
            if not isinstance(metadata, MappingNode):
                inputs.created_metadata[id(obj)] = obj
            if not isinstance(yn.get(metadata, "annotations"), MappingNode):
                inputs.created_annotations[id(obj)] = obj
            item = Item(obj)
            item.origin = first_line
            item.set_annotation(PATH_KEY, label)
            item.set_annotation(INDEX_KEY, str(index - 1))
            inputs.items.append(item)


def _shift(err: Exception, first_line: int) -> str:
    line, column = getattr(err, "line", None), getattr(err, "column", None)
    if line is None:
        return str(err)
    base = str(err).removesuffix(f" (line {line}, column {column})")
    return f"{base} (line {line + first_line}, column {column})"


def _objects(node: Node) -> tuple[list[Node], str | None]:
    """The objects of one document as kubectl and Argo CD apply them: itself, or the items of any
    object with an ``items`` field (krm.list_items); a problem that stops it being read."""
    from ..krm.resource_list import list_items
    from ..yamltext import yamlnodes as yn

    if yn.scalar(yn.get(node, "kind")) == "ResourceList":
        return [node], None  # not applied but piped to the function: _problem says so
    is_list = yn.scalar(yn.get(node, "kind")) == "List" and yn.scalar(yn.get(node, "apiVersion")) == "v1"
    if not is_list and yn.is_null(yn.get(node, "items")) and yn.get(node, "items") is not None:
        return (
            [],
            "items: null: kubectl reads an object with an items field as a list, here empty; nothing would be applied",
        )
    objects, problem = list_items(node)
    if problem is not None and is_list and "not a list" in problem:
        problem = "a v1 List whose items is not a list"
    return objects, problem


def _problem(node: Node, first_line: int, built: bool = False) -> str | None:
    from yaml.nodes import MappingNode, ScalarNode

    from ..krm import trust
    from ..yamltext import yamlnodes as yn
    from .kustomize import is_our_config

    line = node.start_mark.line + 1 + first_line
    if not isinstance(node, MappingNode):
        return f"line {line}: not a Kubernetes object (the document is not a mapping)"
    try:
        yn.check_duplicate_keys(node)
    except yn.DuplicateKeyError as err:
        where = f"{err.path}: " if err.path != err.key else ""
        return f"{where}duplicate mapping key {err.key!r} (line {err.line + first_line})"
    if not yn.scalar(yn.get(node, "apiVersion")) or not yn.scalar(yn.get(node, "kind")):
        return f"line {line}: not a Kubernetes object (no apiVersion or kind)"
    from ..krm.resource_list import is_policy_input, merge_problem

    annotations = yn.get_path(node, "metadata", "annotations")
    keys = (
        [k.value for k, _ in annotations.value if isinstance(k, ScalarNode)]
        if isinstance(annotations, MappingNode)
        else []
    )
    found = None if built else trust.forged_mark(keys) or trust.untrusted_previous_names(keys)
    if found is not None:
        name = yn.scalar(yn.get_path(node, "metadata", "name")) or "(no name)"
        return f"line {line}: {yn.scalar(yn.get(node, 'kind'))} {shown(name)}: {found[1]}: {found[0]}"
    if is_policy_input(node) or is_our_config(node):
        found = merge_problem(node)
        if found is not None:
            return f"line {line}: {yn.scalar(yn.get(node, 'kind'))} {found[0]}"
    if yn.scalar(yn.get(node, "kind")) == "ResourceList":
        return f"line {line}: a ResourceList: pipe it to `trainjob-resources` (the KRM function) instead"
    return None


def _block_style(node: Node) -> None:
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    from ..yamltext import yamlnodes as yn

    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, MappingNode):
            current.flow_style = False
            stack.extend(n for pair in current.value for n in pair)
        elif isinstance(current, SequenceNode):
            current.flow_style = False
            stack.extend(current.value)
        elif isinstance(current, ScalarNode):
            # A JSON string stays a string for YAML 1.1 readers too (kubectl's go-yaml v2: "y", "on", "1e3").
            current.style = '"' if current.tag == yn.STR_TAG and yn.only_yaml11_non_string(current.value) else None


def _default_namespace(items: Sequence[Item], namespace: str) -> None:
    from yaml.nodes import MappingNode

    from ..yamltext import yamlnodes as yn

    for item in items:
        if (item.group, item.kind) in DEFAULTED_KINDS and not item.namespace:
            assert isinstance(item.node, MappingNode)
            metadata = yn.ensure_map(item.node, "metadata")
            yn.delete_key(metadata, "namespace")
            keys = [k.value for k, _ in metadata.value]
            at = keys.index("name") + 1 if "name" in keys else 0
            metadata.value.insert(at, (yn.str_node("namespace"), yn.str_node(namespace)))
            item.touched()
