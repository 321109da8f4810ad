package scriptedmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// created is the timestamp every response carries, fixed so recordings are
// reproducible.
const created = 1767225600 // 2026-01-01T00:00:00Z

// chunkBytes is the size of the pieces a streamed text or JSON input is cut
// into, so that clients see several deltas as from a real model.
const chunkBytes = 48

type replyWriter struct {
	w     http.ResponseWriter
	req   *Request
	reply Reply
	seq   int // Responses events' sequence_number
}

// chunks cuts s into deltas of at most chunkBytes bytes, on rune boundaries.
func chunks(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(chunkBytes, len(s))
		for n < len(s) && n > 0 && !utf8Start(s[n]) {
			n--
		}
		if n == 0 {
			n = len(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// event writes one server-sent event; name is empty for Chat Completions,
// whose stream has data lines only.
func (rw *replyWriter) event(name string, data any) {
	var buf bytes.Buffer
	if name != "" {
		fmt.Fprintf(&buf, "event: %s\n", name)
	}
	raw, ok := data.(string)
	if !ok {
		b, err := json.Marshal(data)
		if err != nil {
			panic(err) // only maps and slices of plain values are sent
		}
		raw = string(b)
	}
	fmt.Fprintf(&buf, "data: %s\n\n", raw)
	rw.w.Write(buf.Bytes())
}

func (rw *replyWriter) startStream() {
	h := rw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	rw.w.WriteHeader(http.StatusOK)
}

func (rw *replyWriter) flush() {
	if f, ok := rw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// inputObject is a tool call's input as a JSON value ({} when empty or not
// JSON, as a model's input always is an object).
func inputObject(s string) json.RawMessage {
	if json.Valid([]byte(s)) && len(bytes.TrimSpace([]byte(s))) > 0 {
		return json.RawMessage(s)
	}
	return json.RawMessage("{}")
}

func (rw *replyWriter) id(prefix string) string {
	return fmt.Sprintf("%s%04d", prefix, rw.req.Seq)
}

// Anthropic Messages.

func (rw *replyWriter) anthropicUsage(final bool) map[string]any {
	u := map[string]any{"input_tokens": rw.reply.Usage.InputTokens, "output_tokens": rw.reply.Usage.OutputTokens,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !final {
		u["output_tokens"] = 1
	}
	return u
}

func (rw *replyWriter) anthropicStop() string {
	if len(rw.reply.ToolCalls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func (rw *replyWriter) anthropic() {
	r := rw.reply
	var blocks []map[string]any
	if r.Thinking != "" {
		blocks = append(blocks, map[string]any{"type": "thinking", "thinking": r.Thinking, "signature": thinkingSignature(r.Thinking)})
	}
	if r.Text != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Text})
	}
	for _, c := range r.ToolCalls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": inputObject(c.Input)})
	}
	if blocks == nil {
		blocks = []map[string]any{}
	}
	msg := map[string]any{"id": rw.id("msg_scripted_"), "type": "message", "role": "assistant", "model": rw.req.Model,
		"content": blocks, "stop_reason": rw.anthropicStop(), "stop_sequence": nil, "usage": rw.anthropicUsage(true)}
	if !rw.req.Stream {
		writeJSON(rw.w, msg)
		return
	}
	rw.startStream()
	msg["content"], msg["stop_reason"], msg["usage"] = []any{}, nil, rw.anthropicUsage(false)
	rw.event("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range blocks {
		start := map[string]any{"type": b["type"]}
		var deltas []map[string]any
		switch b["type"] {
		case "thinking":
			start["thinking"], start["signature"] = "", ""
			for _, s := range chunks(r.Thinking) {
				deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": s})
			}
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": thinkingSignature(r.Thinking)})
		case "text":
			start["text"] = ""
			for _, s := range chunks(b["text"].(string)) {
				deltas = append(deltas, map[string]any{"type": "text_delta", "text": s})
			}
		case "tool_use":
			start["id"], start["name"], start["input"] = b["id"], b["name"], map[string]any{}
			for _, s := range chunks(string(b["input"].(json.RawMessage))) {
				deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": s})
			}
		}
		rw.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
		if i == 0 {
			rw.event("ping", map[string]any{"type": "ping"})
		}
		for _, d := range deltas {
			rw.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		rw.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	rw.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": rw.anthropicStop(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Usage.OutputTokens}})
	rw.event("message_stop", map[string]any{"type": "message_stop"})
	rw.flush()
}

// OpenAI Chat Completions.

func (rw *replyWriter) chat() {
	r := rw.reply
	finish := "stop"
	if len(r.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": r.Usage.InputTokens, "completion_tokens": r.Usage.OutputTokens,
		"total_tokens": r.Usage.InputTokens + r.Usage.OutputTokens}
	id := rw.id("chatcmpl-scripted-")
	if !rw.req.Stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if r.Text != "" {
			msg["content"] = r.Text
		}
		if len(r.ToolCalls) > 0 {
			var calls []map[string]any
			for _, c := range r.ToolCalls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(inputObject(c.Input))}})
			}
			msg["tool_calls"] = calls
		}
		writeJSON(rw.w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": rw.req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}}, "usage": usage})
		return
	}
	rw.startStream()
	chunk := func(delta map[string]any, finish any) {
		rw.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": rw.req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, s := range chunks(r.Text) {
		chunk(map[string]any{"content": s}, nil)
	}
	for i, c := range r.ToolCalls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, s := range chunks(string(inputObject(c.Input))) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": s}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	var opts struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	json.Unmarshal(rw.req.Body, &opts)
	if opts.StreamOptions.IncludeUsage {
		rw.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": rw.req.Model,
			"choices": []any{}, "usage": usage})
	}
	rw.event("", "[DONE]")
	rw.flush()
}

