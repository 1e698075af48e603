// Controls <-> URL: every [data-control] keeps its value in the query string, so a shared link
// restores the page as it was. Values that a control cannot hold (an unknown option, a number out of
// range, text in a number field, a sentence past its length limit) fall back to what the control can
// use with a visible note, and fields show the value actually used, with the reason, next to them.
// A slider with data-max-of="<control>" ends at that number control's value − 1 (the position slider
// spans the positions shown). A number field with data-min-above="<control> / <k>" takes no value at
// or below that control's value / k (rounded down), besides its own min (T5's maximum distance must
// pass the buckets that hold one distance each: half the buckets when causal).

export function controlsOf(name) {
  return [...document.querySelectorAll(`[data-controls="${name}"] [data-control]`)];
}

// A number field's value as used: [value, reason or ''] (clamped to min/max, rounded unless step="any").
// `text` is the value to read (default: the field's; a range input cannot hold text, the URL's can).
export function numberOf(el, text = el.value) {
  const raw = text.trim();
  const def = Number(el.defaultValue);
  if (raw === '' || !Number.isFinite(Number(raw)))
    return [def, raw === '' ? `empty: using the default ${def}` : `not a number: using the default ${def}`];
  let v = Number(raw);
  let why = '';
  if (el.step !== 'any' && !Number.isInteger(v / Number(el.step || 1))) {
    const step = Number(el.step || 1);
    v = Math.round(v / step) * step;
    why = `rounded to ${v}${step === 1 ? '' : ` (steps of ${step})`}`;
  }
  if (el.min !== '' && v < Number(el.min)) [v, why] = [Number(el.min), `the minimum is ${el.min}`];
  const above = minAbove(el);
  if (above && v <= above.limit) [v, why] = [above.limit + 1, above.why];
  if (el.max !== '' && v > Number(el.max)) [v, why] = [Number(el.max), `the maximum is ${el.max}`];
  return [v, why];
}

// data-min-above="<control> / <k>" as [control, k], or null.
const minAboveOf = (el) => {
  const m = /^(\w+)\s*\/\s*(\d+)$/.exec(el.dataset.minAbove ?? '');
  return m && [m[1], Number(m[2])];
};

// { limit, why } for a data-min-above field (its value must be greater than limit), or null.
function minAbove(el) {
  const spec = minAboveOf(el);
  if (!spec) return null;
  const [control, k] = spec;
  const of = document.querySelector(`[data-control="${control}"]`);
  const n = numberOf(of)[0];
  const limit = Math.floor(n / k);
  const name = of.closest('label')?.querySelector('span')?.textContent.toLowerCase() ?? control;
  return { limit, why: `it must be greater than ${n} ${name} / ${k} = ${limit}` };
}

// A text field's value as used: [value, reason or ''] (cut at data-max-chars).
export function textOf(el, text = el.value) {
  const max = Number(el.dataset.maxChars);
  if (!(max > 0) || text.length <= max) return [text, ''];
  return [text.slice(0, max), `the first ${max} of ${text.length} characters (the longest sentence the page draws)`];
}

// A slider's largest value: its data-max-of control's value − 1.
export function syncMax(el) {
  if (!el.dataset.maxOf) return;
  const of = document.querySelector(`[data-control="${el.dataset.maxOf}"]`);
  el.max = String(Math.max(0, numberOf(of)[0] - 1));
}

function noteFor(el) {
  let note = document.querySelector(`[data-note-for="${el.dataset.control}"]`);
  if (!note) {
    note = document.createElement('span');
    note.className = 'field-note';
    note.dataset.noteFor = el.dataset.control;
    note.setAttribute('aria-live', 'polite');
    el.closest('label').append(note);
  }
  return note;
}

// Shows what a number field will use and why; with `commit`, writes that value back into the field.
function explain(el, commit) {
  if (el.type === 'text' && el.dataset.maxChars) {
    const why = textOf(el)[1];
    noteFor(el).textContent = why ? `Using ${why}.` : '';
    return;
  }
  if (el.type !== 'number') return;
  const [v, why] = numberOf(el);
  noteFor(el).textContent = why ? `Using ${v}: ${why}.` : '';
  if (commit && why) el.value = String(v);
}

