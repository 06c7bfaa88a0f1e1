"""What a TrainJob really requests, and how it and the run are reported: every container's effective
resources, every pod by Kubernetes' formula and the TrainJob's total (``explain``: the numbers the
policy rules, ``explain`` and ``check`` read), ``explain``'s reports of them (``explain_report``,
bounded by ``explain_bound``), what a change does to them (``change_report``, for ``explain
--against``, opened by the review: status, refusals, TrainJobs to recreate, ``change_review``), and
which results a run reports (``reporting``, the emit stage's ``results`` option).

May import: ``values``, ``yamltext``, ``krm``, ``kube``, ``trainer``, ``options``, ``derive``,
``resolve``.
"""
