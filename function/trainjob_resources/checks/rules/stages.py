"""The pipeline's stages, in the order their findings are reported (``process.py``)."""

from __future__ import annotations

from typing import Any

from .framework import Stage


def _clean(result: Any) -> bool:
    violations, _ = result
    return not violations


def _quiet(result: Any) -> bool:
    return all(v.severity == "info" and not v.path for v in result)


# A TrainJob's runtimeRef against the bundle: the runtime it names, or why it cannot be used.
RESOLVE = Stage("resolve")
# A TrainJob whose runtime is not in the bundle: the rules that need no runtime.
RUNTIME_FREE = Stage("runtime-free")
# A resolved TrainJob, every one of them (what they read differs from TrainJob to TrainJob).
TRAINJOB = Stage("trainjob")
# The patches against the unpatched runtime, then (when none is an error) the effective resources:
# remembered together, and a result without findings serves every TrainJob of the same shape.
PATCHES = Stage("patches", _clean)
EFFECTIVE = Stage("effective")
# Namespace and platform policy, and the summary: a result that is the summary alone is shared.
POLICY = Stage("policy", _quiet)
# Before a runtime is derived: the first rule with an error stops the stage, and nothing is derived.
DERIVE = Stage("derive")
# The TrainJob rewritten: what the rewrite did that a live cluster or the user must know.
REWRITE = Stage("rewrite")
