package eval

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// Collapse replaces every run of white space by one space and trims the
// ends, so that facts match however a compiler rewraps text: it is
// strings.Join(strings.Fields(s), " ").
func Collapse(s string) string {
	// strings.Join(strings.Fields(s), " ") in one pass: a compiled
	// context of a 128K window is some 100,000 words, which Fields put in a
	// slice on every compile.
	var b strings.Builder
	b.Grow(len(s))
	start := -1 // where the word being read began
	for i := 0; i < len(s); {
		space, w := asciiSpace[s[i]], 1
		if s[i] >= utf8.RuneSelf {
			var r rune
			r, w = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		switch {
		case space && start >= 0:
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s[start:i])
			start = -1
		case !space && start < 0:
			start = i
		}
		i += w
	}
	if start >= 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[start:])
	}
	return b.String()
}

// asciiSpace are the ASCII bytes unicode.IsSpace calls space.
var asciiSpace = [256]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// messageText is every piece of text a message shows the model: text,
// reasoning, tool calls (name and arguments) and tool results, one per line.
func messageText(m *ctxcv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		switch c := p.GetContent().(type) {
		case *ctxcv1.Part_Text:
			b.WriteString(c.Text)
		case *ctxcv1.Part_Reasoning:
			b.WriteString(c.Reasoning.GetText())
		case *ctxcv1.Part_ToolCall:
			b.WriteString(c.ToolCall.GetName() + " " + c.ToolCall.GetArgumentsJson())
		case *ctxcv1.Part_ToolResult:
			b.WriteString(c.ToolResult.GetContent())
		default:
			continue
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// contextText is the collapsed text of a compiled context, which the facts
// are looked up in.
func contextText(msgs []*ctxcv1.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(messageText(m))
		b.WriteByte('\n')
	}
	return Collapse(b.String())
}

// keptFacts returns the ids of the due facts that text, a contextText, does
// not contain, and how many were due. A fact is due when it was planted at or
// before turn and its text has already been sent to the service (seen): a
// fact of a turn's tool output is not due at the compile that starts the turn.
func keptFacts(facts []Fact, seen map[string]bool, turn int, text string) (due int, missing []string) {
	for _, f := range facts {
		if f.Turn > turn || !seen[f.ID] {
			continue
		}
		due++
		if !strings.Contains(text, Collapse(f.Text)) {
			missing = append(missing, f.ID)
		}
	}
	return due, missing
}

// identifierPatterns find what a session says without listing facts: error
// codes, exception names, file paths, versions and ticket ids. They are
// heuristics; the package doc lists them.
var identifierPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\bE\d{3,5}\b`),          // E1234
	regexp.MustCompile(`\bERR_[A-Z0-9_]{2,}\b`), // ERR_CONN_RESET
	regexp.MustCompile(`\bE(?:CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|NOENT|ACCES|PERM|PIPE|ADDRINUSE|NOTFOUND|NOSPC|NOMEM)\b`), // errno names
	regexp.MustCompile(`\bHTTP [1-5]\d\d\b`),                                                        // HTTP 503
	regexp.MustCompile(`\bSQLSTATE [0-9A-Z]{5}\b`),                                                  // SQLSTATE 23505
	regexp.MustCompile(`\bexit (?:status|code) \d+\b`),                                              // exit status 137
	regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b`),                                  // ModuleNotFoundError
	regexp.MustCompile(`\bErr[A-Z][A-Za-z0-9]+\b`),                                                  // ErrOutOfStock
	regexp.MustCompile(`(?:[A-Za-z0-9_.-]+/)+[A-Za-z_][A-Za-z0-9_.-]*\.[A-Za-z][A-Za-z0-9]{0,5}\b`), // internal/store/store.go
	regexp.MustCompile(`\bv?\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?\b`),                                    // v1.4.2
	regexp.MustCompile(`\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b`),                                            // OPS-1423
}

// notTickets are upper-case words followed by a number that name standards,
// not tickets.
var notTickets = map[string]bool{"UTF": true, "SHA": true, "ISO": true, "AES": true, "RFC": true, "TLS": true, "X": true}

