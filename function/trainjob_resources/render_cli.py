"""``trainjob-resources render``: manifests in from files, folders or stdin; rendered manifests out.

For pipelines that are not KRM orchestrators (an Argo CD plugin, CI, a terminal). Inputs are
read into a ResourceList (each object annotated with its file, so that messages name it), the
function runs on it, and the items are written back as a multi-document YAML stream without
those annotations. A folder with a kustomization is built by kustomize first. On any error
nothing goes to stdout: the messages go to stderr and the exit code is 1.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

    from yaml.nodes import Node

    from .krm import Item, ResourceList

PATH_KEY = "internal.config.kubernetes.io/path"
INDEX_KEY = "internal.config.kubernetes.io/index"
LOCAL_CONFIG = "config.kubernetes.io/local-config"
SUFFIXES = (".yaml", ".yml", ".json")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
ENV_PREFIX = "ARGOCD_ENV_"
ENV_LABEL = f"{ENV_PREFIX}* environment"
STDIN_LABEL = "<stdin>"
DEFAULTED_KINDS = {("trainer.kubeflow.org", "TrainJob"), ("trainer.kubeflow.org", "TrainingRuntime")}
DEFAULTED_KINDS |= {("", "LimitRange"), ("", "ResourceQuota")}

_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)
_NOT_CONTENT = re.compile(r"^(?:[ \t]*(?:#.*)?|%.*)$")

DESCRIPTION = """\
Render TrainJobs for `kubectl apply` or Argo CD: read manifests, materialize the container
resources in their runtimePatches into derived runtimes, and print the result as YAML.

PATH is a YAML or JSON file (several documents allowed), a folder (read recursively: *.yaml,
*.yml, *.json in name order; hidden entries skipped) or - for stdin; default: the current folder.
A folder with a kustomization.yaml is built first with `kustomize build --enable-alpha-plugins
--enable-exec` or, without kustomize, `kubectl kustomize --enable-alpha-plugins`. Objects
annotated config.kubernetes.io/local-config: "true" are read but not printed.
"""

EPILOG = f"""\
Argo CD (config management plugin): with --config-from-env, every {ENV_PREFIX}<OPTION> variable
sets that functionConfig option, e.g. {ENV_PREFIX}MODE=native or
{ENV_PREFIX}DERIVED_RUNTIME_KIND=ClusterTrainingRuntime (they override --config; an empty
value is ignored, an unknown option is an error), ARGOCD_APP_NAMESPACE is the default for
--namespace, and ARGOCD_APP_NAME names the application in error messages.

