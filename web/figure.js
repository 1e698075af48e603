// Puts a rendered figure into its <figure data-figure="id">, with a text summary and downloads
// (SVG or PNG of the picture, CSV of the data). User-visible text is always set with textContent.

export function render(id, { node, caption, csv }) {
  const fig = document.querySelector(`[data-figure="${id}"]`);
  if (!fig) return;
  const cap = fig.querySelector('figcaption') ?? fig.appendChild(document.createElement('figcaption'));
  for (const child of [...fig.children]) if (child !== cap) child.remove();
  if (node) {
    if (node instanceof SVGElement || node.querySelector?.('svg')) node.setAttribute?.('role', 'img');
    node.setAttribute?.('aria-label', caption);
    fig.insertBefore(node, cap);
  }
  cap.textContent = caption;
  const actions = document.createElement('div');
  actions.className = 'figure-actions';
  const svg = node?.tagName?.toLowerCase() === 'svg' ? node : node?.querySelector?.('svg');
  if (svg)
    actions.append(
      button(`Download ${id}.svg`, 'SVG', () => save(`${id}.svg`, new Blob([new XMLSerializer().serializeToString(svg)], { type: 'image/svg+xml' }))),
    );
  if (csv) actions.append(button(`Download ${id}.csv`, 'CSV', () => save(`${id}.csv`, new Blob([toCSV(csv)], { type: 'text/csv' }))));
  fig.append(actions);
  fig.dataset.rendered = 'true';
}

export function renderError(id, message) {
  const fig = document.querySelector(`[data-figure="${id}"]`);
  if (!fig) return;
  const p = document.createElement('p');
  p.className = 'error';
  p.textContent = message;
  render(id, { node: p, caption: message });
}

function button(label, text, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}

function save(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// rows: array of objects with the same keys.
export function toCSV(rows) {
  if (!rows.length) return '';
  const keys = Object.keys(rows[0]);
  const cell = (v) => (typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : String(v));
  return [keys.join(','), ...rows.map((r) => keys.map((k) => cell(r[k])).join(','))].join('\n');
}

// A tensor [rows, cols] as long-format rows for CSV.
export function matrixRows(t, rowName = 'row', colName = 'col') {
  const [rows, cols] = t.shape;
  const out = [];
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out.push({ [rowName]: r, [colName]: c, value: t.data[r * cols + c] });
  return out;
}
