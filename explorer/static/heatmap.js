// The heatmap's behaviour (Gradio runs this with `element`, `props`, `trigger`, `watch`).
// One tab stop (roving tabindex): arrow keys move between tokens, Home/End jump, Enter or Space opens one,
// Shift+arrows or Shift+click select a span (its sums show above the text), Escape clears. Hover (or a tap, or
// keyboard focus) shows a card from the page's one data blob (the JSON text of .lx-data); nothing per token but its chip.
// New results are brought into view; the selected chip follows the detail (#token-detail), wherever it came from.
const root = element;
const st = { rid: null, sel: -1, anchor: -1, touch: false, detailPos: -1, data: null, text: null };
function blob() {  // the page's data, parsed once per new text
  const t = root.querySelector('.lx-data');
  const text = t ? t.textContent : '';
  if (text !== st.text) { st.text = text; try { st.data = text ? JSON.parse(text) : null; } catch (e) { st.data = null; } }
  return st.data;
}
const chip = (pos) => root.querySelector('[data-pos="' + Number(pos) + '"]');
const box = () => root.querySelector('.lx');
const n = () => (blob() && blob().n) || root.querySelectorAll('[data-pos]').length;
const detailEl = () => document.getElementById('token-detail');
const narrow = () => { const d = detailEl(), b = box(); return !!(d && b && d.getBoundingClientRect().top >= b.getBoundingClientRect().bottom - 1); };

function pct(p) {  // plain words, never e-notation (render/numbers.py plain_pct)
  if (p === null || p === undefined || isNaN(p)) return '—';
  if (p <= 0) return '0%';
  if (p < 1e-6) return '< 0.0001%';
  const x = 100 * p;
  if (x < 1e-3) return x.toFixed(6).replace(/0+$/, '') + '%';
  return (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : String(Number(x.toPrecision(2)))) + '%';
}

// ---- the card -------------------------------------------------------------------------------
let card = document.getElementById('lx-card');
if (!card) {
  card = document.createElement('div');
  card.id = 'lx-card'; card.setAttribute('role', 'tooltip'); card.hidden = true;
  document.body.appendChild(card);
}
const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };

function fillCard(pos, c) {
  const d = blob();
  card.replaceChildren();
  const head = el('div', 'cd-head');
  head.append(el('code', 'tok', c.textContent || ' '), el('span', 'cd-pos', ' position ' + pos));
  card.append(head);
  if (!d || !d.lp) { card.append(el('div', 'cd-note', 'Scoring… numbers appear when it is done.')); return; }
  const lp = d.lp[pos];
  if (lp === null || lp === undefined) { card.append(el('div', 'cd-note', 'Not scored (nothing before it to predict it from).')); return; }
  const raw = !d.generated || pos < d.n_prompt || d.mode === 'raw';
  card.append(el('div', 'cd-nums', pct(Math.exp(lp)) + ' · logprob ' + lp.toFixed(4) + ' · rank ' + d.rk[pos].toLocaleString('en') +
    ' · entropy ' + (d.en[pos] === null ? '—' : d.en[pos].toFixed(2)) + ' nats'));
  const ul = el('ul', 'cd-top');
  (d.ti[pos] || []).forEach((id, j) => {
    const p = Math.exp(d.tl[pos][j]);
    const li = el('li', id === d.ids[pos] ? 'act' : '');
    const bar = el('span', 'cd-bar'); bar.style.width = (100 * p).toFixed(1) + '%';
    li.append(bar, el('code', 'tok', d.pc[String(id)] || ' '), el('span', 'cd-p', pct(p) + (id === d.ids[pos] ? ' ◀ actual' : '')));
    ul.append(li);
  });
  card.append(ul, el('div', 'cd-note', (raw ? 'raw' : 'processed') + ' numbers · click or Enter for every alternative'));
}

const TAP_CARD_MS = 4000;  // how long a tap's card stays

function placeCard(c) {
  // beside its chip; when the page moves, it moves along, and it goes when the chip leaves the view
  const r = c.getBoundingClientRect(), w = card.offsetWidth, h = card.offsetHeight;
  if (!c.isConnected || r.bottom < 0 || r.top > window.innerHeight) { card.hidden = true; return; }
  // a tap: above its chip (the detail opens under the line; the lines below stay readable); a mouse: below
  const below = st.touch ? r.top - h - 6 < 0 : r.bottom + 6 + h < window.innerHeight;
  card.style.top = Math.max(4, below ? r.bottom + 6 : r.top - h - 6) + 'px';
  card.style.left = Math.max(4, Math.min(r.left, window.innerWidth - w - 4)) + 'px';
}

function showCard(pos) {
  const c = chip(pos);
  if (!c) return;
  fillCard(pos, c);
  card.hidden = false;
  card.lxPlace = () => placeCard(c);
  placeCard(c);
}
const hideCard = () => { card.hidden = true; };

