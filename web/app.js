// kernbench web: the page's code (plain JavaScript, no library, no network
// beyond the server that sent it). The view is in the URL's hash:
//   #view=system|sip|cube|pe&sip=N&cube=N&pe=N[&src=ID&dst=ID][&hover=ID]
// src/dst highlight a route; hover=ID shows a component's details (a mouse
// hover on its element, sent by the page itself), click=ID clicks its
// element (a drill-down): for links to a view and for the browser tests.
// docs/web.md.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const canvas = $('canvas');
  const tooltip = $('tooltip');
  const VIEWS = ['system', 'sip', 'cube', 'pe'];
  const nodeCache = new Map();
  let state = { view: 'system', sip: 0, cube: 0, pe: 0, src: '', dst: '', hover: '' };
  let topo = null; // /api/topology of the current view
  let svg = null; // the drawing
  let box = null; // its viewBox {x, y, w, h}
  let fullBox = null;
  let renderSerial = 0;

  // ---- the hash -------------------------------------------------------
  function parseHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    const view = VIEWS.includes(p.get('view')) ? p.get('view') : 'system';
    const num = (k) => {
      const v = /^\d+$/.test(p.get(k) || '') ? parseInt(p.get(k), 10) : 0;
      return Number.isSafeInteger(v) ? v : 0;
    };
    return { view, sip: num('sip'), cube: num('cube'), pe: num('pe'),
             src: p.get('src') || '', dst: p.get('dst') || '', hover: p.get('hover') || '',
             click: p.get('click') || '' };
  }

  function viewQuery(s) {
    const q = new URLSearchParams({ view: s.view });
    if (s.view !== 'system') q.set('sip', s.sip);
    if (s.view === 'cube' || s.view === 'pe') q.set('cube', s.cube);
    if (s.view === 'pe') q.set('pe', s.pe);
    return q;
  }

  function hashOf(s) {
    const q = viewQuery(s);
    if (s.src && s.dst) { q.set('src', s.src); q.set('dst', s.dst); }
    return '#' + q.toString();
  }

  function go(s) {
    const h = hashOf(s);
    if (h === location.hash) render(); else location.hash = h;
  }

  // ---- fetching -------------------------------------------------------
  async function getJSON(url) {
    const r = await fetch(url);
    let body;
    try { body = await r.json(); } catch (e) { body = { error: r.status + ' ' + r.statusText }; }
    if (!r.ok) throw new Error(body.error || (r.status + ' ' + r.statusText));
    return body;
  }

  function nodeInfo(id) {
    if (!nodeCache.has(id)) {
      const p = getJSON('/api/node/' + encodeURIComponent(id));
      p.catch(() => nodeCache.delete(id));
      nodeCache.set(id, p);
    }
    return nodeCache.get(id);
  }

  // ---- small DOM helpers ---------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }

  function fmtNum(x) {
    if (typeof x !== 'number') return String(x);
    return Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000);
  }

  function fmtVal(v) {
    if (v === null || v === undefined) return '-';
    if (Array.isArray(v)) return v.map(fmtVal).join(', ');
    if (typeof v === 'object') return Object.entries(v).map(([k, x]) => k + '=' + fmtVal(x)).join(', ');
    return fmtNum(v);
  }

  function pct(u) { return (Math.round(u * 1000) / 10) + '%'; }

  function kvTable(rows) {
    const t = el('table', { class: 'kv' });
    for (const [k, v] of rows) t.append(el('tr', {}, el('td', {}, k), el('td', {}, fmtVal(v))));
    return t;
  }

  // ---- details: a node, a group or a link -----------------------------
  function linkRows(l) {
    const rows = [['link', l.src + ' → ' + l.dst], ['kind', l.kind]];
    if (l.bw_gbs !== undefined) rows.push(['bandwidth', fmtNum(l.bw_gbs) + ' GB/s' + (l.links > 1 ? ' (' + l.links + ' links)' : '')]);
    if (l.links_back) rows.push(['back', fmtNum(l.bw_back_gbs) + ' GB/s' + (l.links_back > 1 ? ' (' + l.links_back + ' links)' : '')]);
    if (l.latency_ns !== undefined) rows.push(['latency', fmtNum(l.latency_ns) + ' ns (wire)']);
    if (l.length_mm !== undefined) rows.push(['length', fmtNum(l.length_mm) + ' mm']);
    if (l.utilisation) {
      rows.push(['utilisation', pct(l.utilisation.util) + ' (sim #' + l.utilisation.sim + ')' +
        (l.utilisation.link ? ', busiest ' + l.utilisation.link : '')]);
      rows.push(['busy', fmtNum(l.utilisation.busy_ns) + ' ns, ' + fmtNum(l.utilisation.bytes) + ' B']);
      rows.push(['peak queueing', fmtNum(l.utilisation.peak_queue_ns) + ' ns']);
    } else if (topo && topo.stats) {
      rows.push(['utilisation', 'no traffic']);
    } else {
      rows.push(['utilisation', 'run with --stats FILE']);
    }
    return rows;
  }

  function nodeRows(n) {
    if (n.group) {
      const rows = [['id', n.id], ['kind', n.kind], ['nodes', n.nodes]];
      for (const [k, c] of Object.entries(n.node_kinds || {})) rows.push(['  ' + k, c]);
      if (n.busiest) rows.push(['busiest', n.busiest.id + ' ' + pct(n.busiest.util)]);
      return rows;
    }
    const rows = [['id', n.id], ['kind', n.kind], ['impl', n.impl]];
    for (const [k, v] of Object.entries(n.attrs || {})) rows.push([k, v]);
    if (n.utilisation) rows.push(['utilisation', pct(n.utilisation.util) + ' busy (sim #' + n.utilisation.sim + ')']);
    rows.push(['links', n.links_out.length + ' out, ' + n.links_in.length + ' in']);
    for (const l of n.links_out.slice(0, 8)) {
      rows.push(['→ ' + l.dst, fmtNum(l.bw_gbs) + ' GB/s, ' + fmtNum(l.latency_ns) + ' ns' +
        (l.utilisation ? ', ' + pct(l.utilisation.util) : '')]);
    }
    if (n.links_out.length > 8) rows.push(['', '… ' + (n.links_out.length - 8) + ' more']);
    return rows;
  }

  async function infoRows(id) {
    const arrow = id.indexOf('->');
    if (arrow < 0) return nodeRows(await nodeInfo(id));
    const src = id.slice(0, arrow), dst = id.slice(arrow + 2);
    const viewLink = topo && topo.links.find((l) => l.id === id);
    try {
      const n = await nodeInfo(src);
      const l = (n.links_out || []).find((x) => x.dst === dst);
      if (l) return linkRows(l);
    } catch (e) { if (!viewLink) throw e; }
    if (viewLink) return linkRows(viewLink);
    return [['link', src + ' → ' + dst]];
  }

  let hoverSerial = 0;
  async function showInfo(id, evt) {
    const serial = ++hoverSerial;
    let rows;
    try { rows = await infoRows(id); } catch (e) { rows = [['error', e.message]]; }
    if (serial !== hoverSerial) return;
    const body = $('details-body');
    body.className = '';
    body.replaceChildren(kvTable(rows));
    body.dataset.node = id;
    tooltip.replaceChildren(kvTable(rows.slice(0, 16)));
    tooltip.dataset.node = id;
    tooltip.hidden = false;
    placeTooltip(evt);
  }

  function placeTooltip(evt) {
    const r = canvas.getBoundingClientRect();
    const x = evt ? evt.clientX : r.left + 20, y = evt ? evt.clientY : r.top + 20;
    const w = tooltip.offsetWidth, h = tooltip.offsetHeight;
    tooltip.style.left = Math.min(x + 14, window.innerWidth - w - 4) + 'px';
    tooltip.style.top = Math.min(y + 14, window.innerHeight - h - 4) + 'px';
  }

  // ---- drill-down -----------------------------------------------------
  // The view that a drawn SIP, IO chiplet, cube or PE opens: its own (a
  // neighbour drawn at the edge of a view opens too), or null.
  function drillTarget(id) {
    let m, t = null;
    if ((m = /^sip(\d+)(\.io\d+)?$/.exec(id))) t = { view: 'sip', sip: +m[1] };
    else if ((m = /^sip(\d+)\.cube(\d+)$/.exec(id))) t = { view: 'cube', sip: +m[1], cube: +m[2] };
    else if ((m = /^sip(\d+)\.cube(\d+)\.pe(\d+)$/.exec(id))) t = { view: 'pe', sip: +m[1], cube: +m[2], pe: +m[3] };
    if (!t) return null;
    const same = t.view === state.view && t.sip === state.sip && (t.cube === undefined || t.cube === state.cube) &&
      (t.pe === undefined || t.pe === state.pe);
    return same ? null : t;
  }

  function up() {
    const s = Object.assign({}, state);
    s.view = { system: 'system', sip: 'system', cube: 'sip', pe: 'cube' }[state.view];
    go(s);
  }

  function crumbs() {
    const nav = $('crumbs');
    const parts = [['system', Object.assign({}, state, { view: 'system' })]];
    if (state.view !== 'system') parts.push(['sip ' + state.sip, Object.assign({}, state, { view: 'sip' })]);
    if (state.view === 'cube' || state.view === 'pe') parts.push(['cube ' + state.cube, Object.assign({}, state, { view: 'cube' })]);
    if (state.view === 'pe') parts.push(['pe ' + state.pe, Object.assign({}, state, { view: 'pe' })]);
    nav.replaceChildren();
    parts.forEach(([label, s], i) => {
      if (i > 0) nav.append(' › ');
      nav.append(i === parts.length - 1 ? el('span', {}, label) : el('a', { href: hashOf(s) }, label));
    });
    $('up').disabled = state.view === 'system';
  }

  // ---- pan and zoom (the SVG's viewBox) -------------------------------
  function setBox(b) {
    box = b;
    svg.setAttribute('viewBox', `${b.x} ${b.y} ${b.w} ${b.h}`);
  }

  function toSvg(clientX, clientY) {
    const m = svg.getScreenCTM();
    if (!m) return { x: box.x + box.w / 2, y: box.y + box.h / 2 };
    const p = new DOMPoint(clientX, clientY).matrixTransform(m.inverse());
    return { x: p.x, y: p.y };
  }

  function zoom(k, clientX, clientY) {
    if (!svg) return;
    const r = canvas.getBoundingClientRect();
    const p = toSvg(clientX === undefined ? r.left + r.width / 2 : clientX, clientY === undefined ? r.top + r.height / 2 : clientY);
    const w = Math.min(Math.max(box.w * k, fullBox.w / 200), fullBox.w * 20);
    const f = w / box.w;
    setBox({ x: p.x - (p.x - box.x) * f, y: p.y - (p.y - box.y) * f, w: box.w * f, h: box.h * f });
  }

  let drag = null;
  canvas.addEventListener('wheel', (e) => {
    if (!svg) return;
    e.preventDefault();
    zoom(Math.exp(Math.max(-100, Math.min(100, e.deltaY)) * 0.004), e.clientX, e.clientY);
  }, { passive: false });
  canvas.addEventListener('mousedown', (e) => {
    if (!svg || e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, box: Object.assign({}, box), moved: false };
  });
  window.addEventListener('mousemove', (e) => {
    if (drag) {
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 4) { drag.moved = true; canvas.classList.add('dragging'); }
      if (drag.moved) {
        const r = canvas.getBoundingClientRect();
        const scale = Math.max(drag.box.w / r.width, drag.box.h / r.height);
        setBox({ x: drag.box.x - dx * scale, y: drag.box.y - dy * scale, w: drag.box.w, h: drag.box.h });
      }
    }
    if (!tooltip.hidden) placeTooltip(e);
  });
  window.addEventListener('mouseup', () => {
    canvas.classList.remove('dragging');
    if (drag && drag.moved) canvas.dataset.justDragged = '1';
    drag = null;
  });

  // ---- hover and click on the drawing ---------------------------------
  function itemOf(target) {
    if (!svg || !(target instanceof Element)) return null;
    const g = target.closest('g.node, g.edge, g.cluster');
    return g && svg.contains(g) && g.id ? g : null;
  }

  let hovered = null;
  canvas.addEventListener('mouseover', (e) => {
    const g = itemOf(e.target);
    if (g === hovered) return;
    if (hovered) hovered.classList.remove('kb-hover');
    hovered = g;
    if (!g) { tooltip.hidden = true; return; }
    g.classList.add('kb-hover');
    showInfo(g.id, e);
  });
  canvas.addEventListener('mouseleave', () => {
    if (hovered) hovered.classList.remove('kb-hover');
    hovered = null;
    tooltip.hidden = true;
  });
  canvas.addEventListener('click', (e) => {
    if (canvas.dataset.justDragged) { delete canvas.dataset.justDragged; return; }
    const g = itemOf(e.target);
    const t = g && drillTarget(g.id);
    if (t) go(Object.assign({}, state, t));
  });

  $('up').addEventListener('click', up);
  $('fit').addEventListener('click', () => { if (svg) setBox(Object.assign({}, fullBox)); });
  $('zoom-in').addEventListener('click', () => zoom(1 / 1.4));
  $('zoom-out').addEventListener('click', () => zoom(1.4));

  // ---- the route finder ----------------------------------------------
  $('route-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const src = $('route-src').value.trim(), dst = $('route-dst').value.trim();
    if (!src || !dst) {
      $('route-result').replaceChildren(el('span', { class: 'error' }, 'give two node ids'));
      return;
    }
    go(Object.assign({}, state, { src, dst }));
  });
  $('route-clear').addEventListener('click', () => go(Object.assign({}, state, { src: '', dst: '' })));

  // The element of the drawing that stands for node id: itself, or the
  // group (SIP, cube, PE) drawn for it.
  function visibleFor(id, ids) {
    let p = id;
    for (;;) {
      if (ids.has(p)) return p;
      const dot = p.lastIndexOf('.');
      if (dot < 0) return null;
      p = p.slice(0, dot);
    }
  }

  async function showRoute(src, dst) {
    const out = $('route-result');
    $('route-src').value = src;
    $('route-dst').value = dst;
    out.dataset.hops = '';
    let r;
    try {
      r = await getJSON('/api/route?' + new URLSearchParams({ src, dst }));
    } catch (e) {
      out.replaceChildren(el('span', { class: 'error' }, e.message));
      return;
    }
    const byId = new Map();
    for (const g of svg ? svg.querySelectorAll('g[id]') : []) byId.set(g.id, g);
    const ids = new Set(byId.keys());
    const seq = [];
    for (const n of r.nodes) {
      const v = visibleFor(n, ids);
      if (v && seq[seq.length - 1] !== v) seq.push(v);
    }
    const lit = new Set(seq);
    for (let i = 0; i + 1 < seq.length; i++) { // a drawn edge is named in either direction
      lit.add(seq[i] + '->' + seq[i + 1]);
      lit.add(seq[i + 1] + '->' + seq[i]);
    }
    for (const l of r.links) lit.add(l.id);
    if (svg) for (const g of svg.querySelectorAll('g.route')) lit.add(g.id); // what the drawing marked
    let shown = 0;
    for (const id of lit) {
      const g = byId.get(id);
      if (g) { g.classList.add('kb-route'); shown++; }
    }
    out.dataset.hops = r.hops;
    out.dataset.shown = shown;
    const list = el('ol');
    for (const n of r.nodes) list.append(el('li', {}, n));
    out.className = '';
    out.replaceChildren(
      el('div', {}, `${r.hops} hops, ${r.latency_ns !== null ? fmtNum(r.latency_ns) + ' ns (no load)' : ''}` +
        (r.bottleneck_bw_gbs ? `, narrowest link ${fmtNum(r.bottleneck_bw_gbs)} GB/s` : '')),
      list);
  }

  // ---- the view -------------------------------------------------------
  function summary() {
    $('topo-name').textContent = topo.name;
    const c = topo.counts;
    let s = `${c.sips} SIPs (${topo.sip_topology}), ${c.cubes} cubes, ${c.pes} PEs, ${c.nodes} nodes, ${c.links} links` +
      ` · ${topo.digest || ''}`;
    if (topo.stats) s += ` · utilisation from ${topo.stats.file}`;
    $('summary').textContent = s;
  }

  function fail(msg) {
    canvas.dataset.state = 'error';
    canvas.replaceChildren(el('div', { id: 'canvas-message' }, msg));
  }

  async function render() {
    const serial = ++renderSerial;
    state = parseHash();
    crumbs();
    canvas.dataset.state = 'loading';
    tooltip.hidden = true;
    try {
      const t = await getJSON('/api/topology?' + viewQuery(state));
      const sq = viewQuery(state);
      if (state.src && state.dst) { sq.set('src', state.src); sq.set('dst', state.dst); }
      let r = await fetch('/api/svg?' + sq);
      if (!r.ok && sq.has('src')) r = await fetch('/api/svg?' + viewQuery(state)); // a bad route: the view alone
      const text = await r.text();
      if (serial !== renderSerial) return;
      topo = t;
      summary();
      if (!r.ok) {
        let msg = r.status + ' ' + r.statusText;
        try { msg = JSON.parse(text).error || msg; } catch (e) { /* not JSON */ }
        throw new Error(msg);
      }
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      if (doc.documentElement.nodeName !== 'svg') throw new Error('the drawing is not SVG');
      svg = document.importNode(doc.documentElement, true);
      const vb = (svg.getAttribute('viewBox') || '').split(/[\s,]+/).map(Number);
      svg.removeAttribute('width');
      svg.removeAttribute('height');
      canvas.replaceChildren(svg);
      if (vb.length === 4 && vb.every(Number.isFinite)) {
        fullBox = { x: vb[0], y: vb[1], w: vb[2], h: vb[3] };
      } else {
        const b = svg.getBBox();
        fullBox = { x: b.x, y: b.y, w: b.width || 1, h: b.height || 1 };
      }
      try { // text wider in this browser's font than Graphviz measured it: make room
        const b = svg.getBBox(), pad = 4;
        const x0 = Math.min(fullBox.x, b.x - pad), y0 = Math.min(fullBox.y, b.y - pad);
        const x1 = Math.max(fullBox.x + fullBox.w, b.x + b.width + pad), y1 = Math.max(fullBox.y + fullBox.h, b.y + b.height + pad);
        if ([x0, y0, x1, y1].every(Number.isFinite)) fullBox = { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
      } catch (e) { /* not rendered yet: the viewBox as it is */ }
      setBox(Object.assign({}, fullBox));
      for (const g of svg.querySelectorAll('g.node, g.cluster')) {
        if (g.id && drillTarget(g.id)) g.classList.add('kb-drill');
      }
      canvas.dataset.view = state.view;
      canvas.dataset.svgNodes = svg.querySelectorAll('g.node').length;
      canvas.dataset.svgEdges = svg.querySelectorAll('g.edge').length;
      canvas.dataset.viewItems = topo.nodes.length;
      if (state.src && state.dst) await showRoute(state.src, state.dst);
      else $('route-result').replaceChildren();
      if (state.hover) await hoverOn(state.hover);
      if (serial === renderSerial) canvas.dataset.state = 'ready';
      if (state.click) clickOn(state.click);
    } catch (e) {
      if (serial === renderSerial) {
        svg = null;
        fail('cannot show this view: ' + e.message);
        if (state.hover) await showInfo(state.hover, null);
      }
    }
  }

  // What the mouse would do on the element drawn for id (hover=, click=).
  function mouseAt(g, type) {
    const r = g.getBoundingClientRect();
    const at = { bubbles: true, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
    g.dispatchEvent(new MouseEvent(type, at));
    return at;
  }

  async function hoverOn(id) {
    const g = svg && svg.querySelector('[id="' + CSS.escape(id) + '"]');
    const at = g && itemOf(g) === g ? mouseAt(g, 'mouseover') : null; // the page's own hover
    await showInfo(id, at); // and its data, waited for
  }

  function clickOn(id) {
    const g = svg && svg.querySelector('[id="' + CSS.escape(id) + '"]');
    if (g) mouseAt(g, 'click');
  }

  window.addEventListener('hashchange', render);
  render();
})();
