package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
)

// MaxLineBytes is the longest line a session file may have (a recorded state
// snapshot is one line).
const MaxLineBytes = 64 << 20

// FactKind says what a planted fact is.
type FactKind string

// The fact kinds a session header may list.
const (
	FactConstraint FactKind = "constraint"
	FactDecision   FactKind = "decision"
	FactErrorCode  FactKind = "error_code"
	FactPinned     FactKind = "pinned"
	FactFirstTask  FactKind = "first_task"
	FactOther      FactKind = "other"
)

var factKinds = []FactKind{FactConstraint, FactDecision, FactErrorCode, FactPinned, FactFirstTask, FactOther}

// Fact is a piece of the session a compiled context should keep.
type Fact struct {
	ID   string   `json:"id"`
	Kind FactKind `json:"kind"`
	// Text must appear in the compiled context (white space collapsed, case kept).
	Text string `json:"text"`
	// Turn is the user turn (1-based) that planted it; compiles of earlier
	// turns do not expect it.
	Turn int `json:"turn"`
}

// Header is the first line of a session file.
type Header struct {
	ID           string                   `json:"id"`
	Description  string                   `json:"description,omitempty"`
	Model        *ctxcv1.ModelSpec        `json:"-"`
	SystemPrompt string                   `json:"system_prompt,omitempty"`
	Tools        []*ctxcv1.ToolDefinition `json:"-"`
	Facts        []Fact                   `json:"facts,omitempty"`
}

// Line is one input of a session after the header: exactly one of Route and
// State is set.
type Line struct {
	// Route is an input to append with the Route RPC; its state and profile
	// are set by the replay.
	Route *ctxcv1.RouteRequest
	// State is a recorded snapshot, compiled as it is.
	State *ctxcv1.AgentState
	// Turn is the user turn a State line belongs to (0: counted from its log).
	Turn int
	// Number is the line's 1-based number in the file.
	Number int
}

// Session is a loaded session file.
type Session struct {
	Header Header
	Lines  []Line
	// Name is where the session came from (a file name), for messages.
	Name string
	// FactsFrom is the facts file whose facts replaced the header's (UseFacts).
	FactsFrom string
}

// Turns is the number of user turns the session routes, or for a file of
// snapshots the turn of its last state.
func (s *Session) Turns() int {
	turns := 0
	for i := range s.Lines {
		l := &s.Lines[i]
		switch {
		case l.Route != nil && l.Route.GetUserTurn() != nil:
			turns++
		case l.State != nil:
			turns = stateTurn(l)
		}
	}
	return turns
}

// stateTurn is a State line's turn: its own, else the number of runs of
// consecutive regular user messages in its log (a turn may carry several).
func stateTurn(l *Line) int {
	if l.Turn > 0 {
		return l.Turn
	}
	turns, inRun := 0, false
	for _, m := range l.State.GetContext().GetMessages() {
		user := m.GetRole() == ctxcv1.Role_ROLE_USER && m.GetKind() == ctxcv1.MessageKind_MESSAGE_KIND_UNSPECIFIED
		if user && !inRun {
			turns++
		}
		inRun = user
	}
	return turns
}

// wire forms of the header and of a line, decoded strictly.
type headerWire struct {
	ID           string            `json:"id"`
	Description  string            `json:"description,omitempty"`
	Model        json.RawMessage   `json:"model"`
	SystemPrompt string            `json:"system_prompt,omitempty"`
	Tools        []json.RawMessage `json:"tools,omitempty"`
	Facts        []Fact            `json:"facts,omitempty"`
}

type lineWire struct {
	Session json.RawMessage `json:"session,omitempty"`
	Route   json.RawMessage `json:"route,omitempty"`
	State   json.RawMessage `json:"state,omitempty"`
	Turn    int             `json:"turn,omitempty"`
}