// ---- selection, focus, span ------------------------------------------------------------------
function setStop(pos) {
  root.querySelectorAll('.lx [tabindex]').forEach((x) => { if (Number(x.dataset.pos) !== pos) x.removeAttribute('tabindex'); });
  const c = chip(pos);
  if (c) c.setAttribute('tabindex', '0');
  return c;
}

function highlight(pos) {
  root.querySelectorAll('.lx .sel').forEach((x) => x.classList.remove('sel'));
  const c = setStop(pos);
  if (c) c.classList.add('sel');
  st.sel = pos;
  return c;
}

function reveal(pos) {
  // keep the chip in sight: on narrow screens its line becomes the last line of the box, the detail right under it
  const c = chip(pos), b = box();
  if (!c || !b) return;
  if (narrow()) {
    b.scrollTop = Math.max(0, c.offsetTop + c.offsetHeight - b.clientHeight + 6);
    const bottom = b.getBoundingClientRect().bottom;
    window.scrollBy({ top: bottom - window.innerHeight * 0.42, behavior: 'instant' });
  } else {
    if (c.offsetTop < b.scrollTop || c.offsetTop + c.offsetHeight > b.scrollTop + b.clientHeight) b.scrollTop = c.offsetTop - b.clientHeight / 3;
    const rb = b.getBoundingClientRect();
    if (rb.bottom < 40 || rb.top > window.innerHeight - 40) bringIntoView();
  }
}

function open(pos) {
  const c = highlight(pos);
  if (c && document.activeElement !== c) c.focus({ preventScroll: true });
  st.anchor = pos;
  clearSpan();
  if (narrow()) reveal(pos);
  trigger('click', { pos: pos });
}

function clearSpan() {
  root.querySelectorAll('.lx .span').forEach((x) => x.classList.remove('span'));
  const bar = root.querySelector('.lx-span');
  if (bar) { bar.replaceChildren(); bar.hidden = true; }
}

function span(a, b) {
  const d = blob();
  if (!d || !d.lp) return;
  const lo = Math.max(0, Math.min(a, b)), hi = Math.min(n() - 1, Math.max(a, b));
  clearSpan();
  let sum = 0, k = 0;
  for (let i = lo; i <= hi; i++) {
    const c = chip(i);
    if (c) c.classList.add('span');
    if (d.lp[i] !== null && d.lp[i] !== undefined) { sum += d.lp[i]; k += 1; }
  }
  const bar = root.querySelector('.lx-span');
  if (!bar) return;
  const total = el('b', 'sp-sum', sum.toFixed(4));
  total.dataset.sum = String(sum);
  const txt = k ? [' · mean surprisal ' + (-sum / k / Math.LN2).toFixed(2) + ' bits · perplexity ' + Math.exp(-sum / k).toFixed(2)] : [''];
  const close = el('button', 'sp-clear', 'clear');
  close.type = 'button';
  close.addEventListener('click', () => clearSpan());
  bar.append(el('span', '', 'Span ' + lo + '–' + hi + ' (' + (hi - lo + 1) + ' tokens, ' + k + ' scored) · total logprob '), total,
             el('span', '', txt[0] + ' '), close);
  bar.hidden = false;
}

// ---- keyboard ----------------------------------------------------------------------------------
function lineNeighbour(c, dir) {
  // the chip on the next (dir=1) or previous (dir=-1) line whose centre is nearest horizontally
  const r = c.getBoundingClientRect(), x = r.left + r.width / 2;
  let i = Number(c.dataset.pos) + dir, line = null, best = null, bestDx = Infinity;
  for (; i >= 0 && i < n(); i += dir) {
    const q = chip(i).getBoundingClientRect();
    if (line === null) { if (Math.abs(q.top - r.top) < r.height / 2) continue; line = q.top; }
    if (Math.abs(q.top - line) >= r.height / 2) break;
    const dx = Math.abs(q.left + q.width / 2 - x);
    if (dx < bestDx) { bestDx = dx; best = i; }
  }
  return best;
}

root.addEventListener('keydown', (e) => {
  const c = e.target.closest('[data-pos]');
  if (!c) return;
  const pos = Number(c.dataset.pos), last = n() - 1;
  let next = null;
  if (e.key === 'ArrowRight') next = Math.min(last, pos + 1);
  else if (e.key === 'ArrowLeft') next = Math.max(0, pos - 1);
  else if (e.key === 'ArrowDown') next = lineNeighbour(c, 1);
  else if (e.key === 'ArrowUp') next = lineNeighbour(c, -1);
  else if (e.key === 'Home') next = 0;
  else if (e.key === 'End') next = last;
  else if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); hideCard(); open(pos); return; }
  else if (e.key === 'Escape') { hideCard(); clearSpan(); return; }
  else return;
  e.preventDefault();
  if (next === null) return;
  if (e.shiftKey) { if (st.anchor < 0) st.anchor = pos; span(st.anchor, next); } else st.anchor = next;
  const t = setStop(next);
  if (t) { t.focus(); showCard(next); }
});
root.addEventListener('focusout', (e) => { if (!root.contains(e.relatedTarget)) hideCard(); });

