// The live page (`logprob-explorer site --live`): the model runs in this browser through wllama 2.4.0 (llama.cpp compiled to
// WebAssembly). Steps of a score:
// 1. tokenize(text, false): the ids, no special-token parsing, no BOS (as the llama.cpp engine for this model);
// 2. per position: decode([id]) then getLogits(-1): wllama 2.x gives the last position's whole distribution only, as
//    probabilities from a float32 softmax that does not subtract the maximum;
// 3. logprobs in float64 from those probabilities, renormalised by their sum; a probability that underflowed to 0 is
//    counted and shown with its bound (never a silent -inf); rank, entropy and the top-k the same way;
// 4. the result as the server's native JSON (TokenScores.to_dict's keys) and rendered by the page's own heatmap script
//    (window.lxLive: explorer/static/heatmap.js and the card's detail), the heatmap filling in as positions come.
// Generate draws with temperature, top-k, top-p (in that order, as the engine) from a seeded generator, each token
// shown as it is drawn; the numbers recorded are the raw ones.
import { Wllama } from './wllama/index.js';

const CFG = JSON.parse(document.getElementById('live-config').textContent);
const $ = (id) => document.getElementById(id);
const F32_TINY = 1.401298464324817e-45; // the smallest float32 above 0: an underflowed probability is below it
const UNDERFLOW_LP = Math.log(F32_TINY); // about -103.28 nats: the bound an underflowed token's logprob is shown with
const K = CFG.k; // alternatives kept per position
const WHERE = 'computed in your browser (llama.cpp, WebAssembly)';
const SHOW_MS = 250; // a long text's heatmap is redrawn at most this often while it scores
const st = { wl: null, vocab: null, busy: false, threads: 1, info: null, timings: {}, last: null };
window.lxLiveState = st; // for the browser test and the bench

function say(text, kind) { // the one status line; kind 'error' shows it as a plain message that says what to do
  const s = $('live-status');
  s.textContent = text;
  s.className = 'live-status' + (kind ? ' ' + kind : '');
  if (kind === 'error') st.error = text;
}

// ---- the browser's abilities -------------------------------------------------------------------------------------
function memory64() { // wllama's builds use 64-bit memory (WebAssembly Memory64)
  try { new WebAssembly.Memory({ initial: 1n, maximum: 2n, address: 'i64', index: 'i64' }); return true; } catch (e) { return false; }
}
function refuse(why) {
  const link = CFG.server_url ? ' The server\'s page computes the same numbers: ' : '';
  say(why + link, 'error');
  if (CFG.server_url) { const a = document.createElement('a'); a.href = CFG.server_url; a.textContent = CFG.server_url; $('live-status').append(a); }
  document.querySelectorAll('#live-form button').forEach((b) => { b.disabled = true; });
}

