// The raw entry points take named fields (src/bindings/raw.hpp): each call family's arguments are one
// embind value_object, so a missing field is embind's TypeError before any C++ runs, not a shifted
// positional argument read as something else. Checked on the registration itself (every function and
// method of both modules, both builds) and on single calls with a field left out or of the wrong kind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadLab } from 'posenc/lab';
import { ENUMS, SCALING_FIELDS } from '../../src/js/contract.js';
import { loadDev } from '../../scripts/dev-module.mjs';
import { healthy } from './argspecs.js';

const backends = [await loadLab(), await loadLab({ simd: false })];
// Raw calls that take one plain number: the heap's question (a byte count).
const SCALAR = new Set(['_heapCanHold']);
const missing = (name) => (e) => e instanceof TypeError && e.message === `Missing field:  "${name}"`;

const methodsOf = (Class) =>
  Object.entries(Object.getOwnPropertyDescriptors(Class.prototype ?? {}))
    .filter(([name, d]) => name !== 'constructor' && d.value?.argCount !== undefined)
    .map(([name, d]) => [name, d.value.argCount]);

// embind's free functions of a module (each has the argCount embind gives it; the wasm exports
// _malloc and _free have none) and its classes (a constructor whose prototype holds such methods).
function registration(mod) {
  const functions = Object.keys(mod).filter((k) => typeof mod[k] === 'function' && mod[k].argCount !== undefined);
  const classes = Object.keys(mod).filter((k) => typeof mod[k] === 'function' && mod[k].argCount === undefined && methodsOf(mod[k]).length > 0);
  return { functions, classes };
}
// No scaling, as the raw calls take it (type 0: 'none').
const noScaling = () => ({ ...Object.fromEntries(SCALING_FIELDS.map((k) => [k, NaN])), type: 0, shortFactor: 0, nShort: 0, longFactor: 0, nLong: 0 });
// A small toy model's configuration, as _toyMake takes it.
const toyConfig = (seed) => ({
  task: 0,
  encoding: 0,
  length: 8,
  dModel: 16,
  heads: 2,
  layers: 1,
  batch: 2,
  vocab: 8,
  causal: false,
  learningRate: 0.003,
  seed,
});
// fn(x, f) with x one row of 4 floats and f the frequencies of rotary dimension 4 (base 10000, no scaling),
// both in mod's memory and freed afterwards.
function withRopeRow(mod, fn) {
  const x = mod._malloc(16);
  const f = mod._malloc(24);
  try {
    assert.equal(mod._ropeFrequencies({ out: f, dim: 4, base: 10000, ...noScaling() }), 0);
    return fn(x, f);
  } finally {
    mod._free(x);
    mod._free(f);
  }
}
// A valid call of _rope on one row of 4 channels at address x, rotated in place with the frequencies
// at f (3 doubles: _ropeFrequencies' output for rotary dimension 4).
function ropeArgs(x, f) {
  return {
    x,
    seq: 1,
    heads: 1,
    headDim: 4,
    rotaryDim: 4,
    offset: 1,
    positions: 0,
    frequencies: f,
    layout: 0,
    xpos: false,
    xposRole: 0,
    xposScaleBase: 0,
    xposCenter: 0,
    firstRow: 0,
  };
}

