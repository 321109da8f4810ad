// The view of one compile: budget bar, log rows, compiled context with the
// prompt-cache boundary, stage timeline, repairs and the rendered body.
import { useEffect, useState } from "preact/hooks";
import { VirtualRows, ROW_HEIGHT } from "./virtual.jsx";
import { fmt, role, kind, text } from "./analyse.js";

function preview(m, n = 300) {
  const t = text(m);
  return t.length > n ? t.slice(0, n) + "…" : t;
}

export function BudgetBar({ a, side }) {
  const b = a.budget;
  const pct = (t) => `${((100 * t) / b.total).toFixed(3)}%`;
  return (
    <section class="budget" data-side={side}>
      <h3>Token budget</h3>
      <div class="budget-figures">
        used <b>{fmt(b.used)}</b> of a <b>{fmt(b.window)}</b>-token window, {fmt(b.reserved)} reserved for output, soft threshold {fmt(b.soft)}
        {a.rawBudget.overSoftThreshold ? <span class="badge warn">over the soft threshold</span> : null}
        {a.rawBudget.shouldCompact ? <span class="badge warn">should compact</span> : null}
        <span class="muted"> · {(a.rawBudget.provenance || "").replace("TOKEN_COUNT_PROVENANCE_", "").toLowerCase()} · {a.rawBudget.counter}</span>
      </div>
      <div class="budget-bar" role="img" aria-label={`used ${b.used} of ${b.window}`}>
        {b.parts.map((p) =>
          p.tokens > 0 ? <div class={`seg seg-${p.key}`} data-key={p.key} data-tokens={p.tokens} style={{ width: pct(p.tokens) }} title={`${p.label}: ${fmt(p.tokens)} tokens`} /> : null,
        )}
        {b.soft > 0 ? <div class="marker marker-soft" data-tokens={b.soft} style={{ left: pct(b.soft) }} title={`soft threshold: ${fmt(b.soft)}`} /> : null}
        <div class="marker marker-usable" data-tokens={b.usable} style={{ left: pct(b.usable) }} title={`usable window (window − reserved output): ${fmt(b.usable)}`} />
        <div class="marker marker-window" data-tokens={b.window} style={{ left: pct(b.window) }} title={`window: ${fmt(b.window)}`} />
      </div>
      <ul class="legend">
        {b.parts.map((p) => (
          <li key={p.key}>
            <span class={`swatch seg-${p.key}`} />
            {p.label} {fmt(p.tokens)}
          </li>
        ))}
        <li><span class="swatch marker-soft" />soft threshold</li>
        <li><span class="swatch marker-window" />window</li>
      </ul>
    </section>
  );
}

function Details({ r, onJump }) {
  return (
    <div class="details">
      <div class="details-meta">
        <b>{r.id}</b> · {role(r.message)} {kind(r.message)} · {r.disposition} · {fmt(r.sent)} tokens sent{r.tokens !== r.sent ? ` of ${fmt(r.tokens)}` : ""}
        {r.policy ? <> · by <code>{r.policy}</code></> : null}
      </div>
      {r.reason ? <div class="details-reason">{r.reason}</div> : null}
      {r.summary ? (
        <div>
          summarized into{" "}
          <a href="#" class="jump" onClick={(e) => { e.preventDefault(); onJump("compiled", r.summary); }}>
            {r.summary}
          </a>
        </div>
      ) : null}
      <pre class="text">{r.message ? text(r.message) : "(the text of this message is not in the input; load an AgentState or a CompileRequest to see it)"}</pre>
    </div>
  );
}