// ---- loading -----------------------------------------------------------------------------------------------------
async function load() {
  const isSafari = /^((?!chrome|android|crios|fxios).)*safari/i.test(navigator.userAgent);
  if (isSafari) return refuse('Safari cannot run this page (its WebAssembly has no Memory64, which llama.cpp here needs). Open it in Chrome, Edge or Firefox.');
  if (!memory64()) return refuse('This browser has no WebAssembly Memory64, which llama.cpp here needs. Open the page in a recent Chrome, Edge or Firefox.');
  const isolated = window.crossOriginIsolated === true;
  const cores = navigator.hardwareConcurrency || 1;
  const asked = Number(new URLSearchParams(location.search).get('threads')) || 0;
  st.threads = isolated ? Math.max(1, Math.min(asked || cores, cores, 8)) : 1;
  $('live-threads').textContent = isolated
    ? `${st.threads} thread${st.threads > 1 ? 's' : ''} (the page is cross-origin isolated)`
    : '1 thread (this host does not send the Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy headers that more threads need)';
  const base = new URL('./wllama/', location.href).href;
  st.wl = new Wllama({ 'single-thread/wllama.wasm': base + 'single-thread/wllama.wasm', 'multi-thread/wllama.wasm': base + 'multi-thread/wllama.wasm' },
    { suppressNativeLog: true, logger: { debug() {}, log() {}, warn() {}, error: console.warn } });
  const other = new URLSearchParams(location.search).get('model'); // ?model=URL: another GGUF, named by its file
  const url = new URL(other || CFG.model_url, location.href).href;
  st.name = other ? `${decodeURIComponent(new URL(url).pathname.split('/').pop() || url)} (the link's ?model=, not ${CFG.model_name})` : CFG.model_name;
  const t0 = performance.now();
  let tLoaded = 0;
  say('Downloading the model… 0%');
  const bad = await probe(url);
  if (bad) return refuse(bad);
  try {
    await st.wl.loadModelFromUrl(url, {
      n_ctx: CFG.n_ctx, n_batch: 512, n_threads: st.threads, flash_attn: true, seed: 0, useCache: true,
      progressCallback: ({ loaded, total }) => {
        tLoaded = performance.now();
        say(total ? `Downloading the model… ${Math.floor((100 * loaded) / total)}% of ${(total / 2 ** 20).toFixed(0)} MB` : 'Downloading the model…');
        if (total && loaded >= total) say('Loading the model into llama.cpp…');
      },
    });
  } catch (e) {
    return refuse(loadError(e, url));
  }
  const t1 = performance.now();
  st.timings = { download_s: ((tLoaded || t0) - t0) / 1000, load_s: (t1 - (tLoaded || t0)) / 1000 };
  st.info = st.wl.getLoadedContextInfo();
  const vocab = await st.wl.getVocab(); // id -> piece bytes; 2.4.0 returns n_vocab empty entries before them (a resize
  st.vocab = vocab.length === 2 * st.info.n_vocab ? vocab.slice(st.info.n_vocab) : vocab; // then emplace_back in C++)
  st.eog = new Set(st.info.list_tokens_eog || [st.info.token_eos]);
  const mt = st.wl.isMultithread() ? `${st.wl.getNumThreads()} threads` : '1 thread';
  say(`Ready: ${st.name}, ${WHERE}, ${mt}. Model loaded in ${(st.timings.download_s + st.timings.load_s).toFixed(1)} s.`);
  document.querySelectorAll('#live-form button').forEach((b) => { b.disabled = false; });
  st.ready = true;
}

async function probe(url) { // a message when `url` cannot be fetched or is not a GGUF (its first bytes), else null
  let r;
  try {
    r = await fetch(url, { headers: { Range: 'bytes=0-3' } });
  } catch (e) {
    return null; // offline or blocked: wllama's cache may still hold it (its own error follows if not)
  }
  if (!r.ok) return `The model could not be downloaded from ${url} (HTTP ${r.status}${r.statusText ? ' ' + r.statusText : ''}). Check the address (a Hugging Face file's "resolve" URL), then reload.`;
  const reader = r.body.getReader();
  let head = new Uint8Array();
  while (head.length < 4) { const { done, value } = await reader.read(); if (done) break; head = new Uint8Array([...head, ...value.slice(0, 4)]); }
  reader.cancel().catch(() => {});
  const magic = String.fromCharCode(...head.slice(0, 4));
  return magic === 'GGUF' ? null : `The file at ${url} is not a GGUF model (it does not start with "GGUF"). Give the URL of a .gguf file.`;
}

function loadError(e, url) { // wllama's errors in words that say what to do
  const m = String((e && e.message) || e);
  if (/magic|gguf|invalid|failed to load|load_error|Error while/i.test(m) && !/fetch|network|download/i.test(m)) {
    return `The file at ${url} is not a GGUF model llama.cpp can read (${m}). Give the URL of a .gguf file.`;
  }
  if (/memory|allocation|OOM|Aborted/i.test(m)) return `The browser ran out of memory loading the model (${m}). Close other tabs or use a smaller GGUF.`;
  return `The model could not be downloaded from ${url} (${m}). Check the address (a Hugging Face file's "resolve" URL) and your connection, then reload.`;
}

