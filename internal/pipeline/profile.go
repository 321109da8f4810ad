package pipeline

import "gopkg.in/yaml.v3"

// ProfileSpec is a profile as written in the config file:
//
//	profiles:
//	  - name: coding
//	    description: Coding agents with large tool outputs.
//	    recent_turns: 1
//	    stages:
//	      - policy: normalize
//	      - policy: project
//	      - policy: observation_masking
//	        settings: {protect_recent_tokens: 4000}
//	      - policy: estimate
//	      - policy: token_budget
type ProfileSpec struct {
	// Name is what requests give in their profile field.
	Name string `yaml:"name" json:"name"`
	// Description says what the profile is for.
	Description string `yaml:"description" json:"description"`
	// RecentTurns is the recency window: the latest turns every compaction keeps
	// verbatim and contiguous. Default 1 (the current turn).
	RecentTurns *int `yaml:"recent_turns" json:"recent_turns"`
	// FitTargetRatio is the share of the usable window (window minus reserved
	// output) compaction aims at when it runs only because the context does
	// not fit, or the trigger names no target: so later turns append before
	// compaction is needed again. In (0, 1]. Default 0.75.
	FitTargetRatio *float64 `yaml:"fit_target_ratio" json:"fit_target_ratio"`
	// BoundedLog makes Compact remove the messages a summary covers from the
	// returned log, for clients that want the log to stop growing. Default false:
	// the canonical log keeps every message.
	BoundedLog bool `yaml:"bounded_log" json:"bounded_log"`
	// CompactOnExecutionEnd makes Route run this profile's compaction
	// schedule when a step ends an execution with a final answer, and persist
	// what it decided when the trigger fired (after a completed
	// answer, never inside a running tool loop; the trigger decides).
	CompactOnExecutionEnd bool `yaml:"compact_on_execution_end" json:"compact_on_execution_end"`
	// CompactOnExecutionError does the same when an execution ends with an
	// error. Default false.
	CompactOnExecutionError bool `yaml:"compact_on_execution_error" json:"compact_on_execution_error"`
	// Stages lists the policies in run order; their stages must follow the
	// stage table's order (policies.Stages), which the catalog's "cannot
	// follow" error spells out.
	Stages []StepSpec `yaml:"stages" json:"stages"`
}

// StepSpec is one policy of a profile with its settings.
type StepSpec struct {
	// Policy is the policy type, such as "observation_masking".
	Policy string `yaml:"policy" json:"policy"`
	// Settings are decoded over the policy's defaults; unknown keys are errors.
	Settings yaml.Node `yaml:"settings" json:"-"`
}

// Config is the pipeline part of the server's configuration.
type Config struct {
	// DefaultProfile serves requests whose profile is empty. Default "pragmatic".
	DefaultProfile string
	// Profiles are custom profiles; a custom profile may not reuse a built-in name.
	Profiles []ProfileSpec
	// Source names where Profiles came from (the config file path), for ListProfiles.
	Source string
	// AttachmentPolicy is the policy type, of the stage that places
	// attachments (policies.StageInfo.Places), that places a Compile's
	// attachments under a profile without that stage (cmd/ctxc sets
	// "place_attachments"); it runs in that stage's place only in runs with
	// attachments. Empty: such a profile refuses attachments.
	AttachmentPolicy string
	// ScheduleCache remembers the compaction schedule's progress across
	// runs, so that a compile of a log grown by appends resumes where an
	// earlier one stood (nil: every run replays from the start).
	ScheduleCache *ScheduleCache
}

// ProfileInfo describes a built profile for ListProfiles.
type ProfileInfo struct {
	Name        string
	Description string
	Default     bool
	Source      string
	RecentTurns int
	// FitTargetRatio: see ProfileSpec.
	FitTargetRatio float64
	BoundedLog     bool
	// CompactOnExecutionEnd and CompactOnExecutionError: see ProfileSpec.
	CompactOnExecutionEnd   bool
	CompactOnExecutionError bool
	Stages                  []StepInfo
	// AttachmentPolicy is the policy, of the stage that places attachments,
	// that places a Compile's attachments: the profile's own, or
	// Config.AttachmentPolicy; "" when the profile refuses them.
	AttachmentPolicy string
}

// StepInfo describes one step of a built profile.
type StepInfo struct {
	Stage  string
	Policy string
	// SettingsJSON is the policy's effective config as a JSON object.
	SettingsJSON string
}
