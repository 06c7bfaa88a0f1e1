package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync"
	synccommon "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/controller"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/argo"
	kubeutil "github.com/argoproj/argo-cd/v3/util/kube"
	logutils "github.com/argoproj/argo-cd/v3/util/log"
	"github.com/argoproj/argo-cd/v3/util/lua"
	log "github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// syncedResource is one entry of the operation's result (the Application's status.operationState).
type syncedResource struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	HookPhase string `json:"hookPhase,omitempty"`
	SyncPhase string `json:"syncPhase"`
}

// waveRun is one call of the sync-wave hook: the phase and wave gitops-engine just ran, and the resources
// whose result appeared in it (applied, pruned or failed), in its order.
type waveRun struct {
	Phase     string   `json:"phase"`
	Wave      int      `json:"wave"`
	Final     bool     `json:"final"`
	Resources []string `json:"resources"`
}

type syncOutput struct {
	// Skipped: a self-heal found the Application Synced and started no operation.
	Skipped bool `json:"skipped"`
	// Before is the comparison the operation started from.
	Before    *diffOutput      `json:"before"`
	Phase     string           `json:"phase"`
	Message   string           `json:"message"`
	Resources []syncedResource `json:"resources"`
	Waves     []waveRun        `json:"waves"`
	// Passes is how many times the controller's operation loop ran the sync context.
	Passes int `json:"passes"`
}

func syncCommand(args []string) error {
	flags := newFlags("sync")
	appPath := flags.String("application", "", "the Application manifest (its syncPolicy.syncOptions are the operation's)")
	manifestsPath := flags.String("manifests", "", "`generate`'s output (its manifests are the target state)")
	kubeconfig := flags.String("kubeconfig", "", "the destination cluster")
	cmPath := flags.String("argocd-cm", "", "argocd-cm (resource.customizations, exclusions, tracking)")
	prune := flags.Bool("prune", false, "prune live objects git no longer holds (a sync with Prune, or automated.prune)")
	selfHeal := flags.Bool("self-heal", false,
		"as automated self-heal with git unchanged: nothing when the Application is Synced, else only its OutOfSync resources")
	timeout := flags.Duration("timeout", 3*time.Minute, "give up on an operation still running after this long")
	_ = flags.Parse(args)
	if *appPath == "" || *manifestsPath == "" || *kubeconfig == "" {
		return errors.New("sync needs --application, --manifests and --kubeconfig")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout+time.Minute)
	defer cancel()
	in, err := readInputs(ctx, *appPath, *manifestsPath, *kubeconfig, *cmPath)
	if err != nil {
		return err
	}
	operation := v1alpha1.SyncOperation{Revision: in.revision, Prune: *prune}
	if in.app.Spec.SyncPolicy != nil {
		operation.SyncOptions = in.app.Spec.SyncPolicy.SyncOptions
	}
	out, err := runSync(ctx, in, operation, *selfHeal, *timeout)
	if err != nil {
		return err
	}
	return printJSON(out)
}

