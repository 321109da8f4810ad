// Package facts owns the deterministic reading of messages that compaction
// relies on to keep what matters: it splits text into sentences, classifies a
// sentence as a constraint, a decision, a request or filler by its wording, and
// finds identifiers (error codes, exception names, paths, versions, ticket ids)
// that must survive any summary verbatim. It knows no policy or stage; the
// summarizers, observation masking and the LLM summarizer's verify pass use it.
package facts

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Class is what a sentence is, by its wording.
type Class uint8

// Classes, most important first.
const (
	// Filler carries nothing to keep: greetings, thanks, acknowledgements,
	// narration of what is about to be done.
	Filler Class = iota
	// Other is any sentence that fits no other class.
	Other
	// Request asks for something to be done.
	Request
	// Decision states a decision, a conclusion, a cause or a plan.
	Decision
	// Constraint states a requirement, a prohibition, a limit or a preference
	// that later work must respect.
	Constraint
)

var classNames = [...]string{"filler", "other", "request", "decision", "constraint"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class?"
}

// Sentences splits text into sentences and list items, trimmed, in order.
// Lines are boundaries; within a line a sentence ends at ".", "!" or "?"
// followed by white space and a capital letter, digit, quote or bracket,
// except after a few common abbreviations. Code-like lines (indented, or
// fenced blocks) are left out: they are content, not statements.
func Sentences(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if fenced || trimmed == "" || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		lead := trimmed
		trimmed = strings.TrimSpace(strings.TrimLeft(trimmed, "-*•>"))
		lead = lead[:len(lead)-len(trimmed)] // list markers, and emphasis opened before the first word
		trimmed = trimListNumber(trimmed)
		for _, s := range splitLine(trimmed, lead) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// Paragraphs splits text into its paragraphs: runs of lines between blank
// lines, each list item on its own, code left out (as Sentences does), the
// lines of a paragraph joined by a space and list markers dropped. A
// sentence of Sentences(text) lies within one paragraph.
func Paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			flush()
			continue
		}
		if fenced || trimmed == "" || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			flush()
			continue
		}
		item := strings.TrimSpace(strings.TrimLeft(trimmed, "-*•>"))
		if stripped := trimListNumber(item); stripped != item || item != trimmed {
			flush() // a list item starts a paragraph of its own
			item = stripped
		}
		if item != "" {
			cur = append(cur, item)
		}
	}
	flush()
	return out
}

// Paste is a block of a text, fenced (```) or indented: a log or code a
// user pasted, which Sentences leaves out.
type Paste struct {
	// Lead is the last line of text before the block, trimmed: what
	// introduced it ("I get this when I run `make test`:"), "" for none.
	Lead string
	// Block is the block's lines, each ending in a newline.
	Block string
}

// Pastes returns the pasted blocks of a text, in order.
func Pastes(text string) []Paste {
	var out []Paste
	var b strings.Builder
	lead, fenced, inBlock := "", false, false
	flush := func() {
		if inBlock {
			out = append(out, Paste{Lead: lead, Block: b.String()})
			b.Reset()
			inBlock = false
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if fenced {
				flush()
			}
			fenced = !fenced
			inBlock = fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			inBlock = true
			b.WriteString(line)
			b.WriteByte('\n')
			continue
		}
		if t := strings.TrimSpace(line); t != "" {
			flush()
			lead = t
		}
	}
	flush()
	return out
}

// IntroducesRun reports whether a paste's lead names a command line the
// block is the output of: it ends with a colon and holds a code span with
// arguments ("`docker build --check .` fails with:") or that runs a program
// by its path ("`./scripts/release.sh`"). A file named ("Here's
// `main.go`:") is neither.
func IntroducesRun(lead string) bool {
	if !strings.HasSuffix(lead, ":") {
		return false
	}
	spans := strings.Split(lead, "`")
	for i := 1; i < len(spans)-1; i += 2 {
		span := strings.TrimSpace(spans[i])
		if strings.Contains(span, " ") || strings.HasPrefix(span, "./") || strings.HasPrefix(span, "../") {
			return true
		}
	}
	return false
}

// trimListNumber removes a leading "1." or "2)" list marker.
func trimListNumber(s string) string {
	i := 0
	for i < len(s) && i < 3 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

var abbreviations = []string{"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "Mr.", "Ms.", "Dr.", "No.", "fig."}

// splitLine splits a line into sentences; lead is what was trimmed before
// it (a list marker, or emphasis the first sentence opens).
func splitLine(line, lead string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(line) && (line[j] == '"' || line[j] == '\'' || line[j] == ')' || closesSpan(opened(lead, start)+line[start:i], line[i+1:j], line[j])) {
			j++
		}
		if j >= len(line) || line[j] != ' ' {
			continue
		}
		k := j
		for k < len(line) && line[k] == ' ' {
			k++
		}
		if k >= len(line) {
			continue
		}
		r, _ := utf8.DecodeRuneInString(line[k:])
		if unicode.IsLower(r) && !lowerStart(line[start:i], c) {
			continue
		}
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '"' || r == '\'' || r == '(' || r == '[' || r == '`' || r == '*' || r == '_') {
			continue
		}
		if c == '.' && endsWithAbbreviation(line[start:i+1]) {
			continue
		}
		out = append(out, line[start:j])
		start = k
		i = k - 1
	}
	return append(out, line[start:])
}

