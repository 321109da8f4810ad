package compiler

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contextcompiler/ctxc/internal/compiler/compilertest"
	"github.com/contextcompiler/ctxc/policies/agentstate"
)

// memoryStore is an AttachmentStore in a map, by attachment id.
type memoryStore struct {
	docs               map[string]string
	lookupErr, storeEr error
}

func (m *memoryStore) Lookup(_ context.Context, key string) (string, bool, error) {
	if m.lookupErr != nil {
		return "", false, m.lookupErr
	}
	v, ok := m.docs[key]
	return v, ok, nil
}

func (m *memoryStore) Store(_ context.Context, key, value string) error {
	if m.storeEr != nil {
		return m.storeEr
	}
	m.docs[key] = value
	return nil
}

// TestAttachments: id-only attachments get their stored content, content
// without an id gets the id of its content, sent content is stored for later
// calls, and nothing is dropped without an error or a warning.
func TestAttachments(t *testing.T) {
	big := strings.Repeat("x", MaxStoredAttachmentBytes+1)
	tests := []struct {
		name      string
		stored    map[string]string // by attachment id
		store     memoryStore
		in        []agentstate.Attachment
		want      []agentstate.Attachment // what the pipeline got
		wantStore map[string]string       // by attachment id, after the call
		wantWarns []string
		wantErr   *agentstate.InvalidArgumentError
		wantOther error
	}{
		{
			name:   "an id alone gets the stored content, and keeps its title",
			stored: map[string]string{"runbook": "Check the quota."},
			in:     []agentstate.Attachment{{ID: "runbook", Title: "Runbook"}},
			want:   []agentstate.Attachment{{ID: "runbook", Title: "Runbook", Content: "Check the quota."}},
		},
		{
			name:      "content is stored under its id, or the id of its content",
			in:        []agentstate.Attachment{{ID: "notes", Content: "a"}, {Content: "b"}},
			want:      []agentstate.Attachment{{ID: "notes", Content: "a"}, {ID: derivedAttachmentID("b"), Content: "b"}},
			wantStore: map[string]string{"notes": "a", derivedAttachmentID("b"): "b"},
		},
		{
			name:   "unknown ids: every one named, nothing stored",
			stored: map[string]string{"known": "k"},
			in:     []agentstate.Attachment{{ID: "gone"}, {ID: "new", Content: "n"}, {ID: "known"}, {ID: "never"}},
			wantErr: &agentstate.InvalidArgumentError{Reason: ReasonAttachmentNotFound, Violations: []agentstate.FieldViolation{
				{Field: "attachments[0].attachment_id", Description: notStored("gone")},
				{Field: "attachments[3].attachment_id", Description: notStored("never")},
			}},
			wantStore: map[string]string{"known": "k"},
		},
		{
			name: "an id twice with other content",
			in:   []agentstate.Attachment{{ID: "a", Content: "one"}, {ID: "a", Content: "two"}},
			wantErr: &agentstate.InvalidArgumentError{Reason: ReasonDuplicateAttachment, Violations: []agentstate.FieldViolation{
				{Field: "attachments[1].attachment_id", Description: `"a" is the id of attachments[0] too, with other content: ids must be unique`},
			}},
		},
		{
			name:      "the same document twice is placed once, and says so",
			in:        []agentstate.Attachment{{Content: "same"}, {Content: "same"}},
			want:      []agentstate.Attachment{{ID: derivedAttachmentID("same"), Content: "same"}},
			wantStore: map[string]string{derivedAttachmentID("same"): "same"},
			wantWarns: []string{`attachments[1] repeats attachments[0] ("` + derivedAttachmentID("same") + `"): placed once`},
		},
		{
			name:      "a named attachment too large to keep is placed, with a warning",
			in:        []agentstate.Attachment{{ID: "huge", Content: big}, {Content: big}},
			want:      []agentstate.Attachment{{ID: "huge", Content: big}, {ID: derivedAttachmentID(big), Content: big}},
			wantWarns: []string{`attachments[0] ("huge", 262145 bytes) is larger than the 262144 bytes kept for later calls: a later call must send its content again`},
		},
		{
			name:      "a store that fails to keep one: placed, with a warning",
			store:     memoryStore{storeEr: errors.New("redis down")},
			in:        []agentstate.Attachment{{ID: "notes", Content: "a"}},
			want:      []agentstate.Attachment{{ID: "notes", Content: "a"}},
			wantWarns: []string{`attachments[0] ("notes") could not be kept for later calls (the summary cache failed): a later call must send its content again`},
		},
		{
			name:      "a store that cannot answer a lookup is an outage",
			store:     memoryStore{lookupErr: errors.New("redis down")},
			in:        []agentstate.Attachment{{ID: "notes"}},
			wantOther: &agentstate.UnavailableError{Backend: "summary cache", Detail: "looking up attachment notes: redis down"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := tt.store
			store.docs = map[string]string{}
			for id, v := range tt.stored {
				store.docs[attachmentKey(id)] = v
			}
			cat := compilertest.NewCatalog()
			s, err := New(Config{Catalog: cat, Counters: compilertest.Counters{}, Attachments: &store, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Compile(t.Context(), CompileRequest{Request: Request{Source: StateSource{State: state()}}, Attachments: tt.in})
			switch {
			case tt.wantErr != nil:
				if diff := cmp.Diff(error(tt.wantErr), err); diff != "" {
					t.Fatalf("error (-want +got):\n%s", diff)
				}
			case tt.wantOther != nil:
				if diff := cmp.Diff(tt.wantOther, err); diff != "" {
					t.Fatalf("error (-want +got):\n%s", diff)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if diff := cmp.Diff(tt.want, cat.Requests()[0].Attachments); diff != "" {
					t.Errorf("the pipeline got (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantWarns, res.Report.Warnings); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
			}
			if err != nil && len(cat.Requests()) != 0 {
				t.Error("the pipeline ran after a bad attachment")
			}
			want := map[string]string{}
			for id, v := range tt.wantStore {
				want[attachmentKey(id)] = v
			}
			if tt.wantStore == nil {
				for id, v := range tt.stored {
					want[attachmentKey(id)] = v
				}
			}
			if diff := cmp.Diff(want, store.docs); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

func notStored(id string) string {
	return `no attachment "` + id + `" is stored: a call that sends an attachment's content (up to 262144 bytes) keeps it for later calls for the summary cache's TTL; send its content again`
}

// TestCompileRendersWithoutARenderStage: a rendering the call asks for is
// made from the compiled result when the profile has no render stage (the
// fake catalog has none).
func TestCompileRendersWithoutARenderStage(t *testing.T) {
	s, _ := newService(t, compilertest.NewCatalog(), Limits{})
	req := CompileRequest{Request: Request{Source: StateSource{State: state()}, Options: agentstate.Options{Render: agentstate.RenderOpenAI}}}
	res, err := s.Compile(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Rendered, `{"model":"gpt-4o","messages":[{"role":"system","content":"You are {{role}}."},{"role":"user","content":"hi"}`) {
		t.Errorf("rendered %s", res.Rendered)
	}
	req.Options.Render = agentstate.RenderNone
	if res, err := s.Compile(t.Context(), req); err != nil || res.Rendered != "" {
		t.Errorf("without render: %q, %v", res.Rendered, err)
	}
}

// A rendering that cannot fit in the reply beside the compiled messages is
// refused before it is built, naming options.render: an inline image counts
// as its bytes in the messages and as base64 in the body.
func TestRenderThatCannotFitTheReplyIsRefusedFirst(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxMessageBytes = 1 << 20
	s, _ := newService(t, compilertest.NewCatalog(), limits)
	for _, tt := range []struct {
		image   int
		refused bool
	}{{300 << 10, false}, {500 << 10, true}} {
		st := state()
		st.Context.Messages[0].Parts = append(st.Context.Messages[0].Parts, agentstate.Part{Kind: agentstate.PartImage,
			Image: agentstate.Image{Source: agentstate.ImageSourceData, Data: bytes.Repeat([]byte{0xff}, tt.image), MediaType: "image/png"}})
		for _, format := range []agentstate.RenderFormat{agentstate.RenderOpenAI, agentstate.RenderGemini} {
			req := CompileRequest{Request: Request{Source: StateSource{State: st}, Options: agentstate.Options{Render: format}}}
			res, err := s.Compile(t.Context(), req)
			var limit *agentstate.LimitError
			switch {
			case !tt.refused && err != nil:
				t.Errorf("%s, %d-byte image: %v", format, tt.image, err)
			case !tt.refused && len(res.Rendered) < tt.image*4/3:
				t.Errorf("%s, %d-byte image: a body of %d bytes", format, tt.image, len(res.Rendered))
			case tt.refused && (!errors.As(err, &limit) || !strings.HasPrefix(limit.Field, "options.render") || limit.Limit != limits.MaxMessageBytes):
				t.Errorf("%s, %d-byte image: %v, want a LimitError on options.render", format, tt.image, err)
			}
		}
	}
}