for (const pe of backends) {
  const modules = { core: pe._mod, lab: pe._lab };

  describe(`named arguments at the raw boundary (${pe.backend})`, () => {
    test('every raw function and method takes at most one argument: a value_object of named fields, or one number', () => {
      for (const [which, mod] of Object.entries(modules)) {
        const { functions, classes } = registration(mod);
        assert.ok(functions.length >= (which === 'core' ? 25 : 5), `${which}: ${functions}`);
        for (const name of functions) {
          assert.ok(mod[name].argCount <= 1, `${which}.${name} takes ${mod[name].argCount} positional arguments`);
          if (mod[name].argCount === 0 || SCALAR.has(name)) continue;
          // a value_object checks its fields before any C++ runs: {} is refused by name
          assert.throws(() => mod[name]({}), /^TypeError: Missing field: {2}"\w+"$/, `${which}.${name}({})`);
        }
        assert.deepEqual(classes, which === 'core' ? ['SinusoidalTable', 'Table'] : ['Trainer']);
        for (const name of classes)
          for (const [method, argCount] of methodsOf(mod[name])) assert.ok(argCount <= 1, `${which}.${name}.${method} takes ${argCount}`);
      }
    });

    test('every method of a handle that takes arguments takes them named (tables, the sinusoidal writer, the trainer)', () => {
      const { core, lab } = modules;
      const handles = [
        core._makeTable({ rows: 4, dim: 4, init: 0, std: 0.02, seed: 0 }),
        core._sinusoidalOpen({ rows: 4, dModel: 4, base: 10000, layout: 0, offset: 0, positions: 0, spacing: 0, out: 0 }),
        lab._toyMake(toyConfig(0)),
      ];
      try {
        for (const h of handles) {
          const methods = methodsOf(h.constructor).filter(([, n]) => n === 1);
          assert.ok(methods.length >= 1, h.constructor.name);
          for (const [method] of methods) assert.throws(() => h[method]({}), /^TypeError: Missing field/, `${h.constructor.name}.${method}`);
        }
      } finally {
        for (const h of handles) h.delete();
      }
    });

    test('a missing field is a TypeError naming it, not a call with shifted arguments; the module keeps working', () => {
      const mod = pe._mod;
      withRopeRow(mod, (x, f) => {
        new Float32Array(mod.HEAPU8.buffer, x, 4).set([1, 1, 0, 0]);
        assert.equal(mod._rope(ropeArgs(x, f)), 0);
        const rotated = Array.from(new Float32Array(mod.HEAPU8.buffer, x, 4));
        // half layout, position 1: (x1 c - x2 s, x2 c + x1 s) with x1 = [1, 1], x2 = [0, 0], angles 1 and 10000^(-2/4)
        const angles = [1, 10000 ** -0.5];
        const want = [Math.cos(angles[0]), Math.cos(angles[1]), Math.sin(angles[0]), Math.sin(angles[1])];
        rotated.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-6, `rotated[${i}] = ${v}, want ${want[i]}`));
        for (const field of ['layout', 'rotaryDim', 'frequencies', 'firstRow']) {
          const args = ropeArgs(x, f);
          delete args[field];
          assert.throws(() => mod._rope(args), missing(field));
        }
        const scaling = noScaling();
        delete scaling.factor;
        assert.throws(() => mod._ropeFrequencies({ out: f, dim: 4, base: 10000, ...scaling }), missing('factor'));
        // positional arguments are refused by count (embind's own check)
        assert.throws(
          () => mod._rope(x, x, 1, 1, 4, 4, 0, 0, 0, 10000, 0),
          (e) => e.name === 'BindingError' && /called with 11 arguments, expected 1/.test(e.message),
        );
        assert.throws(() => mod._attention({ q: x, k: x, v: x }), missing('batch'));
        assert.throws(() => pe._lab._labCheck({ nTokens: 3, dModel: 16 }), missing('encoding'));
      });
      assert.ok(healthy(pe));
      assert.deepEqual(pe.rope({ data: new Float32Array([1, 0, 1, 0]), shape: [1, 4] }, { offset: 0 }).data, new Float32Array([1, 0, 1, 0]));
    });

    test('a field of the wrong kind is refused at the boundary: a struct that is not an object, a handle of another kind or deleted', () => {
      const mod = pe._mod;
      const lab = pe._lab;
      assert.throws(() => mod._rope(0), TypeError);
      const trainer = lab._toyMake(toyConfig(0));
      const report = lab._malloc(32);
      try {
        assert.equal(trainer.baseline({ length: 8, out: report }), 0);
        // a method called on something that is not a trainer (a swapped handle) is embind's error, not a read of the wrong object
        assert.throws(() => lab.Trainer.prototype.baseline.call({}, { length: 8, out: report }), /Trainer/);
        assert.throws(() => lab.Trainer.prototype.baseline.call(mod, { length: 8, out: report }), /Trainer/);
      } finally {
        trainer.delete();
        lab._free(report);
      }
      assert.throws(() => trainer.baseline({ length: 8, out: 0 }), /deleted object/);
      assert.throws(() => trainer.delete(), /already deleted/);
      // the core's handles alike: a table's method on the sinusoidal writer, a deleted table
      const table = mod._makeTable({ rows: 4, dim: 4, init: 0, std: 0.02, seed: 0 });
      const writer = mod._sinusoidalOpen({ rows: 4, dModel: 4, base: 10000, layout: 0, offset: 0, positions: 0, spacing: 0, out: 0 });
      try {
        assert.equal(table.lookup({ ids: 0, n: 0, out: 0, scale: 1 }), 0);
        assert.throws(() => mod.Table.prototype.lookup.call(writer, { ids: 0, n: 0, out: 0, scale: 1 }), /Table/);
        assert.throws(() => mod.SinusoidalTable.prototype.write.call(table, { out: 0, first: 0, rows: 0 }), /SinusoidalTable/);
      } finally {
        table.delete();
        writer.delete();
      }
      assert.throws(() => table.data(), /deleted object/);
    });

    test('an enum crosses as its index and the core checks it: an unknown one is a RangeError naming the allowed values', () => {
      const mod = pe._mod;
      withRopeRow(mod, (x, f) => {
        const message = () => {
          const q = mod._errorMessage();
          return new TextDecoder().decode(mod.HEAPU8.subarray(q, q + mod._errorLength()));
        };
        const code = mod._rope({ ...ropeArgs(x, f), layout: 7 });
        assert.notEqual(code, 0);
        assert.match(message(), /layout 7 is unknown; allowed: .*half.*interleaved/);
        // xPos's role alike (contract.js ENUMS.xposRole): 0 'query', 1 'key', nothing else
        assert.deepEqual(ENUMS.xposRole, ['query', 'key']);
        const xpos = { xpos: true, xposScaleBase: 512 };
        for (const role of [2, 3, 99]) {
          assert.notEqual(mod._rope({ ...ropeArgs(x, f), ...xpos, xposRole: role }), 0, `xposRole ${role}`);
          assert.match(message(), new RegExp(`xposRole ${role} is unknown; allowed: query, key`));
        }
        for (const role of [0, 1]) assert.equal(mod._rope({ ...ropeArgs(x, f), ...xpos, xposRole: role }), 0);
        // without xPos the role is not read
        assert.equal(mod._rope({ ...ropeArgs(x, f), xposRole: 99 }), 0);
        assert.equal(mod._makeTable({ rows: 2, dim: 4, init: 9, std: 0, seed: 0 }), null);
      });
      assert.ok(healthy(pe));
    });

    test('the scaling crosses with every field of contract.js SCALING_FIELDS, by name', () => {
      const mod = pe._mod;
      const out = mod._malloc(24);
      try {
        const scaling = noScaling();
        const call = (s) => mod._ropeFrequencies({ out, dim: 4, base: 10000, ...s });
        assert.equal(call(scaling), 0);
        for (const field of [...SCALING_FIELDS, 'shortFactor', 'nShort', 'longFactor', 'nLong']) {
          const rest = { ...scaling };
          delete rest[field];
          assert.throws(() => call(rest), missing(field));
        }
        // linear x4: every inverse frequency divided by 4, then the attention factor 1
        assert.equal(call({ ...scaling, type: 1, factor: 4 }), 0);
        const f = Array.from(new Float64Array(mod.HEAPU8.buffer, out, 3), Math.fround);
        assert.deepEqual(f, [Math.fround(1 / 4), Math.fround(10000 ** -0.5 / 4), 1]);
      } finally {
        mod._free(out);
      }
    });
  });
}

