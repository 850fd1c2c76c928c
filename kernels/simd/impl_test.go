package simd

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestEnvKernels runs this test binary again with KILN_KERNELS set and
// checks the set each child starts with, and that a bad value is reported
// by EnvError (and leaves the CPU's best set).
func TestEnvKernels(t *testing.T) {
	if os.Getenv("KILN_TEST_CHILD") == "1" {
		e := "nil"
		if err := EnvError(); err != nil {
			e = err.Error()
		}
		os.Stdout.WriteString("impl=" + Impl() + "\nerr=" + e + "\n")
		return
	}
	best := Impls()[len(Impls())-1]
	cases := []struct{ env, impl, err string }{
		{"", best, "nil"},
		{"generic", "generic", "nil"},
		{"bogus", best, "not a kernel set"},
	}
	for _, name := range Impls() {
		cases = append(cases, struct{ env, impl, err string }{name, name, "nil"})
	}
	if u := unsupportedImpl(); u != "" {
		cases = append(cases, struct{ env, impl, err string }{u, best, "this CPU runs only"})
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvKernels$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KILN_TEST_CHILD=1", EnvKernels+"="+c.env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s=%q: child failed: %v\n%s", EnvKernels, c.env, err, out)
		}
		s := string(out)
		if !strings.Contains(s, "impl="+c.impl+"\n") || !strings.Contains(s, "err=") || !strings.Contains(s[strings.Index(s, "err="):], c.err) {
			t.Errorf("%s=%q: child printed %q, want impl=%s and err containing %q", EnvKernels, c.env, s, c.impl, c.err)
		}
	}
}

// TestSetImpl: every set the CPU lists can be selected and is reported
// by Impl; unknown names and sets beyond the CPU are errors that change
// nothing; ForceGeneric(false) returns to the start-up set.
func TestSetImpl(t *testing.T) {
	defer ForceGeneric(false)
	for _, name := range Impls() {
		if _, err := SetImpl(name); err != nil || Impl() != name {
			t.Fatalf("SetImpl(%s): err %v, Impl %s", name, err, Impl())
		}
		if fast.Load() != (name != "generic") || vnni.Load() != (name == "avx512vnni") || vexVNNI.Load() != (name == "avxvnni") {
			t.Fatalf("SetImpl(%s): fast %v avxvnni %v avx512vnni %v", name, fast.Load(), vexVNNI.Load(), vnni.Load())
		}
	}
	cur := Impl()
	if _, err := SetImpl("avx9000"); err == nil || Impl() != cur {
		t.Fatalf("SetImpl(avx9000): err %v, Impl %s", err, Impl())
	}
	if u := unsupportedImpl(); u != "" {
		if _, err := SetImpl(u); err == nil || Impl() != cur {
			t.Fatalf("SetImpl beyond the CPU: err %v, Impl %s", err, Impl())
		}
	}
	ForceGeneric(false)
	if Impl() != implNames[configured.Load()] {
		t.Fatalf("ForceGeneric(false): Impl %s, start-up set %s", Impl(), implNames[configured.Load()])
	}
	if !strings.Contains(ImplReason(), Impl()) {
		t.Fatalf("ImplReason %q does not name %s", ImplReason(), Impl())
	}
}

// unsupportedImpl is a kernel set this CPU cannot run, or "".
func unsupportedImpl() string {
	for i, ok := range cpuSets {
		if !ok {
			return implNames[i]
		}
	}
	return ""
}

// TestKernelSetsRunHere names, as a skip, each kernel set this CPU cannot
// run and the features it lacks, so that a run on an AVX2-only machine
// says which kernels went untested (the bit-for-bit tests run under every
// set Impls lists, through bothImpls); the others must be selectable.
//
// It also logs one summary line, "kernel sets on <CPU>: verified ...; not
// verified ...", which .ci/run prints (go test -v -run this test) so every
// CI log says which sets its bit-for-bit tests covered.
func TestKernelSetsRunHere(t *testing.T) {
	defer ForceGeneric(false)
	var ran, lacked []string
	for i, name := range implNames {
		if cpuSets[i] {
			ran = append(ran, name)
		} else {
			lacked = append(lacked, name+" (needs "+implNeeds[i]+")")
		}
	}
	if len(lacked) == 0 {
		lacked = []string{"none"}
	}
	t.Logf("kernel sets on %s [%s]: verified here: %s; not verified here: %s",
		cpuModel(), CPUFeatures(), strings.Join(ran, ", "), strings.Join(lacked, ", "))
	for i, name := range implNames {
		t.Run(name, func(t *testing.T) {
			if !cpuSets[i] {
				t.Skipf("this CPU cannot run the %s kernels: they need %s; it has %s", name, implNeeds[i], CPUFeatures())
			}
			if _, err := SetImpl(name); err != nil || Impl() != name {
				t.Fatalf("SetImpl(%s): %v, Impl %s", name, err, Impl())
			}
		})
	}
}

// cpuModel is /proc/cpuinfo's model name, or the architecture where there
// is none (not Linux).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
