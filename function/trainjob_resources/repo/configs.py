"""The functionConfig render applies: the platform's ``--config`` (a floor), this function's configs
found among the inputs or in the kustomizations (taken out, never printed), and ``ARGOCD_ENV_*``;
the later two may only tighten the platform's policy."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..yamltext.documents import split_documents
from .sources import RenderError, shown

if TYPE_CHECKING:
    from yaml.nodes import Node

    from ..krm.resource_list import Item
    from ..options.config_layers import Layer
    from .sources import Reader

from .collected import INDEX_KEY, PATH_KEY, STDIN_LABEL, Inputs
from .sources import decode_text


def platform_config(path: str | None, reader: Reader) -> Layer | None:
    """``--config FILE``: the platform's options, a floor for the repository's and ARGOCD_ENV_*'s."""
    from yaml.nodes import MappingNode

    from ..options.config_layers import LayerError, layer_from_object
    from ..options.options import CONFIG_KIND
    from ..yamltext import yamlnodes as yn
    from .sources import Root

    if path is None:
        return None
    if not os.path.isfile(path):
        raise RenderError(f"--config {shown(path)}: no such file")
    real = reader.resolve(path, path, Root(os.path.realpath(path), path))
    try:
        data = reader.read_bytes(real, path)
    except OSError as err:
        raise RenderError(f"--config {shown(path)}: cannot read: {err.strerror or err}") from None
    text = decode_text(data or b"", path)
    try:
        documents = [n for _, chunk in split_documents(text) if not yn.is_null(n := yn.compose(chunk))]
    except yn.YamlInputError as err:
        raise RenderError(f"--config {shown(path)}: {err}") from None
    if len(documents) != 1 or not isinstance(documents[0], MappingNode):
        raise RenderError(f"--config {shown(path)}: expected one object (a v1 ConfigMap or a {CONFIG_KIND})")
    merged = yn.merge_key_path(documents[0])
    if merged is not None:
        raise RenderError(f"--config {shown(path)}: a YAML merge key (<<) at {merged}: write the fields out")
    try:
        return layer_from_object(yn.to_python(documents[0]), shown(path), platform=True)
    except LayerError as err:
        raise RenderError("\n".join(err.messages)) from None


def take_configs(inputs: Inputs) -> None:
    """This function's configs among the inputs: taken out (used as the functionConfig, never printed)."""
    from ..options.options import CONFIG_KIND
    from .kustomize import is_our_config

    kept: list[Item] = []
    for item in inputs.items:
        candidate = item.kind in (CONFIG_KIND, "ConfigMap")
        if candidate and is_our_config(item.node):
            index = item.annotation(INDEX_KEY)
            where = item.annotation(PATH_KEY) or STDIN_LABEL
            where = f"{where}#{index}" if index not in (None, "0") else where
            inputs.configs.append((item.node, where))
        else:
            if candidate and not item.dirty:
                item.settle()  # a ConfigMap's tree, composed to look at, goes again (textitems)
            kept.append(item)
    inputs.items[:] = kept


def effective_config(platform: Layer | None, inputs: Inputs, environ: Mapping[str, str] | None) -> Item | None:
    """The functionConfig: the platform's options, then the repository's config, then ARGOCD_ENV_*;
    the later two may only tighten the platform's policy. None when nothing sets an option."""
    from ..krm.resource_list import Item
    from ..options.config import to_object
    from ..options.config_layers import LayerError, combine, layer_from_env, layer_from_object
    from ..yamltext import yamlnodes as yn

    layers: list[Layer] = [platform] if platform is not None else []
    for node, label in inputs.configs:
        _strip_internal(node)
        merged = yn.merge_key_path(node)
        if merged is not None:
            inputs.errors.append(f"error: {label}: a YAML merge key (<<) at {merged} in trainjob-resources' config")
            return None
    options = [_options_of(node) for node, _ in inputs.configs]
    if len(inputs.configs) > 1 and all(o == options[0] for o in options):
        inputs.configs[1:] = []  # the same options in several places (a base's and an overlay's): applied once
    if len(inputs.configs) > 1:
        found = ", ".join(label for _, label in inputs.configs)
        inputs.errors.append(
            f"error: {len(inputs.configs)} trainjob-resources configs with different options found ({found}); "
            "render applies the function once: keep one"
        )
        return None
    try:
        for node, label in inputs.configs:
            layers.append(layer_from_object(yn.to_python(node), label))
        env_layer = layer_from_env(environ) if environ is not None else None
        if env_layer is not None:
            layers.append(env_layer)
        if not layers:
            for label in inputs.unconfigured:
                inputs.notes.append(
                    f"note: {shown(label)}: its kustomization lists no trainjob-resources config (transformers:, "
                    "generators:, validators:); the function runs with the default options"
                )
            return None
        config = combine(layers)
    except LayerError as err:
        inputs.errors.extend(f"error: {message}" for message in err.messages)
        return None
    item = Item(yn.from_python(to_object(config)))
    sources = dict.fromkeys(source for layer in layers for source in layer.sources.values())
    item.set_annotation(PATH_KEY, " + ".join(sources) or "functionConfig")
    return item


def _options_of(node: Node) -> object:
    from ..yamltext import yamlnodes as yn

    options = yn.get(node, "spec") or yn.get(node, "data")
    return yn.to_python(options) if options is not None else None


def _strip_internal(node: Node) -> None:
    from yaml.nodes import MappingNode

    from ..yamltext import yamlnodes as yn

    annotations = yn.get_path(node, "metadata", "annotations")
    if isinstance(annotations, MappingNode):
        yn.delete_key(annotations, PATH_KEY)
        yn.delete_key(annotations, INDEX_KEY)
