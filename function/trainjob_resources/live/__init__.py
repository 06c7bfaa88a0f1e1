"""The live cluster, for ``check`` only: what a sync of the render would do to it. The Kubernetes API read
with the ``kubernetes`` client (``cluster``, the only module that imports it, and only ``check`` imports
that module), what it reads of the cluster (``gather``), the findings (``findings``; ``trainer_release``
for ``trainer-version``, ``native_fields`` for ``mode``: the served TrainJob CRD's KEP-2782 fields;
``patches_immutable`` for ``runtime-patches-immutable``, ``jobset_active`` for its JobSet half, with what
``gather_jobsets`` reads; ``in_use`` for ``runtime-in-use``, with what
``gather_pruned`` reads outside the render's namespaces; ``running_kept`` for ``snapshot-kept`` on
Trainer v2.2; ``running_suspended`` for ``running-suspended``; ``quota_constraints`` for the values a
quota makes every container set), what Kueue does with the TrainJobs (``queues``; the Kueue release that
sizes them: ``kueue_release``; what its Workloads reserve: ``kueue_usage``), the RuntimeClass overhead
the pods get (``overhead``), a runtime neither the render nor the cluster has (``absent_runtime``) and
their report (``report``).

May import: every layer below the CLI (``repo`` included).
"""
