// The service's page (docs/service.md, "The page"). Hand-written, no dependencies.
// The form is built from GET /v1/fields; every change (debounced) posts the request to
// POST /edge/training and the three charts to POST /v1/plot.svg?chart=...; the request
// goes into the address (?field=value&..., as GET /v1/plot.svg takes it), a new history
// entry per estimate, so a link shares it and Back returns to the one before; a dropped
// config file goes to POST /v1/config, whose answer fills the form. Text from the
// service goes into the page as text nodes only; SVG is parsed and filtered, never
// assigned as HTML.
'use strict';

(function () {
  const DEBOUNCE_MS = 250;
  const CHARTS = ['gpus', 'seq', 'budget'];
  // Shown first, in this order; the rest of the field table goes under "More fields".
  const MAIN = ['model', 'gpu', 'num_gpus', 'gpus_per_node', 'micro_batch', 'seq_length', 'zero_stage', 'sharding',
    'recompute', 'framework', 'precision', 'optimizer', 'attention', 'tensor_parallel', 'pipeline_parallel',
    'context_parallel', 'adapter'];
  const DEFAULTS = { model: 'llama3-8b', gpu: 'h100', num_gpus: '8', micro_batch: '1', seq_length: '4096', zero_stage: '3' };
  const SVG_NS = 'http://www.w3.org/2000/svg';

  const $ = (id) => document.getElementById(id);
  let fields = [];          // the field table, with .type added: int | number | bool | text
  let timer = null;
  let generation = 0;       // answers to older requests are dropped
  let renders = 0;
  let shownQuery = null;    // the query of the request the current history entry stands for

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // ---- The form, from the field table ----

  // "a|b|c" -> ["a","b","c"]; "a|b, or ..." -> the list, open to other words; else null.
  function choices(accepted) {
    const m = /^([A-Za-z0-9_.-]+(?:\|[A-Za-z0-9_.-]+)+)(,.*)?$/.exec(accepted);
    return m ? { values: m[1].split('|'), open: Boolean(m[2]) } : null;
  }

  function typeOf(field, list) {
    if (/^integer/.test(field.accepted)) return 'int';
    if (/^number/.test(field.accepted)) return 'number';
    if (list && list.values.join('|') === 'true|false') return 'bool';
    if (list && list.values.every((v) => /^[0-9]+$/.test(v))) return 'int';
    return 'text';
  }

  function control(field, models, gpus) {
    const list = choices(field.accepted);
    field.type = typeOf(field, list);
    let input;
    if (field.name === 'model' || field.name === 'gpu') {
      input = el('select');
      const none = field.name === 'model' ? 'custom (geometry under More fields)' : 'custom (gpu_memory_gb)';
      input.append(el('option', { value: '' }, none));
      for (const item of field.name === 'model' ? models : gpus) {
        input.append(el('option', { value: item.name }, item.name + ' — ' + item.description));
      }
    } else if (list && !list.open) {
      input = el('select');
      input.append(el('option', { value: '' }, '(default)'));
      for (const v of list.values) input.append(el('option', { value: v }, v));
    } else {
      input = el('input', { type: 'text', placeholder: list ? list.values.join(', ') : field.accepted });
      if (field.type === 'int' || field.type === 'number') input.setAttribute('inputmode', 'decimal');
      if (list) {
        const options = el('datalist', { id: 'list-' + field.name });
        for (const v of list.values) options.append(el('option', { value: v }));
        input.setAttribute('list', options.id);
        field.datalist = options;
      }
    }
    input.id = 'f-' + field.name;
    input.name = field.name;
    input.title = field.help + ' [' + field.accepted + ']';
    const label = el('label', { for: input.id }, field.name, el('small', {}, field.help));
    const row = el('div', { class: 'field', id: 'row-' + field.name }, label, input);
    if (field.datalist) row.append(field.datalist);
    row.append(el('p', { class: 'field-error', id: 'e-' + field.name, role: 'alert' }));
    return row;
  }

  function setValue(name, value) {
    const input = $('f-' + name);
    if (!input) return false;
    const text = value === null || value === undefined ? '' : String(value);
    if (input.tagName === 'SELECT' && text !== '' && ![...input.options].some((o) => o.value === text)) {
      input.append(el('option', { value: text }, text));  // a name the catalog spells differently
    }
    input.value = text;
    return true;
  }

  function fillForm(request) {
    for (const f of fields) setValue(f.name, '');
    for (const [name, value] of Object.entries(request)) setValue(name, value);
    if (!$('f-model').value) $('more').open = true;
  }

  // The form as a request: only the fields given; numbers and booleans typed, and text
  // that is neither sent as it is, so that the service names the field that is wrong.
  function currentRequest() {
    const request = {};
    for (const f of fields) {
      const raw = $('f-' + f.name).value.trim();
      if (raw === '') continue;
      if ((f.type === 'int' || f.type === 'number') && /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(raw)) {
        request[f.name] = Number(raw);
      } else if (f.type === 'bool' && (raw === 'true' || raw === 'false')) {
        request[f.name] = raw === 'true';
      } else {
        request[f.name] = raw;
      }
    }
    return request;
  }

  // ---- The request in the address ----

  // The request as a query string, fields in the field table's order (stable, so that the
  // same request always gives the same address).
  function queryOf(request) {
    return new URLSearchParams(Object.entries(request).map(([k, v]) => [k, String(v)])).toString();
  }

  // The fields in the address (unknown names left out), or null when it names none.
  function requestFromAddress() {
    const request = {};
    for (const [name, value] of new URLSearchParams(location.search)) {
      if (fields.some((f) => f.name === name)) request[name] = value;
    }
    return Object.keys(request).length ? request : null;
  }

  // The form from the address (or the defaults), taken as what this history entry shows.
  function fillFromAddress() {
    const request = requestFromAddress();
    fillForm(request || DEFAULTS);
    if (request === null) $('more').open = false;
    shownQuery = queryOf(currentRequest());
  }

  // After an estimate: a request other than the entry's gets a new entry.
  function remember(request) {
    const query = queryOf(request);
    if (query === shownQuery) return;
    history.pushState(null, '', '?' + query);
    shownQuery = query;
  }

  // ---- Talking to the service ----

  async function getJson(path) {
    const r = await fetch(path, { headers: { Accept: 'application/json' } });
    if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
    return r.json();
  }

  function post(path, body, signal) {
    return fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal });
  }

  // The service's error line from a non-200 answer: {"error":{"message"}} or the status.
  async function errorOf(response) {
    const text = await response.text();
    try {
      const j = JSON.parse(text);
      if (j && j.error && typeof j.error.message === 'string') return j.error;
    } catch (e) { /* not JSON */ }
    return { code: 'http_' + response.status, field: '', message: 'HTTP ' + response.status + ': ' + text.slice(0, 300) };
  }

  function setPending(on) { document.body.dataset.pending = on ? '1' : '0'; }

  function schedule() {
    setPending(true);
    clearTimeout(timer);
    timer = setTimeout(update, DEBOUNCE_MS);
  }

  function clearErrors() {
    for (const node of document.querySelectorAll('.field.invalid')) node.classList.remove('invalid');
    for (const node of document.querySelectorAll('.field .field-error')) node.textContent = '';
    $('request-error').textContent = '';
  }

  function showFieldError(error) {
    const spot = $('e-' + error.field);
    if (spot) {
      spot.textContent = error.message;
      $('row-' + error.field).classList.add('invalid');
      if (!MAIN.includes(error.field)) $('more').open = true;
    } else {
      $('request-error').textContent = error.message;
    }
  }

  async function update() {
    const mine = ++generation;
    const request = currentRequest();
    remember(request);
    let answer;
    try {
      const r = await post('/edge/training', request);
      if (mine !== generation) return;
      clearErrors();
      if (r.status === 200) {
        answer = await r.json();
      } else {
        const error = await errorOf(r);
        if (mine !== generation) return;
        showFieldError(error);
        showVerdictError(error.message);
      }
    } catch (e) {
      if (mine !== generation) return;
      showVerdictError('the service did not answer: ' + e.message);
    }
    if (answer) render(answer);
    await Promise.all(CHARTS.map((chart) => drawChart(chart, answer ? request : null, mine)));
    if (mine !== generation) return;
    renders += 1;
    document.body.dataset.renders = String(renders);
    setPending(false);
  }

  // ---- The answer ----

  // Numbers grouped by thousands ("70,553,706,496", "1,024.50"): toFixed's digits (the
  // CLI's rounding), with a comma every three digits of the integer part.
  function grouped(x, decimals) {
    const [whole, fraction] = (decimals === undefined ? String(x) : x.toFixed(decimals)).split('.');
    return whole.replace(/\B(?=(\d{3})+$)/g, ',') + (fraction === undefined ? '' : '.' + fraction);
  }
  const gib = (x) => (typeof x === 'number' ? grouped(x, 2) + ' GiB' : '–');
  // "(likely 48.40–62.10)": per_gpu_total_gb's likely range, to the figure's decimals; nothing
  // when the answer has none.
  const likely = (low, high) =>
    (typeof low === 'number' && typeof high === 'number' ? '(likely ' + grouped(low, 2) + '–' + grouped(high, 2) + ')' : '');

  // A field name that may wrap after its underscores (<wbr>), as children for el().
  const breakable = (name) => name.split(/(?<=_)/).flatMap((part, i) => (i ? [el('wbr'), part] : [part]));

  function showVerdictError(message) {
    const v = $('verdict');
    v.textContent = message;
    v.className = 'verdict error';
    for (const id of ['per-gpu', 'capacity', 'utilization', 'min-gpus', 'global-batch']) $(id).textContent = '–';
    $('per-gpu-likely').textContent = '';
    for (const id of ['advice', 'breakdown', 'assumptions']) clear($(id));
    $('min-gpus-reason').textContent = '';
  }

  function render(a) {
    const v = $('verdict');
    v.textContent = a.verdict;
    v.className = 'verdict ' + (a.fits ? 'fits' : 'oom');
    $('per-gpu').textContent = gib(a.per_gpu_total_gb);
    $('per-gpu-likely').textContent = likely(a.likely_low_gb, a.likely_high_gb);
    $('capacity').textContent = gib(a.gpu_capacity_gb);
    $('utilization').textContent = a.utilization_percent + '%';
    $('min-gpus').textContent = a.min_gpus_to_fit === null ? 'none' : grouped(a.min_gpus_to_fit);
    $('global-batch').textContent = grouped(a.global_batch);
    $('min-gpus-reason').textContent = a.min_gpus_reason || '';
    renderAdvice(a.advice || []);
    renderBreakdown(a.breakdown || {});
    nameDefaultGpu(a.config || {});
    const assumed = $('assumptions');
    clear(assumed);
    for (const line of a.assumptions || []) assumed.append(el('li', {}, line));
    $('served-by').textContent = 'served by ' + a.serving_node + ' in ' + Number(a.compute_ms).toFixed(2) + ' ms';
  }

  // The GPU list's empty choice says what the answer judged: the default GPU it names (a link
  // without gpu), or the capacity given as gpu_memory_gb.
  function nameDefaultGpu(config) {
    const select = $('f-gpu');
    if (!select || select.value !== '' || !config.gpu) return;
    const custom = Boolean(currentRequest().gpu_memory_gb);
    select.options[0].textContent = custom ? 'custom (gpu_memory_gb: ' + config.gpu + ')' : 'default (' + config.gpu + ')';
  }

  function renderAdvice(advice) {
    const list = $('advice');
    clear(list);
    if (advice.length === 0) list.append(el('li', { class: 'status' }, 'nothing to change'));
    for (const item of advice) {
      const words = item.changes.map((c) => c.field + '=' + c.value).join(' ');
      const apply = el('button', { type: 'button' }, 'apply');
      apply.addEventListener('click', () => {
        for (const c of item.changes) setValue(c.field, c.value);
        schedule();
      });
      list.append(el('li', {}, el('code', {}, words), ': ' + gib(item.per_gpu_gb) + ' per GPU on ' + grouped(item.num_gpus) +
        ' GPUs, ' + (item.fits ? 'fits' : 'does not fit'), apply));
    }
  }

  // The breakdown's GiB tables (parameters are counts, bytes exact: shown whole, grouped).
  function renderBreakdown(b) {
    const box = $('breakdown');
    clear(box);
    const peak = b.measures && b.measures.nvidia_smi_gb > 0 ? b.measures.nvidia_smi_gb : 1;
    for (const section of ['model_states', 'activations', 'transients', 'phases', 'overheads', 'measures', 'host_offload', 'parameters']) {
      const part = b[section];
      if (!part || typeof part !== 'object') continue;
      const table = el('table', { class: 'breakdown' }, el('caption', {}, section.replace(/_/g, ' ')),
        el('colgroup', {}, el('col', { class: 'key' }), el('col', { class: 'value' }), el('col', { class: 'bar-column' })));
      for (const [key, value] of Object.entries(part)) {
        const isGib = /_gb$/.test(key) && typeof value === 'number';
        const bar = el('div', { class: 'bar' });
        if (isGib) bar.style.width = Math.min(100, (100 * value) / peak).toFixed(1) + '%';
        const shown = isGib ? grouped(value, 2) : typeof value === 'number' ? grouped(value) : String(value);
        const row = el('tr', {}, el('td', { class: 'key' }, ...breakable(key.replace(/_gb$/, ''))),
          el('td', { class: typeof value === 'number' ? 'num' : 'text' }, shown),
          el('td', {}, isGib ? bar : ''));
        if (isGib && value === 0) row.className = 'zero';
        table.append(row);
      }
      box.append(table);
    }
  }

  // ---- Charts: the service's SVG, parsed and filtered into the page ----

  const SVG_TAGS = new Set(['svg', 'g', 'path', 'line', 'polyline', 'polygon', 'rect', 'circle', 'ellipse', 'text',
    'tspan', 'title', 'desc', 'defs', 'clipPath', 'linearGradient', 'stop', 'marker', 'use', 'pattern', 'mask']);

  function importSvg(node) {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.nodeValue);
    if (node.nodeType !== Node.ELEMENT_NODE || node.namespaceURI !== SVG_NS || !SVG_TAGS.has(node.localName)) return null;
    const out = document.createElementNS(SVG_NS, node.localName);
    for (const attr of node.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on')) continue;
      if ((name === 'href' || name === 'xlink:href') && !attr.value.startsWith('#')) continue;
      if (name === 'style') {  // CSSOM, which the page's policy allows, instead of a style attribute
        for (const decl of attr.value.split(';')) {
          const i = decl.indexOf(':');
          if (i > 0) out.style.setProperty(decl.slice(0, i).trim(), decl.slice(i + 1).trim());
        }
        continue;
      }
      if (attr.namespaceURI) out.setAttributeNS(attr.namespaceURI, attr.name, attr.value);
      else out.setAttribute(attr.name, attr.value);
    }
    for (const child of node.childNodes) {
      const c = importSvg(child);
      if (c) out.append(c);
    }
    return out;
  }

  async function drawChart(chart, request, mine) {
    const body = $('chart-' + chart).querySelector('.chart-body');
    let content;
    if (!request) {
      content = el('p', { class: 'status' }, 'no chart: the request has an error');
    } else {
      try {
        const r = await post('/v1/plot.svg?chart=' + chart, request);
        if (r.status === 200) {
          const doc = new DOMParser().parseFromString(await r.text(), 'image/svg+xml');
          const svg = doc.documentElement;
          content = svg.localName === 'svg' && svg.namespaceURI === SVG_NS ? importSvg(svg) : null;
          if (!content) content = el('p', { class: 'field-error' }, 'the service answered with something that is not SVG');
        } else {
          content = el('p', { class: 'field-error' }, (await errorOf(r)).message);
        }
      } catch (e) {
        content = el('p', { class: 'field-error' }, 'the service did not answer: ' + e.message);
      }
    }
    if (mine !== generation) return;
    clear(body);
    body.append(content);
  }

  // ---- Config files ----

  async function loadFile(file) {
    const status = $('drop-status');
    const error = $('drop-error');
    const notes = $('drop-notes');
    error.textContent = '';
    clear(notes);
    status.textContent = 'reading ' + file.name + '…';
    try {
      const text = await file.text();
      const r = await post('/v1/config', { name: file.name, text, request: currentRequest() });
      if (r.status !== 200) {
        const e = await errorOf(r);
        status.textContent = '';
        error.textContent = file.name + ': ' + e.message;
        document.body.dataset.configLoads = String(Number(document.body.dataset.configLoads || 0) + 1);
        return;
      }
      const mapped = await r.json();
      fillForm(mapped.request);
      status.textContent = file.name + ' read as ' + mapped.kind + '; the form now holds what it says.';
      for (const line of mapped.notes) notes.append(el('li', {}, line));
    } catch (e) {
      status.textContent = '';
      error.textContent = file.name + ': ' + e.message;
    }
    document.body.dataset.configLoads = String(Number(document.body.dataset.configLoads || 0) + 1);
    schedule();
  }

  function wireDrop() {
    const zone = document.documentElement;
    const drop = $('drop');
    zone.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    zone.addEventListener('dragleave', () => drop.classList.remove('over'));
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      const file = e.dataTransfer && e.dataTransfer.files[0];
      if (file) loadFile(file);
    });
    $('file').addEventListener('change', (e) => {
      const file = e.target.files[0];
      if (file) loadFile(file);
    });
  }

  // ---- Start ----

  async function start() {
    setPending(true);
    let models, gpus;
    try {
      [fields, models, gpus] = await Promise.all([getJson('/v1/fields'), getJson('/v1/models'), getJson('/v1/gpus')]);
    } catch (e) {
      showVerdictError('cannot read the field table: ' + e.message);
      return;
    }
    const main = $('main-fields');
    const more = $('more-fields');
    const byName = new Map(fields.map((f) => [f.name, f]));
    for (const name of MAIN) if (byName.has(name)) main.append(control(byName.get(name), models, gpus));
    for (const f of fields) if (!MAIN.includes(f.name)) more.append(control(f, models, gpus));
    fillFromAddress();
    window.addEventListener('popstate', () => { fillFromAddress(); schedule(); });
    const form = $('form');
    form.addEventListener('input', schedule);
    form.addEventListener('change', schedule);
    $('reset').addEventListener('click', () => { fillForm(DEFAULTS); schedule(); });
    wireDrop();
    document.body.dataset.ready = '1';
    schedule();
  }

  document.addEventListener('DOMContentLoaded', start);
})();
