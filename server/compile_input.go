package server

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/contextcompiler/ctxc/compiler"
	ctxcv1 "github.com/contextcompiler/ctxc/gen/ctxc/v1"
	"github.com/contextcompiler/ctxc/policies"
	"github.com/contextcompiler/ctxc/providers"
)

// compileInput applies what only Compile carries to a loaded state: a
// conversation in a provider's format (it replaces the state's log, system
// prompt and tools) and the system prompt's template variables. The state is
// copied, never changed.
func compileInput(d *decoder, req *ctxcv1.CompileRequest, st *policies.State) (*policies.State, error) {
	format, body := req.GetInputFormat(), req.GetInputJson()
	out := *st
	switch {
	case format < 0 || format > ctxcv1.InputFormat_INPUT_FORMAT_OLLAMA:
		d.violate("input_format", fmt.Sprintf("unknown input format %d", format))
		return nil, d.err()
	case format == ctxcv1.InputFormat_INPUT_FORMAT_UNSPECIFIED && body != "":
		d.violate("input_format", "required with input_json: which provider's format input_json is in")
		return nil, d.err()
	case format != ctxcv1.InputFormat_INPUT_FORMAT_UNSPECIFIED:
		// The enums share their numbers: INPUT_FORMAT_OPENAI is RENDER_FORMAT_OPENAI.
		imported, err := providers.Import(policies.RenderFormat(format), []byte(body))
		if err != nil {
			return nil, err
		}
		if imported.SystemPrompt != "" {
			out.Context.SystemPrompt = imported.SystemPrompt
		}
		if len(imported.Tools) > 0 {
			out.Context.Tools = imported.Tools
		}
		if n := len(imported.Messages); n > d.limits.MaxMessages {
			return nil, &policies.LimitError{Field: "input_json.messages", Limit: d.limits.MaxMessages, Got: n}
		}
		out.Context.Messages = imported.Messages
	}
	// Only a request that gives variables treats the prompt as a template, so
	// prompts with literal braces keep working unchanged.
	if vars := req.GetOptions().GetTemplateVariables(); len(vars) > 0 {
		// The expanded request may be no larger than one the caller could
		// have sent: the rest of the request plus the prompt within the
		// message limit.
		rest := max(proto.Size(req)-len(out.Context.SystemPrompt), 0)
		prompt, err := compiler.ExpandTemplate(out.Context.SystemPrompt, vars, max(d.limits.MaxMessageBytes-rest, 0))
		if err != nil {
			return nil, err
		}
		out.Context.SystemPrompt = prompt
	}
	return &out, nil
}

// attachments converts and checks the documents attached to a Compile.
func (d *decoder) attachments(path string, in []*ctxcv1.Attachment) []policies.Attachment {
	if len(in) == 0 {
		return nil
	}
	if len(in) > d.limits.MaxMessages {
		d.violate(path, fmt.Sprintf("at most %d attachments", d.limits.MaxMessages))
		return nil
	}
	out := make([]policies.Attachment, len(in))
	for i, a := range in {
		if a.GetAttachmentId() == "" && a.GetContent() == "" {
			d.violate(fmt.Sprintf("%s[%d]", path, i), "either attachment_id or content is required")
		}
		out[i] = policies.Attachment{ID: a.GetAttachmentId(), Content: a.GetContent(), Title: a.GetTitle(), Source: a.GetSource(), Type: a.GetAttachmentType()}
	}
	return out
}