// closesSpan reports whether c, a "*", "_" or "`" after a sentence's last
// ".", "!" or "?" (and the closers already taken past it), closes emphasis
// or code that the sentence opened ("**Never deploy on Fridays.**"). One
// that opens nothing is part of a word: the glob of "javax.* not jakarta.*"
// ends no sentence.
func closesSpan(sentence, taken string, c byte) bool {
	if c != '*' && c != '_' && c != '`' {
		return false
	}
	return strings.Count(taken, string(c)) < openers(sentence, c)
}

// openers counts the c that open a span in s: runs of c at the start of a
// word ("**Never", "`go"), not those within one ("javax.*").
func openers(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] != c || (i > 0 && s[i-1] != ' ' && s[i-1] != '(') {
			i++
			continue
		}
		k := i
		for k < len(s) && s[k] == c {
			k++
		}
		if k < len(s) && s[k] != ' ' {
			n += k - i
		}
		i = k
	}
	return n
}

// opened is what was trimmed before the sentence that starts at start: the
// lead of the line's first sentence, nothing for the others.
func opened(lead string, start int) string {
	if start == 0 {
		return lead
	}
	return ""
}

// lowerStart reports whether a sentence ending in c after before may be
// followed by one that starts in lower case, as people write in chat ("Could
// you write a guide? still python 2 compatible, sadly"): after "?" and "!",
// and after "." that ends a word of two letters or more, not an ellipsis or
// an initialism ("config... actually", "a.m. on").
func lowerStart(before string, c byte) bool {
	if c != '.' {
		return true
	}
	word := before[strings.LastIndexAny(before, " (")+1:]
	if word == "" || strings.HasSuffix(word, ".") {
		return false
	}
	for _, seg := range strings.Split(word, ".") {
		if utf8.RuneCountInString(seg) < 2 {
			return false
		}
	}
	return true
}

func endsWithAbbreviation(s string) bool {
	for _, a := range abbreviations {
		if strings.HasSuffix(s, a) && (len(s) == len(a) || s[len(s)-len(a)-1] == ' ' || s[len(s)-len(a)-1] == '(') {
			return true
		}
	}
	return false
}

// Cues are lower-case phrases matched at word boundaries.
var (
	constraintCues = cueSet(
		"must", "must not", "mustn't", "have to", "has to", "had better", "need to", "needs to", "needn't",
		"required", "requirement", "requires", "require", "mandatory", "is a must",
		"should", "shouldn't", "should not", "ought to",
		"never", "don't", "do not", "doesn't", "does not", "can't", "cannot", "can not", "won't", "will not",
		"not allowed", "isn't allowed", "aren't allowed", "not permitted", "forbidden", "prohibited", "banned",
		"off-limits", "off limits", "hands off", "no more than", "not more than", "no less than", "not exceed",
		"must stay", "at most", "at least", "maximum", "minimum", "max", "min", "limit", "limited to", "cap", "capped",
		"budget", "deadline", "no later than", "by end of", "avoid", "without", "only", "always", "stick to",
		"stick with", "keep", "keeping", "stay", "stays", "remain", "remains", "preserve", "retain", "unchanged",
		"untouched", "leave", "backward compatible", "backwards compatible", "backward-compatible",
		"backwards-compatible", "compatible with", "prefer", "preferably", "rather than", "instead of",
		"make sure", "ensure", "be sure", "important", "crucial", "critical", "essential", "non-negotiable",
		"convention", "style guide", "not supposed", "we can't", "we cannot", "we don't",
		"no new", "no external", "no breaking", "not touch", "don't touch", "do not touch", "pinned", "frozen",
		"needs", "need", "needed", "every", "each time", "whenever", "from now on", "going forward", "any time",
		"freeze", "until", "allowed", "allow", "disallow", "stay on", "stay within", "within",
		// As people type them: without apostrophes, and the colloquial ones.
		"dont", "cant", "wont", "shouldnt", "mustnt", "doesnt", "isnt", "arent", "no-go", "no go", "not ok", "not okay",
		"off the table", "out of the question", "dealbreaker", "deal-breaker", "hard rule", "hard requirement", "non negotiable",
	)
	// Sentences opening with one of these words read as instructions.
	imperativeOpeners = cueSet(
		"use", "keep", "leave", "stay", "stick", "avoid", "never", "always", "only", "don't", "do", "make",
		"ensure", "prefer", "limit", "cap", "pin", "retain", "preserve", "target", "require", "skip", "exclude",
		"no", "nothing",
	)
	decisionCues = cueSet(
		"we'll", "we will", "we're going to", "we are going to", "i'm going to", "i am going to", "let's", "let us", "decided", "decide", "decision", "going with", "go with",
		"went with", "chose", "choose", "chosen", "opted", "opting", "settled on", "switch to", "switched to",
		"switching to", "migrate to", "instead of", "rather than", "the plan", "plan is", "plan:", "approach",
		"conclusion", "concluded", "conclude", "root cause", "the cause", "caused by", "because", "due to",
		"turns out", "turned out", "the fix is", "the fix:", "fix is to", "the issue was", "the problem was",
		"the bug was", "the culprit", "so we", "therefore", "thus", "hence", "agreed", "recommend",
		"recommendation", "rejected", "ruled out", "trade-off", "tradeoff", "won't", "will not", "not going to",
		"we should", "should be", "from now on", "going forward", "best option", "wins", "better option",
		"i'll use", "will use", "we use", "we keep", "keep the", "keeping the", "will keep", "i'll keep",
		"will return", "will be", "is to", "comes from", "because of", "since", "means", "so that",
		"the problem is", "the issue is", "the bug is", "the cause is", "the reason is", "the culprit is",
		"comes down to", "boils down to", "found that", "final call", "verdict",
		"that's why", "which is why", "that is why", "is why", "ruling out", "rule out", "that's all it was", "the answer is",
		"it was the", "it's the", "it is the", "was the problem", "is the problem", "turns out", "dropping the", "not the",
	)
	requestCues = cueSet(
		"can you", "could you", "would you", "please", "i need", "we need", "i want", "we want", "i'd like",
		"we'd like", "let's", "next", "now", "also", "then", "add", "fix", "implement", "write", "update",
		"change", "refactor", "investigate", "look into", "check", "find", "run", "create", "remove", "rename",
		"move", "make", "build", "deploy", "migrate", "figure out", "debug", "test", "review", "todo", "to do",
	)
	fillerOpeners = cueSet(
		"thanks", "thank you", "thx", "great", "perfect", "nice", "cool", "awesome", "ok", "okay", "sure", "sounds good",
		"got it", "hi", "hello", "hey", "hmm", "alright", "all right", "good", "excellent", "let me", "i'll take a look",
		"one moment", "on it", "looking", "checking", "now let me", "first, let me", "next, let me", "let's see",
		"i see", "understood", "noted", "yes", "no problem", "right",
	)
)

