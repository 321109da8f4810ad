package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/contextcompiler/ctxc/internal/scriptedmodel"
)

// dialect turns an action into one agent's tool call.
type dialect interface {
	call(a action, workspace, goroot string) scriptedmodel.ToolCall
}

// claudeCode is Claude Code's tools: Bash, Read, Edit and Write with
// absolute paths.
type claudeCode struct{}

func (claudeCode) call(a action, ws, goroot string) scriptedmodel.ToolCall {
	switch {
	case a.bash != "":
		return toolCall("Bash", map[string]any{"command": a.bash, "description": a.say, "timeout": 300000})
	case a.read != "":
		return toolCall("Read", map[string]any{"file_path": absPath(a.read, ws, goroot)})
	case a.edit != nil:
		return toolCall("Edit", map[string]any{"file_path": absPath(a.edit.path, ws, goroot), "old_string": a.edit.old, "new_string": a.edit.new})
	default:
		return toolCall("Write", map[string]any{"file_path": absPath(a.write.path, ws, goroot), "content": a.write.content})
	}
}

// codex is Codex CLI's tools: exec_command for commands and reads (as its
// models read files, with sed), apply_patch (a freeform tool) for edits.
type codex struct{}

func (codex) call(a action, ws, goroot string) scriptedmodel.ToolCall {
	exec := func(cmd string) scriptedmodel.ToolCall {
		return toolCall("exec_command", map[string]any{"cmd": cmd, "workdir": ws, "login": false, "yield_time_ms": 120000, "max_output_tokens": 12000})
	}
	switch {
	case a.bash != "":
		return exec(a.bash)
	case a.read != "":
		return exec("sed -n '1,400p' " + shellQuote(relPath(a.read, ws, goroot)))
	case a.edit != nil:
		// apply_patch replaces whole lines: the edit is widened to the lines
		// it touches, as the model sees them in the file.
		old, new := wholeLines(filepath.Join(ws, a.edit.path), a.edit.old, a.edit.new)
		var b strings.Builder
		fmt.Fprintf(&b, "*** Begin Patch\n*** Update File: %s\n@@\n", a.edit.path)
		for _, l := range strings.Split(old, "\n") {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range strings.Split(new, "\n") {
			b.WriteString("+" + l + "\n")
		}
		b.WriteString("*** End Patch\n")
		return scriptedmodel.ToolCall{Name: "apply_patch", Input: b.String()}
	default:
		var b strings.Builder
		fmt.Fprintf(&b, "*** Begin Patch\n*** Add File: %s\n", a.write.path)
		for _, l := range strings.Split(strings.TrimSuffix(a.write.content, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}
		b.WriteString("*** End Patch\n")
		return scriptedmodel.ToolCall{Name: "apply_patch", Input: b.String()}
	}
}

// chatAgent is the tools of chat-agent.mjs, the small agent on the openai
// SDK: run_command, read_file, edit_file and write_file.
type chatAgent struct{}

func (chatAgent) call(a action, ws, goroot string) scriptedmodel.ToolCall {
	switch {
	case a.bash != "":
		return toolCall("run_command", map[string]any{"command": a.bash})
	case a.read != "":
		return toolCall("read_file", map[string]any{"path": relPath(a.read, ws, goroot)})
	case a.edit != nil:
		return toolCall("edit_file", map[string]any{"path": a.edit.path, "old": a.edit.old, "new": a.edit.new})
	default:
		return toolCall("write_file", map[string]any{"path": a.write.path, "content": a.write.content})
	}
}

// wholeLines widens the replacement of old by new in the file at path to the
// whole lines old spans (unchanged when the file or old is not found).
func wholeLines(path, old, new string) (string, string) {
	data, err := os.ReadFile(path)
	text := string(data)
	i := strings.Index(text, old)
	if err != nil || i < 0 {
		return old, new
	}
	start := strings.LastIndex(text[:i], "\n") + 1
	end := i + len(old)
	if j := strings.Index(text[end:], "\n"); j >= 0 {
		end += j
	} else {
		end = len(text)
	}
	return text[start:end], text[start:i] + new + text[i+len(old):end]
}

func toolCall(name string, input map[string]any) scriptedmodel.ToolCall {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(err) // only strings and numbers
	}
	return scriptedmodel.ToolCall{Name: name, Input: string(raw)}
}

func absPath(p, ws, goroot string) string {
	p = strings.ReplaceAll(p, "$GOROOT", goroot)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(ws, p)
}

func relPath(p, ws, goroot string) string {
	p = strings.ReplaceAll(p, "$GOROOT", goroot)
	if rel, err := filepath.Rel(ws, p); err == nil && filepath.IsAbs(p) && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script is the scripted model of one session: each request is answered from
// the turn its newest user prompt belongs to and the tool calls made since,
// so the reply depends only on the request (a retried call gets the same).
type script struct {
	turns     []turn
	dialect   dialect
	workspace string
	goroot    string
}

func (s *script) reply(req *scriptedmodel.Request) (scriptedmodel.Reply, error) {
	ti, mi := s.currentTurn(req)
	if ti < 0 {
		// A request outside the plan (a title, a summary of the session):
		// a short answer keeps the client going.
		return scriptedmodel.Reply{Text: "Invoicer maintenance"}, nil
	}
	t := s.turns[ti]
	taken, prev := 0, ""
	for _, m := range req.Messages[mi+1:] {
		taken += len(m.ToolCalls)
		for _, r := range m.ToolResults {
			prev = r.Content
		}
	}
	if taken < len(t.steps) {
		st := t.steps[taken]
		if st.when == nil || st.when(prev) {
			a := st.act
			if a.readNamed {
				path := namedFile(prev, s.goroot)
				if path == "" {
					return scriptedmodel.Reply{Text: t.final}, nil
				}
				a = action{say: a.say, read: path}
			}
			return scriptedmodel.Reply{Text: a.say, ToolCalls: []scriptedmodel.ToolCall{s.dialect.call(a, s.workspace, s.goroot)}}, nil
		}
	}
	return scriptedmodel.Reply{Text: t.final}, nil
}

// currentTurn finds the newest user message holding a turn's prompt: the
// turn's index and the message's.
func (s *script) currentTurn(req *scriptedmodel.Request) (turnIndex, msgIndex int) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" || m.Text == "" {
			continue
		}
		for t := len(s.turns) - 1; t >= 0; t-- {
			if strings.Contains(m.Text, s.turns[t].user) {
				return t, i
			}
		}
	}
	return -1, -1
}
