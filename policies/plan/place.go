package plan

import (
	"errors"
	"fmt"

	"github.com/contextcompiler/ctxc/internal/bounds"
	"github.com/contextcompiler/ctxc/policies"
)

// PlacementType is the type of the attachment placement policy.
const PlacementType = "place_attachments"

// PlacementConfig is the "place_attachments" policy's settings.
type PlacementConfig struct {
	// ChunkChars is the size of the chunks an extract ranks when an attachment
	// does not fit whole. Default 800.
	ChunkChars int `yaml:"chunk_chars" json:"chunk_chars"`
}

// Validate reports every problem of the config.
func (c *PlacementConfig) Validate() error {
	return errors.Join(bounds.AtLeast("chunk_chars", c.ChunkChars, 100))
}

type placementFactory struct{}

// NewPlacementFactory returns the factory of "place_attachments": a plan
// stage policy that places a request's attachments by the deterministic plan
// (include newest first within the budget, extract what does not fit with
// BM25 against the latest user turn and the goal, leave out, with a warning,
// what not even an extract fits), never calling a model and never changing
// tool results. The catalog runs it in the plan stage's place for a profile
// without a plan stage when a Compile carries attachments.
func NewPlacementFactory() policies.Factory { return placementFactory{} }

func (placementFactory) Type() string          { return PlacementType }
func (placementFactory) Stage() policies.Stage { return policies.StagePlan }

func (placementFactory) CreateDefaultConfig() policies.Config {
	return &PlacementConfig{ChunkChars: 800}
}

func (placementFactory) Create(cfg policies.Config) (policies.Policy, error) {
	c, ok := cfg.(*PlacementConfig)
	if !ok {
		return nil, fmt.Errorf("%s: config is %T, want *plan.PlacementConfig", PlacementType, cfg)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", PlacementType, err)
	}
	plan := NewFactory(Deps{}).CreateDefaultConfig().(*Config)
	plan.ChunkChars = c.ChunkChars
	return policy{cfg: *plan, placeOnly: true}, nil
}
