// The user-facing rules of the C++ core, read from its sources: every `fail(...)` call and every call
// of a rule helper (a function returning Status that takes the argument's name as a `const char*`,
// such as require_positive or checked_size), outside the helpers' own bodies. Each rule becomes a
// pattern of its message: the string literals verbatim, any other expression (a value, a name passed
// in, a list from the contract) as a wildcard. A call marked `// invariant: <why>` (at the end of its
// line, or on the comment lines just above its statement; `// invariant (next N): <why>` marks the N
// rules that follow) is a check the JS layer always satisfies: it is listed, but needs no API case.
import { readFileSync, readdirSync } from 'node:fs';

const CORE = new URL('../../src/core/', import.meta.url);

// Comments and string contents blanked out (offsets and newlines kept), and the comments per line.
function scan(text) {
  let code = '';
  const comments = new Map();
  let line = 1;
  for (let i = 0; i < text.length;) {
    const ch = text[i];
    if (ch === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
      comments.set(line, text.slice(i + 2, end).trim());
      code += ' '.repeat(end - i);
      i = end;
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i) + 2;
      const block = text.slice(i, end);
      code += block.replace(/[^\n]/g, ' ');
      line += block.split('\n').length - 1;
      i = end;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      code += text.slice(i, j + 1); // literals kept: the parser reads them
      i = j + 1;
    } else {
      if (ch === '\n') line++;
      code += ch;
      i++;
    }
  }
  return { code, comments };
}

// Index of the bracket closing the one at `open` (skipping string literals).
function closing(code, open) {
  const pairs = { '(': ')', '{': '}' };
  const want = pairs[code[open]];
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const ch = code[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (code[j] !== ch) j += code[j] === '\\' ? 2 : 1;
      i = j;
    } else if (ch === code[open]) depth++;
    else if (ch === want && --depth === 0) return i;
  }
  throw new Error(`unbalanced ${code[open]} at ${open}`);
}

// Top-level comma-separated arguments of a call's text (between its parentheses).
function splitArgs(s) {
  const args = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (s[j] !== ch) j += s[j] === '\\' ? 2 : 1;
      i = j;
    } else if ('([{<'.includes(ch) && !(ch === '<' && /[\s=]$/.test(s.slice(0, i)))) depth++;
    else if (')]}>'.includes(ch) && !(ch === '>' && /[\s=-]$/.test(s.slice(0, i)))) depth--;
    else if (ch === ',' && depth === 0) {
      args.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (s.trim()) args.push(s.slice(start).trim());
  return args;
}

// One argument as a message part: { text } for string literals (adjacent ones joined), { param } for a
// bare identifier (a helper's parameter, resolved at its call), else { any } (a value).
function part(arg) {
  if (/^("(?:[^"\\]|\\.)*"\s*)+$/.test(arg)) return { text: [...arg.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`)).join('') };
  if (/^[A-Za-z_]\w*$/.test(arg)) return { param: arg };
  return { any: true };
}

const lineAt = (code, at) => code.slice(0, at).split('\n').length;

