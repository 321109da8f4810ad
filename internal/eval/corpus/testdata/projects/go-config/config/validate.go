package config

import (
	"errors"
	"strings"
)

// Validate checks the values FromEnv cannot check alone.
func (c Config) Validate() error {
	var errs []error
	if !strings.Contains(c.Addr, ":") {
		errs = append(errs, errors.New("config: ADDR must be host:port"))
	}
	if c.MaxBodyBytes <= 0 {
		errs = append(errs, errors.New("config: MAX_BODY_BYTES must be positive"))
	}
	if c.ReadTimeout < time.Second {
		errs = append(errs, errors.New("config: READ_TIMEOUT below 1s"))
	}
	return errors.Join(errs...)
}