// runSync is the application controller's handling of a sync operation: autoSync's choice of resources for a
// self-heal (controller/appcontroller.go), then SyncAppState (controller/sync.go) once per pass of its
// operation loop (processRequestedAppOperation requeues a running operation): a fresh CompareAppState,
// refused on a comparison error, a sync context with the options SyncAppState derives from the operation's
// sync options, one Sync step, its state carried to the next pass, until the operation completes.
func runSync(ctx context.Context, in *inputs, operation v1alpha1.SyncOperation, selfHeal bool, timeout time.Duration) (*syncOutput, error) {
	compared, err := compare(ctx, in, false)
	if err != nil {
		return nil, err
	}
	out := &syncOutput{Before: compared.out, Resources: []syncedResource{}, Waves: []waveRun{}}
	if selfHeal {
		if compared.out.Status != string(v1alpha1.SyncStatusCodeOutOfSync) {
			out.Skipped = true
			return out, nil
		}
		for _, resource := range compared.out.Resources {
			if resource.Status != string(v1alpha1.SyncStatusCodeSynced) {
				operation.Resources = append(operation.Resources, v1alpha1.SyncOperationResource{
					Group: resource.Group, Kind: resource.Kind, Name: resource.Name,
				})
			}
		}
	}
	phase, message := synccommon.OperationRunning, ""
	var results []synccommon.ResourceSyncResult
	startedAt := metav1.Now()
	seen := map[string]bool{}
	deadline := time.Now().Add(timeout)
	for {
		out.Passes++
		if compared.out.Error != "" {
			// SyncAppState refuses to sync while the Application has a ComparisonError condition.
			phase, message = synccommon.OperationError, string(v1alpha1.ApplicationConditionComparisonError)+": "+compared.out.Error
			break
		}
		var current sync.SyncContext
		recordWave := func(syncPhase synccommon.SyncPhase, wave int, final bool) error {
			_, _, sofar := current.GetState()
			run := waveRun{Phase: string(syncPhase), Wave: wave, Final: final, Resources: []string{}}
			for _, result := range sofar {
				key := result.ResourceKey.String() + " " + string(result.SyncPhase)
				if !seen[key] {
					seen[key] = true
					run.Resources = append(run.Resources, result.ResourceKey.Kind+"/"+result.ResourceKey.Name)
				}
			}
			out.Waves = append(out.Waves, run)
			return delayBetweenSyncWaves(final)
		}
		syncContext, cleanup, err := sync.NewSyncContext(
			in.revision, compared.reconciliation, in.cluster.config, in.cluster.config, kubeutil.NewKubectl(),
			in.app.Spec.Destination.Namespace, syncOptions(in, compared, operation, phase, message, results, startedAt, recordWave)...)
		if err != nil {
			return nil, fmt.Errorf("failed to initialize sync context: %w", err)
		}
		current = syncContext
		syncContext.Sync(ctx)
		phase, message, results = syncContext.GetState()
		cleanup()
		if phase.Completed() {
			break
		}
		if time.Now().After(deadline) {
			message = fmt.Sprintf("still %s after %s: %s", phase, timeout, message)
			break
		}
		time.Sleep(500 * time.Millisecond)
		if compared, err = compare(ctx, in, false); err != nil {
			return nil, err
		}
	}
	out.Phase, out.Message = string(phase), message
	for _, result := range results {
		out.Resources = append(out.Resources, syncedResource{
			Group: result.ResourceKey.Group, Kind: result.ResourceKey.Kind, Namespace: result.ResourceKey.Namespace,
			Name: result.ResourceKey.Name, Status: string(result.Status), Message: result.Message,
			HookPhase: string(result.HookPhase), SyncPhase: string(result.SyncPhase),
		})
	}
	return out, nil
}

