// yamloracle: what go-yaml makes of YAML documents, for tests/test_yaml_oracle.py.
//
// Reads documents from stdin, separated by NUL bytes (no YAML text holds one), and writes one JSON
// line per document, in order:
//
//	{"v2": <JSON>|null, "v2_error": "...", "written": "...", "kyaml": <JSON>|null, "kyaml_error": "...", "nodes": <tree>|null}
//
// v2 is sigs.k8s.io/yaml's YAMLToJSON (its go-yaml v2 fork): how kubectl, Argo CD and kustomize's
// kustomization reader (api/types/kustomization.go, Kustomization.Unmarshal) read a document. kyaml is
// sigs.k8s.io/kustomize/kyaml/yaml's Parse and RNode.MarshalJSON (go-yaml v3): how kustomize reads a
// resource into values. written is v2 written back with sigs.k8s.io/yaml's JSONToYAML: the text of an
// object as kustomize's build prints it (api/resource/resource.go, AsYAML), keys sorted. nodes is
// kyaml's node tree as kustomize's filters see it: a scalar is {"tag": ..., "value": ...} (the text
// kyaml's GetName/GetKind read), a mapping {"map": [[key, value], ...]}, a sequence {"seq": [...]},
// an alias the tree of its anchor.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"
)

type reading struct {
	V2         json.RawMessage `json:"v2"`
	V2Error    string          `json:"v2_error,omitempty"`
	Written    string          `json:"written,omitempty"`
	Kyaml      json.RawMessage `json:"kyaml"`
	KyamlError string          `json:"kyaml_error,omitempty"`
	Nodes      any             `json:"nodes"`
}

const maxTreeDepth = 400 // an alias bomb's tree is cut here (the test never asks so deep)

func tree(n *kyaml.Node, depth int) any {
	if n == nil || depth > maxTreeDepth {
		return nil
	}
	switch n.Kind {
	case kyaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return tree(n.Content[0], depth+1)
	case kyaml.AliasNode:
		return tree(n.Alias, depth+1)
	case kyaml.ScalarNode:
		return map[string]string{"tag": n.ShortTag(), "value": n.Value}
	case kyaml.MappingNode:
		pairs := [][2]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			pairs = append(pairs, [2]any{tree(n.Content[i], depth+1), tree(n.Content[i+1], depth+1)})
		}
		return map[string]any{"map": pairs}
	case kyaml.SequenceNode:
		entries := []any{}
		for _, c := range n.Content {
			entries = append(entries, tree(c, depth+1))
		}
		return map[string]any{"seq": entries}
	}
	return nil
}

func read(doc []byte) (r reading) {
	defer func() {
		if p := recover(); p != nil {
			r.KyamlError = fmt.Sprintf("panic: %v", p)
		}
	}()
	if j, err := yaml.YAMLToJSON(doc); err != nil {
		r.V2Error = err.Error()
	} else {
		r.V2 = j
		if w, err := yaml.JSONToYAML(j); err == nil {
			r.Written = string(w)
		}
	}
	node, err := kyaml.Parse(string(doc))
	if err != nil {
		r.KyamlError = err.Error()
		return r
	}
	r.Nodes = tree(node.YNode(), 0)
	if j, err := node.MarshalJSON(); err != nil {
		r.KyamlError = err.Error()
	} else {
		r.Kyaml = j
	}
	return r
}

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "yamloracle:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	if len(in) == 0 {
		return
	}
	for _, doc := range bytes.Split(in, []byte{0}) {
		if err := enc.Encode(read(doc)); err != nil {
			fmt.Fprintln(os.Stderr, "yamloracle:", err)
			os.Exit(2)
		}
	}
}
