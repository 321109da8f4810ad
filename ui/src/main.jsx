// The ctxc inspector: what a compile did to an agent's context.
import { render } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { call, ApiError } from "./api.js";
import { KINDS, parse, detect, requests, isProvider } from "./input.js";
import { analyse } from "./analyse.js";
import { Result } from "./inspect.jsx";
import { Replay } from "./replay.jsx";
import "./style.css";

// Inputs longer than this (in characters) are not shown in the text box.
const LARGE_INPUT = 200_000;

const RENDERS = {
  RENDER_FORMAT_OPENAI: "OpenAI",
  RENDER_FORMAT_ANTHROPIC: "Anthropic",
  RENDER_FORMAT_GEMINI: "Gemini",
  RENDER_FORMAT_OLLAMA: "Ollama",
  "": "none",
};

function ErrorBox({ error }) {
  if (!error) return null;
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    <div class="error" role="alert">
      {error instanceof ApiError ? <b>{error.method}: </b> : null}
      {error.message}
      {fields.length ? <ul>{fields.map((f) => <li>{f}</li>)}</ul> : null}
    </div>
  );
}

function Side({ label, side, setSide, profiles }) {
  return (
    <fieldset class="side">
      <legend>{label}</legend>
      <label>
        profile{" "}
        <select name={`profile-${label}`} value={side.profile} onChange={(e) => setSide({ ...side, profile: e.currentTarget.value })}>
          {profiles.map((p) => (
            <option value={p.name} title={p.description}>
              {p.name}
              {p.default ? " (default)" : ""}
            </option>
          ))}
        </select>
      </label>{" "}
      <label>
        window{" "}
        <input
          name={`window-${label}`}
          type="number"
          min="1"
          placeholder="the model's"
          value={side.window || ""}
          onInput={(e) => setSide({ ...side, window: Number(e.currentTarget.value) || 0 })}
        />
      </label>
    </fieldset>
  );
}

async function compileSide(kind, doc, text, side, renderFormat, model) {
  const r = requests(kind, doc, text, side, renderFormat, model);
  const [resp, budget] = await Promise.all([call("Compile", r.compile), r.budget ? call("Budget", r.budget).catch(() => null) : null]);
  return analyse(resp, budget, r.state);
}