Exit status: 0 when rendered, 1 on any error (nothing is printed to stdout then), 2 on bad usage.
"""


class RenderError(Exception):
    """Input that cannot be rendered; the message says which file and why."""


@dataclass
class Inputs:
    items: list[Item] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Objects that had no annotations (or no metadata) before the path annotations were added,
    # held by id; holding the nodes keeps their ids from being reused by nodes made later.
    created_annotations: dict[int, Node] = field(default_factory=dict)
    created_metadata: dict[int, Node] = field(default_factory=dict)


def main(args: list[str]) -> int:
    options = _parser().parse_args(args)
    try:
        return _render(options)
    except RenderError as err:
        sys.stderr.write(f"{_application(options, os.environ)}trainjob-resources render: error: {err}\n")
        return 1
    except Exception as err:  # a bug of ours: say so plainly, keep the traceback for debugging only
        if os.environ.get("TRAINJOB_RESOURCES_DEBUG"):
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"trainjob-resources render: internal error ({type(err).__name__}: {err}); please report it\n")
        return 1


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="trainjob-resources render",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="file, folder or - (default: .)")
    parser.add_argument("--config", metavar="FILE", help="functionConfig: a v1 ConfigMap or a TrainJobResources")
    parser.add_argument(
        "--config-from-env",
        action="store_true",
        help=f"read options from {ENV_PREFIX}* variables and the namespace from ARGOCD_APP_NAMESPACE",
    )
    parser.add_argument(
        "--namespace",
        metavar="NS",
        help="namespace of TrainJobs and TrainingRuntimes that name none (they are printed with it)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="also print what was changed, to stderr")
    return parser


def _render(options: argparse.Namespace) -> int:
    from .process import process

    environ = os.environ
    namespace = options.namespace
    if namespace is None and options.config_from_env:
        namespace = environ.get("ARGOCD_APP_NAMESPACE") or None
    resource_list, inputs = load(
        options.paths or ["."], options.config, namespace, environ if options.config_from_env else None
    )
    if inputs.errors:
        return _fail(inputs.errors, options, environ)
    result = process(resource_list)
    errors = [r.display() for r in result.results if r.severity == "error"]
    for line in (r.display() for r in result.results if r.severity == "warning"):
        sys.stderr.write(line + "\n")
    if errors:
        return _fail(errors, options, environ)
    if options.verbose:
        for line in (r.display() for r in result.results if r.severity == "info"):
            sys.stderr.write(line + "\n")
    sys.stdout.buffer.write(_write(result, inputs).encode())
    sys.stdout.flush()
    return 0


def load(
    paths: Sequence[str], config: str | None, namespace: str | None, environ: Mapping[str, str] | None = None
) -> tuple[ResourceList, Inputs]:
    """The inputs as one ResourceList, read as ``render`` and ``explain`` read them; problems that
    stop reading are in ``Inputs.errors``. Objects that name no namespace get ``namespace``."""
    from . import krm

    config_item = _function_config(config, environ)
    skip = {Path(config).resolve()} if config else set()
    inputs = Inputs()
    for raw in paths:
        _read_path(raw, inputs, skip)
    if namespace and not inputs.errors:
        _default_namespace(inputs.items, namespace)
    return krm.ResourceList(items=inputs.items, function_config=config_item), inputs


def _application(options: argparse.Namespace, environ: Mapping[str, str]) -> str:
    """``application NAME: `` under Argo CD (ARGOCD_APP_NAME): Argo CD shows the plugin's stderr as
    one message, and the sidecar's log mixes every application's, so each line names its own."""
    app = environ.get("ARGOCD_APP_NAME") if options.config_from_env else None
    return f"application {app}: " if app else ""


def _fail(errors: list[str], options: argparse.Namespace, environ: Mapping[str, str]) -> int:
    where = _application(options, environ)
    for line in errors:
        sys.stderr.write(where + line + "\n")
    plural = "s" if len(errors) != 1 else ""
    sys.stderr.write(f"{where}trainjob-resources render: {len(errors)} error{plural}; nothing rendered\n")
    return 1


# Reading


def _read_path(raw: str, inputs: Inputs, skip: set[Path]) -> None:
    try:
        _read_path_or_fail(raw, inputs, skip)
    except OSError as err:
        raise RenderError(f"{err.filename or raw}: cannot read: {err.strerror or err}") from None


def _read_path_or_fail(raw: str, inputs: Inputs, skip: set[Path]) -> None:
    if raw == "-":
        _read_text(_decode(sys.stdin.buffer.read(), STDIN_LABEL), STDIN_LABEL, inputs)
        return
    path = Path(raw)
    if path.is_dir():
        _read_dir(path, inputs, skip)
    elif path.is_file():
        _read_file(path, inputs)
    elif path.exists():
        raise RenderError(f"{raw}: not a regular file or folder")
    else:
        raise RenderError(f"{raw}: no such file or folder")


def _read_dir(directory: Path, inputs: Inputs, skip: set[Path]) -> None:
    if any((directory / name).is_file() for name in KUSTOMIZATION_FILES):
        _read_text(_kustomize(directory), str(directory), inputs)
        return
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            _read_dir(entry, inputs, skip)
        elif entry.is_file() and entry.suffix in SUFFIXES and entry.resolve() not in skip:
            _read_file(entry, inputs)


def _read_file(path: Path, inputs: Inputs) -> None:
    _read_text(_decode(path.read_bytes(), str(path)), str(path), inputs)


def _decode(data: bytes, label: str) -> str:
    from .yamlnodes import YamlInputError, decode

    try:
        return decode(data)
    except YamlInputError as err:
        raise RenderError(f"{label}: {err}") from None


def _kustomize(directory: Path) -> str:
    import shutil
    import subprocess

    if shutil.which("kustomize"):
        command = ["kustomize", "build", "--enable-alpha-plugins", "--enable-exec", str(directory)]
    elif shutil.which("kubectl"):
        command = ["kubectl", "kustomize", "--enable-alpha-plugins", str(directory)]
    else:
        raise RenderError(
            f"{directory}: has a kustomization; building it needs kustomize or kubectl on PATH, and neither was found"
        )
    try:
        done = subprocess.run(command, capture_output=True, check=False)
    except OSError as err:
        raise RenderError(f"{directory}: cannot run {command[0]}: {err.strerror or err}") from None
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()
        raise RenderError(f"{directory}: `{' '.join(command)}` failed (exit {done.returncode}):\n{detail}")
    return _decode(done.stdout, str(directory))


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """The documents of a YAML stream as (first line, text), without parsing them.

    A line starting with ``---`` or ``...`` is a document marker wherever it is (YAML forbids
    one inside content), so cutting there is exact; directives and comments before a marker
    stay with the document that follows.
    """
    cuts = [0]
    for match in _MARKER.finditer(text):
        if match.group() == "---":
            cuts.append(match.start())
        else:
            end = text.find("\n", match.end())
            cuts.append(len(text) if end < 0 else end + 1)
    cuts.append(len(text))
    start = 0
    for cut in cuts[1:]:
        chunk = text[start:cut]
        if cut < len(text) and all(_NOT_CONTENT.match(line) for line in chunk.splitlines()):
            continue
        if chunk:
            yield text.count("\n", 0, start), chunk
        start = cut


def _read_text(text: str, label: str, inputs: Inputs) -> None:
    from yaml.nodes import MappingNode

    from . import yamlnodes as yn
    from .krm import Item

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
        for obj in _objects(node):
            problem = _problem(obj, first_line)
            if problem is not None:
                inputs.errors.append(f"error: {where}: {problem}")
                continue
            assert isinstance(obj, MappingNode)
            metadata = yn.get(obj, "metadata")
            if not isinstance(metadata, MappingNode):
                inputs.created_metadata[id(obj)] = obj
            if not isinstance(yn.get(metadata, "annotations"), MappingNode):
                inputs.created_annotations[id(obj)] = obj
            item = Item(obj)
            item.set_annotation(PATH_KEY, label)
            item.set_annotation(INDEX_KEY, str(index - 1))
            inputs.items.append(item)


def _shift(err: Exception, first_line: int) -> str:
    line, column = getattr(err, "line", None), getattr(err, "column", None)
    if line is None:
        return str(err)
    base = str(err).removesuffix(f" (line {line}, column {column})")
    return f"{base} (line {line + first_line}, column {column})"


def _objects(node: Node) -> list[Node]:
    """The objects of one document: itself, or the items of a ``v1 List``."""
    from yaml.nodes import SequenceNode

    from . import yamlnodes as yn

    if yn.scalar(yn.get(node, "kind")) == "List" and yn.scalar(yn.get(node, "apiVersion")) == "v1":
        items = yn.get(node, "items")
        return list(items.value) if isinstance(items, SequenceNode) else []
    return [node]


def _problem(node: Node, first_line: int) -> str | None:
    from yaml.nodes import MappingNode

    from . import yamlnodes as yn

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
    if yn.scalar(yn.get(node, "kind")) == "ResourceList":
        return f"line {line}: a ResourceList: pipe it to `trainjob-resources` (the KRM function) instead"
    return None


def _block_style(node: Node) -> None:
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

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
            current.style = None


def _default_namespace(items: Sequence[Item], namespace: str) -> None:
    from yaml.nodes import MappingNode

    from . import yamlnodes as yn

    for item in items:
        if (item.group, item.kind) in DEFAULTED_KINDS and not item.namespace:
            assert isinstance(item.node, MappingNode)
            metadata = yn.ensure_map(item.node, "metadata")
            yn.delete_key(metadata, "namespace")
            keys = [k.value for k, _ in metadata.value]
            at = keys.index("name") + 1 if "name" in keys else 0
            metadata.value.insert(at, (yn.str_node("namespace"), yn.str_node(namespace)))
            item.touched()


# The functionConfig


def _function_config(path: str | None, environ: Mapping[str, str] | None) -> Item | None:
    from yaml.nodes import MappingNode

    from . import yamlnodes as yn
    from .config import CONFIG_KIND
    from .krm import Item

    node: Node | None = None
    label = ENV_LABEL
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise RenderError(f"--config {path}: no such file")
        try:
            text = _decode(file.read_bytes(), path)
        except OSError as err:
            raise RenderError(f"--config {path}: cannot read: {err.strerror or err}") from None
        documents = [n for _, chunk in split_documents(text) if (n := _compose(chunk, path)) is not None]
        if len(documents) != 1 or not isinstance(documents[0], MappingNode):
            raise RenderError(f"--config {path}: expected one object (a v1 ConfigMap or a {CONFIG_KIND})")
        node, label = documents[0], path
    options = _env_options(environ) if environ is not None else {}
    if options:
        if node is None:
            node = yn.from_python({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-env"}})
        assert isinstance(node, MappingNode)
        section = "spec" if yn.scalar(yn.get(node, "kind")) == CONFIG_KIND else "data"
        target = yn.ensure_map(node, section)
        for key, value in options.items():
            yn.set_key(target, key, yn.str_node(value))
        if path is not None:
            label = f"{path} and {ENV_LABEL}"
    if node is None:
        return None
    item = Item(node)
    item.set_annotation(PATH_KEY, label)
    return item


def _compose(chunk: str, label: str) -> Node | None:
    from . import yamlnodes as yn

    try:
        return yn.compose(chunk)
    except yn.YamlInputError as err:
        raise RenderError(f"--config {label}: {err}") from None


def env_name(option: str) -> str:
    """``derivedRuntimeKind`` -> ``ARGOCD_ENV_DERIVED_RUNTIME_KIND``."""
    return ENV_PREFIX + re.sub(r"(?<!^)([A-Z])", r"_\1", option).upper()


def _env_options(environ: Mapping[str, str]) -> dict[str, str]:
    from .config import FunctionConfig

    accepted = {env_name(f.alias or name): f.alias or name for name, f in FunctionConfig.model_fields.items()}
    options: dict[str, str] = {}
    unknown: list[str] = []
    for key in sorted(environ):
        if not key.startswith(ENV_PREFIX) or environ[key] == "":
            continue
        if key in accepted:
            options[accepted[key]] = environ[key]
        else:
            unknown.append(key)
    if unknown:
        raise RenderError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} in the environment; "
            f"accepted: {', '.join(sorted(accepted))}"
        )
    return options


# Writing


def _write(result: ResourceList, inputs: Inputs) -> str:
    from yaml.nodes import MappingNode

    from . import yamlnodes as yn

    documents: list[str] = []
    for item in result.items:
        if item.annotation(LOCAL_CONFIG) == "true":
            continue
        node = item.node
        assert isinstance(node, MappingNode)
        metadata = yn.get(node, "metadata")
        annotations = yn.get(metadata, "annotations")
        if isinstance(annotations, MappingNode):
            yn.delete_key(annotations, PATH_KEY)
            yn.delete_key(annotations, INDEX_KEY)
            if not annotations.value and id(node) in inputs.created_annotations:
                assert isinstance(metadata, MappingNode)
                yn.delete_key(metadata, "annotations")
        if isinstance(metadata, MappingNode) and not metadata.value and id(node) in inputs.created_metadata:
            yn.delete_key(node, "metadata")
        documents.append(yn.serialize(node))
    return "---\n".join(documents)