// LineError is a problem of one line of a session file.
type LineError struct {
	Line  int
	Field string
	Err   error
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %s: %v", e.Line, e.Field, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

func lineErr(line int, field, format string, args ...any) error {
	return &LineError{Line: line, Field: field, Err: fmt.Errorf(format, args...)}
}

// Load reads a session file (see the package doc for the format). It is
// strict: unknown fields, a missing header, a line that is neither a route nor
// a state, and a fact whose text occurs in no message are errors naming the
// line and the field. Blank lines are skipped.
func Load(r io.Reader, name string) (*Session, error) {
	return load(r, name, MaxLineBytes)
}

// load is Load with the line limit as a parameter, for tests.
func load(r io.Reader, name string, maxLine int) (*Session, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	s := &Session{Name: name}
	n := 0
	sawHeader := false
	for {
		raw, err := readLine(br, maxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if len(raw) > 0 || !errors.Is(err, io.EOF) {
			n++
		}
		if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 {
			if !sawHeader {
				if err := s.decodeHeader(n, trimmed); err != nil {
					return nil, err
				}
				sawHeader = true
			} else if err := s.decodeLine(n, trimmed); err != nil {
				return nil, err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if !sawHeader {
		return nil, lineErr(1, "session", "missing: the first line must be the header {\"session\": {...}}")
	}
	if len(s.Lines) == 0 {
		return nil, lineErr(n+1, "", "the session has no route or state lines after its header")
	}
	if err := s.checkFacts("session.facts"); err != nil {
		return nil, err
	}
	return s, nil
}

// readLine reads one line without its newline, refusing one past maxLine bytes.
func readLine(br *bufio.Reader, maxLine int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(bytes.TrimSuffix(line, []byte("\n"))) > maxLine {
			return nil, fmt.Errorf("longer than %d bytes", maxLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func (s *Session) decodeHeader(n int, data []byte) error {
	var lw lineWire
	if err := strictJSON(data, &lw); err != nil {
		return lineErr(n, "", "not a header object {\"session\": {...}}: %v", err)
	}
	if lw.Session == nil || lw.Route != nil || lw.State != nil || lw.Turn != 0 {
		return lineErr(n, "session", "the first line must hold only the header {\"session\": {...}}")
	}
	var hw headerWire
	if err := strictJSON(lw.Session, &hw); err != nil {
		return lineErr(n, "session", "%v", err)
	}
	h := Header{ID: hw.ID, Description: hw.Description, SystemPrompt: hw.SystemPrompt, Facts: hw.Facts}
	if strings.TrimSpace(h.ID) == "" {
		return lineErr(n, "session.id", "required")
	}
	if len(hw.Model) == 0 || string(hw.Model) == "null" {
		return lineErr(n, "session.model", "required: a ctxc.v1.ModelSpec such as {\"name\": \"gpt-4o\"}")
	}
	h.Model = &ctxcv1.ModelSpec{}
	if err := protojson.Unmarshal(hw.Model, h.Model); err != nil {
		return lineErr(n, "session.model", "not a ctxc.v1.ModelSpec: %v", err)
	}
	if h.Model.GetName() == "" {
		return lineErr(n, "session.model.name", "required")
	}
	for i, raw := range hw.Tools {
		td := &ctxcv1.ToolDefinition{}
		if err := protojson.Unmarshal(raw, td); err != nil {
			return lineErr(n, fmt.Sprintf("session.tools[%d]", i), "not a ctxc.v1.ToolDefinition: %v", err)
		}
		if td.GetName() == "" {
			return lineErr(n, fmt.Sprintf("session.tools[%d].name", i), "required")
		}
		h.Tools = append(h.Tools, td)
	}
	if field, err := checkFactList(h.Facts, "session.facts"); err != nil {
		return lineErr(n, field, "%v", err)
	}
	s.Header = h
	return nil
}

// checkFactList checks each fact of a list named field on its own (an id,
// a kind, a text, a turn) and that no two share an id; the field it
// returns names the fact at fault.
func checkFactList(facts []Fact, field string) (string, error) {
	ids := map[string]int{}
	for i, f := range facts {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case strings.TrimSpace(f.ID) == "":
			return at + ".id", errors.New("required")
		case !validKind(f.Kind):
			return at + ".kind", fmt.Errorf("%q is not one of %s", f.Kind, kindList())
		case strings.TrimSpace(f.Text) == "":
			return at + ".text", errors.New("required: the exact text that must appear in the compiled context")
		case f.Turn < 1:
			return at + ".turn", fmt.Errorf("%d: the user turn that planted the fact, from 1", f.Turn)
		}
		if j, dup := ids[f.ID]; dup {
			return at + ".id", fmt.Errorf("%q is also the id of %s[%d]", f.ID, field, j)
		}
		ids[f.ID] = i
	}
	return "", nil
}

// FactsFile is the facts to measure on a session, kept beside it rather
// than in its header (`ctxc eval --facts`): a transcript a CLI wrote has no
// header to list them in, and what is found in it by reading is not always
// what was planted.
type FactsFile struct {
	Facts []Fact `json:"facts"`
}

// ReadFacts decodes a facts file strictly (unknown fields are errors) and
// checks each fact as a session header's, naming facts[i] at fault.
func ReadFacts(r io.Reader) ([]Fact, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f FactsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a facts file {\"facts\": [...]}: %w", err)
	}
	if len(f.Facts) == 0 {
		return nil, errors.New("facts: at least one fact is required")
	}
	if field, err := checkFactList(f.Facts, "facts"); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return f.Facts, nil
}

// UseFacts makes facts, read from the file named from, the ones measured on
// s instead of those its header lists or that would be found in it; each
// must occur in the session, and none may be planted after its last turn.
func (s *Session) UseFacts(facts []Fact, from string) error {
	turns := s.Turns()
	for i, f := range facts {
		if f.Turn > turns {
			return fmt.Errorf("facts[%d].turn: %d is past the session's last turn, %d", i, f.Turn, turns)
		}
	}
	prev := s.Header.Facts
	s.Header.Facts = facts
	if err := s.checkFacts("facts"); err != nil {
		s.Header.Facts = prev
		return err
	}
	s.FactsFrom = from
	return nil
}

func validKind(k FactKind) bool {
	for _, v := range factKinds {
		if k == v {
			return true
		}
	}
	return false
}

func kindList() string {
	names := make([]string, len(factKinds))
	for i, k := range factKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func (s *Session) decodeLine(n int, data []byte) error {
	var lw lineWire
	if err := strictJSON(data, &lw); err != nil {
		return lineErr(n, "", "not a {\"route\": ...} or {\"state\": ...} object: %v", err)
	}
	switch {
	case lw.Session != nil:
		return lineErr(n, "session", "only the first line may be the header")
	case (lw.Route == nil) == (lw.State == nil):
		return lineErr(n, "", "exactly one of \"route\" and \"state\" is required")
	case lw.Route != nil && lw.Turn != 0:
		return lineErr(n, "turn", "only a state line has a turn (a route line's turn is counted)")
	case lw.Turn < 0:
		return lineErr(n, "turn", "%d must not be negative", lw.Turn)
	}
	if lw.State != nil {
		st := &ctxcv1.AgentState{}
		if err := protojson.Unmarshal(lw.State, st); err != nil {
			return lineErr(n, "state", "not a ctxc.v1.AgentState: %v", err)
		}
		s.Lines = append(s.Lines, Line{State: st, Turn: lw.Turn, Number: n})
		return nil
	}
	req := &ctxcv1.RouteRequest{}
	if err := protojson.Unmarshal(lw.Route, req); err != nil {
		return lineErr(n, "route", "not a ctxc.v1.RouteRequest: %v", err)
	}
	switch {
	case req.GetState() != nil || len(req.GetStateBlob()) > 0:
		return lineErr(n, "route.state", "not allowed: the replay sends the state it holds")
	case req.GetProfile() != "":
		return lineErr(n, "route.profile", "not allowed: the replay routes with the profile it measures (or --route-profile)")
	case req.GetWantStateBlob():
		return lineErr(n, "route.want_state_blob", "not allowed: the replay keeps the state as a message")
	case req.GetInput() == nil:
		return lineErr(n, "route", "one of user_turn, step or event is required")
	}
	s.Lines = append(s.Lines, Line{Route: req, Number: n})
	return nil
}

// checkFacts rejects a fact that could never be kept: its text occurs in no
// message of the session, nor in its system prompt. field names the list
// the facts came from.
func (s *Session) checkFacts(field string) error {
	if len(s.Header.Facts) == 0 {
		return nil
	}
	texts := []string{s.Header.SystemPrompt}
	for i := range s.Lines {
		texts = append(texts, inputTexts(&s.Lines[i])...)
	}
	text := Collapse(strings.Join(texts, "\n"))
	for i, f := range s.Header.Facts {
		if !strings.Contains(text, Collapse(f.Text)) {
			if field != "session.facts" {
				return fmt.Errorf("%s[%d].text: %q occurs in no message of the session", field, i, f.Text)
			}
			return lineErr(1, fmt.Sprintf("%s[%d].text", field, i), "%q occurs in no message of the session", f.Text)
		}
	}
	return nil
}

// Write writes s in the session file format, one line per input, in a stable
// layout (protojson's own spacing is normalized).
func Write(w io.Writer, s *Session) error {
	hw := headerWire{ID: s.Header.ID, Description: s.Header.Description, SystemPrompt: s.Header.SystemPrompt, Facts: s.Header.Facts}
	var err error
	if hw.Model, err = compactProtoJSON(s.Header.Model); err != nil {
		return err
	}
	for _, td := range s.Header.Tools {
		raw, err := compactProtoJSON(td)
		if err != nil {
			return err
		}
		hw.Tools = append(hw.Tools, raw)
	}
	bw := bufio.NewWriter(w)
	if err := writeJSONLine(bw, lineWire{Session: mustJSON(hw)}); err != nil {
		return err
	}
	for i := range s.Lines {
		l := &s.Lines[i]
		var lw lineWire
		if l.State != nil {
			if lw.State, err = compactProtoJSON(l.State); err != nil {
				return err
			}
			lw.Turn = l.Turn
		} else if lw.Route, err = compactProtoJSON(l.Route); err != nil {
			return err
		}
		if err := writeJSONLine(bw, lw); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func compactProtoJSON(m proto.Message) (json.RawMessage, error) {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only plain structs of strings, numbers and raw JSON are passed
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func writeJSONLine(w *bufio.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
