// Package kubernetes checks the manifests beside it (kiln.yaml,
// inferencepool.yaml, epp.yaml): kiln replicas as the model servers of a
// Gateway API Inference Extension InferencePool, routed by llm-d's endpoint
// picker. The test decodes every document strictly into its Kubernetes,
// Inference Extension or Gateway API type (a misspelt field fails) and
// checks that the pieces name each other consistently.
//
// It is its own Go module so that kiln's module does not depend on the
// Kubernetes API packages; CI runs it with `cd deploy/kubernetes && go test`.
package kubernetes
