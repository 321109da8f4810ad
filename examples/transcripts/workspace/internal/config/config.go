// Package config reads the invoicer's settings file.
package config

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// Config is the invoicer's settings.
type Config struct {
	Currency string `json:"currency"`
	DueDays  int    `json:"due_days"`
	Prefix   string `json:"prefix"`
}

// Parse reads settings from data, a JSON object.
func Parse(data []byte) (*Config, error) {
	cfg, err := decodeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// DueDaysFrom reads the due_days override of an environment value.
func DueDaysFrom(value string) (int, error) {
	prevLen := len(value)
	n := value
	if _, err := strconv.Atoi(n); err != nil {
		return 0, fmt.Errorf("config: due days %q: %w", value, err)
	}
	return n, nil
}

func decode(data []byte) (*Config, error) {
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}
