package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	resourceutil "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/resource"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/tracing"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/controller"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	kubeutil "github.com/argoproj/argo-cd/v3/util/kube"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// objectDiff is one target's comparison, as the Application's resource list shows it.
type objectDiff struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Live      bool   `json:"live"`
	// RequiresPruning: a live object of the Application that git no longer holds.
	RequiresPruning bool     `json:"requiresPruning"`
	Changed         []string `json:"changed"`
	// NormalizedLive and PredictedLive are the two sides the diff compared (Argo CD's UI shows their diff).
	NormalizedLive json.RawMessage `json:"normalizedLive,omitempty"`
	PredictedLive  json.RawMessage `json:"predictedLive,omitempty"`
}

type diffOutput struct {
	ServerSideDiff bool         `json:"serverSideDiff"`
	Status         string       `json:"status"`
	Resources      []objectDiff `json:"resources"`
	Error          string       `json:"error,omitempty"`
}

func diffCommand(args []string) error {
	flags := newFlags("diff")
	appPath := flags.String("application", "", "the Application manifest")
	manifestsPath := flags.String("manifests", "", "`generate`'s output (its manifests are the target state)")
	kubeconfig := flags.String("kubeconfig", "", "the destination cluster")
	cmPath := flags.String("argocd-cm", "", "argocd-cm (resource.customizations, resource.compareoptions, tracking)")
	controllerSSD := flags.Bool("controller-server-side-diff", false,
		"the controller's --server-side-diff-enabled (Applications still opt in or out by annotation)")
	_ = flags.Parse(args)
	if *appPath == "" || *manifestsPath == "" || *kubeconfig == "" {
		return errors.New("diff needs --application, --manifests and --kubeconfig")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	in, err := readInputs(ctx, *appPath, *manifestsPath, *kubeconfig, *cmPath)
	if err != nil {
		return err
	}
	compared, err := compare(ctx, in, *controllerSSD)
	if err != nil {
		return err
	}
	return printJSON(compared.out)
}

// inputs is what diff and sync read: the Application, the target manifests (`generate`'s output), the
// destination cluster and argocd-cm.
type inputs struct {
	app      *v1alpha1.Application
	targets  []*unstructured.Unstructured
	revision string
	cluster  *cluster
	settings *argoSettings
}

func readInputs(ctx context.Context, appPath, manifestsPath, kubeconfig, cmPath string) (*inputs, error) {
	app, err := readApplication(appPath)
	if err != nil {
		return nil, err
	}
	targets, revision, err := readManifests(manifestsPath)
	if err != nil {
		return nil, err
	}
	destination, err := connect(kubeconfig)
	if err != nil {
		return nil, err
	}
	read, err := readArgoSettings(ctx, cmPath)
	if err != nil {
		return nil, err
	}
	return &inputs{app: app, targets: targets, revision: revision, cluster: destination, settings: read}, nil
}

// cluster is the destination: its REST config, discovery (kinds and scopes) and a dynamic client.
type cluster struct {
	config    *rest.Config
	discovery discovery.DiscoveryInterface
	mapper    meta.RESTMapper
	dynamic   dynamic.Interface
}

func connect(kubeconfig string) (*cluster, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	// The rate Argo CD's controller talks to a destination at (pkg/apis/application/v1alpha1/types.go,
	// Cluster.RawRestConfig: K8sClientConfigQPS and K8sClientConfigBurst, ARGOCD_K8S_CLIENT_QPS, 50 and 100 by
	// default), not client-go's 5 and 10, which throttled each comparison's listing of every kind for 11 s.
	config.QPS = v1alpha1.K8sClientConfigQPS
	config.Burst = v1alpha1.K8sClientConfigBurst
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	dynamicClient, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(discoveryClient)
	return &cluster{config: config, discovery: cached, mapper: restmapper.NewDeferredDiscoveryRESTMapper(cached), dynamic: dynamicClient}, nil
}

func readManifests(path string) ([]*unstructured.Unstructured, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	var generated generateResult
	if err := json.Unmarshal(data, &generated); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if generated.Error != "" {
		return nil, "", fmt.Errorf("%s holds a generation error: %s", path, generated.Error)
	}
	objects := make([]*unstructured.Unstructured, 0, len(generated.Manifests))
	for _, manifest := range generated.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(manifest); err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		objects = append(objects, obj)
	}
	return objects, generated.Revision, nil
}

// scopes answers the controller's "is this kind namespaced" from the API's discovery (the controller asks its
// cluster cache, which is built from the same discovery).
type scopes struct{ mapper meta.RESTMapper }

