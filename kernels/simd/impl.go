package simd

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Kernel sets, slowest first. The VNNI sets use the AVX2 set's kernels and
// replace some int8 GEMMs with their own; all sets return the same bits
// (package doc), so the set is a matter of speed only. A CPU may run
// avx512vnni without avxvnni (Ice Lake, Zen 4) or the reverse (Alder
// Lake): cpuSets says which this one runs.
const (
	implGeneric = iota // portable Go
	implAVX2           // AVX2 + FMA + F16C assembly
	implAVXVNNI        // + AVX-VNNI (VEX VPDPBUSD on YMM) int8 GEMMs
	implAVX512         // + AVX-512 F/BW/VL and AVX512-VNNI int8 GEMMs on ZMM
	numImpls
)

var implNames = [numImpls]string{"generic", "avx2", "avxvnni", "avx512vnni"}

// EnvKernels names the environment variable that caps the kernel set at
// start-up ("generic", "avx2", "avx512vnni"): KILN_KERNELS=avx2 runs the
// AVX2 kernels on an AVX-512 CPU, to compare speeds or bits.
const EnvKernels = "KILN_KERNELS"

var (
	// level is the set in use; fast (level >= implAVX2) and vnni (level
	// >= implAVX512) mirror it for the hot paths. configured is the set
	// chosen at start-up (the CPU's best, capped by KILN_KERNELS), which
	// ForceGeneric(false) returns to.
	level, configured atomic.Int32
	fast, vexVNNI     atomic.Bool
	vnni              atomic.Bool
	forced            atomic.Bool
	// envNote says how KILN_KERNELS changed the choice (or why it was
	// ignored); empty when unset. envErr is set when it was ignored.
	envNote string
	envErr  error
)

func init() {
	c := int32(cpuLevel)
	if v := strings.TrimSpace(os.Getenv(EnvKernels)); v != "" {
		switch l, ok := implByName(v); {
		case !ok:
			envErr = fmt.Errorf("%s=%q is not a kernel set (want one of %s)", EnvKernels, v, strings.Join(implNames[:], ", "))
			envNote = envErr.Error() + "; ignored"
		case !cpuSets[l]:
			envErr = fmt.Errorf("%s=%s: this CPU runs only %s (the set needs %s; CPU has %s)",
				EnvKernels, v, strings.Join(Impls(), ", "), implNeeds[l], CPUFeatures())
			envNote = envErr.Error() + "; ignored"
		default:
			c = l
			envNote = fmt.Sprintf("capped by %s=%s", EnvKernels, v)
		}
	}
	configured.Store(c)
	setLevel(c)
}

// EnvError reports a KILN_KERNELS value that was ignored (unknown, or a
// set this CPU cannot run), so that commands can refuse it instead of
// silently running another set; nil when it is unset or was applied.
func EnvError() error { return envErr }

func implByName(name string) (int32, bool) {
	for i, n := range implNames {
		if n == name {
			return int32(i), true
		}
	}
	return 0, false
}

func setLevel(l int32) {
	level.Store(l)
	fast.Store(l >= implAVX2)
	vexVNNI.Store(l == implAVXVNNI)
	vnni.Store(l == implAVX512)
}

// Impl names the kernel set in use: "avx512vnni" (amd64 with AVX-512
// F/BW/VL and AVX512-VNNI besides the AVX2 set's features), "avxvnni"
// (AVX-VNNI besides the AVX2 set's), "avx2" (amd64 with AVX2, FMA and
// F16C) or "generic" (portable Go).
func Impl() string { return implNames[level.Load()] }

// Impls lists the kernel sets this CPU and build can run, slowest first
// ("generic" always).
func Impls() []string {
	var n []string
	for i, ok := range cpuSets {
		if ok {
			n = append(n, implNames[i])
		}
	}
	return n
}

// cpuLevel is the best set this CPU runs.
var cpuLevel = func() int {
	l := implGeneric
	for i, ok := range cpuSets {
		if ok {
			l = i
		}
	}
	return l
}()

// SetImpl selects a kernel set by name and returns the previous one; a set
// the CPU cannot run is an error and changes nothing. It is meant for
// tests, benchmarks and command-line flags; kernels running concurrently
// may see either set.
func SetImpl(name string) (prev string, err error) {
	l, ok := implByName(name)
	if !ok {
		return Impl(), fmt.Errorf("simd: unknown kernel set %q (have %s)", name, strings.Join(implNames[:], ", "))
	}
	if !cpuSets[l] {
		return Impl(), fmt.Errorf("simd: kernel set %s needs %s, which this CPU or build lacks (%s)", name, implNeeds[l], CPUFeatures())
	}
	prev = Impl()
	setLevel(l)
	forced.Store(l == implGeneric)
	return prev, nil
}

// implNeeds are the CPU features each set needs.
var implNeeds = [numImpls]string{"nothing", "AVX2, FMA and F16C", "AVX2, FMA, F16C and AVX-VNNI",
	"AVX2, FMA, F16C, AVX-512 F/BW/VL and AVX512-VNNI"}

// ImplReason says which kernel set runs and why: the features the CPU
// reports and KILN_KERNELS.
func ImplReason() string {
	s := fmt.Sprintf("%s: best this CPU runs is %s (needs %s; CPU has %s)", Impl(), implNames[cpuLevel], implNeeds[cpuLevel], CPUFeatures())
	if envNote != "" {
		s += "; " + envNote
	}
	if cur := level.Load(); cur != configured.Load() {
		s += "; set by the program"
	}
	return s
}

// ForceGeneric pins every primitive to the portable Go version when on is
// true, and returns to the start-up kernel set (the CPU's best, capped by
// KILN_KERNELS) when on is false. It reports the previous setting as "was
// generic forced". It is meant for tests and benchmarks; kernels running
// concurrently may see either version.
func ForceGeneric(on bool) (wasOn bool) {
	wasOn = forced.Swap(on)
	if on {
		setLevel(implGeneric)
	} else {
		setLevel(configured.Load())
	}
	return wasOn
}

// hasFast: the CPU runs at least the AVX2 set.
var hasFast = cpuLevel >= implAVX2