// ---- pointer -------------------------------------------------------------------------------------
root.addEventListener('pointerdown', (e) => { st.touch = e.pointerType === 'touch'; });
root.addEventListener('click', (e) => {
  const c = e.target.closest('[data-pos]');
  if (!c) return;
  const pos = Number(c.dataset.pos);
  if (e.shiftKey && st.anchor >= 0) { span(st.anchor, pos); return; }
  if (!window.getSelection().isCollapsed) return;  // a text selection: handled on mouseup
  open(pos);
  if (st.touch) {  // a tap's card goes by itself: the detail under the line holds the same numbers
    showCard(pos);
    clearTimeout(st.cardTimer);
    st.cardTimer = setTimeout(hideCard, TAP_CARD_MS);
  } else hideCard();
});
root.addEventListener('mouseover', (e) => { const c = e.target.closest('[data-pos]'); if (c && !st.touch) showCard(Number(c.dataset.pos)); });
root.addEventListener('mouseleave', () => { if (!st.touch) hideCard(); });
root.addEventListener('mouseup', () => {
  const s = window.getSelection();
  if (s.isCollapsed || !root.contains(s.anchorNode)) return;
  const at = (node) => (node.nodeType === 1 ? node : node.parentElement).closest('[data-pos]');
  const a = at(s.anchorNode), b = at(s.focusNode);
  if (a && b && a !== b) span(Number(a.dataset.pos), Number(b.dataset.pos));
});
if (!window.__lxHooks) {
  window.__lxHooks = true;
  document.addEventListener('pointerdown', (e) => { if (!e.target.closest('#heatmap')) document.getElementById('lx-card').hidden = true; });
  document.addEventListener('scroll', () => {  // the page or the text scrolled: the card follows its token
    const c = document.getElementById('lx-card');
    if (c && !c.hidden && c.lxPlace) c.lxPlace();
  }, true);
  document.addEventListener('click', (e) => {  // the token table: a click on a column's header sorts by it (again: reversed)
    const h = e.target.closest('#token-table th');
    const menu = h && h.querySelector('button[aria-label="Open cell menu"]');
    if (!menu || e.target.closest('button')) return;
    const dir = h.dataset.lxSort === 'ascending' ? 'descending' : 'ascending';
    setTimeout(() => {  // after this click is over, or the menu would take it as a click outside
      menu.click();
      setTimeout(() => {
        const item = [...document.querySelectorAll('[role=menu] [role=menuitem]')].find((x) => x.textContent.trim() === 'Sort ' + dir);
        if (item) { item.click(); h.dataset.lxSort = dir; }
      }, 0);
    }, 0);
  }, true);  // capture: the table stops the click from bubbling
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || !document.body.classList.contains('lx-present')) return;
    document.body.classList.remove('lx-present');
    const b = document.querySelector('#present-btn');
    if (b) b.textContent = 'Presentation mode';
  });
}

// ---- new results, and the detail as the source of the selection ---------------------------------
function bringIntoView() {
  // wide: the whole results block (controls, then text and detail side by side); narrow: the text, the detail under it
  const main = root.closest('.lx-main') || root;
  const target = narrow() ? main : (document.getElementById('results') || main);
  window.scrollTo({ top: target.getBoundingClientRect().top + window.scrollY - 8, behavior: 'instant' });
}

function followDetail() {
  const d = detailEl(), td = d && d.querySelector('.td[data-pos]');
  if (!td) return;
  const pos = Number(td.dataset.pos);
  if (pos === st.detailPos) return;  // the detail only changed state (loading), not its token
  st.detailPos = pos;
  if (pos !== st.sel) { highlight(pos); reveal(pos); }
}

(function hookDetail() {
  const d = detailEl();
  if (!d) { setTimeout(hookDetail, 300); return; }
  new MutationObserver(followDetail).observe(d, { subtree: true, childList: true, attributes: true });
})();

root.addEventListener('click', (e) => {
  const a = e.target.closest('a.lx-skip');
  if (!a) return;
  e.preventDefault();
  const d = detailEl();
  if (d) { d.setAttribute('tabindex', '-1'); d.focus(); }
});

// the person scrolling takes over: a result that completes later does not pull the page back
['wheel', 'touchmove'].forEach((t) => window.addEventListener(t, () => { st.moved = true; }, { passive: true }));

watch('value', () => {
  const d = blob();
  if (d && d.rid && d.rid !== st.rid) {  // a new result: into view as soon as its first part shows
    st.rid = d.rid; st.anchor = -1; st.sel = -1; st.detailPos = -1; st.full = false; st.moved = false;
    document.body.classList.add('lx-has-result');
    requestAnimationFrame(() => requestAnimationFrame(bringIntoView));
  }
  if (d && d.lp && !st.full) {  // ... and again when it is complete, unless the person scrolled meanwhile
    st.full = true;
    if (!st.moved) requestAnimationFrame(() => requestAnimationFrame(bringIntoView));
  }
  if (st.sel >= 0 && chip(st.sel)) highlight(st.sel);
  followDetail();
});
