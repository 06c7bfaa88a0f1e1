package main

import (
	"context"
	"fmt"
	"os"

	"github.com/argoproj/argo-cd/v3/util/settings"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// argoSettings is what every command reads from argocd-cm through Argo CD's own settings manager
// (util/settings): the tracking the repo-server sets and the controller matches live objects by.
type argoSettings struct {
	manager        *settings.SettingsManager
	appLabelKey    string
	trackingMethod string
	installationID string
}

func readArgoSettings(ctx context.Context, cmPath string) (*argoSettings, error) {
	manager, err := settingsManager(ctx, cmPath)
	if err != nil {
		return nil, err
	}
	read := &argoSettings{manager: manager}
	if read.appLabelKey, err = manager.GetAppInstanceLabelKey(); err != nil {
		return nil, err
	}
	if read.trackingMethod, err = manager.GetTrackingMethod(); err != nil {
		return nil, err
	}
	if read.installationID, err = manager.GetInstallationID(); err != nil {
		return nil, err
	}
	return read, nil
}

// settingsManager is Argo CD's own reader of argocd-cm (util/settings), over an in-memory API holding the
// given ConfigMap (an empty one without a file: Argo CD's defaults).
func settingsManager(ctx context.Context, cmPath string) (*settings.SettingsManager, error) {
	cm := &corev1.ConfigMap{}
	if cmPath != "" {
		data, err := os.ReadFile(cmPath)
		if err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalStrict(data, cm); err != nil {
			return nil, fmt.Errorf("%s: %w", cmPath, err)
		}
	}
	cm.ObjectMeta = metav1.ObjectMeta{
		Name:      "argocd-cm",
		Namespace: argocdNamespace,
		Labels:    map[string]string{"app.kubernetes.io/part-of": "argocd"},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name:      "argocd-secret",
		Namespace: argocdNamespace,
		Labels:    map[string]string{"app.kubernetes.io/part-of": "argocd"},
	}}
	return settings.NewSettingsManager(ctx, fake.NewClientset(cm, secret), argocdNamespace), nil
}