// OpenAI Responses.

// responseItems are the output items of the reply, complete.
func (rw *replyWriter) responseItems() []map[string]any {
	r := rw.reply
	var items []map[string]any
	if r.Thinking != "" {
		item := map[string]any{"id": rw.id("rs_scripted_"), "type": "reasoning",
			"summary": []any{map[string]any{"type": "summary_text", "text": r.Thinking}}}
		var include struct {
			Include []string `json:"include"`
		}
		_ = json.Unmarshal(rw.req.Body, &include)
		for _, inc := range include.Include {
			if inc == "reasoning.encrypted_content" {
				item["encrypted_content"] = reasoningContent(item["id"].(string), r.Thinking)
			}
		}
		items = append(items, item)
	}
	if r.Text != "" {
		items = append(items, map[string]any{"id": rw.id("msg_scripted_"), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text, "annotations": []any{}}}})
	}
	for i, c := range r.ToolCalls {
		if rw.req.CustomTools[c.Name] {
			items = append(items, map[string]any{"id": fmt.Sprintf("ctc_scripted_%04d_%d", rw.req.Seq, i), "type": "custom_tool_call",
				"status": "completed", "call_id": c.ID, "name": c.Name, "input": c.Input})
			continue
		}
		items = append(items, map[string]any{"id": fmt.Sprintf("fc_scripted_%04d_%d", rw.req.Seq, i), "type": "function_call",
			"status": "completed", "call_id": c.ID, "name": c.Name, "arguments": string(inputObject(c.Input))})
	}
	if items == nil {
		items = []map[string]any{}
	}
	return items
}

func (rw *replyWriter) response(status string, output []map[string]any, usage bool) map[string]any {
	resp := map[string]any{"id": rw.id("resp_scripted_"), "object": "response", "created_at": created, "status": status,
		"model": rw.req.Model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"error": nil, "incomplete_details": nil, "instructions": nil, "metadata": map[string]any{}, "temperature": 1.0, "top_p": 1.0,
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "usage": nil}
	if usage {
		u := rw.reply.Usage
		resp["usage"] = map[string]any{"input_tokens": u.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": u.InputTokens + u.OutputTokens}
	}
	return resp
}

func (rw *replyWriter) responsesEvent(typ string, fields map[string]any) {
	fields["type"], fields["sequence_number"] = typ, rw.seq
	rw.seq++
	rw.event(typ, fields)
}

func (rw *replyWriter) responses() {
	items := rw.responseItems()
	if !rw.req.Stream {
		resp := rw.response("completed", items, true)
		writeJSON(rw.w, resp)
		return
	}
	rw.startStream()
	rw.responsesEvent("response.created", map[string]any{"response": rw.response("in_progress", []map[string]any{}, false)})
	rw.responsesEvent("response.in_progress", map[string]any{"response": rw.response("in_progress", []map[string]any{}, false)})
	for i, item := range items {
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		id := item["id"]
		switch item["type"] {
		case "reasoning":
			added["summary"] = []any{}
			rw.responsesEvent("response.output_item.added", map[string]any{"output_index": i, "item": added})
			text := rw.reply.Thinking
			rw.responsesEvent("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": ""}})
			for _, s := range chunks(text) {
				rw.responsesEvent("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "delta": s})
			}
			rw.responsesEvent("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "text": text})
			rw.responsesEvent("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": text}})
		case "message":
			added["status"], added["content"] = "in_progress", []any{}
			rw.responsesEvent("response.output_item.added", map[string]any{"output_index": i, "item": added})
			text := rw.reply.Text
			rw.responsesEvent("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, s := range chunks(text) {
				rw.responsesEvent("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": s, "logprobs": []any{}})
			}
			rw.responsesEvent("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": text, "logprobs": []any{}})
			rw.responsesEvent("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		case "function_call":
			added["status"], added["arguments"] = "in_progress", ""
			rw.responsesEvent("response.output_item.added", map[string]any{"output_index": i, "item": added})
			args := item["arguments"].(string)
			for _, s := range chunks(args) {
				rw.responsesEvent("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": s})
			}
			rw.responsesEvent("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args})
		case "custom_tool_call":
			added["status"], added["input"] = "in_progress", ""
			rw.responsesEvent("response.output_item.added", map[string]any{"output_index": i, "item": added})
			input := item["input"].(string)
			for _, s := range chunks(input) {
				rw.responsesEvent("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "delta": s})
			}
			rw.responsesEvent("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i, "input": input})
		}
		rw.responsesEvent("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	rw.responsesEvent("response.completed", map[string]any{"response": rw.response("completed", items, true)})
	rw.flush()
}