function parseFile(file, text) {
  const { code, comments } = scan(text);
  // functions returning Status: name, parameter names, body span
  const defs = [];
  for (const m of code.matchAll(/\bStatus\s+(?:\w+::)*(\w+)\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    const close = closing(code, open);
    const brace = code.slice(close + 1).search(/\S/) + close + 1;
    if (!/^(?:const\s*)?\{/.test(code.slice(brace))) continue; // a declaration
    const bodyOpen = code.indexOf('{', brace);
    const params = splitArgs(code.slice(open + 1, close)).map((p) => p.match(/(\w+)\s*(?:=.*)?$/)?.[1]);
    const named = splitArgs(code.slice(open + 1, close)).some((p) => /const char\s*\*/.test(p));
    defs.push({ name: m[1], params, named, start: m.index, body: [bodyOpen, closing(code, bodyOpen)] });
  }
  return { file, code, comments, defs };
}

// The `// invariant: why` comment of a call on lines [line, lastLine]: at the end of one of them, or
// on the comment lines just above its statement. Undefined when there is none.
function invariantOf(f, line, lastLine) {
  const codeLines = f.code.split('\n');
  const isCode = (l) => codeLines[l - 1].trim() !== '';
  let l = line - 1;
  while (l > 0 && isCode(l) && !/[;{}]\s*$/.test(codeLines[l - 1])) l--; // the statement's earlier lines
  const above = [];
  for (; l > 0 && !isCode(l) && f.comments.has(l); l--) above.unshift(f.comments.get(l));
  const trailing = [];
  for (let k = line; k <= lastLine; k++) if (f.comments.has(k)) trailing.push(f.comments.get(k));
  const start = [above.findIndex((c) => /^invariant\b/.test(c)), trailing.findIndex((c) => /^invariant\b/.test(c))];
  if (start[0] >= 0) return above.slice(start[0]).join(' ');
  if (start[1] >= 0) return trailing.slice(start[1]).join(' ');
  return undefined;
}

// Every rule of the core: { at: 'src/core/x.cpp:NN', file, line, fn, patterns: [RegExp], invariant, source }.
export function coreRules() {
  const files = readdirSync(CORE)
    .filter((f) => /\.(cpp|hpp)$/.test(f))
    .sort()
    .map((f) => parseFile(f, readFileSync(new URL(f, CORE), 'utf8')));
  const helpers = new Map(); // name -> def (with the file's code)
  for (const f of files) for (const d of f.defs) if (d.named) helpers.set(d.name, { ...d, code: f.code });
  const RESERVED = new Set(['fail', 'fail_with', 'fail_parts', 'out_of_memory']);
  const callRe = () => new RegExp(`\\b(fail|${[...helpers.keys()].join('|')})\\s*\\(`, 'g');

  // The calls in code[from, to): { name, args, at }.
  function calls(code, from, to) {
    const out = [];
    const re = callRe();
    re.lastIndex = from;
    for (let m; (m = re.exec(code)) && m.index < to;) {
      if (/\bStatus\s+(?:\w+::)*$/.test(code.slice(Math.max(0, m.index - 40), m.index))) continue; // its definition
      const open = m.index + m[0].length - 1;
      const close = closing(code, open);
      out.push({ name: m[1], args: splitArgs(code.slice(open + 1, close)), at: m.index, end: close });
      re.lastIndex = close;
    }
    return out;
  }

  // The message patterns (lists of parts) a call can produce; a helper's parameters bound to the
  // call's arguments (a literal name stays literal, anything else becomes a wildcard).
  function expand(call, bind = {}) {
    const resolve = (p) => (p.param ? (bind[p.param] ?? { any: true }) : p);
    if (call.name === 'fail') return [call.args.map((a) => resolve(part(a)))];
    const h = helpers.get(call.name);
    const inner = {};
    h.params.forEach((name, i) => {
      if (name && call.args[i] !== undefined) inner[name] = resolve(part(call.args[i]));
    });
    return calls(h.code, h.body[0], h.body[1]).flatMap((c) => expand(c, inner));
  }

  const toRegExp = (parts) => {
    let src = '';
    for (const p of parts) {
      if (p.text !== undefined) src += p.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      else if (!src.endsWith('[\\s\\S]*?')) src += '[\\s\\S]*?';
    }
    return new RegExp(`^${src}$`);
  };

  const rules = [];
  for (const f of files) {
    const first = rules.length;
    const inHelper = (at) => f.defs.some((d) => d.named && at > d.body[0] && at < d.body[1]);
    const enclosing = (at) => f.defs.filter((d) => at > d.body[0] && at < d.body[1]).at(-1)?.name;
    for (const c of calls(f.code, 0, f.code.length)) {
      if (inHelper(c.at) || RESERVED.has(enclosing(c.at))) continue;
      const line = lineAt(f.code, c.at);
      const lastLine = lineAt(f.code, c.end);
      const invariant = invariantOf(f, line, lastLine);
      const patterns = expand(c).map(toRegExp);
      if (patterns.length === 0) continue; // a helper without rules of its own (an allocation)
      const text = f.code.slice(c.at, c.end + 1).replace(/\s+/g, ' ');
      rules.push({
        key: `${f.file}: ${text}`,
        at: `src/core/${f.file}:${line}`,
        file: f.file,
        line,
        fn: enclosing(c.at),
        patterns,
        invariant,
        source: text,
      });
    }
    // `// invariant (next N): why` marks the N rules that follow it
    for (const [line, comment] of f.comments) {
      const m = comment.match(/^invariant \(next (\d+)\): \S/);
      if (m)
        for (const r of rules
          .slice(first)
          .filter((r) => r.line > line)
          .slice(0, Number(m[1])))
          r.invariant = comment;
    }
  }
  return rules;
}