// Reads the URL once: a value a control cannot take is replaced by its default and listed in the note.
export function restoreFromURL() {
  const params = new URLSearchParams(location.search);
  const bad = [];
  for (const el of document.querySelectorAll('[data-control]')) {
    const v = params.get(el.dataset.control);
    if (v === null) continue;
    if (el.tagName === 'SELECT' && el.options.length === 0) continue; // filled, and checked, by its section
    if (el.tagName === 'SELECT') {
      const allowed = [...el.options].map((o) => o.value);
      if (allowed.includes(v)) el.value = v;
      else bad.push(`${el.dataset.control} "${v}" (allowed: ${allowed.join(', ')}; using ${el.value})`);
    } else if (['number', 'range'].includes(el.type)) {
      syncMax(el);
      const [used, why] = numberOf(el, v);
      if (why) bad.push(`${el.dataset.control} "${v.length > 40 ? `${v.slice(0, 40)}…` : v}" (${why})`);
      el.value = String(used);
    } else {
      const [used, why] = textOf(el, v);
      if (why) bad.push(`${el.dataset.control} (${why})`);
      el.value = used;
    }
  }
  return bad;
}

// Lists in the page's note the link values that were not usable (restoreFromURL and others).
const badValues = [];
export function noteBadURL(items) {
  if (!items.length) return;
  badValues.push(...items);
  const note = document.querySelector('[data-url-note]');
  note.hidden = false;
  note.textContent = `Some values in the link could not be used and were replaced: ${badValues.join('; ')}.`;
}

function saveToURL() {
  const params = new URLSearchParams(location.search);
  for (const el of document.querySelectorAll('[data-control]')) {
    if (el.value === el.defaultValue && !params.has(el.dataset.control)) continue;
    params.set(el.dataset.control, el.type === 'number' ? String(numberOf(el)[0]) : el.type === 'text' ? textOf(el)[0] : el.value);
  }
  history.replaceState(null, '', `${location.pathname}?${params}${location.hash}`);
}

// Reads the controls of one form (or of several: a list of names) as numbers (type=number, as
// numberOf uses them) or strings (as textOf cuts them).
export function values(names) {
  const out = {};
  for (const name of [names].flat())
    for (const el of controlsOf(name))
      out[el.dataset.control] = ['number', 'range'].includes(el.type) ? numberOf(el)[0] : el.type === 'text' ? textOf(el)[0] : el.value;
  return out;
}

// Calls fn(values) soon (in a task of its own: the page's first figures are computed one per task) and
// after every change (debounced) of the controls of one form or of several (a list of names). A
// throwing fn never escapes: its figure reports the error in place through `onError`.
export function onChange(names, fn, onError = (e) => console.warn(e)) {
  let timer;
  const run = () => {
    try {
      fn(values(names));
    } catch (e) {
      onError(e);
    }
  };
  for (const el of [names].flat().flatMap(controlsOf)) {
    // the fields whose minimum follows this one (data-min-above) say what they will use now
    const dependents = () => [...document.querySelectorAll('[data-min-above]')].filter((d) => minAboveOf(d)?.[0] === el.dataset.control);
    el.addEventListener('input', () => {
      explain(el, false);
      dependents().forEach((d) => explain(d, false));
      clearTimeout(timer);
      timer = setTimeout(() => {
        saveToURL();
        run();
      }, 120);
    });
    el.addEventListener('change', () => [el, ...dependents()].forEach((d) => explain(d, true)));
  }
  setTimeout(run);
}

// A free-form URL parameter (not tied to a control), e.g. the lab's permutation.
export function getParam(name) {
  return new URLSearchParams(location.search).get(name);
}
export function setParam(name, value) {
  const params = new URLSearchParams(location.search);
  if (value === null) params.delete(name);
  else params.set(name, value);
  history.replaceState(null, '', `${location.pathname}?${params}${location.hash}`);
}
