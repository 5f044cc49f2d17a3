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
