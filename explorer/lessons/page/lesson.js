// Shared by the lesson pages: fetch JSON with the API's error shape, and numbers in plain words.
function $(id) { return document.getElementById(id); }
// On a Hugging Face Space, huggingface.co's frame hands its page the visitor's ZeroGPU token, as it does Gradio's own
// page (the same two messages): sent with the requests that may run the model, their GPU time counts on that
// visitor's quota (docs/operators.md, "On ZeroGPU"). Nowhere else is anything asked.
const hfOrigin = location.hostname.endsWith(".hf.space") ? "https://huggingface.co" : null;
let frameHeaders = false;
if (hfOrigin && window.parent !== window) {
  window.addEventListener("message", (e) => { if (e.origin === hfOrigin && e.data === "supports-zerogpu-headers") frameHeaders = true; });
  window.parent.postMessage("supports-zerogpu-headers", hfOrigin);
}
function zeroGpuHeaders() {  // {} without such a frame; never waits more than a second
  if (!frameHeaders) return Promise.resolve({});
  return new Promise((done) => {
    const channel = new MessageChannel();
    const late = setTimeout(() => done({}), 1000);
    channel.port1.onmessage = ({data}) => {
      clearTimeout(late); channel.port1.close();
      done(Object.fromEntries(Object.entries(data || {}).filter(([, v]) => typeof v === "string")));
    };
    window.parent.postMessage("zerogpu-headers", hfOrigin, [channel.port2]);
  });
}
async function api(path, body, key, student) {
  const headers = {"Content-Type": "application/json"};
  if (key || body !== undefined) Object.assign(headers, await zeroGpuHeaders());  // a poll of a student's never runs the model
  if (key) headers["X-Teacher-Key"] = key;
  if (student) headers["X-Student"] = student;  // a student's poll: their own result comes with the step
  const r = await fetch(path, body === undefined ? {headers} : {method: "POST", headers, body: JSON.stringify(body)});
  const data = await r.json().catch(() => ({}));
  if (!r.ok) { const e = new Error((data.error && data.error.message) || ("The server answered " + r.status)); e.status = r.status; e.code = data.error && data.error.code; throw e; }
  return data;
}
// a probability in words: "31%", "4.2%", "0.37%", "0.0012%", "< 0.0001%"; never e-notation
function pct(logprob) {
  if (logprob === null || logprob === undefined || !isFinite(logprob)) return "0%";
  const p = Math.exp(logprob) * 100;
  if (p >= 10) return p.toFixed(0) + "%";
  if (p >= 1) return p.toFixed(1) + "%";
  if (p < 0.0001) return "<\u00a00.0001%";  // a no-break space: "<" never ends a line on its own
  return p.toPrecision(2).replace(/0+$/, "").replace(/\.$/, "") + "%";
}
// a token's text as the page shows it: a leading space kept visible only where it is all there is
function shown(t) { const s = t.replace(/\n/g, "↵"); return s.trim() ? s.trim() : (s.includes("↵") ? "↵ (new line)" : "· (a space)"); }
function setContext(el, text) {
  el.textContent = text + " ";
  const b = document.createElement("span"); b.className = "blank";
  const t = document.createElement("span"); t.className = "sr"; t.textContent = "(blank)"; b.appendChild(t);
  el.appendChild(b);
}
function bits(nats) { return nats / Math.LN2; }
// The class against the model (the server's `chart` rows): one row per word, the class's share and the model's
// probability side by side on one absolute 0-100 % scale; the word that came marked; the answers said once past the
// first few folded into "and 9 more, each said once" (a <details>); then the model's likeliest words nobody said.
const SHOWN_ROWS = 8;  // rows of the class's answers shown before the fold
function barLine(cls, value, text) {
  const line = document.createElement("div"); line.className = "line";
  const track = document.createElement("div"); track.className = "track";
  const bar = document.createElement("div"); bar.className = "bar " + cls;
  bar.dataset.value = value === null ? "" : String(value);
  bar.style.width = (value === null ? 0 : 100 * value).toFixed(2) + "%";
  track.appendChild(bar); line.appendChild(track);
  const n = document.createElement("span"); n.className = "num " + cls; n.textContent = text; line.appendChild(n);
  return line;
}
function chartRow(table, r, sample) {
  const tr = table.insertRow(); tr.className = "row-" + (r.said ? "said" : "model") + (r.actual ? " came" : "");
  const w = tr.insertCell(); w.className = "word";
  const word = document.createElement("span"); word.className = "w"; word.textContent = sample ? shown(r.word) : r.word; w.appendChild(word);
  if (r.actual) { const m = document.createElement("span"); m.className = "came-mark"; m.textContent = "✓ the word that came"; w.appendChild(m); }
  if (r.plain) { const m = document.createElement("span"); m.className = "plain"; m.textContent = r.plain; w.appendChild(m); }
  const b = tr.insertCell(); b.className = "pair";
  const who = sample ? "draws" : "the class";
  b.appendChild(barLine("class", r.share, r.said ? Math.round(100 * r.share) + "% of " + who + " (" + r.count + ")" : (sample ? "not drawn" : "nobody")));
  b.appendChild(barLine("model", r.p, r.p === null ? "model: waits for its numbers" : "model: " + pct(Math.log(r.p))));
}
function drawChart(box, rows, kind) {  // box: an element the chart fills (its tables and the fold); kind: the step's
  const sample = kind === "sample";
  box.textContent = "";
  const table = () => { const t = document.createElement("table"); t.className = "chart"; box.appendChild(t); return t; };
  const said = rows.filter((r) => r.said), unsaid = rows.filter((r) => !r.said);
  const head = said.filter((r, i) => i < SHOWN_ROWS || r.count > 1 || r.actual);
  const folded = said.filter((r) => !head.includes(r));
  const first = table(); first.setAttribute("aria-label", "The class against the model");
  for (const r of head) chartRow(first, r, sample);
  if (!said.length) { const c = first.insertRow().insertCell(); c.className = "muted"; c.textContent = sample ? "No draws yet." : "No answers yet."; }
  if (folded.length) {
    const fold = document.createElement("details"); fold.className = "fold"; box.appendChild(fold);
    const sum = document.createElement("summary"); fold.appendChild(sum);
    sum.textContent = "and " + folded.length + " more" + (folded.every((r) => r.count === 1) ? ", each said once" : "");
    const t = document.createElement("table"); t.className = "chart"; fold.appendChild(t);
    for (const r of folded) chartRow(t, r, sample);
  }
  if (unsaid.length) {
    const h = document.createElement("div"); h.className = "sub";
    h.textContent = sample ? "The model's likeliest, not drawn:"
      : kind === "choose" ? "The choices nobody picked:" : "The model's likeliest words nobody said:"; box.appendChild(h);
    const t = table();
    for (const r of unsaid) chartRow(t, r, sample);
  }
}
