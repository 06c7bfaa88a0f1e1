"""Kubernetes' own rules, as the API server and the scheduler apply them: quantities
(``quantity``), what a container's resources may say (``resource_rules``), a pod's effective
resources (``podmath``), the strategic merge of resource requirements (``merge``), and objects
compared as the API server stores them, with their CRD's defaults applied (``compare``), and a byte
quantity as a person reads it (``readable``).

May import: ``values``.
"""
