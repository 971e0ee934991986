// The RNBD dashboard: polls api/state every second and draws what changed. The server sends
// raw counters and latency histograms; rates, means and percentiles are the difference
// between two polls, worked out here. No library: tables are DOM nodes (textContent only,
// nothing from the server is ever parsed as HTML), charts are drawn on canvases.
'use strict';

(function () {
  const POLL_MS = 1000;
  const WINDOW_S = 60;
  const COLORS = ['#2457c5', '#e07b00', '#1b873f', '#c62828', '#7b3fb5', '#00838f', '#8d6e63', '#d81b60'];

  if (document.body.dataset.page === 'login') {
    if (new URLSearchParams(location.search).has('failed')) {
      document.getElementById('failed').hidden = false;
    }
    return;
  }

  let previous = null;                   // the last state, for differences
  const rate = new Map();                // path key -> [{t, v}]
  const latency = new Map();             // series name -> [{t, v}]
  const markers = [];                    // {t, text}: state changes drawn on the charts
  const lastStates = new Map();          // object key -> state
  const events = [];                     // newest first

  // ---- numbers ---------------------------------------------------------------------------

  function fmtInt(n) { return n == null ? '' : Math.round(n).toLocaleString('en-US'); }
  function fmtUs(ns) { return ns == null || !isFinite(ns) ? '–' : (ns / 1000).toFixed(ns < 100000 ? 1 : 0); }
  function fmtBytes(b) {
    if (b == null) return '';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i === 0 ? b : b.toFixed(1)) + ' ' + units[i];
  }
  function fmtRate(bytesPerS) { return bytesPerS == null ? '–' : (bytesPerS / 1048576).toFixed(1); }
  function perSecond(now, before, dt) { return before == null || dt <= 0 ? null : Math.max(0, now - before) / dt; }

  // Mean and 99th percentile of the completions between two histograms, from the bucket counts.
  function latencyBetween(h, old, bounds) {
    if (!h || !old) return null;
    const counts = h.counts.map((c, i) => c - (old.counts[i] || 0));
    const n = counts.reduce((a, b) => a + b, 0);
    if (n <= 0) return null;
    const mean = (h.sum_ns - old.sum_ns) / n;
    let seen = 0, p99 = null;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= 0.99 * n) { p99 = i < bounds.length ? bounds[i] : Infinity; break; }
    }
    return { n, mean, p99 };
  }

  function rowsOf(state, table) { return state && state.tables[table] ? state.tables[table].rows : []; }
  function index(rows, key) { const m = new Map(); rows.forEach(r => m.set(key(r), r)); return m; }
  const pathKey = r => r.session + '/' + r.path;

  // ---- DOM helpers -------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else if (k.startsWith('data-')) e.setAttribute(k, v); else e[k] = v;
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c)));
    return e;
  }

  function stateClass(s) {
    if (['CONNECTED', 'ACTIVE', 'ONLINE', 'MAPPED'].includes(s)) return 'ok';
    if (['CONNECTING', 'RECONNECTING', 'OPENING', 'PENDING', 'INIT', 'DISCONNECTED', 'CLOSING'].includes(s)) return 'warn';
    return 'bad';
  }
  function badge(s) { return el('span', { class: 'state ' + stateClass(s), 'data-state': s }, s); }

  function fill(table, headers, rows, emptyText) {
    table.replaceChildren();
    const head = el('tr');
    headers.forEach(h => head.append(el('th', { class: h.num ? 'num' : '' }, h.title)));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    if (rows.length === 0) body.append(el('tr', { class: 'empty' }, el('td', { colSpan: headers.length }, emptyText)));
    rows.forEach(r => body.append(r));
    table.append(body);
  }

  function cells(tr, headers, values) {
    values.forEach((v, i) => tr.append(el('td', { class: headers[i].num ? 'num' : '' }, v)));
    return tr;
  }

  const H = (title, num) => ({ title, num: !!num });

  // ---- events ----------------------------------------------------------------------------

  function watch(kind, key, state, t) {
    const before = lastStates.get(kind + ' ' + key);
    lastStates.set(kind + ' ' + key, state);
    if (before !== undefined && before !== state) {
      const text = kind + ' ' + key + ': ' + before + ' → ' + state;
      events.unshift({ t, text, state });
      if (kind === 'path' || kind === 'device') markers.push({ t, text: key.split('/').pop() + ' ' + state });
    }
  }

  function drawEvents() {
    const list = document.getElementById('events');
    list.replaceChildren();
    if (events.length === 0) list.append(el('li', { class: 'empty' }, 'none yet'));
    events.slice(0, 200).forEach(e => list.append(el('li', { 'data-state': e.state },
      el('time', {}, new Date(e.t).toLocaleTimeString()), e.text)));
  }

  // ---- tables ----------------------------------------------------------------------------

  function drawPaths(state, dt) {
    const headers = [H('Session / path'), H('State'), H('Policy / HCA'), H('Inflight', 1), H('IOPS', 1),
      H('Latency µs', 1), H('p99 µs', 1), H('Smoothed µs', 1), H('HB RTT µs', 1), H('Failovers', 1),
      H('Reconnects ok/failed', 1), H('Attempts', 1), H('Last error', 1)];
    const old = index(rowsOf(previous, 'rtrs_client_path'), pathKey);
    const paths = rowsOf(state, 'rtrs_client_path');
    const rows = [];
    for (const s of rowsOf(state, 'rtrs_client_session')) {
      const mine = paths.filter(p => p.session === s.session);
      const up = mine.filter(p => p.state === 'CONNECTED').length;
      const policy = s.mp_policy === s.active_mp_policy ? s.mp_policy : s.mp_policy + ' (using ' + s.active_mp_policy + ')';
      rows.push(el('tr', { class: 'group', 'data-session': s.session }, el('td', {}, s.session),
        el('td', {}, badge(s.state)),
        el('td', { colSpan: headers.length - 3 }, 'policy ' + policy + ' · ' + up + '/' + mine.length
          + ' paths connected · queue depth ' + s.queue_depth),
        el('td', { class: 'num' }, s.last_error || '')));
      for (const p of mine) {
        const o = old.get(pathKey(p));
        const iops = o ? perSecond(p.reads + p.writes, o.reads + o.writes, dt) : null;
        const lat = latencyBetween(p.io_latency, o && o.io_latency, state.latency_bounds_ns);
        rows.push(cells(el('tr', { 'data-path': pathKey(p) }), headers,
          ['  ' + p.path, badge(p.state), p.hca_name || '–', fmtInt(p.inflight), fmtInt(iops),
            lat ? fmtUs(lat.mean) : '–', lat ? fmtUs(lat.p99) : '–', fmtUs(p.io_latency_ns), fmtUs(p.hb_rtt_ns),
            fmtInt(p.failovers), p.reconnects_ok + '/' + p.reconnects_failed, p.reconnect_attempts, p.last_error || '']));
      }
    }
    fill(document.getElementById('paths'), headers, rows, 'no RTRS client session');
  }

  function blockCells(r, o, dt, bounds) {
    const lat = latencyBetween(r.latency, o && o.latency, bounds);
    return [
      (o ? fmtInt(perSecond(r.reads, o.reads, dt)) : '–') + ' / ' + (o ? fmtInt(perSecond(r.writes, o.writes, dt)) : '–'),
      fmtRate(o && perSecond(r.read_bytes, o.read_bytes, dt)) + ' / ' + fmtRate(o && perSecond(r.write_bytes, o.write_bytes, dt)),
      lat ? fmtUs(lat.mean) + ' / ' + fmtUs(lat.p99) : '–', fmtInt(r.errors), fmtInt(r.inflight)];
  }

  // "b since 08:01:02, 2 takeovers, last stall 131 ms": who holds the storage of an export of several servers
  function fmtSince(ms) {
    return ms > 0 ? new Date(ms).toISOString().substring(11, 19) + ' UTC' : '–';
  }

  function activeCell(d) {
    if (!d.sessions || d.sessions.length === 0) return '–';
    if (!d.active_session) return 'none';
    return d.active_session + ' since ' + fmtSince(d.active_since_ms) + ', ' + fmtInt(d.takeovers) + ' takeover'
      + (d.takeovers === 1 ? '' : 's') + (d.takeovers > 0 ? ', last stall ' + d.last_stall_ms + ' ms, longest '
      + d.max_stall_ms + ' ms' : '');
  }

  function roleCell(e) {
    if (!e.role || e.role === 'NONE') return '–';
    return e.role.toLowerCase() + (e.active_server ? ' (active: ' + e.active_server + ' since '
      + fmtSince(e.active_since_ms) + ', ' + fmtInt(e.takeovers) + ' takeovers here)' : '');
  }

  function drawDevices(state, dt) {
    const headers = [H('Device'), H('State'), H('Session'), H('Active server'), H('Export'), H('Mode'), H('Size', 1),
      H('Users', 1), H('IOPS r / w', 1), H('MiB/s r / w', 1), H('Latency mean / p99 µs', 1), H('Errors', 1),
      H('Inflight', 1), H('Last error', 1)];
    const old = index(rowsOf(previous, 'rnbd_device'), r => r.device);
    const rows = rowsOf(state, 'rnbd_device').map(d => cells(el('tr', { 'data-device': d.device }), headers,
      [d.device, badge(d.state), d.sessions && d.sessions.length ? d.sessions.join(', ') : d.session, activeCell(d),
        d.export, d.access_mode, fmtBytes(d.size), d.users,
        ...blockCells(d, old.get(d.device), dt, state.latency_bounds_ns), d.last_error || '']));
    fill(document.getElementById('devices'), headers, rows, 'no mapped device');
  }

  function drawExports(state, dt) {
    const headers = [H('Export'), H('State'), H('Backend'), H('Size', 1), H('RO'), H('Role'), H('Opened by'),
      H('IOPS r / w', 1), H('MiB/s r / w', 1), H('Latency mean / p99 µs', 1), H('Errors', 1), H('Inflight', 1),
      H('Last error')];
    const old = index(rowsOf(previous, 'rnbd_export'), r => r.export);
    const openers = rowsOf(state, 'rnbd_export_opener');
    const rows = rowsOf(state, 'rnbd_export').map(e => cells(el('tr', { 'data-export': e.export }), headers,
      [e.export, badge(e.state), e.backend, fmtBytes(e.size), e.read_only ? 'yes' : 'no', roleCell(e),
        openers.filter(o => o.export === e.export).map(o => o.session + ':' + o.access_mode).join(', ') || '–',
        ...blockCells(e, old.get(e.export), dt, state.latency_bounds_ns), e.last_error]));
    fill(document.getElementById('exports'), headers, rows, 'no export');
  }

  function drawServerSessions(state) {
    const headers = [H('Session'), H('Host id'), H('Paths', 1), H('Queue depth', 1), H('Chunk', 1), H('Reads', 1),
      H('Writes', 1), H('Read', 1), H('Written', 1), H('Inflight', 1)];
    const paths = rowsOf(state, 'rtrs_server_path');
    const rows = rowsOf(state, 'rtrs_server_session').map(s => cells(el('tr'), headers,
      [s.session, s.host_id, paths.filter(p => p.session === s.session).length, s.queue_depth, fmtBytes(s.chunk_size),
        fmtInt(s.reads), fmtInt(s.writes), fmtBytes(s.read_bytes), fmtBytes(s.write_bytes), fmtInt(s.inflight)]));
    fill(document.getElementById('server-sessions'), headers, rows, 'no client holds a session here');
  }

  function drawRdma(state) {
    const headers = [H('Device'), H('State'), H('Provider'), H('Addresses'), H('Clients'), H('Counters')];
    const rows = rowsOf(state, 'rdma_device').map(d => cells(el('tr'), headers,
      [d.device, badge(d.state), d.provider, d.addresses.join(', '), d.clients.join(', ') || '–',
        Object.entries(d.counters || {}).map(([k, v]) => k + ' ' + fmtInt(v)).join(', ') || '–']));
    fill(document.getElementById('rdma'), headers, rows, 'no RDMA device');
  }

  // the hot-swappable services by the name each announces, with its bundle and what uses it
  function drawProviders(state) {
    const headers = [H('Kind'), H('Name'), H('Bundle'), H('Version'), H('Id', 1), H('Ranking', 1), H('Used by')];
    const kinds = [['multipath policy', 'rtrs_mp_policy', 'sessions'], ['authenticator', 'rtrs_authenticator', 'used_by'],
      ['block backend', 'rnbd_backend', 'exports']];
    const rows = kinds.flatMap(([kind, table, used]) => rowsOf(state, table).map(p => cells(el('tr',
      { 'data-provider': table + '/' + p.name }), headers,
      [kind, p.name, p.bundle, p.version, p.bundle_id, p.ranking, p[used].join(', ') || '–'])));
    fill(document.getElementById('providers'), headers, rows, 'none registered');
  }

  function drawGateway(state) {
    const headers = [H('Listening'), H('Exports'), H('Open', 1), H('Requests', 1), H('Errors', 1), H('Read / written', 1)];
    const rows = rowsOf(state, 'nbd_gateway').map(g => cells(el('tr'), headers,
      [[g.address, g.unix_socket].filter(x => x).join(', '), g.exports.join(', ') || '–', g.connections_open,
        fmtInt(g.requests), fmtInt(g.errors), fmtBytes(g.read_bytes) + ' / ' + fmtBytes(g.write_bytes)]));
    fill(document.getElementById('gateway'), headers, rows, 'the NBD gateway is not running');
  }

  // Host settings that hold the appliance back (today the gateway's Unix send buffer), each with the
  // command that fixes it: shown above everything while one applies, gone once it is fixed.
  function drawTuning(state) {
    const hints = rowsOf(state, 'nbd_gateway').map(g => g.host_tuning).filter(h => h);
    const list = document.getElementById('tuning-list');
    list.replaceChildren(...hints.map(h => el('li', {}, h)));
    document.getElementById('tuning').hidden = hints.length === 0;
  }

  // ---- charts ----------------------------------------------------------------------------

  function push(map, name, t, v) {
    if (!map.has(name)) map.set(name, []);
    const s = map.get(name);
    s.push({ t, v });
    while (s.length && s[0].t < t - WINDOW_S * 1000) s.shift();
  }

  // markers, and series of paths or devices that are gone, leave once they scrolled out
  function forget(now) {
    const start = now - WINDOW_S * 1000;
    while (markers.length && markers[0].t < start) markers.shift();
    [rate, latency].forEach(map => map.forEach((s, name) => { if (!s.length || s[s.length - 1].t < start) map.delete(name); }));
  }

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    return [1, 2, 2.5, 5, 10].map(m => m * p).find(m => m >= v);
  }

  function chart(canvasId, legendId, map, now, unit) {
    const canvas = document.getElementById(canvasId);
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    if (canvas.width !== w * dpr) { canvas.width = w * dpr; canvas.height = h * dpr; }
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    const left = 56, right = 8, top = 8, bottom = 22;
    const x0 = now - WINDOW_S * 1000;
    let max = 0;
    map.forEach(s => s.forEach(p => { if (p.v != null && p.v > max) max = p.v; }));
    max = niceMax(max * 1.1);
    const X = t => left + (t - x0) / (WINDOW_S * 1000) * (w - left - right);
    const Y = v => top + (1 - v / max) * (h - top - bottom);
    g.font = '11px system-ui, sans-serif';
    g.strokeStyle = '#dde1e8'; g.fillStyle = '#687083'; g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const v = max * i / 4, y = Y(v);
      g.beginPath(); g.moveTo(left, y); g.lineTo(w - right, y); g.stroke();
      g.textAlign = 'right'; g.fillText(v >= 100 ? Math.round(v).toLocaleString('en-US') : +v.toFixed(1), left - 6, y + 4);
    }
    g.textAlign = 'center';
    for (let s = WINDOW_S; s >= 0; s -= 15) g.fillText(s === 0 ? 'now' : '−' + s + ' s', X(now - s * 1000), h - 6);
    g.save();
    g.setLineDash([4, 3]); g.strokeStyle = '#c62828'; g.fillStyle = '#c62828'; g.textAlign = 'left';
    markers.filter(m => m.t >= x0).forEach(m => {
      const x = X(m.t);
      g.beginPath(); g.moveTo(x, top); g.lineTo(x, h - bottom); g.stroke();
      // the label on the side of the line where there is room for it
      const right = x < w / 2;
      g.textAlign = right ? 'left' : 'right';
      g.fillText(m.text, right ? x + 3 : x - 3, top + 10 + (markers.indexOf(m) % 3) * 12);
    });
    g.restore();
    const legend = document.getElementById(legendId);
    legend.replaceChildren();
    let i = 0;
    map.forEach((s, name) => {
      const color = COLORS[i++ % COLORS.length];
      g.strokeStyle = color; g.lineWidth = 2; g.beginPath();
      let drawing = false;
      s.forEach(p => {
        if (p.v == null) { drawing = false; return; }
        if (drawing) g.lineTo(X(p.t), Y(p.v)); else g.moveTo(X(p.t), Y(p.v));
        drawing = true;
      });
      g.stroke();
      const last = s.length ? s[s.length - 1].v : null;
      const swatch = el('i');
      swatch.style.background = color; // through the CSSOM: the page's CSP allows no inline style attribute
      legend.append(el('span', {}, swatch, name + ' ' +
        (last == null ? '–' : (last >= 100 ? Math.round(last).toLocaleString('en-US') : last.toFixed(1))) + ' ' + unit));
    });
  }

  function sample(state, dt) {
    const t = state.time_ms;
    const old = index(rowsOf(previous, 'rtrs_client_path'), pathKey);
    for (const p of rowsOf(state, 'rtrs_client_path')) {
      const o = old.get(pathKey(p));
      push(rate, pathKey(p), t, o ? perSecond(p.reads + p.writes, o.reads + o.writes, dt) : null);
      const lat = latencyBetween(p.io_latency, o && o.io_latency, state.latency_bounds_ns);
      push(latency, pathKey(p), t, lat ? lat.mean / 1000 : null);
    }
    const oldDevices = index(rowsOf(previous, 'rnbd_device'), r => r.device);
    for (const d of rowsOf(state, 'rnbd_device')) {
      const lat = latencyBetween(d.latency, oldDevices.get(d.device) && oldDevices.get(d.device).latency,
        state.latency_bounds_ns);
      push(latency, d.device, t, lat ? lat.mean / 1000 : null);
    }
  }

  // ---- the loop --------------------------------------------------------------------------

  function setStatus(text, cls) {
    const s = document.getElementById('status');
    s.textContent = text;
    s.className = 'status ' + cls;
  }

  function update(state) {
    const dt = previous ? (state.time_ms - previous.time_ms) / 1000 : 0;
    const t = state.time_ms;
    rowsOf(state, 'rtrs_client_session').forEach(s => watch('session', s.session, s.state, t));
    rowsOf(state, 'rtrs_client_path').forEach(p => watch('path', pathKey(p), p.state, t));
    rowsOf(state, 'rnbd_device').forEach(d => watch('device', d.device, d.state, t));
    rowsOf(state, 'rnbd_export').forEach(e => watch('export', e.export, e.state, t));
    rowsOf(state, 'rdma_device').forEach(d => watch('rdma', d.device, d.state, t));
    document.getElementById('user').textContent = state.user;
    sample(state, dt);
    drawPaths(state, dt);
    drawDevices(state, dt);
    drawExports(state, dt);
    drawServerSessions(state);
    drawRdma(state);
    drawGateway(state);
    drawTuning(state);
    drawProviders(state);
    drawEvents();
    forget(t);
    chart('rate-chart', 'rate-legend', rate, t, 'IOPS');
    chart('latency-chart', 'latency-legend', latency, t, 'µs');
    previous = state;
  }

  async function poll() {
    try {
      const r = await fetch('api/state', { cache: 'no-store', credentials: 'same-origin' });
      if (r.status === 401) { location.href = 'login.html'; return; }
      if (!r.ok) throw new Error('HTTP ' + r.status);
      update(await r.json());
      setStatus('live · ' + new Date().toLocaleTimeString(), 'ok');
    } catch (e) {
      setStatus('no answer: ' + e.message, 'bad');
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  poll();
})();
