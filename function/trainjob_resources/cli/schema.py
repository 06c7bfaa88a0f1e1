"""``trainjob-resources schema trainjob|config``: the JSON Schema of a TrainJob as this function reads
it (upstream's API with ``resources`` in a ContainerPatch) or of its functionConfig (a
TrainJobResources object), generated from the models that read them (``trainer/models.py``,
``options/config.py``) and printed on stdout: for yaml-language-server's modeline and for
kubeconform's ``-schema-location``. Exit status: 0, or 2 on bad usage.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

DESCRIPTION = """\
Print the JSON Schema (draft-07) of one kind, generated from the models the function reads it with:

  trainjob   a TrainJob (trainer.kubeflow.org/v1alpha1) with resources in its ContainerPatches,
             which upstream's CRD lacks (editors and kubeconform would flag it as unknown)
  config     the functionConfig, a TrainJobResources object (fn.trainjob-resources.io/v1alpha1)

Save it beside the manifests and point an editor at it with a modeline on a file's first line:

  trainjob-resources schema trainjob > schemas/trainjob.json
  # yaml-language-server: $schema=../schemas/trainjob.json

or give it to kubeconform for the kind:

  trainjob-resources schema trainjob > schemas/trainjob_v1alpha1.json
  kubeconform -schema-location default -schema-location 'schemas/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json' .
"""


def _trainjob() -> dict[str, Any]:
    from ..trainer.models import trainjob_json_schema

    return trainjob_json_schema()


def _config() -> dict[str, Any]:
    from ..options.config import json_schema

    return json_schema()


KINDS: dict[str, Callable[[], dict[str, Any]]] = {"trainjob": _trainjob, "config": _config}


def schema_text(kind: str) -> str:
    return json.dumps(KINDS[kind](), indent=2, ensure_ascii=False) + "\n"


def main(args: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="trainjob-resources schema", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("kind", choices=sorted(KINDS), help="which schema to print")
    options = parser.parse_args(args)
    sys.stdout.write(schema_text(options.kind))
    sys.stdout.flush()
    return 0