// ---- one position's numbers from wllama's probabilities (float64) ---------------------------------------------------
function stats(dist, actual) {
  // dist: [{token, p}] over the whole vocabulary, sorted by probability (float32, a softmax without max subtraction)
  let sum = 0, bad = false;
  for (const d of dist) { if (!(d.p >= 0) || !isFinite(d.p)) bad = true; sum += d.p; }
  if (bad || !(sum > 0)) throw new Error('overflow: a logit above ~88 overflowed wllama\'s float32 softmax (probabilities are NaN); this model cannot be scored in the browser');
  const logS = Math.log(sum);
  let ent = 0, pAct = 0, rank = 1;
  for (const d of dist) { if (d.p > 0) { const q = d.p / sum; ent -= q * Math.log(q); } if (d.token === actual) pAct = d.p; }
  if (actual >= 0) { rank = 0; for (const d of dist) { if (d.p < pAct) break; rank += 1; } } // ties count (the engine's rule)
  const under = actual >= 0 && pAct === 0;
  const lp = actual < 0 ? null : under ? UNDERFLOW_LP - logS : Math.log(pAct) - logS;
  const top = dist.slice(0, K).map((d) => [d.token, d.p > 0 ? Math.log(d.p) - logS : UNDERFLOW_LP - logS]);
  return { lp, rank: actual < 0 ? 0 : rank, ent, top, under, zeros: dist.reduce((a, d) => a + (d.p === 0), 0) };
}

// ---- sampling: temperature, top-k, top-p (the engine's order), from a seeded generator ------------------------------
function rng(seed) { let a = seed >>> 0; return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; }
function draw(dist, s, rand) {
  if (s.temperature === 0) return dist[0].token; // greedy: the most probable (dist is sorted)
  let cand = dist.filter((d) => d.p > 0).map((d) => ({ token: d.token, l: Math.log(d.p) / s.temperature }));
  if (s.top_k > 0) cand = cand.slice(0, s.top_k);
  const m = cand[0].l;
  let z = 0; cand.forEach((c) => { c.q = Math.exp(c.l - m); z += c.q; });
  if (s.top_p < 1) { let acc = 0, keep = 0; for (const c of cand) { acc += c.q / z; keep += 1; if (acc >= s.top_p) break; } cand = cand.slice(0, keep); z = cand.reduce((a, c) => a + c.q, 0); }
  let u = rand() * z;
  for (const c of cand) { u -= c.q; if (u <= 0) return c.token; }
  return cand[cand.length - 1].token;
}

// ---- the result: the server's native JSON (TokenScores.to_dict) -----------------------------------------------------
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
function newResult(ids, nPrompt, sampler) {
  return { ids: ids.slice(), nPrompt, sampler, rows: [], generated: !!sampler, finish: null, underflow: 0, zeros: 0, t0: performance.now() };
}
function toNative(R) {
  const n = R.ids.length, pieces = {}, bytes = R.ids.map((id) => st.vocab[id] || new Uint8Array());
  const text = bytes.map((b) => lxText(b));
  const offsets = []; let off = 0; text.forEach((t) => { offsets.push(off); off += t.length; });
  const row = (i) => R.rows[i] || null;
  const top = (i) => { const r = row(i); const t = r && r.top ? r.top : []; return Array.from({ length: K }, (_, j) => (t[j] ? t[j] : [-1, -9999.0])); };
  for (let i = 0; i < n; i++) top(i).forEach(([id]) => { if (id >= 0) pieces[String(id)] = hex(st.vocab[id]); });
  const genText = R.generated ? text.slice(R.nPrompt).join('') : null;
  return {
    format: 'logprob-explorer/token-scores', version: 1, model: st.name, mode: 'raw',
    sampler: R.sampler || {}, n_prompt: R.generated ? R.nPrompt : n, prompt_k: K, output_k: R.generated ? K : null,
    finish_reason: R.finish, output_text: genText, vocab_size: st.info.n_vocab,
    token_ids: R.ids.slice(), token_bytes: bytes.map(hex), token_text: text, text_offset: offsets,
    logprobs: R.ids.map((_, i) => (row(i) ? row(i).lp : null)), ranks: R.ids.map((_, i) => (row(i) ? row(i).rank : 0)),
    entropy: R.ids.map((_, i) => (row(i) ? row(i).ent : null)),
    top_ids: R.ids.map((_, i) => top(i).map((x) => x[0])), top_logprobs: R.ids.map((_, i) => top(i).map((x) => x[1])),
    pieces,
    engine: `wllama ${CFG.wllama} (llama.cpp, WebAssembly) in the browser, ${st.wl.isMultithread() ? st.wl.getNumThreads() : 1} thread(s)`,
    underflow: { positions: R.ids.map((_, i) => i).filter((i) => row(i) && row(i).under), bound_logprob: UNDERFLOW_LP,
      note: 'probabilities below float32\'s smallest (1.4e-45) came back as 0 from wllama\'s softmax; their logprob is this bound minus the log of the sum' },
  };
}
function lxText(b) { // the token's text, a byte that is not UTF-8 as \xNN (Python's backslashreplace, as the server)
  return window.lxLive.hexText(hex(b));
}

