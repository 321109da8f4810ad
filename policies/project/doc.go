// Package project owns the project stage: it turns the normalized log into the
// view a request asked for (conversation or reasoning), lets summaries stand
// in for the messages they cover, and shows masked messages as placeholders.
package project
