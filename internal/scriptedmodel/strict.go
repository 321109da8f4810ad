package scriptedmodel

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/contextcompiler/ctxc/internal/providers/wire"
)

// What the scripted model signs, as the real APIs do, so that a client (or
// a proxy between it and the model) that sends it back changed is caught:
// Anthropic's thinking signatures (bound to the thinking's text), the
// encrypted content of Responses' reasoning items (bound to the item's id
// and summary) and Gemini's thought signatures (bound to the request that
// made them and the function called). Each is standard base64, as the
// APIs' are.

const signingKey = "ctxc scriptedmodel"

func mac(kind string, fields ...string) []byte {
	h := hmac.New(sha256.New, []byte(signingKey))
	h.Write([]byte(kind))
	for _, f := range fields {
		h.Write([]byte{0})
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}

// thinkingSignature is the signature of a thinking block of text.
func thinkingSignature(text string) string {
	return base64.StdEncoding.EncodeToString(mac("thinking", text))
}

// reasoningContent is the encrypted_content of the reasoning item id with
// that summary text.
func reasoningContent(id, summary string) string {
	return base64.StdEncoding.EncodeToString(mac("reasoning", id, summary))
}

// thoughtSignature is the signature of the first functionCall of the
// answer to request seq, calling name: the request's number, then the MAC.
func thoughtSignature(seq int, name string) string {
	n := strconv.Itoa(seq)
	return base64.StdEncoding.EncodeToString(append([]byte(n+":"), mac("thought", n, name)...))
}

// validThoughtSignature reports whether sig is a thought signature this
// server gave a call of name.
func validThoughtSignature(sig, name string) bool {
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return false
	}
	n, m, ok := bytes.Cut(raw, []byte(":"))
	return ok && hmac.Equal(m, mac("thought", string(n), name))
}

func validSignature(sig string, want []byte) bool {
	raw, err := base64.StdEncoding.DecodeString(sig)
	return err == nil && hmac.Equal(raw, want)
}

// Strict makes the server check every request as the real API would and
// refuse, with the provider's 400 and error shape, what it would refuse:
// tool results that answer no call of the turn before them, calls left
// unanswered, roles out of turn; an Anthropic thinking block whose
// signature is not this server's for its text, and, with thinking on, a
// last assistant turn that used tools without its thinking block first; a
// Responses reasoning item whose encrypted content is not this server's
// for its id and summary (or missing, with store false), not followed by
// its turn's next item, or left out before a function call this server
// gave with it; a Gemini function call without the thought signature this
// server gave it, in the current turn, or with one that is not this
// server's. Request.Rejected says why a request was refused.
func Strict() Option {
	return func(s *Server) { s.strict = true }
}

// Option configures a Server.
type Option func(*Server)

// check is what the strict server finds wrong with a request ("" for
// nothing); it sets req.Verified. The server's lock is held.
func (s *Server) check(req *Request) string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch req.Protocol {
	case AnthropicMessages:
		req.Verified = s.checkAnthropic(req.Body, fail)
	case ChatCompletions:
		checkChat(req.Body, fail)
	case Responses:
		req.Verified = s.checkResponses(req.Body, fail)
	case GeminiGenerateContent:
		req.Verified = checkGemini(req.Body, fail)
	}
	return strings.Join(problems, "; ")
}

