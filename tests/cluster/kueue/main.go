// Command kueue runs upstream Kueue's controllers, scheduler and webhooks against a running control
// plane (the harness's), the way Kueue's own integration tests set them up
// (test/integration/singlecluster/controller/jobs/trainjob/suite_test.go in sigs.k8s.io/kueue):
// the TrainJob integration (which builds a Workload's pod sets through Trainer's runtime registry, at
// the Trainer version Kueue's go.mod names), Kueue's core controllers and its scheduler. envtest's
// installers put Kueue's CRDs and its webhook configuration into that cluster (only the webhooks for
// Kueue's own kinds and for TrainJobs: no handler runs here for Pods, Jobs or the other integrations),
// and this process serves those webhooks.
//
// One source for every Kueue release with a harness: built on go.mod's (v0.17.0) by
// tests/cluster/build.sh, on ../kueue-v0.19/go.mod's with -tags kueue_v0_19 by ../kueue-v0.19/build.sh;
// release_v0_<minor>.go holds the calls whose signatures differ between the releases.
//
// It prints one line `READY {json}` on stdout once the webhook server answers and the manager's cache
// has synced, and runs until SIGTERM/SIGINT or until its stdin closes.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	"sigs.k8s.io/kueue/pkg/controller/jobs/trainjob"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	utilexpectations "sigs.k8s.io/kueue/pkg/util/expectations"
	kueuewebhooks "sigs.k8s.io/kueue/pkg/webhooks"
)

// kueueSetup: what the calls whose signatures differ between the releases (release_v0_<minor>.go) take.
type kueueSetup struct {
	mgr          manager.Manager
	queues       *qcache.Manager
	cache        *schdcache.Cache
	expectations *utilexpectations.Store
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kueue harness:", err)
		os.Exit(1)
	}
}

// servedGroups: the webhooks kept from Kueue's configuration, by the API group of their rules.
var servedGroups = map[string]bool{"kueue.x-k8s.io": true, "trainer.kubeflow.org": true}

type rules = []admissionregistrationv1.RuleWithOperations

// servedOnly: hooks less those whose rules name no served group, in place.
func servedOnly[Hook any](hooks []Hook, rulesOf func(*Hook) rules) []Hook {
	kept := hooks[:0]
	for i := range hooks {
		if served(rulesOf(&hooks[i])) {
			kept = append(kept, hooks[i])
		}
	}
	return kept
}

func served(rules rules) bool {
	for _, rule := range rules {
		for _, group := range rule.APIGroups {
			if servedGroups[group] {
				return true
			}
		}
	}
	return false
}

