// Turns a CompileResponse (and the Budget of the same state) into what the
// page draws. protojson leaves out zero values, so every number defaults to 0.

export const DISPOSITIONS = {
  DISPOSITION_KEPT: "kept",
  DISPOSITION_MASKED: "masked",
  DISPOSITION_SUMMARIZED: "summarized",
  DISPOSITION_DROPPED: "dropped",
  DISPOSITION_REPAIRED: "repaired",
  DISPOSITION_TRUNCATED: "truncated",
  DISPOSITION_UNSPECIFIED: "unreported",
};

const ROLES = { ROLE_SYSTEM: "system", ROLE_USER: "user", ROLE_ASSISTANT: "assistant", ROLE_TOOL: "tool" };
const KINDS = { MESSAGE_KIND_SUMMARY: "summary", MESSAGE_KIND_EVENT: "event", MESSAGE_KIND_REPAIR: "repair", MESSAGE_KIND_PLACEHOLDER: "placeholder" };

export function num(v) {
  return typeof v === "string" ? Number(v) : v || 0;
}

const numberFormat = new Intl.NumberFormat("en-US");

// fmt writes a count with thousands separators.
export function fmt(n) {
  return numberFormat.format(num(n));
}

export function role(m) {
  return ROLES[m?.role] || "?";
}

export function kind(m) {
  return KINDS[m?.kind] || "";
}

// text is a message's content as one string, parts in order.
export function text(m) {
  if (!m) return "";
  return (m.parts || [])
    .map((p) => {
      if (p.text !== undefined) return p.text;
      if (p.toolCall) return `→ ${p.toolCall.name}(${p.toolCall.argumentsJson || ""}) [${p.toolCall.id || ""}]`;
      if (p.toolResult) return `← ${p.toolResult.name || ""} [${p.toolResult.toolCallId || ""}]${p.toolResult.isError ? " ERROR" : ""}\n${p.toolResult.content || ""}`;
      if (p.reasoning) return `(reasoning) ${p.reasoning.text || ""}`;
      if (p.image) return `(image ${p.image.mediaType || ""})`;
      return "";
    })
    .join("\n");
}

// budgetSegments splits the window into the bar's parts, in tokens.
export function budgetSegments(b) {
  const br = b?.breakdown || {};
  const window = num(b?.contextWindowTokenCount);
  const used = num(b?.usedTokenCount);
  const reserved = num(b?.reservedOutputTokenCount);
  const parts = [
    { key: "system", label: "system prompt and tools", tokens: num(br.systemPromptTokenCount) + num(br.toolsTokenCount) },
    { key: "conversation", label: "conversation", tokens: num(br.conversationTokenCount) + num(br.pinnedTokenCount) },
    { key: "trace", label: "tool trace", tokens: num(br.toolTraceTokenCount) },
    { key: "summary", label: "summaries", tokens: num(br.summariesTokenCount) },
  ];
  const counted = parts.reduce((s, p) => s + p.tokens, 0);
  if (used > counted) parts.push({ key: "other", label: "other", tokens: used - counted });
  parts.push({ key: "reserved", label: "reserved output", tokens: reserved });
  parts.push({ key: "free", label: "free", tokens: Math.max(0, window - used - reserved) });
  const total = Math.max(window, used + reserved, 1);
  return {
    parts: parts.map((p) => ({ ...p, share: p.tokens / total })),
    total,
    window,
    used,
    reserved,
    soft: num(b?.softThresholdTokenCount),
    usable: Math.max(0, window - reserved),
  };
}

// analyse joins the report, the compiled messages, the Budget's counts and
// the log's own messages into one row per log message and one per compiled
// message.
export function analyse(resp, budgetResp, state) {
  const report = resp.report || {};
  const compiled = resp.messages || [];
  const logById = new Map();
  for (const m of state?.context?.messages || []) logById.set(m.id, m);
  const compiledById = new Map();
  const summaryOf = new Map();
  for (const m of compiled) {
    compiledById.set(m.id, m);
    for (const id of m.coversMessageIds || []) summaryOf.set(id, m.id);
  }
  const before = new Map();
  for (const r of budgetResp?.messages || []) before.set(r.messageId, num(r.tokenCount));
  const sentById = new Map();
  const rows = (report.messages || []).map((r, i) => {
    const id = r.messageId;
    const sent = num(r.tokenCount);
    sentById.set(id, sent);
    const log = logById.get(id);
    const orig = before.has(id) ? before.get(id) : num(log?.mask?.originalTokenCount) || sent;
    return {
      index: i,
      id,
      disposition: DISPOSITIONS[r.disposition] || "unreported",
      sent,
      tokens: Math.max(orig, sent),
      reason: r.reason || "",
      policy: r.policy || "",
      summary: summaryOf.get(id) || "",
      message: log || compiledById.get(id) || null,
    };
  });
  const maxTokens = rows.reduce((m, r) => Math.max(m, r.tokens), 1);
  const compiledRows = compiled.map((m, i) => ({
    index: i,
    id: m.id,
    message: m,
    tokens: sentById.get(m.id),
    covers: m.coversMessageIds || [],
  }));
  const stages = (report.stages || []).map((s) => ({ ...s, micros: num(s.durationMicros) }));
  const counts = {};
  for (const r of rows) counts[r.disposition] = (counts[r.disposition] || 0) + 1;
  return {
    rows,
    maxTokens,
    compiledRows,
    firstChanged: num(report.firstChangedIndex),
    stages,
    totalMicros: stages.reduce((s, x) => s + x.micros, 0),
    repairs: report.repairs || [],
    warnings: report.warnings || [],
    compaction: report.compaction || null,
    budget: budgetSegments(resp.budget),
    rawBudget: resp.budget || {},
    profile: report.profile || "",
    rendered: resp.rendered || "",
    counts,
    historyDiscarded: !!resp.historyDiscarded,
    textKnown: logById.size > 0,
  };
}
