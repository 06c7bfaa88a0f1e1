"""Which input may carry which mark: the trust model (docs/hardening.md, "Trust model"), in one place.

Three kinds of mark change what the function decides, and each has one writer it believes:

- ``internal.trainjob-resources.io/*``: render's own, written into the private copy it builds and
  taken out of the build's output before the function runs (``repo.kustomize``, keyed with a
  random value per build that no input can know). Input never carries one: refused, in every mode.
- kustomize's ``previousNames`` (``internal.config.kubernetes.io/previousNames``; older releases
  ``config.kubernetes.io/previousNames``): written by kustomize while it builds, and stripped from
  a plain build's output (api/resource/resource.go ``BuildAnnotations``;
  api/internal/utils/annotations.go names the keys). Under kustomize (the KRM function) it is
  kustomize's; render believes only the ones it sets itself, from its own build (refused on
  anything it reads); and where a KRM input's runtime was renamed from a name a TrainJob of
  another file or namespace uses, that TrainJob is not re-pointed (``resolve.bundle``).
- the function's own provenance (``fn.trainjob-resources.io/derived-from``, the ``derived`` label,
  a TrainJob's records): anyone may write them, so they only ever ask for more checking: a
  runtime that carries them is still an ordinary runtime to a TrainJob that names it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..values import fieldpath
from ..values.keys import INTERNAL_PREFIX, PREVIOUS_KINDS, PREVIOUS_NAMES


def annotation_path(key: str) -> str:
    """The field path of annotation ``key``: ``metadata.annotations[internal.trainjob-resources.io/name]``."""
    return fieldpath.child("metadata.annotations", key)


def forged_mark(keys: Iterable[str]) -> tuple[str, str] | None:
    """The first ``internal.trainjob-resources.io/*`` annotation among ``keys``, as (message, field
    path): only render writes such a mark, and never lets one reach the function."""
    for key in keys:
        if key.startswith(INTERNAL_PREFIX):
            return (
                f"carries the annotation {key!r}: annotations under {INTERNAL_PREFIX} are render's own marks "
                "(written into its private copy and taken out of its build), never input; one here could drop an "
                "object or re-point a TrainJob: remove it",
                annotation_path(key),
            )
    return None


def untrusted_previous_names(keys: Iterable[str]) -> tuple[str, str] | None:
    """The first of kustomize's previousNames/previousKinds annotations among ``keys`` of an object
    render read, as (message, field path): render believes only those it sets from its own build."""
    for key in keys:
        if key in PREVIOUS_NAMES or key in PREVIOUS_KINDS:
            return (
                f"carries the annotation {key!r}: kustomize writes it while it builds (a plain build strips it, "
                "api/resource/resource.go), and render sets it only from its own build, so one in the input would "
                "re-point TrainJobs to a runtime of another name: remove it",
                annotation_path(key),
            )
    return None