// ---- the OpenAI / vLLM completions body (echo: the prompt scored), explorer/export/openai_completion.py's keys --------
function toOpenAI(nat) {
  const n = nat.token_ids.length;
  const tokens = nat.token_text;
  const top = nat.top_ids.map((ids, i) => {
    if (nat.logprobs[i] === null) return null;
    const d = { [tokens[i]]: nat.logprobs[i] };
    ids.forEach((id, j) => { if (id >= 0) { const t = lxText(Uint8Array.from(nat.pieces[String(id)].match(/../g).map((x) => parseInt(x, 16)))); if (!(t in d)) d[t] = nat.top_logprobs[i][j]; } });
    return d;
  });
  return {
    id: 'cmpl-browser-' + Math.random().toString(16).slice(2, 10), object: 'text_completion', created: Math.floor(Date.now() / 1000), model: nat.model,
    choices: [{ index: 0, text: tokens.join(''), logprobs: { text_offset: nat.text_offset, token_logprobs: nat.logprobs, tokens, top_logprobs: top },
      finish_reason: nat.finish_reason || 'length', stop_reason: null, token_ids: null, prompt_logprobs: null, prompt_token_ids: null, routed_experts: null }],
    usage: { prompt_tokens: nat.n_prompt, total_tokens: n, completion_tokens: n - nat.n_prompt, prompt_tokens_details: null },
    system_fingerprint: nat.engine,
  };
}

// ---- showing it: the page's own renderer (heatmap.js through window.lxLive) ------------------------------------------
function show(R, doneText) {
  const nat = toNative(R);
  st.last = nat;
  window.lxLive.update(nat, R.rid);
  const scored = nat.logprobs.filter((x) => x !== null);
  const total = scored.reduce((a, b) => a + b, 0);
  const secs = (performance.now() - R.t0) / 1000;
  const under = nat.underflow.positions.length;
  $('live-summary').textContent = `${st.name} · ${nat.token_ids.length} tokens (${scored.length} scored) · total logprob ${total.toFixed(4)} · ` +
    (scored.length ? `mean ${(total / scored.length).toFixed(4)} nats/token · perplexity ${Math.exp(-total / scored.length).toFixed(2)} · ` : '') +
    `${WHERE} · ${(doneText || 'working…')} ${secs.toFixed(1)} s` +
    (under ? ` · ${under} token(s) below float32's smallest probability: logprob shown as a bound (≤ ${nat.underflow.bound_logprob.toFixed(2)})` : '');
  $('live-downloads').hidden = false;
}

async function scoreIds(R, from) { // positions from..n-1 get their numbers; each shown as it comes
  for (let i = Math.max(from, 1); i < R.ids.length; i++) {
    await st.wl.decode([R.ids[i - 1]], {});
    const dist = await st.wl.getLogits(-1);
    R.rows[i] = stats(dist, R.ids[i]);
    if (performance.now() - (R.shown || 0) > SHOW_MS) { show(R); R.shown = performance.now(); } // the heatmap fills in
  }
}

