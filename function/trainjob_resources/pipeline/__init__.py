"""The stages run, one module each, in the vocabulary of ``rules/stages.py``; ``process.py`` lists
them in order. Each stage's function does the stage's making (from ``resolve/``, ``derive/``,
``report/``) and runs the stage's rules (from ``rules/registry.py``):

- ``index``: once per render, the bundle indexed and each runtime checked;
- ``parse``: a TrainJob as Trainer's API reads it, an earlier render's records undone;
- ``resolve``: its runtimeRef resolved; or the runtime-free stage, for a runtime not in the bundle;
- ``validate``: the trainjob, patches (with effective) and policy stages;
- ``derive``: the derived runtime requested, the TrainJob pointed at it;
- ``rewrite``: a TrainJob that derives nothing passed through, then the rewrite stage's rules;
- ``emit``: once per render, the contributions merged in input order, the derived runtimes placed,
  the results reported.

Besides the stages: what one TrainJob's processing produced (``outcome``), the TrainJobs as work by
ranges and what each contributes (``work``, for ``cli/fan_out.py``), and what one render computes
once, each stage's findings kept under the key of what its rules read (``memo``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``,
``resolve``, ``report``, ``rules``.
"""
