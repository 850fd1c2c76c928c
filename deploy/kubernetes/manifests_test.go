package kubernetes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	inferencev1 "sigs.k8s.io/gateway-api-inference-extension/api/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// newObject returns an empty typed object for a document's apiVersion and
// kind; an unknown pair is an error (the manifests use only these).
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "rbac.authorization.k8s.io/v1 Role":
		return &rbacv1.Role{}, nil
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return &rbacv1.RoleBinding{}, nil
	case "inference.networking.k8s.io/v1 InferencePool":
		return &inferencev1.InferencePool{}, nil
	case "gateway.networking.k8s.io/v1 HTTPRoute":
		return &gatewayv1.HTTPRoute{}, nil
	}
	return nil, fmt.Errorf("no API type for apiVersion %q kind %q", apiVersion, kind)
}

// strict decodes YAML into v: duplicate keys and fields v's type does not
// have are errors.
func strict(doc []byte, v any) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// decodeFile reads every document of a manifest file into its API type.
func decodeFile(path string) ([]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var objs []any
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i, err)
		}
		obj, err := newObject(tm.APIVersion, tm.Kind)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i, err)
		}
		if err := strict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s document %d (%s): %w", path, i, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// manifests decodes all of this folder's *.yaml.
func manifests(t *testing.T) []any {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests here (%v)", err)
	}
	var all []any
	for _, f := range files {
		objs, err := decodeFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, objs...)
	}
	return all
}