// syncOptions are the options controller/sync.go's SyncAppState gives NewSyncContext for this operation,
// with the state of the previous pass (WithInitialState; Order renumbered as it stores results). Left out:
// the AppProject's permission validator (the default project permits everything), impersonation, and
// CreateNamespace / RespectIgnoreDifferences (their helpers are the controller's own, unexported).
func syncOptions(in *inputs, compared *comparison, operation v1alpha1.SyncOperation, phase synccommon.OperationPhase, message string, results []synccommon.ResourceSyncResult, startedAt metav1.Time, waveHook synccommon.SyncWaveHook) []sync.SyncOpt {
	options := operation.SyncOptions
	initial := make([]synccommon.ResourceSyncResult, len(results))
	for i, result := range results {
		initial[i] = result
		initial[i].Order = i + 1
	}
	prunePropagationPolicy := metav1.DeletePropagationForeground
	switch {
	case options.HasOption("PrunePropagationPolicy=background"):
		prunePropagationPolicy = metav1.DeletePropagationBackground
	case options.HasOption("PrunePropagationPolicy=orphan"):
		prunePropagationPolicy = metav1.DeletePropagationOrphan
	}
	clientSideApplyManager := synccommon.DefaultClientSideApplyMigrationManager
	if manager := in.app.GetAnnotation(common.AnnotationClientSideApplyMigrationManager); manager != "" {
		clientSideApplyManager = manager
	}
	appName := in.app.InstanceName(argocdNamespace)
	trackingMethod := v1alpha1.TrackingMethod(in.settings.trackingMethod)
	logger := log.New()
	logger.SetOutput(os.Stderr)
	logger.SetLevel(log.WarnLevel)
	return []sync.SyncOpt{
		sync.WithLogr(logutils.NewLogrusLogger(logger)),
		sync.WithHealthOverride(lua.ResourceHealthOverrides(compared.resourceOverrides)),
		sync.WithOperationSettings(operation.DryRun, operation.Prune, operation.SyncStrategy.Force(), operation.IsApplyStrategy() || len(operation.Resources) > 0),
		sync.WithInitialState(phase, message, initial, startedAt),
		sync.WithResourcesFilter(func(key kube.ResourceKey, target, live *unstructured.Unstructured) bool {
			return (len(operation.Resources) == 0 || argo.ContainsSyncResource(key.Name, key.Namespace, key.GroupKind().WithVersion(""), operation.Resources)) &&
				selfReferenced(live, target, appName, trackingMethod, in.settings.installationID)
		}),
		sync.WithManifestValidation(!options.HasOption(synccommon.SyncOptionsDisableValidation)),
		sync.WithSyncWaveHook(waveHook),
		sync.WithPruneLast(options.HasOption(synccommon.SyncOptionPruneLast)),
		sync.WithResourceModificationChecker(options.HasOption("ApplyOutOfSyncOnly=true"), compared.diffs),
		sync.WithPrunePropagationPolicy(&prunePropagationPolicy),
		sync.WithReplace(options.HasOption(synccommon.SyncOptionReplace)),
		sync.WithServerSideApply(options.HasOption(synccommon.SyncOptionServerSideApply)),
		sync.WithServerSideApplyManager(common.ArgoCDSSAManager),
		sync.WithClientSideApplyMigration(!options.HasOption(synccommon.SyncOptionDisableClientSideApplyMigration), clientSideApplyManager),
		sync.WithPruneConfirmed(false),
		sync.WithDefaultPruneOption(options.GetOptionValue(synccommon.SyncOptionPrune)),
		sync.WithSkipDryRunOnMissingResource(options.HasOption(synccommon.SyncOptionSkipDryRunOnMissingResource)),
	}
}

// selfReferenced is controller/state.go's isSelfReferencedObj: a live object is the Application's to sync
// when its tracking ID (from the target, else from its own annotation) names that very object.
func selfReferenced(live, target *unstructured.Unstructured, appName string, trackingMethod v1alpha1.TrackingMethod, installationID string) bool {
	if live == nil || trackingMethod == v1alpha1.TrackingMethodLabel {
		return true
	}
	var value *argo.AppInstanceValue
	if target != nil {
		fromTarget := argo.UnstructuredToAppInstanceValue(target, appName, "")
		value = &fromTarget
	} else if value = argo.NewResourceTracking().GetAppInstance(live, trackingMethod, installationID); value == nil {
		return true
	}
	return (live.GetNamespace() == value.Namespace || live.GetNamespace() == "") && live.GetName() == value.Name &&
		live.GroupVersionKind().Group == value.Group && live.GetKind() == value.Kind
}

// delayBetweenSyncWaves is controller/sync.go's: ARGOCD_SYNC_WAVE_DELAY seconds (2 by default) after every
// wave but the last.
func delayBetweenSyncWaves(final bool) error {
	if final {
		return nil
	}
	seconds := 2
	if value, err := strconv.Atoi(os.Getenv(controller.EnvVarSyncWaveDelay)); err == nil {
		seconds = value
	}
	time.Sleep(time.Duration(seconds) * time.Second)
	return nil
}
