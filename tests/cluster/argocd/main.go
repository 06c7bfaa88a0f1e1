// argocd-harness runs Argo CD's own code for our tests (tests/cluster/argocd.py drives it):
//
//	argocd-harness generate --application APP.yaml --repo GITDIR --plugin-config plugin.yaml [--argocd-cm CM.yaml]
//	argocd-harness diff --application APP.yaml --manifests GENERATED.json --kubeconfig FILE [--argocd-cm CM.yaml]
//	argocd-harness sync --application APP.yaml --manifests GENERATED.json --kubeconfig FILE [--argocd-cm CM.yaml] [--prune] [--self-heal]
//	argocd-harness cmp-server --config-dir DIR   (started by generate: the plugin sidecar)
//
// Each prints one JSON document on stdout. Argo CD v3.6.2 and its gitops-engine are dependencies by version
// (go.mod); this program only wires their packages together the way the repo-server and the application
// controller do, citing the file of Argo CD each step follows.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	log "github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"
)

// argocdNamespace is where the settings manager looks for argocd-cm (any name works: the ConfigMap is ours).
const argocdNamespace = "argocd"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	log.SetOutput(os.Stderr)
	log.SetLevel(log.WarnLevel)
	var err error
	switch os.Args[1] {
	case "generate":
		err = generateCommand(os.Args[2:])
	case "diff":
		err = diffCommand(os.Args[2:])
	case "sync":
		err = syncCommand(os.Args[2:])
	case "cmp-server":
		err = cmpServerCommand(os.Args[2:])
	default:
		usage()
	}
	if errors.Is(err, errGenerationFailed) {
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "argocd-harness:", err)
		os.Exit(3)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: argocd-harness generate|diff|sync|cmp-server [flags] (see main.go)")
	os.Exit(2)
}

func newFlags(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ExitOnError)
}

// readApplication reads an Application manifest (YAML or JSON), as the ApplicationSet controller writes it.
func readApplication(path string) (*v1alpha1.Application, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var app v1alpha1.Application
	if err := yaml.UnmarshalStrict(data, &app); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if app.Spec.Source == nil {
		return nil, fmt.Errorf("%s: the harness reads one spec.source", path)
	}
	return &app, nil
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func printJSON(v any) error {
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	return out.Encode(v)
}