// Every way embind refuses a call's struct: each field left out in turn (at any depth) and each field
// set to a BigInt, which embind cannot convert to a number field (it throws after making the struct).
function* refusals(args) {
  for (const [k, v] of Object.entries(args)) {
    const without = { ...args };
    delete without[k];
    yield without;
    yield { ...args, [k]: 1n };
    if (v && typeof v === 'object') for (const inner of refusals(v)) yield { ...args, [k]: inner };
  }
}

describe('named arguments: the dev builds', () => {
  test("the dev modules' hooks (benchmarks, heap figures) take one struct of named fields too", async () => {
    for (const simd of [true, false]) {
      const pe = await loadDev({ simd, lab: true });
      for (const [which, mod] of Object.entries({ core: pe._mod, lab: pe._lab })) {
        const { functions } = registration(mod);
        if (which === 'core')
          for (const hook of ['_benchSinusoidal', '_benchRope', '_benchAlibi', '_benchT5', '_benchAttention'])
            assert.ok(functions.includes(hook), `${which}: ${hook}`);
        for (const name of functions) {
          assert.ok(mod[name].argCount <= 1, `${which}.${name} takes ${mod[name].argCount} positional arguments`);
          if (mod[name].argCount === 0 || SCALAR.has(name)) continue;
          assert.throws(() => mod[name]({}), /^TypeError: Missing field: {2}"\w+"$/, `${which}.${name}({})`);
        }
      }
      // a hook runs by name: T5's buckets of a 4 x 4 grid, once (milliseconds >= 0; -1 is a failure)
      const mod = pe._mod;
      const out = mod._malloc(64);
      try {
        assert.ok(mod._benchT5({ out, heads: 0, queryLength: 4, keyLength: 4, reps: 1 }) >= 0);
        assert.deepEqual(Array.from(new Int32Array(mod.HEAPU8.buffer, out, 4)), [0, 17, 18, 19]);
      } finally {
        mod._free(out);
      }
    }
  });
});

