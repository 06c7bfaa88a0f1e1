package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
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
	Group     string   `json:"group"`
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Status    string   `json:"status"`
	Live      bool     `json:"live"`
	Changed   []string `json:"changed"`
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
	app, err := readApplication(*appPath)
	if err != nil {
		return err
	}
	targets, err := readManifests(*manifestsPath)
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := compare(ctx, app, targets, config, *cmPath, *controllerSSD)
	if err != nil {
		return err
	}
	return printJSON(out)
}

func readManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var generated generateResult
	if err := json.Unmarshal(data, &generated); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if generated.Error != "" {
		return nil, fmt.Errorf("%s holds a generation error: %s", path, generated.Error)
	}
	objects := make([]*unstructured.Unstructured, 0, len(generated.Manifests))
	for _, manifest := range generated.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(manifest); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objects = append(objects, obj)
	}
	return objects, nil
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

// compare follows the application controller's CompareAppState (controller/state.go): targets normalized with
// NormalizeTargetObjects (namespace, tracking), live objects matched by sync.Reconcile, the diff configured by
// argodiff.NewDiffConfigBuilder with the Application's ignoreDifferences, argocd-cm's resource overrides and
// compare options, the GVK parser from the cluster's OpenAPI, manager argocd-controller, server-side diff as
// shouldUseServerSideDiff decides, then argodiff.StateDiffs; a resource is OutOfSync when its diff is modified
// or it is missing.
func compare(ctx context.Context, app *v1alpha1.Application, targets []*unstructured.Unstructured, config *rest.Config, cmPath string, controllerSSD bool) (*diffOutput, error) {
	settingsMgr, err := settingsManager(ctx, cmPath)
	if err != nil {
		return nil, err
	}
	appLabelKey, err := settingsMgr.GetAppInstanceLabelKey()
	if err != nil {
		return nil, err
	}
	trackingMethod, err := settingsMgr.GetTrackingMethod()
	if err != nil {
		return nil, err
	}
	installationID, err := settingsMgr.GetInstallationID()
	if err != nil {
		return nil, err
	}
	resourceOverrides, err := settingsMgr.GetResourceOverrides()
	if err != nil {
		return nil, err
	}
	compareOptions, err := settingsMgr.GetResourceCompareOptions()
	if err != nil {
		return nil, err
	}

	discoveryClient, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discoveryClient))
	infoProvider := scopes{mapper}
	dynamicClient, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}

	tracking := argo.NewResourceTracking()
	appName := app.InstanceName(argocdNamespace)
	namespace := app.Spec.Destination.Namespace
	targets, _, err = controller.NormalizeTargetObjects(namespace, targets, infoProvider, func(u *unstructured.Unstructured) error {
		return tracking.SetAppInstance(u, appLabelKey, appName, namespace, v1alpha1.TrackingMethod(trackingMethod), installationID)
	})
	if err != nil {
		return nil, err
	}
	live, err := liveObjects(ctx, targets, mapper, dynamicClient)
	if err != nil {
		return nil, err
	}
	reconciliation := sync.Reconcile(targets, live, namespace, infoProvider)

	serverSideDiff := useServerSideDiff(app, controllerSSD)
	builder := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(app.Spec.IgnoreDifferences, resourceOverrides, compareOptions.IgnoreAggregatedRoles, normalizers.IgnoreNormalizerOpts{}).
		WithTracking(appLabelKey, trackingMethod).
		WithNoCache()
	if resourceutil.HasAnnotationOption(app, common.AnnotationCompareOptions, "IncludeMutationWebhook=true") {
		builder.WithIgnoreMutationWebhook(false)
	}
	kubectl := &kube.KubectlCmd{Log: logr.Discard(), Tracer: &tracing.NopTracer{}}
	_, gvkParser, err := kubectl.LoadOpenAPISchema(config)
	if err != nil {
		return nil, err
	}
	builder.WithGVKParser(gvkParser)
	builder.WithManager(common.ArgoCDSSAManager)
	builder.WithServerSideDiff(serverSideDiff)
	if serverSideDiff {
		applier, cleanup, err := kubeutil.ManageServerSideDiffDryRuns(config, nil)
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
	results, err := argodiff.StateDiffs(ctx, reconciliation.Live, reconciliation.Target, diffConfig)
	if err != nil {
		out.Error = "Failed to compare desired state to live state: " + err.Error()
		out.Status = string(v1alpha1.SyncStatusCodeUnknown)
		return out, nil
	}
	for i, target := range reconciliation.Target {
		liveObj := reconciliation.Live[i]
		obj := target
		if obj == nil {
			obj = liveObj
		}
		result := results.Diffs[i]
		entry := objectDiff{
			Group: obj.GroupVersionKind().Group, Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(),
			Status: string(v1alpha1.SyncStatusCodeSynced), Live: liveObj != nil, Changed: []string{},
			NormalizedLive: rawOrNil(result.NormalizedLive), PredictedLive: rawOrNil(result.PredictedLive),
		}
		if result.Modified || liveObj == nil || target == nil {
			entry.Status = string(v1alpha1.SyncStatusCodeOutOfSync)
			out.Status = entry.Status
			entry.Changed = changedPaths(result.NormalizedLive, result.PredictedLive)
		}
		out.Resources = append(out.Resources, entry)
	}
	return out, nil
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

// liveObjects reads each target's object from the API (the controller reads them from its watch cache of the
// same API), by the key sync.Reconcile matches on.
func liveObjects(ctx context.Context, targets []*unstructured.Unstructured, mapper meta.RESTMapper, client dynamic.Interface) (map[kube.ResourceKey]*unstructured.Unstructured, error) {
	live := map[kube.ResourceKey]*unstructured.Unstructured{}
	for _, target := range targets {
		gvk := target.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk, target.GetName(), err)
		}
		var resource dynamic.ResourceInterface = client.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			resource = client.Resource(mapping.Resource).Namespace(target.GetNamespace())
		}
		obj, err := resource.Get(ctx, target.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		live[kube.GetResourceKey(obj)] = obj
	}
	return live, nil
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
