"""What reading a tenant's inputs collects (``Inputs``): the objects, this function's configs found
among them, what reading added to each object (to take off before printing), the platform's
runtimes, and the reader's errors and notes; the annotations that say where an object was read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..values.keys import INDEX_ANNOTATIONS, PATH_ANNOTATIONS

if TYPE_CHECKING:
    from yaml.nodes import Node

    from ..krm.resource_list import Item
    from .sources import Reader


PATH_KEY = PATH_ANNOTATIONS[0]
INDEX_KEY = INDEX_ANNOTATIONS[0]
STDIN_LABEL = "<stdin>"


@dataclass
class Inputs:
    reader: Reader = field(default_factory=lambda: _reader())
    items: list[Item] = field(default_factory=list)
    # This function's configs found in the inputs or the kustomizations, with where each was found.
    configs: list[tuple[Node, str]] = field(default_factory=list)
    unconfigured: list[str] = field(default_factory=list)  # kustomizations that list no config of ours
    # Objects that had no annotations (or no metadata) before the path annotations were added,
    # held by id; holding the nodes keeps their ids from being reused by nodes made later.
    created_annotations: dict[int, Node] = field(default_factory=dict)
    created_metadata: dict[int, Node] = field(default_factory=dict)
    # Objects of a kustomize build (apiVersion, kind, namespace, name): kustomize never prints an empty
    # annotations map, so one left empty by taking render's annotations out goes (the function may
    # have copied the node, so its id is no guide).
    built: set[tuple[str, str, str, str]] = field(default_factory=set)
    # The runtimes read from --runtimes: the platform's, not the repository's (process(platform=)).
    platform: list[Item] = field(default_factory=list)
    skip: set[str] = field(default_factory=set)  # real paths never read as inputs (the --config file)
    # While the inputs are read: the real paths given to --runtimes (-> as given), left to the platform.
    platform_paths: dict[str, str] = field(default_factory=dict)

    @property
    def platform_ids(self) -> frozenset[int]:
        return frozenset(id(item) for item in self.platform)

    @property
    def errors(self) -> list[str]:
        return self.reader.errors

    @property
    def notes(self) -> list[str]:
        return self.reader.notes


def _reader() -> Reader:
    from .sources import Reader

    return Reader()


def object_key(item: Item) -> tuple[str, str, str, str]:
    return (item.api_version, item.kind, item.namespace, item.name)