describe('named arguments: memory', () => {
  test('a refused call leaves no argument struct behind, in the pool of structs or in the heap', async () => {
    for (const simd of [true, false]) {
      const pe = await loadDev({ simd, lab: true });
      const [mod, lab] = [pe._mod, pe._lab];
      const trainer = lab._toyMake(toyConfig(0));
      // the calls whose structs share fields with others (a scaling, a sentence, a setting); the values
      // do not matter, no call reaches the core
      const setting = { length: 8, invFreq: 0, nFreq: 0, attentionFactor: 1 };
      const calls = [
        [mod, '_ropeFrequencies', { out: 0, dim: 4, base: 10000, ...noScaling() }],
        [lab, '_scoreTerms', { bytes: 0, ends: 0, nTokens: 0, encoding: 0, dModel: 8, seed: 0, terms: 0 }],
        [trainer, 'train', { steps: 1, ...setting, heldOut: 0, report: 0 }],
        [trainer, 'evaluate', { ...setting, accuracy: 0 }],
      ];
      try {
        const before = [mod._heapInUse(), lab._heapInUse()];
        for (let i = 0; i < 20; i++)
          for (const [target, name, args] of calls) for (const bad of refusals(args)) assert.throws(() => target[name](bad), TypeError, name);
        assert.deepEqual([mod._heapInUse(), lab._heapInUse()], before, `simd ${simd}`);
      } finally {
        trainer.delete();
      }
      assert.ok(healthy(pe));
    }
  });

  test('refused calls and deleted handles leave the heap as it was', async () => {
    for (const simd of [true, false]) {
      const pe = await loadDev({ simd, lab: true });
      const mod = pe._mod;
      const before = [mod._heapInUse(), pe._lab._heapInUse()];
      for (let i = 0; i < 100; i++) {
        assert.throws(() => mod._attention({ q: 0 }), TypeError);
        assert.throws(() => mod._makeTable({ rows: 2 }), TypeError);
        mod._makeTable({ rows: 8, dim: 8, init: 0, std: 0.02, seed: i }).delete();
        pe.sinusoidal({ length: 3, dModel: 4 });
        pe._lab._toyMake(toyConfig(i)).delete();
      }
      assert.deepEqual([mod._heapInUse(), pe._lab._heapInUse()], before, `simd ${simd}`);
    }
  });
});