// infoLeadIns open a sentence that tells rather than asks ("Also good to
// know: the load test tenant is t_loadtest_50", "FYI: Dmitri owns
// billing-svc"): it is a note, or a constraint when it says so in strong
// words, never a request.
var infoLeadIns = cueSet("fyi", "btw", "by the way", "for the record", "for context", "for reference", "for your information",
	"good to know", "also good to know", "also fyi", "also for the record", "also note", "also note that", "note", "note that",
	"heads up", "heads-up", "just so you know", "just fyi", "keep in mind", "bear in mind", "context", "background",
	"worth knowing", "worth noting", "side note", "ps", "p.s", "one more thing", "useful to know", "also useful to know")

// endorsements are short sentences that only point back: "That's the
// approach." makes the sentence before it the decision.
var endorsementOpeners = cueSet("that's", "that is", "this is", "which is", "it's", "so that's", "ok that's", "okay that's")

var endorsementNouns = cueSet("approach", "plan", "decision", "way forward", "fix", "call", "choice", "conclusion",
	"direction", "route", "path forward", "solution", "option we take", "one")

var endorsementPhrases = cueSet("agreed", "let's go with that", "let's do that", "go with that", "going with that", "decision made",
	"settled", "so be it", "that settles it", "we'll do that", "we'll go with that", "i'll go with that", "let's go with it",
	"sounds like the way", "that's what we'll do", "that's what i'll do", "that's the one")

// Endorses reports whether a sentence only endorses the one before it
// ("That's the approach.", "Agreed.", "Let's go with that."): the sentence
// before is then a decision, and this one carries nothing of its own.
func Endorses(sentence string) bool {
	ws := words(sentence)
	return len(ws) <= 7 && endorses(ws, len(Identifiers(sentence)) > 0)
}

// endorses is Endorses of a sentence's words; hasID says it names something.
func endorses(ws []string, hasID bool) bool {
	if len(ws) == 0 || len(ws) > 7 || hasID {
		return false
	}
	if endorsementPhrases[strings.Join(ws, " ")] {
		return true
	}
	for n := 1; n <= 3 && n < len(ws); n++ {
		if !endorsementOpeners[strings.Join(ws[:n], " ")] {
			continue
		}
		rest := ws[n:]
		for len(rest) > 0 && (rest[0] == "the" || rest[0] == "our" || rest[0] == "my" || rest[0] == "what" || rest[0] == "a" || rest[0] == "your") {
			rest = rest[1:]
		}
		for k := 1; k <= 3 && k <= len(rest); k++ {
			if endorsementNouns[strings.Join(rest[:k], " ")] && k >= len(rest)-1 {
				return true
			}
		}
	}
	return false
}

// ClassifyAll classifies the sentences of one message in order, reading
// endorsements back: the sentence an endorsement points to is a decision (a
// constraint when the user wrote it), and the endorsement itself is filler.
func ClassifyAll(sentences []string, user bool) []Class {
	out := make([]Class, len(sentences))
	for i, s := range sentences {
		var endorsement bool
		out[i], endorsement = classify(s, user)
		if !endorsement {
			continue
		}
		for k := i - 1; k >= 0; k-- {
			if out[k] == Filler {
				continue
			}
			promoted := Decision
			if user {
				promoted = Constraint
			}
			out[k] = max(out[k], promoted)
			break
		}
	}
	return out
}

