// A chart's text alternative, from the figure the page drew: its titles, then each series in numbers (a bar chart
// of a dozen bars or fewer bar by bar; longer series as their count, lowest and highest), as the drawing's aria-label
// (role img), rewritten when the chart is drawn again; `describe` is called for each chart on the page.
const altNum = (v) => (Math.abs(v) >= 10000 || (v !== 0 && Math.abs(v) < 0.001)) ? v.toExponential(2) : String(+v.toFixed(3));
const altText = (gd) => {
  const full = gd._fullData || [];
  const lay = gd._fullLayout || {};
  const strip = (t) => String(t).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  const titles = [lay.title && lay.title.text, ...(lay.annotations || []).map((a) => a.text)].filter((t) => t).map(strip);
  const parts = full.filter((t) => t.visible !== false).map((t, i) => {
    const flat = (a) => (a ? Array.from(a) : []);
    if (t.type === 'heatmap') {
      const z = flat(t.z);
      return `${t.name || 'a grid'} of ${z.length} rows by ${z.length ? flat(z[0]).length : 0} columns`;
    }
    const horizontal = t.orientation === 'h';
    const values = flat(horizontal ? t.x : t.y);
    const labels = flat(horizontal ? t.y : t.x);
    const shown = values.map((v, j) => [labels[j], v]).filter(([, v]) => typeof v === 'number' && isFinite(v));
    if (!shown.length) return '';
    const name = t.name && !/^trace \d+$/.test(t.name) ? t.name : `series ${i + 1}`;
    if (t.type === 'bar' && shown.length <= 12) return `${name}: ` + shown.map(([l, v]) => `${strip(l ?? '')} ${altNum(v)}`).join(', ');
    const vs = shown.map(([, v]) => v);
    return `${name}: ${vs.length} values from ${altNum(Math.min(...vs))} to ${altNum(Math.max(...vs))}`;
  }).filter((p) => p);
  if (!parts.length) return '';
  return 'Chart' + (titles.length ? ' of ' + titles.join('; ') : '') + '. ' + parts.join('. ') + '.';
};
const describe = (gd) => {
  const svg = gd.querySelector('svg.main-svg');  // the drawing: no control inside it (the toolbar is beside it)
  if (!svg || (gd.lxAltOf === gd._fullData && svg.hasAttribute('aria-label'))) return;
  gd.lxAltOf = gd._fullData;  // drawn again: a new _fullData
  const text = altText(gd);
  if (!text) return;
  svg.setAttribute('role', 'img');
  if (svg.getAttribute('aria-label') !== text) svg.setAttribute('aria-label', text);
};