func (s scopes) IsNamespaced(gk schema.GroupKind) (bool, error) {
	mapping, err := s.mapper.RESTMapping(gk)
	if err != nil {
		return false, err
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// comparison is CompareAppState's result: what the Application shows (out) and what a sync starts from.
type comparison struct {
	out               *diffOutput
	reconciliation    sync.ReconciliationResult
	diffs             *diff.DiffResultList
	resourceOverrides map[string]v1alpha1.ResourceOverride
}

// compare follows the application controller's CompareAppState (controller/state.go): targets normalized with
// NormalizeTargetObjects (namespace, tracking), the Application's live objects (managedLiveObjects) matched by
// sync.Reconcile, the diff configured by argodiff.NewDiffConfigBuilder with the Application's
// ignoreDifferences, argocd-cm's resource overrides and compare options, the GVK parser from the cluster's
// OpenAPI, manager argocd-controller, server-side diff as shouldUseServerSideDiff decides, then
// argodiff.StateDiffs; a resource is OutOfSync when its diff is modified, it is missing, or git no longer
// holds it (it requires pruning).
func compare(ctx context.Context, in *inputs, controllerSSD bool) (*comparison, error) {
	app, tracked := in.app, in.settings
	resourceOverrides, err := tracked.manager.GetResourceOverrides()
	if err != nil {
		return nil, err
	}
	compareOptions, err := tracked.manager.GetResourceCompareOptions()
	if err != nil {
		return nil, err
	}
	infoProvider := scopes{in.cluster.mapper}
	tracking := argo.NewResourceTracking()
	appName := app.InstanceName(argocdNamespace)
	namespace := app.Spec.Destination.Namespace
	targets := make([]*unstructured.Unstructured, 0, len(in.targets))
	for _, target := range in.targets {
		targets = append(targets, target.DeepCopy())
	}
	targets, _, err = controller.NormalizeTargetObjects(namespace, targets, infoProvider, func(u *unstructured.Unstructured) error {
		return tracking.SetAppInstance(u, tracked.appLabelKey, appName, namespace, v1alpha1.TrackingMethod(tracked.trackingMethod), tracked.installationID)
	})
	if err != nil {
		return nil, err
	}
	live, err := managedLiveObjects(ctx, in.cluster, targets, appName, tracked)
	if err != nil {
		return nil, err
	}
	reconciliation := sync.Reconcile(targets, live, namespace, infoProvider)

	serverSideDiff := useServerSideDiff(app, controllerSSD)
	builder := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(app.Spec.IgnoreDifferences, resourceOverrides, compareOptions.IgnoreAggregatedRoles, normalizers.IgnoreNormalizerOpts{}).
		WithTracking(tracked.appLabelKey, tracked.trackingMethod).
		WithNoCache()
	if resourceutil.HasAnnotationOption(app, common.AnnotationCompareOptions, "IncludeMutationWebhook=true") {
		builder.WithIgnoreMutationWebhook(false)
	}
	kubectl := &kube.KubectlCmd{Log: logr.Discard(), Tracer: &tracing.NopTracer{}}
	_, gvkParser, err := kubectl.LoadOpenAPISchema(in.cluster.config)
	if err != nil {
		return nil, err
	}
	builder.WithGVKParser(gvkParser)
	builder.WithManager(common.ArgoCDSSAManager)
	builder.WithServerSideDiff(serverSideDiff)
	if serverSideDiff {
		applier, cleanup, err := kubeutil.ManageServerSideDiffDryRuns(in.cluster.config, nil)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		builder.WithServerSideDryRunner(diff.NewK8sServerSideDryRunner(applier))
	}
	diffConfig, err := builder.Build()
	if err != nil {
		return nil, err
	}
	out := &diffOutput{ServerSideDiff: serverSideDiff, Status: string(v1alpha1.SyncStatusCodeSynced), Resources: []objectDiff{}}
	compared := &comparison{out: out, reconciliation: reconciliation, resourceOverrides: resourceOverrides}
	results, err := argodiff.StateDiffs(ctx, reconciliation.Live, reconciliation.Target, diffConfig)
	if err != nil {
		out.Error = "Failed to compare desired state to live state: " + err.Error()
		out.Status = string(v1alpha1.SyncStatusCodeUnknown)
		return compared, nil
	}
	compared.diffs = results
	for i, target := range reconciliation.Target {
		liveObj := reconciliation.Live[i]
		obj := target
		if obj == nil {
			obj = liveObj
		}
		result := results.Diffs[i]
		entry := objectDiff{
			Group: obj.GroupVersionKind().Group, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Status: string(v1alpha1.SyncStatusCodeSynced), Live: liveObj != nil, RequiresPruning: target == nil,
			Changed:        []string{},
			NormalizedLive: rawOrNil(result.NormalizedLive), PredictedLive: rawOrNil(result.PredictedLive),
		}
		if result.Modified || liveObj == nil || target == nil {
			entry.Status = string(v1alpha1.SyncStatusCodeOutOfSync)
			out.Status = entry.Status
			entry.Changed = changedPaths(result.NormalizedLive, result.PredictedLive)
		}
		out.Resources = append(out.Resources, entry)
	}
	return compared, nil
}

// useServerSideDiff is controller/state.go's shouldUseServerSideDiff: off by the compare-options annotation
// ServerSideDiff=false, on by the controller's flag, the annotation ServerSideDiff=true, or the sync option
// ServerSideApply=true.
func useServerSideDiff(app *v1alpha1.Application, controllerLevel bool) bool {
	if resourceutil.HasAnnotationOption(app, common.AnnotationCompareOptions, "ServerSideDiff=false") {
		return false
	}
	return controllerLevel ||
		resourceutil.HasAnnotationOption(app, common.AnnotationCompareOptions, "ServerSideDiff=true") ||
		(app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.SyncOptions.HasOption("ServerSideApply=true"))
}

// managedLiveObjects is what the controller's cluster cache answers for the Application (gitops-engine
// pkg/cache/cluster.go, GetManagedLiveObjs, with controller/cache/cache.go's isManaged): every object of a
// kind argocd-cm does not exclude, without owner references, whose tracking names the Application, read by
// listing each kind (the cache watches them); then each target's object under its key where tracking did
// not find it.
func managedLiveObjects(ctx context.Context, destination *cluster, targets []*unstructured.Unstructured, appName string, tracked *argoSettings) (map[kube.ResourceKey]*unstructured.Unstructured, error) {
	filter, err := tracked.manager.GetResourcesFilter()
	if err != nil {
		return nil, err
	}
	tracking := argo.NewResourceTracking()
	live := map[kube.ResourceKey]*unstructured.Unstructured{}
	lists, err := destination.discovery.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	for _, list := range lists {
		groupVersion, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, resource := range list.APIResources {
			if strings.Contains(resource.Name, "/") || !slices.Contains(resource.Verbs, "list") ||
				filter.IsExcludedResource(groupVersion.Group, resource.Kind, destination.config.Host) {
				continue
			}
			items, err := destination.dynamic.Resource(groupVersion.WithResource(resource.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, err
			}
			for i := range items.Items {
				obj := &items.Items[i]
				if len(obj.GetOwnerReferences()) == 0 &&
					tracking.GetAppName(obj, tracked.appLabelKey, v1alpha1.TrackingMethod(tracked.trackingMethod), tracked.installationID) == appName {
					live[kube.GetResourceKey(obj)] = obj
				}
			}
		}
	}
	for _, target := range targets {
		if _, found := live[kube.GetResourceKey(target)]; found {
			continue
		}
		obj, err := getLive(ctx, destination, target)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			live[kube.GetResourceKey(obj)] = obj
		}
	}
	return live, nil
}

// getLive reads the live object of a target (nil when there is none).
func getLive(ctx context.Context, destination *cluster, target *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := target.GroupVersionKind()
	mapping, err := destination.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk, target.GetName(), err)
	}
	var resource dynamic.ResourceInterface = destination.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		resource = destination.dynamic.Resource(mapping.Resource).Namespace(target.GetNamespace())
	}
	obj, err := resource.Get(ctx, target.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

func rawOrNil(data []byte) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	return json.RawMessage(data)
}