// politeRequest cues make a request wherever they stand.
var politeRequest = cueSet("can you", "could you", "would you", "please", "i need you", "we need you", "i'd like you", "i want you")

// speakerRule cues make "I ..." a rule; "never", "always" and "only" alone do
// not ("I always forget the flag").
var speakerRule = cueSet("must", "have to", "has to", "need", "needs", "should", "can't", "cannot", "don't", "do not",
	"want", "prefer", "require", "won't", "expect", "insist")

// narrationOpeners and narrationVerbs make "Let me read the file" or "I'll run
// the tests again": an assistant saying what it is about to look at, which is
// not a decision. Saying what it will change ("I'll make both lock accounts
// first", "I'll add a mutex") is one.
var (
	narrationOpeners = cueSet("let me", "i'll", "i will", "i'm going to", "i am going to", "now i'll", "now let me", "i'm", "i am", "now i'm",
		"first i'll", "first, i'll", "next i'll", "next, i'll", "first let me", "first, let me", "next, let me", "i need to", "i'll now",
		"i want to", "i'd like to")
	// lookingOpeners make "Looking at how RoleService is constructed" and
	// "Running it once more": what the assistant is doing, said as it does it.
	lookingOpeners = cueSet("looking", "checking", "running", "rerunning", "re-running", "reading", "searching", "inspecting",
		"trying", "retrying", "investigating", "examining", "grepping", "opening", "fetching", "scanning", "exploring",
		"reviewing", "verifying", "digging", "querying", "testing", "continuing", "proceeding", "starting")
	narrationVerbs = cueSet("read", "look", "check", "open", "run", "rerun", "re-run", "inspect", "search", "grep", "examine",
		"see", "investigate", "start", "take", "view", "list", "fetch", "find", "scan", "explore", "review", "verify", "peek", "dig", "query",
		"retry", "test", "continue", "proceed", "now", "double-check", "re-read", "reread", "scroll", "get", "reading", "looking",
		"checking", "running", "searching", "inspecting", "going", "trying")
)

// Narrates reports whether the assistant's sentence says what it is about
// to look at or is looking at ("Let me check the logs", "Looking at how the
// client is built"): a step, not a finding or a decision.
func Narrates(sentence string) bool {
	ws := words(sentence)
	return narration(ws) || lookingOpeners.opens(ws)
}

func narration(ws []string) bool {
	for n := 1; n <= 4 && n < len(ws); n++ {
		if narrationOpeners[strings.Join(ws[:n], " ")] {
			rest := ws[n:]
			for len(rest) > 0 && (rest[0] == "a" || rest[0] == "quickly" || rest[0] == "now" || rest[0] == "also" || rest[0] == "again") {
				rest = rest[1:]
			}
			return len(rest) > 0 && narrationVerbs[strings.TrimRight(rest[0], ",:")]
		}
	}
	return false
}

type cues map[string]bool

func cueSet(words ...string) cues {
	c := make(cues, len(words))
	for _, w := range words {
		c[w] = true
	}
	return c
}

// words lower-cases s and splits it into words (letters, digits, apostrophes,
// hyphens), dropping other punctuation.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(s, "’", "'")), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '-' || r == ':')
	})
}

// matchAny reports whether any cue (one to four words) occurs in ws.
func (c cues) matchAny(ws []string) bool {
	for i := range ws {
		phrase := ""
		for n := 0; n < 4 && i+n < len(ws); n++ {
			if n == 0 {
				phrase = strings.TrimSuffix(ws[i], ":")
			} else {
				phrase += " " + strings.TrimSuffix(ws[i+n], ":")
			}
			if c[phrase] || (n == 0 && c[ws[i]]) {
				return true
			}
		}
	}
	return false
}

// openingLen is the number of words of the longest cue ws starts with, 0 for none.
func (c cues) openingLen(ws []string) int {
	n, phrase := 0, ""
	for k := 0; k < 4 && k < len(ws); k++ {
		if k == 0 {
			phrase = strings.TrimRight(ws[0], ",:")
		} else {
			phrase += " " + strings.TrimRight(ws[k], ",:")
		}
		if c[phrase] {
			n = k + 1
		}
	}
	return n
}

// withoutPlease is ws without a leading "please": "Please keep the API
// stable" is a rule by its verb, "Please add pagination" a request.
func withoutPlease(ws []string) []string {
	if len(ws) > 1 && (ws[0] == "please" || ws[0] == "pls" || ws[0] == "plz") {
		return ws[1:]
	}
	return ws
}

// specificAfterOpener reports whether what follows a sentence's first word
// names something particular ("yes The on-call this week is Femi").
func specificAfterOpener(sentence string) bool {
	f := strings.Fields(sentence)
	return len(f) > 1 && Specific(strings.Join(f[1:], " "))
}

// opens reports whether ws starts with a cue.
func (c cues) opens(ws []string) bool {
	phrase := ""
	for n := 0; n < 4 && n < len(ws); n++ {
		if n == 0 {
			phrase = strings.TrimRight(ws[0], ",:")
		} else {
			phrase += " " + strings.TrimRight(ws[n], ",:")
		}
		if c[phrase] {
			return true
		}
	}
	return false
}

