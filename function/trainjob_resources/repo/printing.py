"""The objects ``render`` prints once the function has run: without the annotations reading added,
local-config ones left out, one at a time (textitems)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..values.keys import LOCAL_CONFIG

if TYPE_CHECKING:
    from yaml.nodes import Node

    from ..krm.resource_list import ResourceList

from .collected import Inputs, object_key


def printed(result: ResourceList, inputs: Inputs, *, texts: bool = False) -> Iterator[Node | str]:
    """The objects to print, without the annotations reading added; local-config ones left out.
    One at a time: a node yielded may be dropped once the next is asked for; with ``texts``, an
    object read from its document's text may come as its serialization instead (textitems)."""
    from yaml.nodes import MappingNode

    from .textitems import DocumentItem, strip

    for item in result.items:
        if item.annotation(LOCAL_CONFIG) == "true":
            continue
        document = item if isinstance(item, DocumentItem) else None
        shown = document.printed() if document is not None and texts else None
        if shown is not None:
            yield shown
            continue
        node = item.node
        assert isinstance(node, MappingNode)
        created_annotations = id(node) in inputs.created_annotations
        created_metadata = id(node) in inputs.created_metadata
        if document is not None and not document.replaced:
            created_annotations |= document.created_annotations
            created_metadata |= document.created_metadata
        strip(node, created_annotations, created_metadata, built=object_key(item) in inputs.built)
        yield node
        if document is not None:
            document.drop()