// changedPaths lists where the normalized live object and the predicted one differ: a field path
// (spec.runtimePatches[1].manager) for each differing leaf, added or removed field.
func changedPaths(normalizedLive, predictedLive []byte) []string {
	var before, after any
	_ = json.Unmarshal(normalizedLive, &before)
	_ = json.Unmarshal(predictedLive, &after)
	paths := []string{}
	walkDifferences("", before, after, &paths)
	sort.Strings(paths)
	return paths
}

func walkDifferences(path string, before, after any, paths *[]string) {
	if reflect.DeepEqual(before, after) {
		return
	}
	switch b := before.(type) {
	case map[string]any:
		if a, ok := after.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range b {
				keys[k] = true
			}
			for k := range a {
				keys[k] = true
			}
			for k := range keys {
				child := k
				if path != "" {
					child = path + "." + k
				}
				walkDifferences(child, b[k], a[k], paths)
			}
			return
		}
	case []any:
		if a, ok := after.([]any); ok {
			for i := 0; i < len(a) || i < len(b); i++ {
				var bi, ai any
				if i < len(b) {
					bi = b[i]
				}
				if i < len(a) {
					ai = a[i]
				}
				walkDifferences(path+"["+strconv.Itoa(i)+"]", bi, ai, paths)
			}
			return
		}
	}
	if path == "" {
		path = "."
	}
	*paths = append(*paths, path)
}
