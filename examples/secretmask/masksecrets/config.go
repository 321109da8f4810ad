package masksecrets

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Config is the mask_secrets policy's settings, decoded from a profile
// step's settings over DefaultConfig.
type Config struct {
	// Builtin names the built-in patterns to apply (BuiltinPatterns lists
	// them: aws_access_key_id, aws_secret_access_key, bearer_token,
	// github_token, password_assignment, private_key, url_credentials).
	// Default: all of them. An empty list applies none, leaving Patterns.
	Builtin []string `yaml:"builtin" json:"builtin"`
	// Patterns are patterns of the profile's own, applied after the
	// built-in ones.
	Patterns []Pattern `yaml:"patterns" json:"patterns"`
	// Replacement stands in for each secret; {name} in it is replaced by the
	// pattern's name. Default "[masked {name}]".
	Replacement string `yaml:"replacement" json:"replacement"`
}

// Pattern is one kind of secret: a name, shown in the replacement, and a
// regular expression (RE2 syntax, as Go's regexp reads it).
type Pattern struct {
	// Name is lower_snake_case, unique among the patterns applied.
	Name string `yaml:"name" json:"name"`
	// Regexp matches the secret. When it has a group named secret
	// ((?P<secret>...)), only that group is masked, so what names the
	// secret (password=, Authorization: Bearer) stays readable; otherwise
	// the whole match is.
	Regexp string `yaml:"regexp" json:"regexp"`
}

// BuiltinPatterns are the patterns Config.Builtin may name, in the order
// they are applied.
func BuiltinPatterns() []Pattern {
	return []Pattern{
		// A PEM private key block, whole.
		{"private_key", `-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----`},
		// AWS access key ids: long-term (AKIA) and temporary (ASIA).
		{"aws_access_key_id", `\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`},
		// The 40-character secret key, where a file or a variable names it.
		{"aws_secret_access_key", `(?i)aws_secret_access_key["']?\s*[=:]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})`},
		// GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh.
		{"github_token", `\bgh[pousr]_[A-Za-z0-9]{36,}\b`},
		// An HTTP bearer token (Authorization headers, curl -H).
		{"bearer_token", `(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)`},
		// The password of a URL's user information (postgres://user:pw@host).
		{"url_credentials", `\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:(?P<secret>[^/\s@]+)@`},
		// key=value or key: value for keys that hold secrets.
		{"password_assignment", `(?i)\b(?:password|passwd|pwd|secret|client_secret|api_key|apikey|access_token|auth_token)["']?\s*[=:]\s*["']?(?P<secret>[^\s"'&;,]{3,})`},
	}
}

// DefaultConfig applies every built-in pattern.
func DefaultConfig() *Config {
	return &Config{Builtin: builtinNames(), Replacement: "[masked {name}]"}
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate reports every problem of the config at once, each naming its
// key.
func (c *Config) Validate() error {
	var errs []error
	seen := map[string]string{} // pattern name → where it is declared
	known := BuiltinPatterns()
	for i, name := range c.Builtin {
		where := fmt.Sprintf("builtin[%d]", i)
		if !slices.ContainsFunc(known, func(p Pattern) bool { return p.Name == name }) {
			errs = append(errs, fmt.Errorf("%s: %q is not a built-in pattern (known: %s)", where, name, strings.Join(builtinNames(), ", ")))
			continue
		}
		if at, dup := seen[name]; dup {
			errs = append(errs, fmt.Errorf("%s: %q is named again (%s)", where, name, at))
			continue
		}
		seen[name] = where
	}
	for i, p := range c.Patterns {
		where := fmt.Sprintf("patterns[%d]", i)
		if !namePattern.MatchString(p.Name) {
			errs = append(errs, fmt.Errorf("%s.name: %q must be lower_snake_case", where, p.Name))
		} else if at, dup := seen[p.Name]; dup {
			errs = append(errs, fmt.Errorf("%s.name: %q is already the name of %s", where, p.Name, at))
		} else {
			seen[p.Name] = where
		}
		if p.Regexp == "" {
			errs = append(errs, fmt.Errorf("%s.regexp: empty", where))
			continue
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.regexp: %v", where, err))
			continue
		}
		if re.MatchString("") {
			errs = append(errs, fmt.Errorf("%s.regexp: %q matches the empty text", where, p.Regexp))
		}
	}
	if c.Replacement == "" {
		errs = append(errs, errors.New("replacement: empty (a secret must be replaced by something the model can see was there)"))
	}
	if len(c.Builtin) == 0 && len(c.Patterns) == 0 {
		errs = append(errs, errors.New("builtin, patterns: both empty, nothing would be masked"))
	}
	return errors.Join(errs...)
}

func builtinNames() []string {
	var names []string
	for _, p := range BuiltinPatterns() {
		names = append(names, p.Name)
	}
	return names
}