// Strong cues make a constraint or a decision unmistakable.
var (
	strongConstraint = cueSet("must", "must not", "mustn't", "have to", "has to", "never", "don't", "do not", "can't",
		"cannot", "not allowed", "isn't allowed", "aren't allowed", "forbidden", "prohibited", "no more than",
		"not more than", "at most", "at least", "only", "always", "stick to", "stick with", "avoid", "required",
		"mandatory", "should not", "shouldn't", "backward compatible", "backwards compatible", "make sure", "ensure",
		"not touch", "don't touch", "must stay", "non-negotiable", "not exceed", "unchanged", "we can't", "we cannot",
		"off-limits", "off limits", "limit your", "limited to", "public contract", "pinned on purpose", "keep the", "stay on",
		"stay within", "needs a", "need a", "requires", "prefer", "rather than", "instead of", "every", "each time",
		"whenever", "from now on", "going forward", "any time", "anytime", "in future", "all future")
	strongDecision = cueSet("decided", "decision", "root cause", "conclusion", "concluded", "the fix is", "fix is to",
		"instead of", "rather than", "chose", "going with", "go with", "went with", "plan is", "the plan", "best option",
		"turns out", "turned out", "caused by", "the culprit", "the issue was", "the problem was", "the bug was",
		"settled on", "opted", "we'll", "we will", "will return", "wins", "trade-off", "tradeoff", "ruled out", "rejected",
		"the problem is", "the issue is", "the bug is", "the cause is", "the culprit is", "comes down to", "boils down to",
		"final call")
)

// Weight is how much a sentence of the given class is worth keeping beyond
// its class: more when it names something particular (Specific) or states
// its constraint or decision in so many words, less when it is long or a
// constraint only by a weak cue ("keep going", "no rush").
func Weight(sentence string, c Class) int {
	ws := words(sentence)
	w := 0
	if Specific(sentence) {
		w += 20
	}
	switch c {
	case Constraint:
		if strongConstraint.matchAny(ws) {
			w += 15
		} else if !Specific(sentence) {
			w -= 40
		}
	case Decision:
		if strongDecision.matchAny(ws) {
			w += 15
		}
	case Other:
		if !Specific(sentence) {
			w -= 30 // a plain statement: kept after what names something
		}
	}
	if len(ws) > 60 {
		w -= 10
	}
	return w
}

// Specific reports whether a sentence names something particular: an
// identifier, a number, a date, or a word with digits, hyphens, underscores,
// slashes, dots or inner capitals (billing-svc, t_loadtest_50, getUser).
// Statements without one rarely carry a fact worth keeping.
func Specific(s string) bool {
	if len(Identifiers(s)) > 0 {
		return true
	}
	for i, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:!?()[]\"'`")
		if w == "" {
			continue
		}
		for k, r := range w {
			if unicode.IsDigit(r) || r == '_' || r == '/' || r == '@' || r == '#' || (r == '-' && k > 0 && k < len(w)-1) ||
				(r == '.' && k > 0 && k < len(w)-1) || (k > 0 && unicode.IsUpper(r)) {
				return true
			}
		}
		if i > 0 && unicode.IsUpper([]rune(w)[0]) && w != "I" && !strings.HasPrefix(w, "I'") {
			return true
		}
	}
	return false
}

// Classify says what a sentence is. user says whether a user wrote it (a
// user's instruction is a constraint; an assistant's is a decision or plan).
func Classify(sentence string, user bool) Class {
	c, _ := classify(sentence, user)
	return c
}

// classify is Classify, and says whether the sentence is an endorsement
// (Endorses), which Classify reads as filler.
func classify(sentence string, user bool) (Class, bool) {
	ws := words(sentence)
	if len(ws) == 0 {
		return Filler, false
	}
	hasID := len(Identifiers(sentence)) > 0
	if endorses(ws, hasID) {
		return Filler, true
	}
	return classifyWords(sentence, ws, hasID, user), false
}

func classifyWords(sentence string, ws []string, hasID, user bool) Class {
	if fillerOpeners.opens(ws) && len(ws) <= 8 && !hasID && !constraintCues.matchAny(ws[1:]) && !specificAfterOpener(sentence) {
		return Filler
	}
	if !user && !hasID && echoes(sentence) && !Specific(sentence) {
		// "Same conclusion as before; the extra checks didn't change it.":
		// an answer that says nothing new weighs nothing, however many
		// times it is said.
		return Filler
	}
	if user && infoLeadIns.opens(ws) {
		// What follows the lead-in decides: "One more thing: stay away from
		// reflection" is a rule, "FYI: Dmitri owns billing-svc" a note.
		rest := ws[infoLeadIns.openingLen(ws):]
		if strongConstraint.matchAny(rest) || (len(rest) > 0 && imperativeOpeners.opens(rest)) {
			return Constraint
		}
		return Other
	}
	if user && strings.HasSuffix(strings.TrimSpace(sentence), "?") {
		// "Do we still need src/ledger/subscription.ts?" asks; it requires
		// nothing.
		return Request
	}
	if user {
		if constraintCues.matchAny(ws) || imperativeOpeners.opens(withoutPlease(ws)) {
			// "I never understood it": a remark about the speaker, not a rule;
			// "I never want a force-push" is one.
			if ws[0] == "i" && !Specific(sentence) && !speakerRule.matchAny(ws) {
				return Other
			}
			return Constraint
		}
		if requestCues.opens(ws) || politeRequest.matchAny(ws) || strings.HasSuffix(strings.TrimSpace(sentence), "?") {
			return Request
		}
		if len(ws) < 3 && !hasID {
			return Filler
		}
		return Other
	}
	if narration(ws) && !strongDecision.matchAny(ws) {
		if !Specific(strings.Join(ws[1:], " ")) {
			return Filler
		}
		return Other
	}
	if decisionCues.matchAny(ws) {
		return Decision
	}
	if narrationOpeners.opens(ws) && len(ws) >= 4 {
		// "I'll make both lock accounts first": what it will change is a plan.
		return Decision
	}
	if len(ws) < 4 && !hasID {
		return Filler
	}
	return Other
}

