package model_test

import (
	"testing"

	"kiln/model"
)

// TestActiveWeights: a token reads all but the unchosen experts' share;
// ExpertBytes is the 3-D expert tensors' size; a step of several
// sequences reads at most min(Experts, seqs*ExpertsUsed) experts a layer.
func TestActiveWeights(t *testing.T) {
	c := model.Config{Experts: 8, ExpertsUsed: 2}
	if got := c.Active(1000, 800); got != 400 { // 1000 - 800*6/8
		t.Errorf("Active(1000, 800) = %d, want 400", got)
	}
	if got := c.Active(1003, 803); got != 401 { // 1003 - floor(803*6/8) = 1003 - 602
		t.Errorf("Active(1003, 803) = %d, want 401", got)
	}
	dense := model.Config{}
	if got := dense.Active(1000, 0); got != 1000 {
		t.Errorf("dense Active = %d, want 1000", got)
	}
	for _, spec := range smallSpecs {
		f, m := synthModel(t, spec, "F32")
		var total, experts uint64
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			total += ti.Size
			if model.IsRoutedExpert(ti.Name) {
				experts += ti.Size
			}
		}
		if got := m.ExpertBytes(); got != experts {
			t.Errorf("%s: ExpertBytes = %d, the _exps tensors hold %d", spec.Arch, got, experts)
		}
		c := &m.Config
		if !c.MoE() {
			if experts != 0 || m.StepBytes(total, 4) != total {
				t.Errorf("%s: dense, experts %d, StepBytes %d of %d", spec.Arch, experts, m.StepBytes(total, 4), total)
			}
			continue
		}
		per := experts / uint64(c.Experts)
		for seqs, want := range map[int]uint64{
			1:   total - experts + per*uint64(c.ExpertsUsed),
			2:   total - experts + per*uint64(min(c.Experts, 2*c.ExpertsUsed)),
			100: total,
		} {
			if got := m.StepBytes(total, seqs); got != want {
				t.Errorf("%s: StepBytes(%d sequences) = %d, want %d", spec.Arch, seqs, got, want)
			}
		}
		if got, want := m.StepBytes(total, 1), c.Active(total, experts); got != want {
			t.Errorf("%s: StepBytes of one sequence %d, Active %d", spec.Arch, got, want)
		}
	}
}
