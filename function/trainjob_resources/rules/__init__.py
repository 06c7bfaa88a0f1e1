"""The function's rules, one module each, registered once in ``registry`` (after upstream Trainer's
``pkg/runtime/framework``: ``interface.go`` and ``plugins/registry.go``).

A rule module holds the rule's logic and declares the stages it runs in (``stages.py``, the
pipeline's one vocabulary), what it runs over (its ``scope``), what it reads (``reads.py``) and
what it reports; the pipeline (``pipeline/``) runs a stage's rules in registry order, remembers a
stage's findings under the key of what its rules declare they read, and each finding names its rule
(the result's ``tags: {rule: ...}``). Adding a rule: a module here, one line in ``registry.RULES``,
a golden case (docs/rules.md, written from the registry).

Besides the rule modules: the framework (``framework``), the stages (``stages``), the reads
(``reads``), the registry (``registry``), and the policy stage's shared parts: the namespace's
LimitRanges and ResourceQuotas read (``namespace_objects``), where a pod's value came from
(``policy_math``) and the stage as a whole (``policy_stage``).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``, ``resolve``,
``report``.
"""
