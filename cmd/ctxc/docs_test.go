package main

import "github.com/contextcompiler/ctxc/internal/docset"

// docs reads the documentation as one text (internal/docset): README.md,
// then the guides under docs/, headings as if they were the README's
// sections.
func docs() ([]byte, error) {
	d, err := docset.Read("../..")
	if err != nil {
		return nil, err
	}
	return []byte(d.Text), nil
}
