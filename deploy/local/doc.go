// Package local checks deploy/local/kiln-pool.sh, which runs N `kiln serve`
// replicas behind llm-d's endpoint picker (EPP) and kiln-extproc-proxy (./extproc-proxy, built by the script) on
// loopback, without Kubernetes. The package holds tests only: they start the
// pool with the script, drive it over HTTP and read the picker's own metrics.
// They skip when the picker is not built (../shared/scale/build-epp.sh, into
// $LLMD_BIN or /tmp/llm-d-bin), when ../shared/models is absent, or under
// -short; under CI=true a missing picker or model fails them instead
// (.ci/run builds the picker).
package local
