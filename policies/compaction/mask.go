package compaction

import (
	"context"

	"github.com/contextcompiler/ctxc/internal/diagnose"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/isolate"
)

// maskObservations is the "mask_observations" policy: the isolation stage's
// observation masking (isolate.MaskObservations), oldest outputs first,
// stopping once the compaction target is met, never touching what
// policies.Protection marks.
type maskObservations struct {
	cfg     isolate.MaskingConfig
	outputs *diagnose.Cache
}

// InPlaceEdit: masking keeps every message and its tool results.
func (maskObservations) InPlaceEdit() {}

// Replayable: masking reads only the view and the log.
func (maskObservations) Replayable() bool { return true }

func (m maskObservations) Apply(_ context.Context, w *policies.Work) error {
	protected := policies.Protection(w)
	history := policies.TaskHistory(w.Entries, w.RecentTurns())
	isolate.MaskObservations(w, &m.cfg, isolate.MaskRun{
		TargetTokens: max(target(w), 1),
		Protect:      func(i int) bool { return protected[i] },
		Policy:       TypeMaskObservations,
		Outputs:      m.outputs,
		Condensable:  history.Contains,
	})
	return nil
}
