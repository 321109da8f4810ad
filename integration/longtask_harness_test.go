//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLongTaskOutputs checks the long tasks' generator: each step's output
// is 1,500 to 6,000 tokens, every fourth holds its failure's identifier on
// one line that is neither its first nor its last, and nothing else does;
// the outputs are the same for a seed and differ between seeds; no output
// or prompt holds the step command, which the scripted model reads steps
// from.
func TestLongTaskOutputs(t *testing.T) {
	t.Parallel()
	seeds := append(append([]int(nil), tuningSeeds...), heldOutSeeds...)
	outputs, prompts := map[string]int{}, map[string]int{}
	for _, seed := range seeds {
		p := planLongTask(seed, 40, 20)
		if len(p.Outputs) != 60 || len(p.Failures) != 15 {
			t.Fatalf("seed %d: %d outputs, %d failures; want 60 and 15", seed, len(p.Outputs), len(p.Failures))
		}
		forms := map[string]bool{}
		for k, out := range p.Outputs {
			step := k + 1
			if n := p.Tokens[k]; n < minOutputTokens || n > maxOutputTokens {
				t.Errorf("seed %d step %d: %d tokens", seed, step, n)
			}
			// Within what Gemini CLI (40,000 characters) and pi (2,000
			// lines) pass on whole.
			if len(out) >= 40000 || strings.Count(out, "\n") >= 2000 {
				t.Errorf("seed %d step %d: %d bytes, %d lines", seed, step, len(out), strings.Count(out, "\n"))
			}
			if p.stepPattern().MatchString(out) {
				t.Errorf("seed %d step %d: the output holds the step command", seed, step)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			outputs[out]++
			for _, f := range p.Failures {
				n := strings.Count(out, f.ID)
				switch {
				case f.Step != step && n > 0:
					t.Errorf("seed %d: step %d's output holds %s, the failure of step %d", seed, step, f.ID, f.Step)
				case f.Step == step && n != 1:
					t.Errorf("seed %d step %d: %s appears %d times", seed, step, f.ID, n)
				case f.Step == step && (strings.Contains(lines[0], f.ID) || strings.Contains(lines[len(lines)-1], f.ID)):
					t.Errorf("seed %d step %d: %s is on the first or last line", seed, step, f.ID)
				case f.Step == step:
					forms[f.Form] = true
				}
			}
		}
		if len(forms) != len(failureForms) {
			t.Errorf("seed %d: the failures take %d forms of %d", seed, len(forms), len(failureForms))
		}
		for _, prompt := range p.Prompts {
			prompts[prompt]++
			if p.stepPattern().MatchString(prompt) {
				t.Errorf("seed %d: the prompt %q holds the step command", seed, prompt)
			}
		}
		again := planLongTask(seed, 40, 20)
		for k := range p.Outputs {
			if again.Outputs[k] != p.Outputs[k] {
				t.Fatalf("seed %d step %d: two plans differ", seed, k+1)
			}
		}
	}
	for text, n := range outputs {
		if n > 1 {
			t.Errorf("%d steps of different seeds print the same:\n%s", n, text)
		}
	}
	for text, n := range prompts {
		if n > 1 {
			t.Errorf("%d seeds prompt %q", n, text)
		}
	}
}

// TestLongTaskModelReadsRequests checks how the scripted model reads a
// request in each provider's shape: the step is the highest in the calls,
// the loop is a request with the shell tool ending in a tool's result or
// the prompt (Claude Code's trailing system message aside), and a request
// ending in other text (a CLI's own summary request) is not the loop.
func TestLongTaskModelReadsRequests(t *testing.T) {
	t.Parallel()
	p := planLongTask(1, 40, 20)
	call := func(k int) string { return strings.ReplaceAll(p.stepCommand(k), `"`, `\"`) }
	for _, tt := range []struct {
		name       string
		body       string
		loop       bool
		prompt     int
		step       int
		wantAnswer string
	}{
		{"anthropic first request", `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>Attribution</system-reminder>"},{"type":"text","text":"` + p.Prompts[0] + `"}]},{"role":"system","content":[{"type":"text","text":"# Environment"}]}]}`, true, 0, 0, ""},
		{"anthropic tool result", `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"` + p.Prompts[0] + `"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"` + call(7) + `"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok"}]}]}`, true, 0, 7, ""},
		{"anthropic summary request", `{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"` + p.Prompts[0] + `"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"` + call(7) + `"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"ok"},{"type":"text","text":"Summarize the conversation so far."}]}]}`, false, 0, 7, ""},
		{"responses output", `{"tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"` + p.Prompts[0] + `"}]},{"type":"function_call","call_id":"c","name":"exec_command","arguments":"{\"cmd\":\"` + call(40) + `\"}"},{"type":"function_call_output","call_id":"c","output":"ok"}]}`, true, 0, 40, p.Answers[0]},
		{"responses compaction", `{"tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"` + p.Prompts[0] + `"}]},{"type":"function_call","call_id":"c","name":"exec_command","arguments":"{\"cmd\":\"` + call(12) + `\"}"},{"type":"function_call_output","call_id":"c","output":"ok"},{"type":"message","role":"user","content":[{"type":"input_text","text":"Write a summary for a handoff."}]}]}`, false, 0, 12, ""},
		{"gemini first request", `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[{"role":"user","parts":[{"text":"<session_context>the tree</session_context>"},{"text":"` + p.Prompts[0] + `"}]}]}`, true, 0, 0, ""},
		{"gemini second prompt", `{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"` + call(40) + `"}}}]},{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{}}}]},{"role":"model","parts":[{"text":"done"}]},{"role":"user","parts":[{"text":"` + p.Prompts[1] + `"}]}]}`, true, 1, 40, ""},
		{"gemini loop check", `{"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"reasoning":{"type":"string"},"is_stuck":{"type":"boolean"}}}},"contents":[{"role":"user","parts":[{"text":"` + p.Prompts[0] + `"}]}]}`, false, 0, 0, `{"is_stuck":false,"reasoning":""}`},
		{"gemini loop check, OpenAPI schema", `{"generationConfig":{"responseSchema":{"type":"OBJECT","properties":{"n":{"type":"INTEGER"}}}},"contents":[{"role":"user","parts":[{"text":"` + p.Prompts[0] + `"}]}]}`, false, 0, 0, `{"n":0}`},
		{"chat without the shell tool", `{"tools":[{"type":"function","function":{"name":"read"}}],"messages":[{"role":"user","content":"` + p.Prompts[0] + `"}]}`, false, 0, 0, ""},
		{"chat tool message", `{"tools":[{"type":"function","function":{"name":"bash"}}],"messages":[{"role":"user","content":"` + p.Prompts[0] + `"},{"role":"assistant","tool_calls":[{"id":"x","type":"function","function":{"name":"bash","arguments":"{\"command\":\"` + call(3) + `\"}"}}]},{"role":"tool","tool_call_id":"x","content":"ok"}]}`, true, 0, 3, ""},
	} {
		body := []byte(tt.body)
		if !json.Valid(body) {
			t.Fatalf("%s: the test's body is not JSON", tt.name)
		}
		st := p.state(body)
		if got := p.isLoop(body); got != tt.loop || st.prompt != tt.prompt || st.step != tt.step {
			t.Errorf("%s: loop %v, prompt %d, step %d; want %v, %d, %d", tt.name, got, st.prompt, st.step, tt.loop, tt.prompt, tt.step)
		}
		turn := longTaskModel(p, "/ws")(upstreamRequest{Body: body})
		switch {
		case !tt.loop && (len(turn.Calls) > 0 || turn.Text == ""):
			t.Errorf("%s: the model answered %+v, want a short text", tt.name, turn)
		case tt.wantAnswer != "" && turn.Text != tt.wantAnswer:
			t.Errorf("%s: the model answered %+v, want the prompt's answer", tt.name, turn)
		case tt.loop && tt.wantAnswer == "" && (len(turn.Calls) != 1 || !strings.Contains(turn.Calls[0].ArgumentsJSON, p.stepCommand(max(tt.step+1, p.Ends[0]*tt.prompt+1)))):
			t.Errorf("%s: the model answered %+v, want the next step's call", tt.name, turn)
		}
	}
}