func find[T any](objs []any, name func(T) string, want string) (T, bool) {
	for _, o := range objs {
		if v, ok := o.(T); ok && name(v) == want {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// flagValue returns --name=VALUE from a container's args.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func TestStrictDecodeCatchesMisspelling(t *testing.T) {
	var d appsv1.Deployment
	if err := strict([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 2\n"), &d); err == nil {
		t.Fatal("a misspelt field decoded without error")
	}
	var p inferencev1.InferencePool
	if err := strict([]byte("spec:\n  targetPort:\n    - number: 8000\n"), &p); err == nil {
		t.Fatal("a misspelt InferencePool field decoded without error")
	}
}

func TestManifests(t *testing.T) {
	objs := manifests(t)
	depName := func(d *appsv1.Deployment) string { return d.Name }
	svcName := func(s *corev1.Service) string { return s.Name }

	pool, ok := find(objs, func(p *inferencev1.InferencePool) string { return p.Name }, "kiln")
	if !ok {
		t.Fatal("no InferencePool kiln")
	}
	kiln, ok := find(objs, depName, "kiln")
	if !ok {
		t.Fatal("no Deployment kiln")
	}
	// The pool selects kiln's pods, on the port kiln serves.
	for k, v := range pool.Spec.Selector.MatchLabels {
		if kiln.Spec.Template.Labels[string(k)] != string(v) {
			t.Errorf("pool selector %s=%s does not match kiln's pod labels %v", k, v, kiln.Spec.Template.Labels)
		}
	}
	c := kiln.Spec.Template.Spec.Containers[0]
	port := flagValue(c.Args, "port")
	if len(pool.Spec.TargetPorts) != 1 || fmt.Sprint(pool.Spec.TargetPorts[0].Number) != port {
		t.Errorf("pool target ports %v, kiln serves on --port=%s", pool.Spec.TargetPorts, port)
	}
	if c.Args[0] != "serve" || flagValue(c.Args, "host") != "0.0.0.0" {
		t.Errorf("kiln args %v: want serve on 0.0.0.0", c.Args)
	}
	modelName, _, _ := strings.Cut(flagValue(c.Args, "model"), "=")

	// The picker: its Service is the pool's endpointPickerRef, it is told
	// the pool's name, and it reads the config the ConfigMap holds.
	ref := pool.Spec.EndpointPickerRef
	eppSvc, ok := find(objs, svcName, string(ref.Name))
	if !ok || ref.Kind != "Service" || ref.Port == nil {
		t.Fatalf("pool's endpointPickerRef %+v names no Service here", ref)
	}
	if !slices.ContainsFunc(eppSvc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(ref.Port.Number) }) {
		t.Errorf("Service %s has no port %d", eppSvc.Name, ref.Port.Number)
	}
	epp, ok := find(objs, depName, string(ref.Name))
	if !ok {
		t.Fatalf("no Deployment %s", ref.Name)
	}
	args := epp.Spec.Template.Spec.Containers[0].Args
	if got := flagValue(args, "pool-name"); got != pool.Name {
		t.Errorf("picker --pool-name=%s, pool is %s", got, pool.Name)
	}
	if !slices.ContainsFunc(epp.Spec.Template.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool {
		return fmt.Sprint(p.ContainerPort) == flagValue(args, "grpc-port")
	}) {
		t.Errorf("picker container does not expose its --grpc-port")
	}
	if epp.Spec.Template.Spec.ServiceAccountName == "" {
		t.Errorf("picker runs without its service account")
	}
	if _, ok := find(objs, func(r *rbacv1.RoleBinding) string { return r.Name }, epp.Spec.Template.Spec.ServiceAccountName); !ok {
		t.Errorf("no RoleBinding for the picker's service account")
	}
	var cmName string
	for _, v := range epp.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	cm, ok := find(objs, func(c *corev1.ConfigMap) string { return c.Name }, cmName)
	if !ok {
		t.Fatalf("picker mounts ConfigMap %q, absent", cmName)
	}
	cfgFile := filepath.Base(flagValue(args, "config-file"))
	cfg, ok := cm.Data[cfgFile]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s (the picker's --config-file)", cm.Name, cfgFile)
	}
	checkEPPConfig(t, cfg, modelName, "http://kiln:"+port)

	// The route sends to the pool.
	route, ok := find(objs, func(r *gatewayv1.HTTPRoute) string { return r.Name }, "kiln")
	if !ok || len(route.Spec.Rules) == 0 || len(route.Spec.Rules[0].BackendRefs) == 0 {
		t.Fatal("no HTTPRoute kiln with a backend")
	}
	b := route.Spec.Rules[0].BackendRefs[0]
	if b.Kind == nil || *b.Kind != "InferencePool" || string(b.Name) != pool.Name {
		t.Errorf("route backend %+v is not the pool", b.BackendObjectReference)
	}
}

// eppConfig is the part of llm-d's EndpointPickerConfig this test checks
// (the type lives in llm-d-router, which the module proxy does not serve).
type eppConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Plugins    []struct {
		Name       string          `json:"name"`
		Type       string          `json:"type"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"plugins"`
	SchedulingProfiles []struct {
		Name    string `json:"name"`
		Plugins []struct {
			PluginRef string   `json:"pluginRef"`
			Weight    *float64 `json:"weight"`
		} `json:"plugins"`
	} `json:"schedulingProfiles"`
}

// checkEPPConfig: every profile entry names a declared plugin, the profile
// scores by queue, KV usage and prefix affinity, and prompts are tokenized
// by kiln's render endpoints for the model kiln serves.
func checkEPPConfig(t *testing.T, text, modelName, renderURL string) {
	t.Helper()
	var c eppConfig
	if err := strict([]byte(text), &c); err != nil {
		t.Fatalf("EPP config: %v", err)
	}
	if c.Kind != "EndpointPickerConfig" {
		t.Errorf("EPP config kind %q", c.Kind)
	}
	declared := map[string]bool{}
	for _, p := range c.Plugins {
		name := p.Name
		if name == "" {
			name = p.Type
		}
		declared[name] = true
		if p.Type == "token-producer" {
			var tp struct {
				ModelName string `json:"modelName"`
				VLLM      struct {
					URL string `json:"url"`
				} `json:"vllm"`
			}
			if err := json.Unmarshal(p.Parameters, &tp); err != nil || tp.ModelName != modelName || tp.VLLM.URL != renderURL {
				t.Errorf("token-producer %s (%v): want modelName %q, vllm.url %q", p.Parameters, err, modelName, renderURL)
			}
		}
	}
	if len(c.SchedulingProfiles) != 1 {
		t.Fatalf("%d scheduling profiles, want 1", len(c.SchedulingProfiles))
	}
	var refs []string
	for _, r := range c.SchedulingProfiles[0].Plugins {
		if !declared[r.PluginRef] {
			t.Errorf("profile names undeclared plugin %q", r.PluginRef)
		}
		refs = append(refs, r.PluginRef)
	}
	for _, want := range []string{"queue-scorer", "kv-cache-utilization-scorer", "prefix-cache-scorer", "max-score-picker"} {
		if !slices.Contains(refs, want) {
			t.Errorf("profile lacks %s", want)
		}
	}
	for _, want := range []string{"token-producer", "approx-prefix-cache-producer"} {
		if !declared[want] {
			t.Errorf("config lacks %s", want)
		}
	}
}
