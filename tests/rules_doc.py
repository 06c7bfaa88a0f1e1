"""docs/rules.md, written from the registry: the stages (``rules/stages.py``), every rule
(``rules/registry.py``) and the worked example (``tests/rules_doc_example.py``, which
tests/test_rules_doc.py checks with ruff and mypy). ``python -m tests.rules_doc`` (or ``make
goldens``) rewrites the page; tests/test_rules_doc.py fails while it is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from trainjob_resources.rules.framework import Rule, Stage
from trainjob_resources.rules.registry import RULES
from trainjob_resources.rules.stages import STAGES

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"
EXAMPLE = Path(__file__).with_name("rules_doc_example.py")
RULES_DIR = "../function/trainjob_resources/rules"

# The field path of the example result, as tests/testdata/error/requests-above-limits/results.yaml has it.
_EXAMPLE_PATH = (
    "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
    ".initContainers[0].resources.limits.memory"
)

_INTRO = f"""<!-- Written from the registry by `python -m tests.rules_doc` (make goldens): edit tests/rules_doc.py -->

# The rules

Every check the function makes on a TrainJob is a **rule**: one module in
[`function/trainjob_resources/rules/`]({RULES_DIR}/) that holds its logic, registered once in
[`registry.py`]({RULES_DIR}/registry.py), as upstream Trainer registers its plugins
(`pkg/runtime/framework/interface.go`, `plugins/registry.go`). A `Rule` declares

- its **stages**: where in the pipeline it runs (each stage's module in `pipeline/` runs its rules in registry
  order);
- its **scope**: what it runs over: the TrainJob once (`trainjob`), each patched replicated job (`job-site`),
  each ContainerPatch (`container-site`), each container's merged resources (`effective`) or, in the policy
  stage, each container of the pods the policy sees (`pod-container`);
- what it **reads** (`rules/reads.py`): the memo (`pipeline/memo.py`) reuses a stage's findings for
  every TrainJob whose declared reads have the same key, so an undeclared read shares findings it should not
  (`tests/test_memo.py` compares renders with and without the memo);
- what it **reports**, and its `check(context, subject)`, which returns `Violation`s; the context
  (`resolve/context.py`, `TrainJobContext`) is the one object per TrainJob.

Each finding names its rule in the KRM result's `tags` (kyaml `fn/framework/result.go`), e.g.
`tests/testdata/error/requests-above-limits/results.yaml`:

```yaml
- message: 'effective requests.memory (from runtime): request of 8Gi must be less than or equal to memory limit of
    4Gi: set this limit to 8Gi, or set requests.memory in the patch too'
  severity: error
  resourceRef: {{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: requests-above-limits}}
  field:
    path: {_EXAMPLE_PATH}
    currentValue: 4Gi
    proposedValue: 8Gi
  file: {{path: trainjobs/requests-above-limits.yaml}}
  tags:
    rule: effective-resources
```

Results about the functionConfig, the input itself, a TrainJob's rewrite and the run's summary come from
the pipeline's own steps (`options/function_config.py`, `pipeline/`, `report/reporting.py`) and `krm/` and
carry no rule.
"""


def _stages() -> str:
    rows = ["## Stages, in order", "", "| stage | runs on | rules |", "| --- | --- | --- |"]
    for stage in STAGES:
        names = ", ".join(f"`{rule.name}`" for rule in RULES if stage in rule.stages) or "(none: a step of `pipeline/`)"
        rows.append(f"| `{stage.name}` | {stage.when} | {names} |")
    return "\n".join(rows) + "\n"


def _reads(rule: Rule) -> str:
    return ", ".join(read.name for read in rule.reads) or "(none)"


def _module(rule: Rule) -> str:
    return rule.check.__module__.rsplit(".", 1)[1]


def _stage_names(stages: tuple[Stage, ...]) -> str:
    return ", ".join(stage.name for stage in stages)


def _registry() -> str:
    rows = [
        "## The registry",
        "",
        "In registry order, the order of their findings within a stage. A rule that reads (none) is never remembered.",
        "",
        "| rule | stages | runs over | reads | reports |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in RULES:
        link = f"[`{rule.name}`]({RULES_DIR}/{_module(rule)}.py)"
        rows.append(f"| {link} | {_stage_names(rule.stages)} | {rule.scope} | {_reads(rule)} | {rule.reports} |")
    return "\n".join(rows) + "\n"


_ADDING = """## Adding a rule

1. Write `rules/<name>.py`: a `_check(context, subject)` that holds the rule's logic and a
   `RULE = Rule(name, stages, scope, reads, reports, _check)`. Cite, in the module docstring, the upstream file
   the rule follows.
2. Declare in `reads` everything `_check` reads besides its subject; a new kind of input gets a new `Read` in
   `reads.py` (its `key` says it exactly; its `shape` leaves out where it is, for results that name no place).
3. Add it to `registry.RULES` where its findings belong in the output.
4. Add a golden case (`tests/testdata/error/<case>/` or `success/<case>/`), then `make goldens`, which also
   rewrites this page, and review the diff.

For example, a rule that warns when a ContainerPatch sets a memory limit of zero
(`tests/rules_doc_example.py`, which `tests/test_rules_doc.py` checks with ruff and `mypy --strict` as
`rules/zero_memory.py`):

```python
"""


def render() -> str:
    example = EXAMPLE.read_text()
    return "\n".join([_INTRO, _stages(), _registry(), _ADDING + example + "```\n"])


def main() -> None:
    DOC.write_text(render())
    print(f"wrote {DOC.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