function App() {
  const [text, setText] = useState("");
  const [fileName, setFileName] = useState("");
  const [kindChoice, setKindChoice] = useState("auto");
  const [profiles, setProfiles] = useState([]);
  const [a, setA] = useState({ profile: "", window: 0 });
  const [b, setB] = useState({ profile: "", window: 0 });
  const [compare, setCompare] = useState(false);
  const [renderFormat, setRenderFormat] = useState("RENDER_FORMAT_OPENAI");
  const [model, setModel] = useState("gpt-4o");
  const [results, setResults] = useState(null);
  const [evalResult, setEvalResult] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [timing, setTiming] = useState(null);

  useEffect(() => {
    call("ListProfiles", {})
      .then((r) => {
        const list = r.profiles || [];
        setProfiles(list);
        const def = list.find((p) => p.default)?.name || list[0]?.name || "";
        setA((s) => ({ ...s, profile: s.profile || def }));
        setB((s) => ({ ...s, profile: s.profile || list.find((p) => !p.default)?.name || def }));
      })
      .catch(setError);
  }, []);

  // Timing: the DOM is built when the layout effect runs (before the
  // browser lays it out and paints it).
  const built = useRef(0);
  useLayoutEffect(() => {
    built.current = performance.now();
  }, [results]);
  // Timing: once the results are on screen (the frame after the commit),
  // record how long drawing took, for the page and for the browser test.
  useEffect(() => {
    if (!timing || timing.drawnMs !== undefined) return;
    requestAnimationFrame(() =>
      setTimeout(() => setTiming((t) => ({ ...t, builtMs: built.current - t.fetched, drawnMs: performance.now() - t.fetched })), 0),
    );
  }, [timing]);

  // Parsed once per text, not on every render: a 2,000-message state is a
  // megabyte of JSON.
  const { doc, detected, parseError } = useMemo(() => {
    if (!text.trim()) return { doc: null, detected: null, parseError: null };
    try {
      const d = parse(text);
      return { doc: d, detected: detect(d), parseError: null };
    } catch (e) {
      return { doc: null, detected: null, parseError: e };
    }
  }, [text]);
  const kind = kindChoice === "auto" ? detected : kindChoice;

  async function run() {
    setError(null);
    if (parseError) return setError(parseError);
    if (!kind) return setError(new Error("Cannot tell what this JSON is; pick its kind."));
    if (kind === "eval") {
      setResults(null);
      setTiming(null);
      setEvalResult(doc);
      return;
    }
    setEvalResult(null);
    setBusy(true);
    const started = performance.now();
    try {
      const sides = compare ? [a, b] : [a];
      const out = await Promise.all(sides.map((s) => compileSide(kind, doc, text, s, renderFormat, model)));
      const fetched = performance.now();
      setResults(out);
      setTiming({ fetchMs: fetched - started, fetched, messages: out[0].rows.length });
    } catch (e) {
      setResults(null);
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  async function loadFile(file) {
    setText(await file.text());
    setFileName(file.name);
    setKindChoice("auto");
  }

  async function loadExample(name) {
    const resp = await fetch(`examples/${name}`);
    setText(await resp.text());
    setFileName(name);
    setKindChoice("auto");
  }

  // A large input stays out of the text box: laying out a megabyte of text
  // costs the browser seconds, and nobody edits it there.
  const large = text.length > LARGE_INPUT;

  // Built once per compile, so that typing or the timing line does not
  // redraw thousands of rows.
  const resultsView = useMemo(
    () =>
      results ? (
        <>
          {results.length === 2 ? <CompareStrip results={results} /> : null}
          <div class={`results n${results.length}`}>
            {results.map((r, i) => (
              <Result a={r} side={i ? "b" : "a"} label={i ? "B" : "A"} />
            ))}
          </div>
        </>
      ) : null,
    [results],
  );

  return (
    <div
      class="app"
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        const f = e.dataTransfer?.files?.[0];
        if (f) loadFile(f);
      }}
    >
      <header>
        <h1>ctxc inspector</h1>
        <span class="muted">what the compiler did to the context</span>
      </header>
      <section class="input">
        {large ? (
          <p id="loaded">
            Loaded {fileName || "the pasted text"} ({(text.length / 1e6).toFixed(1)} MB). Paste or drop to replace it.
          </p>
        ) : null}
        <textarea
          id="input"
          spellcheck={false}
          placeholder="Drop a file here or paste a CompileRequest, an AgentState, an OpenAI / Anthropic / Gemini / Ollama request body, or the output of ctxc eval --json"
          value={large ? "" : text}
          onInput={(e) => {
            setText(e.currentTarget.value);
            setFileName("");
          }}
        />
        <div class="controls">
          <label>
            file <input id="file" type="file" accept=".json,application/json" onChange={(e) => e.currentTarget.files[0] && loadFile(e.currentTarget.files[0])} />
          </label>
          <span>
            examples:{" "}
            <button type="button" onClick={() => loadExample("coding-agent.json")}>coding agent</button>{" "}
            <button type="button" onClick={() => loadExample("chat.json")}>chat</button>
          </span>
          <label>
            kind{" "}
            <select id="kind" value={kindChoice} onChange={(e) => setKindChoice(e.currentTarget.value)}>
              {Object.entries(KINDS).map(([k, v]) => (
                <option value={k}>{k === "auto" ? `Detect${detected ? ` (${KINDS[detected]})` : ""}` : v}</option>
              ))}
            </select>
          </label>
          {isProvider(kind) ? (
            <label>
              model <input id="model" value={model} onInput={(e) => setModel(e.currentTarget.value)} />
            </label>
          ) : null}
        </div>
        {kind !== "eval" ? (
          <div class="controls">
            <Side label="A" side={a} setSide={setA} profiles={profiles} />
            <label>
              <input id="compare" type="checkbox" checked={compare} onChange={(e) => setCompare(e.currentTarget.checked)} /> compare with
            </label>
            {compare ? <Side label="B" side={b} setSide={setB} profiles={profiles} /> : null}
            <label>
              render{" "}
              <select id="render" value={renderFormat} onChange={(e) => setRenderFormat(e.currentTarget.value)}>
                {Object.entries(RENDERS).map(([k, v]) => (
                  <option value={k}>{v}</option>
                ))}
              </select>
            </label>
          </div>
        ) : null}
        <div class="controls">
          <button id="run" type="button" class="primary" disabled={busy} onClick={run}>
            {kind === "eval" ? "Show replay" : busy ? "Compiling…" : "Compile"}
          </button>
          {timing ? (
            <span id="timing" class="muted" data-fetch-ms={timing.fetchMs.toFixed(1)} data-drawn-ms={timing.drawnMs?.toFixed(1) ?? ""} data-built-ms={timing.builtMs?.toFixed(1) ?? ""} data-messages={timing.messages}>
              {timing.messages} log messages: compiled and fetched in {timing.fetchMs.toFixed(0)} ms
              {timing.drawnMs !== undefined ? `, drawn in ${timing.drawnMs.toFixed(0)} ms (DOM built in ${timing.builtMs.toFixed(0)} ms)` : ""}
            </span>
          ) : null}
        </div>
        <ErrorBox error={error || (kindChoice === "auto" ? null : null)} />
      </section>
      {evalResult ? <Replay result={evalResult} /> : null}
      {resultsView}
    </div>
  );
}

function CompareStrip({ results }) {
  const [x, y] = results;
  const row = (label, f) => (
    <tr>
      <th>{label}</th>
      <td class="num">{f(x)}</td>
      <td class="num">{f(y)}</td>
    </tr>
  );
  return (
    <table class="compare">
      <thead>
        <tr><th /><th>A: {x.profile}</th><th>B: {y.profile}</th></tr>
      </thead>
      <tbody>
        {row("window", (r) => r.budget.window.toLocaleString("en-US"))}
        {row("tokens used", (r) => r.budget.used.toLocaleString("en-US"))}
        {row("messages sent", (r) => r.compiledRows.length)}
        {row("cache boundary", (r) => r.firstChanged)}
        {row("dispositions", (r) => Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(", "))}
        {row("stage time µs", (r) => r.totalMicros.toLocaleString("en-US"))}
      </tbody>
    </table>
  );
}

render(<App />, document.getElementById("app"));