// identifierPattern is one kind of identifier and the characters a text
// must hold for it to match at all: Identifiers runs on every sentence the
// summarizer reads, and most sentences rule out most patterns at a glance.
type identifierPattern struct {
	re     *regexp.Regexp
	needs  textFeature
	anyOf  []string // when set, the text holds one of these (folding case if fold)
	fold   bool
	hexRun bool // the text holds seven lower-case hex digits in a row
}

// textFeature is a set of character classes a text holds.
type textFeature uint8

const (
	hasDigit textFeature = 1 << iota
	hasUpper
	hasUnderscore
	hasSlash
	hasDot
	hasHash
	hasCapitalE
)

func featuresOf(s string) (f textFeature, hexRun bool) {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			f |= hasDigit
		case c >= 'A' && c <= 'Z':
			f |= hasUpper
			if c == 'E' {
				f |= hasCapitalE
			}
		case c == '_':
			f |= hasUnderscore
		case c == '/':
			f |= hasSlash
		case c == '.':
			f |= hasDot
		case c == '#':
			f |= hasHash
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'f' {
			run++
			hexRun = hexRun || run >= 7
		} else {
			run = 0
		}
	}
	return f, hexRun
}

func (p *identifierPattern) mayMatch(text string, f textFeature, hexRun bool) bool {
	if f&p.needs != p.needs || p.hexRun && !hexRun {
		return false
	}
	if len(p.anyOf) == 0 {
		return true
	}
	for _, k := range p.anyOf {
		if p.fold && containsFold(text, k) || !p.fold && strings.Contains(text, k) {
			return true
		}
	}
	return false
}

// containsFold reports whether s holds sub (ASCII, lower case) in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