// checkAnthropic returns how many thinking signatures it verified.
func (s *Server) checkAnthropic(body []byte, fail func(string, ...any)) (verified int) {
	var b wire.AnthropicRequest
	if json.Unmarshal(body, &b) != nil {
		return 0 // decode already refused it
	}
	thinkingOn := b.Thinking != nil && b.Thinking.Type != "disabled"
	seen := map[string]bool{}
	var open map[string]bool // tool_use ids of the previous assistant message
	want := "user"
	lastAssistant := -1
	var blocksOf [][]wire.AnthropicBlock
	for i, m := range b.Messages {
		var blocks []wire.AnthropicBlock
		if raw := bytes.TrimSpace(m.Content); len(raw) > 0 && raw[0] == '[' {
			_ = json.Unmarshal(raw, &blocks)
		}
		blocksOf = append(blocksOf, blocks)
		if m.Role == "system" {
			continue
		}
		if m.Role != want {
			fail("messages.%d.role: expected %q, got %q (roles alternate, starting with user)", i, want, m.Role)
		}
		want = map[string]string{"user": "assistant", "assistant": "user"}[m.Role]
		answered := map[string]bool{}
		leading := true
		for j, bl := range blocks {
			switch bl.Type {
			case "thinking":
				if !validSignature(bl.Signature, mac("thinking", str(bl.Thinking))) {
					fail("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				} else {
					verified++
				}
			case "redacted_thinking":
				fail("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block (this server redacts none)", i, j)
			case "tool_use":
				if seen[bl.ID] {
					fail("messages.%d.content.%d: `tool_use` ids must be unique (%s)", i, j, bl.ID)
				}
				seen[bl.ID] = true
			case "tool_result":
				if !leading {
					fail("messages.%d.content.%d: tool_result blocks must come first in a user message", i, j)
				}
				if !open[bl.ToolUseID] {
					fail("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, bl.ToolUseID)
				}
				answered[bl.ToolUseID] = true
			}
			if bl.Type != "tool_result" {
				leading = false
			}
		}
		for id := range open {
			if !answered[id] {
				fail("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", i, id)
			}
		}
		open = nil
		if m.Role == "assistant" {
			lastAssistant = i
			open = map[string]bool{}
			for _, bl := range blocks {
				if bl.Type == "tool_use" {
					open[bl.ID] = true
				}
			}
		}
	}
	if len(open) > 0 {
		fail("the last message is the assistant's tool_use without its tool_result")
	}
	// With thinking on, the assistant turn the request continues (its
	// tool_use answered by the last message's results) opens with its
	// thinking, the very block this server gave with those calls.
	if thinkingOn && lastAssistant >= 0 && lastAssistant == len(b.Messages)-2 {
		blocks := blocksOf[lastAssistant]
		uses := 0
		for _, bl := range blocks {
			if bl.Type == "tool_use" {
				uses++
			}
		}
		if uses > 0 {
			if len(blocks) == 0 || blocks[0].Type != "thinking" && blocks[0].Type != "redacted_thinking" {
				first := "nothing"
				if len(blocks) > 0 {
					first = "`" + blocks[0].Type + "`"
				}
				fail("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found %s. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).", lastAssistant, first)
			}
			for _, bl := range blocks {
				if given, ok := s.thinkingOf[bl.ID]; bl.Type == "tool_use" && ok && (blocks[0].Type != "thinking" || str(blocks[0].Thinking) != given) {
					fail("messages.%d: the thinking block given with tool_use %s is not sent back unmodified", lastAssistant, bl.ID)
				}
			}
		}
	}
	return verified
}

func checkChat(body []byte, fail func(string, ...any)) {
	var b wire.OpenAIRequest
	if json.Unmarshal(body, &b) != nil {
		return
	}
	messages := make([]wire.OpenAIMessage, len(b.Messages))
	for i, raw := range b.Messages {
		if json.Unmarshal(raw, &messages[i]) != nil {
			return // decode already refused it
		}
	}
	var open []string
	for i, m := range messages {
		if m.Role == "tool" {
			k := indexOf(open, m.ToolCallID)
			if k < 0 {
				fail("messages.[%d].role: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id %s)", i, m.ToolCallID)
				continue
			}
			open = append(open[:k], open[k+1:]...)
			continue
		}
		if len(open) > 0 {
			fail("messages.[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", i, strings.Join(open, ", "))
		}
		open = nil
		for _, c := range m.ToolCalls {
			open = append(open, c.ID)
		}
	}
	if len(open) > 0 {
		fail("the last assistant message's tool_calls have no response messages: %s", strings.Join(open, ", "))
	}
}

func indexOf(list []string, s string) int {
	for k, v := range list {
		if v == s {
			return k
		}
	}
	return -1
}

// checkResponses returns how many reasoning items' encrypted content it verified.
func (s *Server) checkResponses(body []byte, fail func(string, ...any)) (verified int) {
	var b wire.ResponsesRequest
	if json.Unmarshal(body, &b) != nil || len(b.Input) == 0 || b.Input[0] == '"' {
		return
	}
	var items []wire.ResponsesItem
	if json.Unmarshal(b.Input, &items) != nil {
		return 0
	}
	stateless := b.Store != nil && !*b.Store
	calls := map[string]bool{} // call ids, true once answered
	present := map[string]bool{}
	for _, it := range items {
		if it.ID != "" {
			present[it.ID] = true
		}
	}
	for i, it := range items {
		switch it.Type {
		case "reasoning":
			var texts []string
			for _, t := range it.Summary {
				texts = append(texts, str(t.Text))
			}
			switch {
			case it.EncryptedContent == nil && stateless:
				fail("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input. (input[%d])", it.ID, i)
			case it.EncryptedContent != nil && !validSignature(*it.EncryptedContent, mac("reasoning", it.ID, strings.Join(texts, "\n"))):
				fail("input[%d]: The encrypted content for item %s could not be verified.", i, it.ID)
			case it.EncryptedContent != nil:
				verified++
			}
			if i+1 == len(items) || items[i+1].Type == "message" && items[i+1].Role != "assistant" || items[i+1].Type == "" && items[i+1].Role != "assistant" ||
				strings.HasSuffix(items[i+1].Type, "_output") {
				fail("Item '%s' of type 'reasoning' was provided without its required following item. (input[%d])", it.ID, i)
			}
		case "function_call", "custom_tool_call":
			if _, dup := calls[it.CallID]; dup {
				fail("input[%d]: duplicate call_id %s", i, it.CallID)
			}
			calls[it.CallID] = false
			rs, ok := s.reasoningOf[it.ID]
			if ok && !present[rs] {
				fail("Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'. (input[%d])", it.ID, it.Type, rs, i)
			}
		case "function_call_output", "custom_tool_call_output":
			if answered, ok := calls[it.CallID]; !ok || answered {
				fail("No tool call found for function call output with call_id %s. (input[%d])", it.CallID, i)
			}
			calls[it.CallID] = true
		}
	}
	for id, answered := range calls {
		if !answered {
			fail("No tool output found for function call %s.", id)
		}
	}
	return verified
}

// checkGemini returns how many thought signatures it verified.
func checkGemini(body []byte, fail func(string, ...any)) (verified int) {
	var b wire.GeminiRequest
	if json.Unmarshal(body, &b) != nil {
		return 0
	}
	// The current turn starts at the last user content with more than
	// function responses.
	current := 0
	for i, c := range b.Contents {
		if c.Role == "model" {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				current = i
				break
			}
		}
	}
	var calls []string
	for i, c := range b.Contents {
		want := "user"
		if i%2 == 1 {
			want = "model"
		}
		role := c.Role
		if role == "" {
			role = "user"
		}
		if role != want {
			fail("contents[%d].role: %q, expected %q: roles alternate, starting with user", i, role, want)
		}
		var responses []string
		first := true
		for j, p := range c.Parts {
			if fc := p.FunctionCall; fc != nil {
				calls = append(calls, fc.Name)
				switch {
				case p.ThoughtSignature != "" && !validThoughtSignature(p.ThoughtSignature, fc.Name):
					fail("contents[%d].parts[%d]: Corrupted thought signature.", i, j)
				case p.ThoughtSignature != "":
					verified++
				case first && i > current:
					fail("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", fc.Name, i+1)
				}
				first = false
			}
			if fr := p.FunctionResponse; fr != nil {
				responses = append(responses, fr.Name)
			}
		}
		if role == "user" {
			if !sameMultiset(calls, responses) {
				fail("contents[%d]: Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn (calls %v, responses %v).", i, calls, responses)
			}
			calls = nil
		}
	}
	if len(calls) > 0 {
		fail("the last content is the model's function calls %v without their responses", calls)
	}
	return verified
}

func sameMultiset(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
		if count[s] < 0 {
			return false
		}
	}
	return true
}