// identifiers returns the identifiers of text in order of first appearance.
func identifiers(text string) []string {
	type hit struct {
		at int
		s  string
	}
	var hits []hit
	for _, re := range identifierPatterns {
		for _, loc := range re.FindAllStringIndex(text, -1) {
			s := text[loc[0]:loc[1]]
			if prefix, _, ok := strings.Cut(s, "-"); ok && notTickets[prefix] {
				continue
			}
			// 10.0.0.12 is an address, not a version.
			if loc[1]+1 < len(text) && text[loc[1]] == '.' && text[loc[1]+1] >= '0' && text[loc[1]+1] <= '9' {
				continue
			}
			hits = append(hits, hit{loc[0], s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if !seen[h.s] {
			seen[h.s] = true
			out = append(out, h.s)
		}
	}
	return out
}

// observe marks the facts whose text occurs in texts as seen.
func observe(facts []Fact, seen map[string]bool, texts ...string) {
	all := Collapse(strings.Join(texts, "\n"))
	for _, f := range facts {
		if !seen[f.ID] && strings.Contains(all, Collapse(f.Text)) {
			seen[f.ID] = true
		}
	}
}

// inputTexts is every text a line sends: messages, step error, event, and
// a state's system prompt.
func inputTexts(l *Line) []string {
	var msgs []*ctxcv1.Message
	var texts []string
	switch {
	case l.State != nil:
		msgs = l.State.GetContext().GetMessages()
		texts = append(texts, l.State.GetContext().GetSystemPrompt())
	case l.Route.GetUserTurn() != nil:
		msgs = l.Route.GetUserTurn().GetMessages()
	case l.Route.GetStep() != nil:
		msgs = l.Route.GetStep().GetMessages()
		texts = append(texts, l.Route.GetStep().GetError())
	case l.Route.GetEvent() != nil:
		texts = append(texts, l.Route.GetEvent().GetText())
	}
	for _, m := range msgs {
		texts = append(texts, messageText(m))
	}
	return texts
}

// autoFacts are the facts of a session that lists none: for each failed
// tool result (or failed step), its identifying lines (failureLines); the
// requirements of each user turn (requirements); and every identifier of
// its inputs. Each is planted at the turn it first appears in, once, and its
// id is its text.
func autoFacts(s *Session) []Fact {
	var facts []Fact
	seen := map[string]bool{}
	plant := func(turn int, kind FactKind, texts []string) {
		for _, t := range texts {
			if !seen[t] {
				seen[t] = true
				facts = append(facts, Fact{ID: t, Kind: kind, Text: t, Turn: max(turn, 1)})
			}
		}
	}
	add := func(turn int, text string) { plant(turn, FactOther, identifiers(text)) }
	// Identifiers count where people wrote them (a user's or an assistant's
	// text, an event, a step's error); a tool's output counts only by the
	// identifying lines of a failure: the paths a grep or a stack trace
	// prints, the names in a source file read, are not what anyone needs
	// to remember.
	addStep := func(turn int, msgs []*ctxcv1.Message) {
		for _, m := range msgs {
			for _, p := range m.GetParts() {
				if r := p.GetToolResult(); r != nil && (r.GetIsError() || exitFailure(r.GetContent())) {
					plant(turn, FactErrorCode, failureLines(r.GetContent()))
					plant(turn, FactOther, errorCodes(r.GetContent()))
				}
			}
			add(turn, writtenText(m))
		}
	}
	turn := 0
	for i := range s.Lines {
		l := &s.Lines[i]
		switch {
		case l.State != nil:
			turn = stateTurn(l)
			for _, m := range l.State.GetContext().GetMessages() {
				if m.GetRole() == ctxcv1.Role_ROLE_USER && m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_UNSPECIFIED {
					plant(turn, FactConstraint, requirements(messageText(m)))
				}
			}
			addStep(turn, l.State.GetContext().GetMessages())
		case l.Route.GetUserTurn() != nil:
			turn++
			leading := true // leading system messages set the system prompt
			for _, m := range l.Route.GetUserTurn().GetMessages() {
				leading = leading && m.GetRole() == ctxcv1.Role_ROLE_SYSTEM
				if !leading {
					plant(turn, FactConstraint, requirements(messageText(m)))
					add(turn, messageText(m))
				}
			}
		case l.Route.GetStep() != nil:
			step := l.Route.GetStep()
			if step.GetError() != "" {
				plant(turn, FactErrorCode, failureLines(step.GetError()))
			}
			addStep(turn, step.GetMessages())
			add(turn, step.GetError())
		case l.Route.GetEvent() != nil:
			add(turn, l.Route.GetEvent().GetText())
		}
	}
	return facts
}

// maxFactLine is the longest line taken as a fact; a longer one is not a
// line a reader identifies a failure by.
const maxFactLine = 300

// The lines that identify a failure, whatever the toolchain: a location
// (file:line, optionally :column) followed by a message; an exception or
// panic line; a failing test's name; the race detector's warning.
var (
	locatedMessage = regexp.MustCompile(`^\S*[A-Za-z0-9_]\.[A-Za-z0-9]+:\d+(?::\d+)?:\s*\S`)
	exceptionLine  = regexp.MustCompile(`^(?:panic: |fatal error: |[A-Z][A-Za-z0-9_.]*(?:Error|Exception): )\S`)
	failedTest     = regexp.MustCompile(`^--- FAIL: \S+|^FAILED \S+::\S+`)
)

// failureLines returns the identifying lines of a failed tool's output, in
// order, white space trimmed: a failing test is named by its "--- FAIL:
// TestX" or "FAILED path::test" alone, without the timing after it.
func failureLines(out string) []string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if len(line) > maxFactLine {
			continue
		}
		switch {
		case failedTest.MatchString(line):
			lines = append(lines, failedTest.FindString(line))
		case line == "WARNING: DATA RACE", locatedMessage.MatchString(line), exceptionLine.MatchString(line):
			lines = append(lines, line)
		}
	}
	return lines
}

// requirementWords mark a sentence of a user turn as a requirement; a
// sentence that starts with "No " (No panics in library code) is one too.
var requirementWord = regexp.MustCompile(`(?i)\b(?:must|mustn't|never|don't|do not|only|always|should|shouldn't|have to|has to|need to|needs to)\b`)

// taggedBlock is text a client wraps in tags (<system-reminder>…), which is
// not the user's own words.
var taggedBlock = regexp.MustCompile(`(?s)<([a-z][a-z0-9_-]*)>.*?</([a-z][a-z0-9_-]*)>`)

// sentenceEnd ends a sentence: terminal punctuation before white space, or a
// line break.
var sentenceEnd = regexp.MustCompile(`[.!?;:]\s+|\n+`)

// requirements returns the sentences of a user's text that state a
// requirement, without their terminal punctuation.
func requirements(text string) []string {
	text = taggedBlock.ReplaceAllStringFunc(text, func(block string) string {
		if m := taggedBlock.FindStringSubmatch(block); m[1] == m[2] {
			return "\n"
		}
		return block
	})
	var out []string
	for _, sentence := range sentenceEnd.Split(text, -1) {
		sentence = strings.TrimRight(Collapse(sentence), ".!?;:")
		if len(sentence) < 8 || len(sentence) > maxFactLine {
			continue
		}
		if requirementWord.MatchString(sentence) || strings.HasPrefix(sentence, "No ") {
			out = append(out, sentence)
		}
	}
	return out
}

// errorCodes are the identifiers of a failed output that name an error
// (codes, errno and exception names, status phrases), not its paths,
// versions or ticket-like words.
func errorCodes(text string) []string {
	var out []string
	for _, id := range identifiers(text) {
		if !strings.ContainsAny(id, "/.") {
			out = append(out, id)
		}
	}
	return out
}

// writtenText is what a message's author wrote: its text parts, without
// reasoning, tool calls and tool results.
func writtenText(m *ctxcv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		if t, ok := p.GetContent().(*ctxcv1.Part_Text); ok {
			b.WriteString(t.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
