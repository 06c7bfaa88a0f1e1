// Command harness runs a local control plane with upstream Kubeflow Trainer in it, the way upstream's
// own integration tests do (test/integration/framework/framework.go in github.com/kubeflow/trainer/v2):
// controller-runtime's envtest starts etcd and kube-apiserver, installs upstream's CRDs and webhook
// configuration, and Trainer's runtimes, controllers and webhooks run in this process. No JobSet
// controller runs: the JobSet that Trainer's controller creates is what the tests read.
//
// It writes a kubeconfig to --kubeconfig, prints one line `READY {json}` on stdout once the webhook
// server answers and the manager's cache has synced, and runs until SIGTERM/SIGINT or until its stdin
// closes (so a parent that dies does not leave it behind); then it stops envtest (etcd, apiserver).
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
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlpkg "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/controller"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	kubeflowwebhooks "github.com/kubeflow/trainer/v2/pkg/webhooks"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run() error {
	// Our own flag set: controller-runtime registers --kubeconfig on the global one.
	fs := flag.NewFlagSet("harness", flag.ExitOnError)
	var crds, webhooks listFlag
	kubeconfig := fs.String("kubeconfig", "", "write an admin kubeconfig for the control plane here (required)")
	assets := fs.String("assets", "", "directory holding the kube-apiserver and etcd binaries (required)")
	fs.Var(&crds, "crds", "a CRD file or directory to install (repeatable; required)")
	fs.Var(&webhooks, "webhook", "a webhook configuration file to install (repeatable)")
	watchStdin := fs.Bool("watch-stdin", true, "stop when stdin closes")
	verbosity := fs.Int("v", 0, "log verbosity of controller-runtime and Trainer (logs go to stderr)")
	startTimeout := fs.Duration("start-timeout", 2*time.Minute, "how long etcd, kube-apiserver and the webhook server may take to come up")
	_ = fs.Parse(os.Args[1:])
	if *kubeconfig == "" || *assets == "" || len(crds) == 0 {
		fs.Usage()
		return fmt.Errorf("--kubeconfig, --assets and --crds are required")
	}
	setParentDeathSignal()
	started := time.Now()

	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.Level(-*verbosity)), zap.UseDevMode(false)))

	// Stop on SIGTERM/SIGINT, or when stdin closes; caught from here on, so that a signal while envtest
	// starts still stops etcd and kube-apiserver (envtest starts them in process groups of their own).
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if *watchStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			cancel()
		}()
	}

	env := &envtest.Environment{
		BinaryAssetsDirectory:    *assets,
		CRDDirectoryPaths:        crds,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{Paths: webhooks},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: *startTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// kube-apiserver's own log (klog, on its stderr) into ours, so that the harness's log says which request
	// it timed out or aborted; etcd's stays out (it logs every compaction).
	env.ControlPlane.GetAPIServer().Err = os.Stderr
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // whatever did start (envtest leaves etcd running when a later step fails)
		return fmt.Errorf("starting envtest: %w", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "harness: stopping envtest:", err)
		}
	}()
	if ctx.Err() != nil {
		return nil
	}

	admin, err := env.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding the admin user: %w", err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return fmt.Errorf("making the kubeconfig: %w", err)
	}
	if err := os.WriteFile(*kubeconfig, kc, 0o600); err != nil {
		return err
	}

	// From here on, as upstream's framework.RunManager does.
	for _, add := range []func(*apiruntime.Scheme) error{
		trainer.AddToScheme, jobsetv1alpha2.AddToScheme, schedulerpluginsv1alpha1.AddToScheme, volcanov1beta1.AddToScheme,
	} {
		if err := add(scheme.Scheme); err != nil {
			return err
		}
	}
	wio := &env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:  scheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	mgrCtx, stopMgr := context.WithCancel(context.Background())
	runtimes, err := runtimecore.New(mgrCtx, mgr.GetClient(), mgr.GetFieldIndexer(), nil)
	if err != nil {
		stopMgr()
		return fmt.Errorf("runtimecore.New: %w", err)
	}
	if name, err := controller.SetupControllers(mgr, runtimes, ctrlpkg.Options{SkipNameValidation: ptr.To(true)}); err != nil {
		stopMgr()
		return fmt.Errorf("controller.SetupControllers (%s): %w", name, err)
	}
	if name, err := kubeflowwebhooks.Setup(mgr, runtimes); err != nil {
		stopMgr()
		return fmt.Errorf("webhooks.Setup (%s): %w", name, err)
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

	// Ready: the webhook server answers TLS (upstream's check) and the manager's cache has synced.
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
		"kubeconfig":   *kubeconfig,
		"server":       cfg.Host,
		"webhook":      addr,
		"pid":          os.Getpid(),
		"startSeconds": time.Since(started).Seconds(),
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