var identifierPatterns = []identifierPattern{
	// Codes with a prefix and digits: E1234, TS2304, ERR404, ORA-00942, CVE-2024-1234, PROJ-812, SQLSTATE 23505.
	{re: regexp.MustCompile(`\b[A-Z][A-Z0-9]{0,9}(?:[-_][A-Z0-9]+)*[-_]?[0-9]{2,}[A-Za-z0-9]*\b`), needs: hasUpper | hasDigit},
	{re: regexp.MustCompile(`\bSQLSTATE\s+[0-9A-Z]{5}\b`), anyOf: []string{"SQLSTATE"}},
	// Constant-style names: ERR_CONN_RESET, DEADLINE_EXCEEDED, OOMKilled-like all caps errno: ECONNREFUSED.
	{re: regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`), needs: hasUpper | hasUnderscore},
	{re: regexp.MustCompile(`\bE[A-Z]{4,}\b`), needs: hasCapitalE},
	// Exception and error type names: ModuleNotFoundError, java.lang.NullPointerException, OOMKilled.
	{re: regexp.MustCompile(`\b[A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Fault|Killed|Panic)\b`), needs: hasUpper,
		anyOf: []string{"Error", "Exception", "Fault", "Killed", "Panic"}},
	// Status phrases: HTTP 503, status 429, exit status 137, exit code 2, code 42501.
	{re: regexp.MustCompile(`(?i)\b(?:HTTP(?:/[0-9.]+)?|status(?: code)?|exit (?:status|code)|return code|error code|code)\s*:?\s*[0-9]{1,5}\b`), needs: hasDigit,
		anyOf: []string{"http", "status", "code"}, fold: true},
	// Paths, with an optional :line: internal/stock/reserve.go:42, ./cmd/main.go, /etc/app.yaml.
	{re: regexp.MustCompile(`(?:\.{0,2}/)?(?:[A-Za-z0-9_@.-]+/)+[A-Za-z0-9_@.-]+(?::[0-9]+)*`), needs: hasSlash},
	{re: regexp.MustCompile(`\b[A-Za-z0-9_-]+\.(?:go|py|ts|tsx|js|jsx|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|sql|yaml|yml|json|toml|md|sh|proto|tf|lock|txt|log|cfg|ini|env|html|css)(?::[0-9]+)*\b`), needs: hasDot},
	// Versions: v1.2.3, 1.22, 3.11.7-rc1.
	{re: regexp.MustCompile(`\bv?[0-9]+\.[0-9]+(?:\.[0-9]+)*(?:-[A-Za-z0-9.]+)?\b`), needs: hasDigit | hasDot},
	// Ticket and pull request numbers: #4512.
	{re: regexp.MustCompile(`#[0-9]{2,}\b`), needs: hasHash | hasDigit},
	// Long hex ids: commit hashes, request ids.
	{re: regexp.MustCompile(`\b[0-9a-f]{7,40}\b`), hexRun: true},
}

// Identifiers returns the identifiers in text, each once, in order of first
// appearance: error codes, constant-style error names, exception names, status
// phrases, paths, versions, ticket numbers and hex ids. They are the strings a
// summary must keep verbatim.
func Identifiers(text string) []string { return identifiers(text, true) }

// identifiers is Identifiers, skipping each pattern the text rules out when
// prefilter is set (the property test runs both and compares).
func identifiers(text string, prefilter bool) []string {
	if !mayHold(text, true) {
		return nil
	}
	type hit struct {
		at int
		s  string
	}
	var hits []hit
	features, hexRun := featuresOf(text)
	for i := range identifierPatterns {
		p := &identifierPatterns[i]
		if prefilter && !p.mayMatch(text, features, hexRun) {
			continue
		}
		for _, loc := range p.re.FindAllStringIndex(text, -1) {
			s := strings.TrimRight(text[loc[0]:loc[1]], ".:")
			if len(s) < 3 || isPlainNumber(s) {
				continue
			}
			hits = append(hits, hit{loc[0], s})
		}
	}
	// Order by position; a hit inside a longer one at the same place is dropped.
	for i := 1; i < len(hits); i++ {
		for j := i; j > 0 && (hits[j].at < hits[j-1].at || (hits[j].at == hits[j-1].at && len(hits[j].s) > len(hits[j-1].s))); j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	seen := map[string]bool{}
	var out []string
	end := -1
	for _, h := range hits {
		if h.at < end && strings.Contains(text[h.at:end], h.s) {
			continue // inside the previous, longer hit
		}
		if !seen[h.s] {
			seen[h.s] = true
			out = append(out, h.s)
		}
		end = max(end, h.at+len(h.s))
	}
	return out
}

func isPlainNumber(s string) bool {
	for _, r := range s {
		if !(unicode.IsDigit(r) || r == '.') {
			return false
		}
	}
	return strings.Count(s, ".") <= 1
}

// errorStems start a word that reports something going wrong ("failed",
// "errors", "panicked"); weakErrorStems too, but they also describe what a
// passing test checks ("rejects invalid cursor"); errorPhrases are whole
// phrases.
var (
	errorStems = []string{"error", "err", "fail", "panic", "exception", "denied", "refused", "timeout", "fatal", "crash",
		"backoff", "killed", "unavailable", "unreachable", "forbidden", "unauthorized", "exceeded", "overflow",
		"segmentation", "segfault", "abort", "deadlock", "traceback", "violat", "corrupt", "oomkilled", "crashloopbackoff"}
	weakErrorStems = []string{"invalid", "conflict", "cannot", "can't", "unable", "rejected", "undefined", "unexpected", "mismatch"}
	errorPhrases   = []string{"timed out", "not found", "no such", "does not exist", "doesn't exist", "out of range",
		"nil pointer", "no space", "out of memory", "permission denied", "connection reset", "too many", "declared and not used"}
)

// successMarks open a line that reports something that went right.
var successMarks = []string{"✓", "✔", "√", "ok ", "ok\t", "pass", "--- pass", "passed", "success"}

// ErrorLine reports whether a line reports an error: a word that starts like
// an error word ("failed", but not "WithTimeout"), an error phrase, or an
// error-like identifier (a code, a constant-style name, an exception type).
func ErrorLine(line string) bool { return errorScore(line) > 0 }

// errorScore ranks how plainly a line reports an error: 3 with an error code,
// 2 with an error word or phrase, 1 with a word that only may report one
// ("invalid"), 0 for none or a line that reports a success ("✓ rejects
// invalid cursor").
func errorScore(line string) int {
	lower := strings.ToLower(strings.TrimSpace(line))
	for _, m := range successMarks {
		// A whole mark: "pass" opens "PASS: TestX", not "password
		// authentication failed".
		if rest, ok := strings.CutPrefix(lower, m); ok {
			if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !unicode.IsLetter(r) || !unicode.IsLetter([]rune(m)[len([]rune(m))-1]) {
				return 0
			}
		}
	}
	if hasCode(line) {
		return 3
	}
	ws := strings.FieldsFunc(lower, func(r rune) bool { return !(unicode.IsLetter(r) || r == '\'') })
	score := 0
	for _, w := range ws {
		for _, stem := range errorStems {
			if strings.HasPrefix(w, stem) && (len(stem) > 3 || w == stem) {
				return 2
			}
		}
		for _, stem := range weakErrorStems {
			if strings.HasPrefix(w, stem) {
				score = 1
			}
		}
	}
	if len(ws) > 1 {
		joined := " " + strings.Join(ws, " ") + " "
		for _, p := range errorPhrases {
			if strings.Contains(joined, " "+p+" ") {
				return 2
			}
		}
	}
	return score
}

// Trouble reports whether a line of a tool output that went through reports
// something going wrong worth noting (a failing test in a passing run, a
// crash-looping pod): a plain error line (not one that only may be one) that
// is a statement, not source code a read or a grep showed ("if err != nil {",
// an import of "errors").
func Trouble(line string) bool {
	if errorScore(line) < 2 || CodeLike(line) {
		return false
	}
	return hasCode(line) || len(strings.Fields(line)) >= 3
}

// CodeLike reports whether a line reads as source code.
func CodeLike(line string) bool {
	t := strings.TrimSpace(line)
	for _, marker := range []string{"{", "}", ":=", "!=", "==", "=>", "->", "();", "//", "/*", "#include", "import ", "return ", "func ", "def ", "raise ", "throw ", "catch", "except "} {
		if strings.Contains(t, marker) {
			return true
		}
	}
	if strings.HasSuffix(t, ";") || strings.HasSuffix(t, ",") || (strings.HasPrefix(t, `"`) && strings.HasSuffix(t, `"`)) {
		return true
	}
	// A call statement: t.Errorf("reserve %s: %v", sku, err)
	if open := strings.IndexByte(t, '('); open > 0 && strings.HasSuffix(t, ")") {
		callee := t[:open]
		return !strings.ContainsAny(callee, " \t:") && strings.Contains(callee, ".")
	}
	return false
}

// mayHold is a cheap scan that rules out, before any regular expression runs,
// a text in which no identifier pattern could match: every pattern needs a
// digit, an underscore, an exception-type word, or an errno-like run of
// capitals ("ECONNREFUSED"); with paths, also a slash, a hash, or a dot
// followed by a letter.
func mayHold(s string, paths bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c == '_':
			return true
		case paths && (c == '/' || c == '#'):
			return true
		case paths && c == '.' && i+1 < len(s) && (s[i+1]|0x20 >= 'a' && s[i+1]|0x20 <= 'z'):
			return true
		case c == 'E' && i+4 < len(s) && isUpper(s[i+1]) && isUpper(s[i+2]) && isUpper(s[i+3]) && isUpper(s[i+4]):
			return true
		}
	}
	return strings.Contains(s, "Error") || strings.Contains(s, "Exception") || strings.Contains(s, "Fault") ||
		strings.Contains(s, "Killed") || strings.Contains(s, "Panic")
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// hasCode reports whether a line holds an error-like identifier (not just a
// path or a version): a code with capitals and digits (E1234, TS2304,
// ORA-00942, 55P03), a constant-style name (ERR_CONN_RESET), an errno
// (ECONNREFUSED), an exception type (ModuleNotFoundError), SQLSTATE or a
// status phrase with its number (HTTP 503, exit code 2). It scans words by
// hand: it runs on every line of every tool output.
func hasCode(line string) bool {
	if !mayHold(line, false) {
		return false
	}
	prev, prev2 := "", ""
	for _, w := range strings.FieldsFunc(line, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) {
		w = strings.Trim(w, ".-")
		if codeWord(w) || (isNumber(w) && statusWord(prev) && errorStatus(prev2, prev, w)) {
			return true
		}
		prev2, prev = prev, w
	}
	return false
}

// codeWord reports whether a word is an error code, constant or type name.
func codeWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	upper, lower, digits, underscore := 0, 0, 0, false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digits++
		case c == '_':
			underscore = true
		}
	}
	switch {
	case w == "SQLSTATE":
		return true
	case upper > 0 && digits >= 2 && lower <= upper: // E1234, TS2304, ORA-00942, 55P03
		// Not a timestamp or a hash: a letter leads, or it is SQLSTATE-sized.
		return isUpper(w[0]) || (len(w) == 5 && w[0] >= '0' && w[0] <= '9')
	case underscore && lower == 0 && upper >= 2: // ERR_CONN_RESET
		return true
	case w[0] == 'E' && lower == 0 && digits == 0 && upper >= 5: // ECONNREFUSED
		return true
	}
	for _, suffix := range []string{"Error", "Exception", "Fault", "Killed", "Panic"} {
		if strings.HasSuffix(w, suffix) && len(w) > len(suffix) {
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// errorStatus reports whether a status number reports trouble: an HTTP
// status of 400 or more, an exit status or any other code but 0
// ("status=200" in a request log is no error, "exit status 137" is).
func errorStatus(before, word, number string) bool {
	n := 0
	for i := 0; i < len(number) && i < 6; i++ {
		n = n*10 + int(number[i]-'0')
	}
	switch w := strings.ToLower(word); {
	case w == "status" && (strings.EqualFold(before, "exit") || strings.EqualFold(before, "return")):
		return n != 0
	case w == "http" || w == "status" || strings.HasPrefix(w, "http/"):
		return n >= 400 && n < 600
	default:
		return n != 0
	}
}

// statusWord is a word a status number follows ("HTTP 503", "exit code 2").
func statusWord(w string) bool {
	switch strings.ToLower(w) {
	case "http", "status", "code", "exit", "errno":
		return true
	}
	return strings.HasPrefix(w, "HTTP/")
}

// echoPhrases say that nothing changed since something said before.
var echoPhrases = []string{"as before", "same conclusion", "same result", "same as last time", "nothing new", "nothing changed",
	"no change", "didn't change", "did not change", "still the same", "unchanged", "same outcome", "same answer"}

// echoes reports whether a sentence only points back at what was said.
func echoes(sentence string) bool {
	lower := strings.ToLower(sentence)
	for _, p := range echoPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}
