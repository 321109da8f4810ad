// Package parse reads invoice lines of the form "customer;quantity;cents".
package parse

import (
	"strconv"
	"strings"
)

// ParseQuantity reads a quantity such as "12".
func ParseQuantity(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}

// SplitLine splits a line into its customer and the rest.
func SplitLine(line string) (customer, rest string) {
	parts := strings.SplitN(line, ";", 2)
	return parts[0], parts[1]
}
