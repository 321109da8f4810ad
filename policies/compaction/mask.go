package compaction

import (
	"context"

	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/policies/isolation"
)

// maskObservations is the "mask_observations" policy: the isolation stage's
// observation masking (isolation.MaskObservations), oldest outputs first,
// stopping once the compaction target is met.
type maskObservations struct {
	cfg isolation.MaskingConfig
}

func (m maskObservations) Apply(_ context.Context, w *policies.Work) error {
	protected := policies.Protection(w)
	// MaskObservations never masks pinned messages but knows nothing of the
	// recency window; it works on a copy of the view where every protected
	// entry reads as pinned, and only unprotected entries are copied back.
	view := *w
	view.Entries = make([]policies.Entry, len(w.Entries))
	copy(view.Entries, w.Entries)
	for i := range view.Entries {
		if protected[i] {
			view.Entries[i].Message.Pinned = true
		}
	}
	// The isolation stage may have masked before under the same name; only
	// dispositions new in this call are renamed below.
	previous := make(map[string]policies.MessageReport)
	for id, d := range w.Dispositions {
		previous[id] = d
	}
	cfg := m.cfg
	if isolation.MaskObservations(&view, &cfg, max(target(w), 1)) == 0 {
		return nil
	}
	entries := make([]policies.Entry, len(w.Entries))
	for i := range entries {
		if protected[i] {
			entries[i] = w.Entries[i]
			continue
		}
		entries[i] = view.Entries[i]
		// Report the masks made here under this policy's name.
		if id := entries[i].SourceID; id != "" {
			if d, ok := view.Dispositions[id]; ok && d.Policy == isolation.TypeObservationMasking && d != previous[id] {
				d.Policy = TypeMaskObservations
				view.Dispositions[id] = d
			}
		}
	}
	w.Entries = entries
	w.Touches, w.Masks, w.Dispositions, w.Warnings = view.Touches, view.Masks, view.Dispositions, view.Warnings
	return nil
}
