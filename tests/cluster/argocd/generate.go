package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/argoproj/argo-cd/v3/cmpserver"
	"github.com/argoproj/argo-cd/v3/cmpserver/plugin"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	apppathutil "github.com/argoproj/argo-cd/v3/util/app/path"
	"github.com/argoproj/argo-cd/v3/util/git"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
	"k8s.io/apimachinery/pkg/api/resource"
)

// generateResult is what `generate` prints: the manifests the repo-server returns (each a JSON object,
// Argo CD's tracking already set), or the error the repo-server returns for the Application.
type generateResult struct {
	Manifests  []json.RawMessage `json:"manifests"`
	SourceType string            `json:"sourceType,omitempty"`
	Revision   string            `json:"revision,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// cmpServerCommand is the plugin sidecar: Argo CD's cmp-server (cmd/argocd-cmp-server/commands) reading
// plugin.yaml from --config-dir and serving on a unix socket under ARGOCD_PLUGINSOCKFILEPATH.
func cmpServerCommand(args []string) error {
	flags := newFlags("cmp-server")
	configDir := flags.String("config-dir", "", "the folder holding plugin.yaml")
	_ = flags.Parse(args)
	config, err := plugin.ReadPluginConfig(*configDir)
	if err != nil {
		return err
	}
	server, err := cmpserver.NewServer(plugin.CMPServerInitConstants{PluginConfig: *config})
	if err != nil {
		return err
	}
	server.Run()
	return nil
}

func generateCommand(args []string) error {
	flags := newFlags("generate")
	appPath := flags.String("application", "", "the Application manifest")
	repoDir := flags.String("repo", "", "a git repository (its working tree is not read: Argo CD clones the revision)")
	pluginConfig := flags.String("plugin-config", "", "the plugin's ConfigManagementPlugin file (plugin.yaml)")
	cmPath := flags.String("argocd-cm", "", "argocd-cm (tracking method, label key, installation ID, enabled source types)")
	kubeVersion := flags.String("kube-version", "1.36.3", "the destination cluster's version (KUBE_VERSION)")
	var apiVersions stringList
	flags.Var(&apiVersions, "api-version", "an API version the destination serves (KUBE_API_VERSIONS); repeatable")
	workDir := flags.String("work-dir", "", "scratch folder (default: a new temporary one, removed at the end)")
	_ = flags.Parse(args)
	if *appPath == "" || *repoDir == "" || *pluginConfig == "" {
		return errors.New("generate needs --application, --repo and --plugin-config")
	}
	app, err := readApplication(*appPath)
	if err != nil {
		return err
	}
	work := *workDir
	if work == "" {
		if work, err = os.MkdirTemp("", "argocd-harness-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	stop, err := startPluginSidecar(ctx, work, *pluginConfig)
	if err != nil {
		return err
	}
	defer stop()

	result, err := generate(ctx, app, *repoDir, work, *cmPath, *kubeVersion, apiVersions)
	if err != nil {
		return err
	}
	if err := printJSON(result); err != nil {
		return err
	}
	if result.Error != "" {
		return errGenerationFailed
	}
	return nil
}

// errGenerationFailed: the repo-server returned an error (printed as JSON); `generate` exits 1.
var errGenerationFailed = errors.New("generation failed")

// startPluginSidecar runs `argocd-harness cmp-server` as a process of its own (the sidecar is a container of
// its own: the plugin's commands see its environment, which is this process's), its socket in work/plugins,
// and waits for the socket. The repo-server side (this process) finds it through the same variable.
func startPluginSidecar(ctx context.Context, work, pluginConfig string) (func(), error) {
	sockets := filepath.Join(work, "plugins")
	configDir := filepath.Join(work, "cmp-config")
	for _, dir := range []string{sockets, configDir, filepath.Join(work, "cmp-work")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(pluginConfig)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(configDir, common.PluginConfigFileName), data, 0o600); err != nil {
		return nil, err
	}
	if err := os.Setenv(common.EnvPluginSockFilePath, sockets); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(work, "cmp-server.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, "cmp-server", "--config-dir", configDir)
	cmd.Env = append(os.Environ(), common.EnvCMPWorkDir+"="+filepath.Join(work, "cmp-work"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Killed outright: the cmp-server's SIGTERM handler (cmpserver/server.go, Shutdown) removes its socket
	// but leaves its gRPC server serving; a pod's container is killed after its grace period.
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = logFile.Close()
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		entries, _ := os.ReadDir(sockets)
		for _, entry := range entries {
			if entry.Type() == os.ModeSocket {
				return stop, nil
			}
		}
		select {
		case err := <-exited:
			logged, _ := os.ReadFile(logFile.Name())
			return nil, fmt.Errorf("the plugin server exited (%v): %s", err, logged)
		case <-time.After(50 * time.Millisecond):
		}
	}
	stop()
	return nil, errors.New("the plugin server did not open its socket within 60 s")
}

// generate does what the repo-server's GenerateManifest does for a git source
// (reposerver/repository/repository.go: runRepoOperation, checkoutRevision, runManifestGenAsync): resolve the
// target revision with ls-remote, clone and check it out into a folder of its own, then GenerateManifests on
// the Application's path, with the request the application controller builds (controller/state.go,
// getRepoObjs).
func generate(ctx context.Context, app *v1alpha1.Application, repoDir, work, cmPath, kubeVersion string, apiVersions []string) (*generateResult, error) {
	argo, err := readArgoSettings(ctx, cmPath)
	if err != nil {
		return nil, err
	}
	settingsMgr := argo.manager
	enabledSourceTypes, err := settingsMgr.GetEnabledSourceTypes()
	if err != nil {
		return nil, err
	}
	kustomizeSettings, err := settingsMgr.GetKustomizeSettings()
	if err != nil {
		return nil, err
	}

	source := app.Spec.Source.DeepCopy()
	absRepo, err := filepath.Abs(repoDir)
	if err != nil {
		return nil, err
	}
	// The repository is fetched from the local folder; the Application's repoURL is what the request and
	// the plugin's ARGOCD_APP_SOURCE_REPO_URL carry.
	gitClient, err := git.NewClientExt("file://"+absRepo, filepath.Join(work, "_argocd-repo", "checkout"), git.NopCreds{}, true, false, "", "")
	if err != nil {
		return nil, err
	}
	commitSHA, err := gitClient.LsRemote(source.TargetRevision)
	if err != nil {
		return &generateResult{Error: err.Error()}, nil
	}
	if err := gitClient.Init(); err != nil {
		return nil, err
	}
	if err := gitClient.Fetch(ctx, "", 0); err != nil {
		return nil, err
	}
	if _, err := gitClient.Checkout(ctx, commitSHA, false, true); err != nil {
		return nil, err
	}
	if err := apppathutil.CheckOutOfBoundsSymlinks(gitClient.Root(), ".git"); err != nil {
		return &generateResult{Error: err.Error()}, nil
	}
	appPath, err := apppathutil.Path(gitClient.Root(), source.Path)
	if err != nil {
		return &generateResult{Error: err.Error()}, nil
	}

	request := &apiclient.ManifestRequest{
		Repo:               &v1alpha1.Repository{Repo: source.RepoURL},
		Revision:           source.TargetRevision,
		AppLabelKey:        argo.appLabelKey,
		AppName:            app.InstanceName(argocdNamespace),
		Namespace:          app.Spec.Destination.Namespace,
		ApplicationSource:  source,
		KustomizeOptions:   kustomizeSettings,
		KubeVersion:        kubeVersion,
		ApiVersions:        apiVersions,
		TrackingMethod:     argo.trackingMethod,
		EnabledSourceTypes: enabledSourceTypes,
		ProjectName:        app.Spec.Project,
		InstallationID:     argo.installationID,
	}
	response, err := repository.GenerateManifests(ctx, appPath, gitClient.Root(), commitSHA, request, false,
		&git.NoopCredsStore{}, resource.MustParse("10M"), utilio.NewRandomizedTempPaths(filepath.Join(work, "helm")))
	if err != nil {
		return &generateResult{Revision: commitSHA, Error: err.Error()}, nil
	}
	result := &generateResult{Manifests: []json.RawMessage{}, SourceType: response.SourceType, Revision: commitSHA}
	for _, manifest := range response.Manifests {
		result.Manifests = append(result.Manifests, json.RawMessage(manifest))
	}
	return result, nil
}
