"""The pipeline's stages, in order: the one vocabulary of ``process.py``, ``pipeline/`` (a module a
stage), the rules and the docs.

Once per render the bundle is indexed; then each TrainJob is parsed, its runtimeRef resolved,
validated (the runtime-free stage when its runtime is not in the bundle, else the trainjob,
patches, effective and policy stages), its runtime derived and the TrainJob rewritten; the render
emits the items and results. A rule runs in one or more of these stages (``Rule.stages``); a stage
without rules is a step of ``pipeline/`` alone.
"""

from __future__ import annotations

from typing import Any, Final

from .framework import Stage


def _clean(result: Any) -> bool:
    violations, _ = result
    return not violations


def _quiet(result: Any) -> bool:
    return all(v.severity == "info" and not v.path for v in result)


INDEX = Stage("index", "once per render: the bundle indexed (resolve/bundle.py), each runtime checked")
PARSE = Stage("parse", "each TrainJob read: its fields against Trainer's API, its records of an earlier render")
RESOLVE = Stage(
    "resolve", "each TrainJob's runtimeRef against the bundle: the runtime it names, or why it cannot be used"
)
RUNTIME_FREE = Stage(
    "runtime-free", "a TrainJob whose runtime is not in the bundle (passed through): the rules that need no runtime"
)
TRAINJOB = Stage(
    "trainjob", "every resolved TrainJob; never remembered (what it reads differs from TrainJob to TrainJob)"
)
PATCHES = Stage(
    "patches",
    "the patches against the unpatched runtime; remembered by key, and a result without findings serves every "
    "TrainJob of the same shape",
    _clean,
)
EFFECTIVE = Stage(
    "effective",
    "when no patch finding is an error: each container's merged resources; remembered by those resources and "
    "where each value came from",
)
POLICY = Stage(
    "policy",
    "a TrainJob without errors so far: namespace and platform policy, and the summary; remembered by key, and a "
    "result that is the summary alone serves every TrainJob of the same shape",
    _quiet,
)
DERIVE = Stage(
    "derive", "a TrainJob that derives a runtime: the first rule with an error stops the stage, and nothing is derived"
)
REWRITE = Stage("rewrite", "the TrainJob rewritten: what the rewrite did that a live cluster or the user must know")
EMIT = Stage("emit", "once per render: each derived runtime placed before its first TrainJob, the results reported")

STAGES: Final = (INDEX, PARSE, RESOLVE, RUNTIME_FREE, TRAINJOB, PATCHES, EFFECTIVE, POLICY, DERIVE, REWRITE, EMIT)