export function LogRows({ a, focus, onJump }) {
  const [open, setOpen] = useState(null);
  useEffect(() => setOpen(null), [focus]); // a jump selects its row
  const width = (t) => `${Math.max(0.4, (100 * t) / a.maxTokens).toFixed(2)}%`;
  const jumpTo = focus?.list === "log" ? focus : null;
  const selected = open ?? (jumpTo ? a.rows.find((r) => r.id === jumpTo.id) : null);
  const row = (r) => (
    <div
      key={r.id}
      class={`row disp-${r.disposition}${selected === r ? " open" : ""}`}
      data-id={r.id}
      data-disposition={r.disposition}
      data-tokens={r.tokens}
      title={r.message ? preview(r.message) : r.reason}
      onClick={() => setOpen(selected === r ? null : r)}
    >
      <span class="idx">{r.index}</span>
      <span class="mid">{r.id}</span>
      <span class="role">{role(r.message)}</span>
      <span class="bar-cell">
        <span class="bar" style={{ width: width(r.tokens) }}>
          <span class="bar-sent" style={{ width: r.tokens ? `${((100 * r.sent) / r.tokens).toFixed(2)}%` : "0" }} />
        </span>
      </span>
      <span class="tok">{r.tokens !== r.sent ? `${fmt(r.sent)}/${fmt(r.tokens)}` : fmt(r.sent)}</span>
      <span class="disp">{r.disposition}</span>
      <span class="reason">{r.summary ? `→ ${r.summary}` : r.reason}</span>
    </div>
  );
  return (
    <section class="log">
      <h3>
        Log messages <span class="muted">({a.rows.length}: {Object.entries(a.counts).map(([k, v]) => `${v} ${k}`).join(", ")})</span>
      </h3>
      {a.textKnown ? null : <p class="muted">The input was a provider body or a state blob: messages the compile left out have no text here.</p>}
      <VirtualRows name="log" items={a.rows} row={row} scrollToIndex={jumpTo ? { index: a.rows.findIndex((r) => r.id === jumpTo.id), seq: jumpTo.seq } : null} />
      {selected ? <Details r={selected} onJump={onJump} /> : null}
    </section>
  );
}

export function CompiledList({ a, focus, onJump }) {
  const [open, setOpen] = useState(null);
  useEffect(() => setOpen(null), [focus]);
  const jumpTo = focus?.list === "compiled" ? focus : null;
  const selected = open ?? (jumpTo ? a.compiledRows.find((c) => c.id === jumpTo.id) : null);
  const row = (c) => (
    <div
      key={c.id}
      class={`crow${c.index < a.firstChanged ? " stable" : ""}${kind(c.message) ? " kind-" + kind(c.message) : ""}${selected === c ? " open" : ""}`}
      data-id={c.id}
      data-index={c.index}
      title={preview(c.message)}
      onClick={() => setOpen(selected === c ? null : c)}
    >
      <span class="idx">{c.index}</span>
      <span class="mid">{c.id}</span>
      <span class="role">{role(c.message)} {kind(c.message)}</span>
      <span class="tok">{c.tokens !== undefined ? fmt(c.tokens) : ""}</span>
      <span class="reason">{preview(c.message, 120)}</span>
    </div>
  );
  const boundary = (
    <div class="cache-boundary" data-index={a.firstChanged} style={{ top: `${a.firstChanged * ROW_HEIGHT}px` }}>
      <span>
        prompt-cache boundary: the {fmt(a.firstChanged)} message{a.firstChanged === 1 ? "" : "s"} above stay byte-identical in later compiles (first_changed_index {a.firstChanged})
      </span>
    </div>
  );
  return (
    <section class="compiled">
      <h3>Compiled context <span class="muted">({a.compiledRows.length} messages; the dashed line is the prompt-cache boundary, at message {a.firstChanged})</span></h3>
      <VirtualRows
        name="compiled"
        items={a.compiledRows}
        row={row}
        overlay={boundary}
        scrollToIndex={jumpTo ? { index: a.compiledRows.findIndex((c) => c.id === jumpTo.id), seq: jumpTo.seq } : null}
      />
      {selected ? (
        <div class="details">
          <div class="details-meta">
            <b>{selected.id}</b> · {role(selected.message)} {kind(selected.message)} · message {selected.index}
            {selected.index < a.firstChanged ? " · before the cache boundary" : " · after the cache boundary"}
          </div>
          {selected.covers.length ? (
            <div class="covers">
              covers {selected.covers.length} messages:{" "}
              {selected.covers.map((id) => (
                <a href="#" class="jump" onClick={(e) => { e.preventDefault(); onJump("log", id); }}>
                  {id}{" "}
                </a>
              ))}
            </div>
          ) : null}
          <pre class="text">{text(selected.message)}</pre>
        </div>
      ) : null}
    </section>
  );
}

