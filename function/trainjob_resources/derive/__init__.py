"""What a derived runtime is made of, and the TrainJob rewritten to use one: the plan of what it
folds in (``plan``), the runtime and the rewrite the real API accepts (``materialize``), the output
bound on what one render derives (``derived_bound``), and the records a render writes so that the
next one can undo it (``provenance``, read back by the index and parse stages too).

The derive stage itself (its rules, the rewrite of one TrainJob) runs in ``pipeline/``.

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``.
"""
