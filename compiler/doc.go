// Package compiler owns ctxc's use cases.
package compiler
