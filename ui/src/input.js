// What the user dropped or pasted, and the requests made from it.

export const KINDS = {
  auto: "Detect",
  compileRequest: "CompileRequest",
  agentState: "AgentState",
  openai: "OpenAI Chat Completions body",
  anthropic: "Anthropic Messages body",
  gemini: "Gemini generateContent body",
  ollama: "Ollama /api/chat body",
  eval: "ctxc eval --json output",
};

const INPUT_FORMAT = {
  openai: "INPUT_FORMAT_OPENAI",
  anthropic: "INPUT_FORMAT_ANTHROPIC",
  gemini: "INPUT_FORMAT_GEMINI",
  ollama: "INPUT_FORMAT_OLLAMA",
};

export function isProvider(kind) {
  return kind in INPUT_FORMAT;
}

// parse reads the text as JSON with an error a person can act on.
export function parse(text) {
  const trimmed = text.trim();
  if (!trimmed) throw new Error("Paste or drop a CompileRequest, an AgentState, a provider request body or the output of ctxc eval --json.");
  try {
    return JSON.parse(trimmed);
  } catch (e) {
    if (trimmed.startsWith("{") && trimmed.includes("\n{")) {
      throw new Error("This looks like a session log (JSONL). Replay it with `ctxc eval --json FILE > eval.json` and load that file.");
    }
    throw new Error(`Not JSON: ${e.message}`);
  }
}

function has(o, ...keys) {
  return keys.some((k) => o[k] !== undefined);
}

// detect names what a parsed document is.
export function detect(doc) {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) return null;
  if (has(doc, "rows") && has(doc, "compiles")) return "eval";
  if (has(doc, "state", "stateBlob", "state_blob", "inputJson", "input_json")) return "compileRequest";
  if (has(doc, "context", "schemaVersion", "schema_version", "agentId", "agent_id", "execution")) return "agentState";
  if (has(doc, "contents", "systemInstruction", "system_instruction")) return "gemini";
  if (Array.isArray(doc.messages)) {
    const msgs = doc.messages;
    const blocks = msgs.flatMap((m) => (Array.isArray(m?.content) ? m.content : []));
    if (has(doc, "system", "max_tokens", "anthropic_version") || blocks.some((b) => b?.type === "tool_use" || b?.type === "tool_result")) return "anthropic";
    const ollamaArgs = msgs.some((m) => (m?.tool_calls || []).some((c) => c?.function && typeof c.function.arguments === "object"));
    if (has(doc, "options", "keep_alive", "format") || ollamaArgs || msgs.some((m) => Array.isArray(m?.images))) return "ollama";
    return "openai";
  }
  return null;
}

// options are the CompileOptions of one side of the page.
function options(base, side, render) {
  const o = { ...(base || {}) };
  delete o.max_context_token_count;
  if (side.window) o.maxContextTokenCount = side.window;
  else delete o.maxContextTokenCount;
  if (render) o.render = render;
  return o;
}

// requests builds the Compile request of one side (profile, window) and,
// when the page holds the state itself, the Budget request whose
// per-message counts give every log message its size before compaction.
export function requests(kind, doc, text, side, render, model) {
  if (kind === "compileRequest") {
    const req = { ...doc, profile: side.profile, options: options(doc.options, side, render) };
    delete req.omitStablePrefix;
    delete req.omit_stable_prefix;
    const state = doc.state;
    const budget = state && !has(doc, "inputJson", "input_json") ? { state: doc.model ? { ...state, model: doc.model } : state, profile: side.profile, options: options(doc.options, side) } : null;
    return { compile: req, budget, state };
  }
  if (kind === "agentState") {
    return {
      compile: { state: doc, profile: side.profile, options: options(null, side, render) },
      budget: { state: doc, profile: side.profile, options: options(null, side) },
      state: doc,
    };
  }
  if (isProvider(kind)) {
    const name = (typeof doc.model === "string" && doc.model) || model;
    return {
      compile: { state: { model: { name } }, inputFormat: INPUT_FORMAT[kind], inputJson: text, profile: side.profile, options: options(null, side, render) },
      budget: null,
      state: null,
    };
  }
  throw new Error(`cannot compile a ${KINDS[kind] || kind}`);
}
