"""Names the package reads and writes in Kubernetes objects, each spelled once: annotation and
label keys, their prefixes, and the pod spec's container lists."""

from __future__ import annotations

from typing import Final

# A pod spec's container lists, in the order a pod starts them (k8s.io/api/core/v1/types.go PodSpec).
CONTAINER_LISTS: Final = ("initContainers", "containers")

# kustomize's mark of an object it reads but never emits (api/konfig/builtinpluginconsts, kyaml
# kioutil): the function reads a runtime so marked as a reference copy.
LOCAL_CONFIG: Final = "config.kubernetes.io/local-config"

# The KRM Functions Specification's ResourceList versions, and the annotations kpt and kustomize
# put on each item (kyaml kioutil: the internal spelling first, the legacy one second).
RESOURCE_LIST_VERSIONS: Final = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1")
PATH_ANNOTATIONS: Final = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS: Final = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
# kustomize's record of an object's earlier names and kinds (api/resource/resource.go).
PREVIOUS_NAMES: Final = ("internal.config.kubernetes.io/previousNames", "config.kubernetes.io/previousNames")
PREVIOUS_KINDS: Final = ("internal.config.kubernetes.io/previousKinds", "config.kubernetes.io/previousKinds")
# The name prefixes and suffixes kustomize's namePrefix and nameSuffix added, outermost last (same file).
NAME_PREFIXES: Final = ("internal.config.kubernetes.io/prefixes", "config.kubernetes.io/prefixes")
NAME_SUFFIXES: Final = ("internal.config.kubernetes.io/suffixes", "config.kubernetes.io/suffixes")
# Where kustomize's buildMetadata [originAnnotations] says an object came from.
ORIGIN: Final = "config.kubernetes.io/origin"
# The annotation that makes an object a function's config (kyaml runfn; its legacy spelling second).
FUNCTION_ANNOTATIONS: Final = ("config.kubernetes.io/function", "config.k8s.io/function")
# kpt live apply's ordering (cli-utils), and Argo CD's.
DEPENDS_ON: Final = "config.kubernetes.io/depends-on"
SYNC_WAVE: Final = "argocd.argoproj.io/sync-wave"

# The function's own: the records on what it writes, their earlier spelling, and render's private
# marks (never taken from input: krm/trust.py).
PREFIX: Final = "fn.trainjob-resources.io/"
OLD_PREFIX: Final = "trainjob-resources.kubeflow.org/"
INTERNAL_PREFIX: Final = "internal.trainjob-resources.io/"