func run() error {
	fs := flag.NewFlagSet("kueue", flag.ExitOnError)
	var crds listFlag
	kubeconfig := fs.String("kubeconfig", "", "the running control plane's admin kubeconfig (required)")
	fs.Var(&crds, "crds", "Kueue's CRD directory (repeatable; required)")
	webhookFile := fs.String("webhook", "", "Kueue's webhook configuration (config/components/webhook/manifests.yaml; required)")
	watchStdin := fs.Bool("watch-stdin", true, "stop when stdin closes")
	verbosity := fs.Int("v", 0, "log verbosity (logs go to stderr)")
	startTimeout := fs.Duration("start-timeout", 2*time.Minute, "how long Kueue's CRDs, the webhook server and the cache may each take")
	_ = fs.Parse(os.Args[1:])
	if *kubeconfig == "" || len(crds) == 0 || *webhookFile == "" {
		fs.Usage()
		return fmt.Errorf("--kubeconfig, --crds and --webhook are required")
	}
	setParentDeathSignal()
	started := time.Now()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.Level(-*verbosity)), zap.UseDevMode(false)))

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", *kubeconfig, err)
	}
	for _, add := range []func(*apiruntime.Scheme) error{
		configapi.AddToScheme, kueuev1beta1.AddToScheme, kueuev1beta2.AddToScheme, trainer.AddToScheme, jobsetv1alpha2.AddToScheme,
	} {
		if err := add(scheme.Scheme); err != nil {
			return err
		}
	}

	// Kueue's webhook configuration, less the webhooks for kinds whose handlers do not run here, and
	// renamed: its names (mutating-webhook-configuration, ...) are kustomize's before its namePrefix.
	hooks := envtest.WebhookInstallOptions{Paths: []string{*webhookFile}}
	if err := hooks.PrepWithoutInstalling(); err != nil {
		return fmt.Errorf("reading %s: %w", *webhookFile, err)
	}
	for _, conf := range hooks.MutatingWebhooks {
		conf.Webhooks = servedOnly(conf.Webhooks, func(hook *admissionregistrationv1.MutatingWebhook) rules { return hook.Rules })
		conf.Name = "kueue-" + conf.Name
	}
	for _, conf := range hooks.ValidatingWebhooks {
		conf.Webhooks = servedOnly(conf.Webhooks, func(hook *admissionregistrationv1.ValidatingWebhook) rules { return hook.Rules })
		conf.Name = "kueue-" + conf.Name
	}
	// MaxTime: envtest's default (10 s) for the CRDs to be served ran out on a busy machine.
	crdOptions := envtest.CRDInstallOptions{Paths: crds, ErrorIfPathMissing: true, MaxTime: *startTimeout}
	if _, err := envtest.InstallCRDs(cfg, crdOptions); err != nil {
		return fmt.Errorf("installing Kueue's CRDs: %w", err)
	}
	if err := hooks.Install(cfg); err != nil {
		return fmt.Errorf("installing Kueue's webhook configuration: %w", err)
	}
	defer func() { _ = hooks.Cleanup() }()
	if ctx.Err() != nil {
		return nil
	}

	wio := &hooks
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:  scheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	mgrCtx, stopMgr := context.WithCancel(context.Background())
	defer stopMgr()

	// From here on, as Kueue's trainjob suite_test.go (managerAndSchedulerSetup) does.
	expectations := preemptexpectations.New()
	cCache := schdcache.New(mgr.GetClient())
	requeuer := qcache.NewRequeuer(qcache.WithBatchPeriod(100 * time.Millisecond))
	go func() { _ = requeuer.Start(mgrCtx) }()
	queues := qcache.NewManager(mgr.GetClient(), cCache, requeuer, qcache.WithPreemptionExpectations(expectations))
	setup := kueueSetup{mgr: mgr, queues: queues, cache: cCache, expectations: expectations}
	opts := []jobframework.Option{jobframework.WithCache(cCache), jobframework.WithQueues(queues)}
	reconciler, err := trainjob.NewReconciler(mgrCtx, mgr.GetClient(), mgr.GetFieldIndexer(),
		setup.recorder(constants.JobControllerName), opts...)
	if err != nil {
		return fmt.Errorf("trainjob.NewReconciler: %w", err)
	}
	if err := indexer.Setup(mgrCtx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexer.Setup: %w", err)
	}
	if err := trainjob.SetupIndexes(mgrCtx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("trainjob.SetupIndexes: %w", err)
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("the TrainJob reconciler: %w", err)
	}
	if err := trainjob.SetupTrainJobWebhook(mgr, opts...); err != nil {
		return fmt.Errorf("the TrainJob webhook: %w", err)
	}
	configuration := &configapi.Configuration{}
	mgr.GetScheme().Default(configuration)
	if name, err := setup.coreControllers(configuration); err != nil {
		return fmt.Errorf("core.SetupControllers (%s): %w", name, err)
	}
	if name, err := kueuewebhooks.Setup(mgr, nil); err != nil {
		return fmt.Errorf("webhooks.Setup (%s): %w", name, err)
	}
	sched := scheduler.New(queues, cCache, mgr.GetClient(), setup.recorder(constants.AdmissionName),
		scheduler.WithPreemptionExpectations(expectations))
	if err := sched.Start(mgrCtx); err != nil {
		return fmt.Errorf("starting the scheduler: %w", err)
	}

	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	stopManager := func() error {
		stopMgr()
		select {
		case err := <-mgrDone:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("manager did not stop within 30s")
		}
	}

	addr := net.JoinHostPort(wio.LocalServingHost, fmt.Sprint(wio.LocalServingPort))
	deadline := time.Now().Add(*startTimeout)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err == nil {
			_ = conn.Close()
			break
		}
		select {
		case err := <-mgrDone:
			return fmt.Errorf("manager stopped before the webhook server answered: %v", err)
		case <-ctx.Done():
			return stopManager()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = stopManager()
			return fmt.Errorf("webhook server at %s did not answer within %s: %v", addr, *startTimeout, err)
		}
	}
	syncCtx, syncCancel := context.WithTimeout(ctx, *startTimeout)
	synced := mgr.GetCache().WaitForCacheSync(syncCtx)
	syncCancel()
	if !synced {
		_ = stopManager()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("the manager's cache did not sync within %s", *startTimeout)
	}
	ready, _ := json.Marshal(map[string]any{
		"webhook": addr, "pid": os.Getpid(), "startSeconds": time.Since(started).Seconds(),
	})
	fmt.Printf("READY %s\n", ready)
	_ = os.Stdout.Sync()

	select {
	case <-ctx.Done():
		return stopManager()
	case err := <-mgrDone:
		if err != nil {
			return fmt.Errorf("manager stopped: %w", err)
		}
		return fmt.Errorf("manager stopped")
	}
}