async function run(kind) {
  if (st.busy || !st.ready) return;
  const text = $('live-text').value;
  if (!text) { say('Type a text first.', 'error'); return; }
  st.busy = true; st.error = null;
  document.querySelectorAll('#live-form button').forEach((b) => { b.disabled = true; });
  try {
    const ids = await st.wl.tokenize(text, false);
    const room = st.info.n_ctx - (kind === 'generate' ? Number($('live-max').value) : 0);
    if (ids.length > room) throw new Error(`context: the text is ${ids.length} tokens and the model here holds ${st.info.n_ctx}` + (kind === 'generate' ? ` with the ${$('live-max').value} to generate` : '') + ': shorten it.');
    await st.wl.kvClear();
    const rid = Math.random().toString(16).slice(2);
    if (kind === 'score') {
      const R = newResult(ids, ids.length, null); R.rid = rid;
      R.rows[0] = null;
      show(R);
      await scoreIds(R, 1);
      show(R, 'scored in');
      st.lastRun = { kind, n: ids.length, seconds: (performance.now() - R.t0) / 1000 };
    } else {
      const s = { temperature: Number($('live-temp').value), top_k: Number($('live-topk').value), top_p: Number($('live-topp').value),
        seed: Number($('live-seed').value), max_tokens: Number($('live-max').value) };
      const R = newResult(ids, ids.length, s); R.rid = rid;
      show(R);
      await scoreIds(R, 1);
      const rand = rng(s.seed);
      R.finish = 'length';
      for (let g = 0; g < s.max_tokens; g++) {
        await st.wl.decode([R.ids[R.ids.length - 1]], {});
        const dist = await st.wl.getLogits(-1);
        const tok = draw(dist, s, rand);
        R.ids.push(tok);
        R.rows[R.ids.length - 1] = stats(dist, tok);
        show(R);
        if (st.eog.has(tok)) { R.finish = 'stop'; break; }
      }
      show(R, 'generated in');
      st.lastRun = { kind, n: R.ids.length, seconds: (performance.now() - R.t0) / 1000 };
    }
    say(`Done: ${WHERE}.`);
  } catch (e) {
    say(runError(e), 'error');
  } finally {
    st.busy = false;
    document.querySelectorAll('#live-form button').forEach((b) => { b.disabled = false; });
  }
}

function runError(e) {
  const m = String((e && e.message) || e);
  if (m.startsWith('context: ')) return 'Too long: ' + m.slice(9);
  if (m.startsWith('overflow: ')) return 'Cannot score: ' + m.slice(10);
  if (/memory|allocation|OOM|Aborted|RangeError/i.test(m)) return `The browser tab ran out of memory (${m}). Score a shorter text, close other tabs, or reload the page.`;
  if (/kv_cache_full|context cache/i.test(m)) return 'Too long for the model\'s context here: shorten the text.';
  return `Something went wrong in the browser's llama.cpp (${m}). Reload the page and try again.`;
}

function download(kind) {
  if (!st.last) return;
  const body = kind === 'native' ? st.last : toOpenAI(st.last);
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([JSON.stringify(body, null, 1)], { type: 'application/json' }));
  a.download = kind === 'native' ? 'scores.json' : 'completion-openai.json';
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// ---- wiring ------------------------------------------------------------------------------------------------------
$('live-score').addEventListener('click', () => run('score'));
$('live-generate').addEventListener('click', () => run('generate'));
$('live-dl-native').addEventListener('click', () => download('native'));
$('live-dl-openai').addEventListener('click', () => download('openai'));
{
  const q = new URLSearchParams(location.search).get('text');
  if (q) $('live-text').value = q;
}
window.addEventListener('error', (e) => say(runError(e.error || e.message), 'error'));
window.addEventListener('unhandledrejection', (e) => say(runError(e.reason), 'error'));
load();
