"""The parse stage: a TrainJob as Trainer's API reads it, its records of an earlier render undone
first, and the parse stage's rules."""

from __future__ import annotations

from typing import Final

from yaml.nodes import MappingNode, Node

from ..derive.provenance import ProvenanceError, has_provenance, restore
from ..krm.resource_list import Item
from ..options.options import Options
from ..resolve.bundle import Bundle
from ..resolve.context import TrainJobContext
from ..rules import registry
from ..rules.framework import run
from ..rules.stages import PARSE
from ..trainer.sites import container_sites, writes_resources
from ..trainer.trainjob_view import TrainJobView, parse_trainjob
from ..yamltext import textedit
from ..yamltext import yamlnodes as yn
from .memo import Memo
from .outcome import Outcome

_RULES: Final = registry.of(PARSE)


def parse(item: Item, bundle: Bundle, config: Options, memo: Memo, records: bool) -> TrainJobContext | Outcome:
    """The TrainJob as Trainer's API reads it (its records of an earlier render undone first), or why it cannot be."""
    assert isinstance(item.node, MappingNode)
    context = TrainJobContext(item, None, None, bundle, config, memo)
    trainjob: TrainJobView | None = None
    # Read before any rewrite: the rewrite writes records into the item's own tree when nothing was restored.
    context.rendered_before = has_provenance(item.node)
    if records and context.rendered_before:
        context.work = writable_copy(item.node)
        try:
            restore(context.work)
        except ProvenanceError as err:
            context.records_error = str(err)
    if context.records_error is None:
        context.raw = yn.to_python(context.work) if context.work is not None else item.value()
        trainjob, context.api_violations = parse_trainjob(context.raw)
    found = run(_RULES, context)
    if trainjob is None or found:
        return Outcome(found)
    context.trainjob = trainjob
    context.sites = list(container_sites(trainjob, context.raw))
    context.overrides = any(s.resources is not None for s in context.sites) or writes_resources(context.raw)
    return context


def writable_copy(node: Node) -> MappingNode:
    """A copy of the TrainJob's tree to rewrite, the item's own left as read."""
    copied = textedit.copy(node)
    assert isinstance(copied, MappingNode)
    return copied
