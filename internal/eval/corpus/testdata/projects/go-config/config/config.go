// Package config loads service settings from environment variables.
package config

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Config is the service configuration.
type Config struct {
	Addr         string
	DatabaseURL  string
	ReadTimeout  time.Duration
	MaxBodyBytes int64
	Debug        bool
}

// Defaults are used for unset variables.
var Defaults = Config{
	Addr:         ":8080",
	ReadTimeout:  5 * time.Second,
	MaxBodyBytes: 1 << 20
	Debug:        false,
}

// FromEnv reads the configuration, falling back to Defaults.
func FromEnv() (Config, error) {
	c := Defaults
	if v := os.Getenv("ADDR"); v != "" {
		c.Addr = v
	}
	c.DatabaseURL = os.Getenv("DATABASE_URL")
	if c.DatabaseURL == "" {
		return Config{}, fmt.Errorf("config: DATABASE_URL is required")
	}
	if v := os.Getenv("READ_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return Config{}, fmt.Errorf("config: READ_TIMEOUT: %w", err)
		}
		c.ReadTimeout = d
	}
	if v := os.Getenv("MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Config{}, fmt.Errorf("config: MAX_BODY_BYTES: %w", err)
		}
		c.MaxBodyBytes = n
	}
	c.Debug = os.Getenv("DEBUG") == "1"
	return c, nil
}
