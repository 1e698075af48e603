// Controls <-> URL: every [data-control] keeps its value in the query string, so a shared link
// restores the page as it was.

export function controlsOf(name) {
  return [...document.querySelectorAll(`[data-controls="${name}"] [data-control]`)];
}

export function restoreFromURL() {
  const params = new URLSearchParams(location.search);
  for (const el of document.querySelectorAll('[data-control]')) {
    const v = params.get(el.dataset.control);
    if (v !== null) el.value = v;
  }
}

function saveToURL() {
  const params = new URLSearchParams(location.search);
  for (const el of document.querySelectorAll('[data-control]')) {
    if (el.value === el.defaultValue && !params.has(el.dataset.control)) continue;
    params.set(el.dataset.control, el.value);
  }
  history.replaceState(null, '', `${location.pathname}?${params}${location.hash}`);
}

// Reads a form's controls as numbers (type=number) or strings, clamped to their min/max.
export function values(name) {
  const out = {};
  for (const el of controlsOf(name)) {
    if (el.type === 'number') {
      let v = Number(el.value);
      if (!Number.isFinite(v)) v = Number(el.defaultValue);
      if (el.min !== '') v = Math.max(v, Number(el.min));
      if (el.max !== '') v = Math.min(v, Number(el.max));
      if (el.step !== 'any') v = Math.round(v);
      out[el.dataset.control] = v;
    } else out[el.dataset.control] = el.value;
  }
  return out;
}

export function onChange(name, fn) {
  let timer;
  for (const el of controlsOf(name))
    el.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        saveToURL();
        fn(values(name));
      }, 120);
    });
  fn(values(name));
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
