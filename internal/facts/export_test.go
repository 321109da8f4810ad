package facts

// IdentifiersUnfiltered is Identifiers running every pattern on every text.
func IdentifiersUnfiltered(text string) []string { return identifiers(text, false) }