export function Timeline({ a }) {
  let at = 0;
  const total = Math.max(a.totalMicros, 1);
  return (
    <section class="timeline">
      <h3>Stages <span class="muted">({fmt(a.totalMicros)} µs in all)</span></h3>
      <table>
        <thead>
          <tr><th>stage</th><th>policy</th><th class="tl">time</th><th>µs</th><th>messages</th><th>tokens</th><th /></tr>
        </thead>
        <tbody>
          {a.stages.map((s, i) => {
            const left = (100 * at) / total;
            at += s.micros;
            return (
              <tr key={i} class={`stage${s.degraded ? " degraded" : ""}${s.skipped ? " skipped" : ""}`} data-stage={s.stage} data-policy={s.policy}>
                <td>{s.stage}</td>
                <td><code>{s.policy}</code></td>
                <td class="tl"><span class="tl-bar" style={{ marginLeft: `${left.toFixed(2)}%`, width: `${Math.max(0.3, (100 * s.micros) / total).toFixed(2)}%` }} /></td>
                <td class="num">{fmt(s.micros)}</td>
                <td class="num">{s.messagesIn || 0} → {s.messagesOut || 0}{s.messagesAffected ? ` (${s.messagesAffected} changed)` : ""}</td>
                <td class="num">{fmt(s.tokensIn)} → {fmt(s.tokensOut)}</td>
                <td>
                  {s.degraded ? <span class="badge bad" title={s.degradedReason}>degraded: {s.degradedReason}</span> : null}
                  {s.skipped ? <span class="badge">skipped</span> : null}
                  {s.compactionPoint ? <span class="badge">point {s.compactionPoint}</span> : null}
                  {s.detail ? <span class="muted"> {s.detail}</span> : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {a.compaction?.points?.length ? (
        <ul class="points">
          {a.compaction.points.map((p, i) => (
            <li key={i}>
              point {i + 1} after <code>{p.afterMessageId}</code>: {p.reason} ({fmt(p.tokenCountBefore)} → {fmt(p.tokenCountAfter)}, target {fmt(p.targetTokenCount)}
              {p.stable ? ", stable" : ", not stable"}
              {p.intake ? ", intake" : ""})
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

export function Notes({ a }) {
  if (!a.repairs.length && !a.warnings.length && !a.historyDiscarded) return null;
  return (
    <section class="notes">
      {a.historyDiscarded ? <p class="badge warn">history discarded</p> : null}
      {a.warnings.map((w, i) => <p key={i} class="warning">⚠ {w}</p>)}
      {a.repairs.length ? (
        <>
          <h3>Repairs</h3>
          <ul>
            {a.repairs.map((r, i) => (
              <li key={i}><code>{r.kind}</code> <b>{r.messageId}</b> {r.detail}</li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

function pretty(body) {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body; // shown as sent
  }
}

// Rendered shows the provider body, pretty-printed only once opened.
export function Rendered({ a }) {
  const [shown, setShown] = useState(false);
  if (!a.rendered) return null;
  return (
    <section class="rendered">
      <details onToggle={(e) => setShown(e.currentTarget.open)}>
        <summary>Rendered provider body ({fmt(a.rendered.length)} bytes)</summary>
        {shown ? <pre class="text">{pretty(a.rendered)}</pre> : null}
      </details>
    </section>
  );
}

export function Result({ a, side, label }) {
  // A link between the lists (a summary and what it covers) focuses a row.
  const [focus, setFocus] = useState(null);
  const onJump = (list, id) => setFocus((f) => ({ list, id, seq: (f?.seq || 0) + 1 }));
  return (
    <div class="result" data-side={side} data-profile={a.profile}>
      <h2>
        {label}: <code>{a.profile}</code>
      </h2>
      <BudgetBar a={a} side={side} />
      <Notes a={a} />
      <Timeline a={a} />
      <LogRows a={a} focus={focus} onJump={onJump} />
      <CompiledList a={a} focus={focus} onJump={onJump} />
      <Rendered a={a} />
    </div>
  );
}
