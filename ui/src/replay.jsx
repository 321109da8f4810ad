// The session replay view: the output of `ctxc eval --json` plotted per turn,
// one line per profile and window.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

const PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d"];

// seriesOf groups one session's compiles by profile and window, and picks
// the x axis: the user turn, or the session line when compiles also follow
// agent steps (--every-step), so that every series shares its x values.
export function seriesOf(result, session) {
  const compiles = (result.compiles || []).filter((c) => c.session === session);
  const bySteps = compiles.some((c) => c.after_step);
  const xOf = (c) => (bySteps ? c.line : c.turn);
  const xs = [...new Set(compiles.map(xOf))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const groups = new Map();
  for (const c of compiles) {
    const key = `${c.profile} @ ${c.window}`;
    if (!groups.has(key)) groups.set(key, { key, profile: c.profile, window: c.window, points: new Array(xs.length).fill(null) });
    groups.get(key).points[at.get(xOf(c))] = c;
  }
  return { xs, axis: bySteps ? "session line" : "turn", series: [...groups.values()] };
}

const CHARTS = [
  { id: "sent", title: "Tokens sent", unit: "tokens", value: (c) => c.input_tokens },
  { id: "window", title: "Window used", unit: "%", value: (c) => (c.usable_tokens ? (100 * c.used_tokens) / c.usable_tokens : null) },
  { id: "prefix", title: "Prompt-cache prefix (solid) against the append-only bound (dashed)", unit: "tokens", value: (c) => (c.first ? null : c.prefix_tokens), bound: (c) => (c.first ? null : c.input_tokens - c.new_tokens) },
  { id: "facts", title: "Facts kept", unit: "%", value: (c) => (c.facts_due ? (100 * c.facts_kept) / c.facts_due : null) },
];

function Chart({ spec, data }) {
  const el = useRef(null);
  useEffect(() => {
    const series = [{ label: data.axis }];
    const columns = [data.xs];
    data.series.forEach((s, i) => {
      const color = PALETTE[i % PALETTE.length];
      series.push({ label: s.key, stroke: color, width: 2, spanGaps: false });
      columns.push(s.points.map((c) => (c && !c.code ? spec.value(c) : null)));
      if (spec.bound) {
        series.push({ label: `${s.key} bound`, stroke: color, width: 1, dash: [6, 4] });
        columns.push(s.points.map((c) => (c && !c.code ? spec.bound(c) : null)));
      }
    });
    const width = Math.max(360, el.current.clientWidth - 8);
    const plot = new uPlot(
      {
        width,
        height: 220,
        series,
        scales: { x: { time: false } },
        axes: [{ label: data.axis }, { label: spec.unit, size: 70 }],
        legend: { live: true },
      },
      columns,
      el.current,
    );
    return () => plot.destroy();
  }, [spec, data]);
  return (
    <div class="chart" data-chart={spec.id}>
      <h3>{spec.title}</h3>
      <div ref={el} />
    </div>
  );
}

function pct(v) {
  return v === null || v === undefined ? "–" : `${(100 * v).toFixed(1)}%`;
}

export function Replay({ result }) {
  const sessions = result.sessions || [];
  const [session, setSession] = useState(sessions[0]?.id || "");
  const data = seriesOf(result, session);
  return (
    <div class="replay">
      <div class="controls">
        <label>
          Session{" "}
          <select value={session} onChange={(e) => setSession(e.currentTarget.value)}>
            {sessions.map((s) => (
              <option value={s.id}>
                {s.id} ({s.turns} turns, {s.messages} messages, {s.facts} facts)
              </option>
            ))}
          </select>
        </label>
        <span class="muted"> {data.series.length} series, {data.xs.length} points each</span>
      </div>
      <table class="eval-rows">
        <thead>
          <tr>
            <th>profile</th><th>window</th><th>compiles</th><th>failed</th><th>valid</th><th>facts kept</th><th>last turn</th><th>window used</th><th>prefix/bound</th><th>billed</th><th>append-only</th><th>p95 ms</th>
          </tr>
        </thead>
        <tbody>
          {(result.rows || []).map((r) => (
            <tr>
              <td>{r.profile}</td><td class="num">{r.window}</td><td class="num">{r.compiles}</td><td class="num">{r.failed}</td>
              <td class="num">{pct(r.valid)}</td><td class="num">{pct(r.facts_kept)}</td><td class="num">{pct(r.facts_kept_last)}</td>
              <td class="num">{pct(r.window_used)}</td><td class="num">{pct(r.prefix_vs_bound)}</td>
              <td class="num">{(r.billed_tokens || 0).toLocaleString("en-US")}</td><td class="num">{(r.append_only_billed_tokens || 0).toLocaleString("en-US")}</td>
              <td class="num">{r.latency_p95_ms?.toFixed(1) ?? "–"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="charts">
        {CHARTS.map((spec) => (
          <Chart key={spec.id + session} spec={spec} data={data} />
        ))}
      </div>
    </div>
  );
}
