package plan

// PlanningInput is what ShouldUseLLMPlanning looks at.
type PlanningInput struct {
	// Artifacts is how many artifacts there are; Historical how many of them
	// come from earlier turns.
	Artifacts, Historical int
	// TotalChars and LargestChars measure the artifacts' content.
	TotalChars, LargestChars int
	// ArtifactTokens is their size in the target model's tokens;
	// AvailableTokens is the budget they share.
	ArtifactTokens, AvailableTokens int
	// PrimaryInputPerMTok is the target model's input price (0 when unknown).
	PrimaryInputPerMTok float64
}

// ShouldUseLLMPlanning is the planning decision table, rows in order, the first
// that applies wins:
//
//	no artifacts                                   no
//	historical artifacts present                   yes
//	total size < min_total_chars                   no
//	fits with fit_buffer_ratio on a cheap model    no
//	near (>= near_limit_ratio) or over the budget  yes
//	expensive primary model                        yes
//	any artifact > large_artifact_chars            yes
//	otherwise                                      no
//
// "Fits with the buffer" and "near the limit" leave a band between them
// (defaults: 77% to 90% of the budget) where the last two rows decide.
func ShouldUseLLMPlanning(in PlanningInput, t Thresholds) (bool, string) {
	expensive := t.ExpensiveInputPerMTok > 0 && in.PrimaryInputPerMTok >= t.ExpensiveInputPerMTok
	switch {
	case in.Artifacts == 0:
		return false, "no artifacts"
	case in.Historical > 0:
		return true, "historical artifacts present"
	case in.TotalChars < t.MinTotalChars:
		return false, "artifacts are small"
	case float64(in.ArtifactTokens)*(1+t.FitBufferRatio) <= float64(in.AvailableTokens) && !expensive:
		return false, "artifacts fit with the buffer on a cheap model"
	case float64(in.ArtifactTokens) >= t.NearLimitRatio*float64(in.AvailableTokens):
		return true, "artifacts are near or over the token budget"
	case expensive:
		return true, "the primary model is expensive"
	case in.LargestChars > t.LargeArtifactChars:
		return true, "an artifact is large"
	}
	return false, "no reason to plan"
}
