// Tensors from other libraries as inputs: TF.js tensors (shape + dataSync()) and ONNX Runtime
// tensors (dims + data), with the messages a mismatch gives.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { load } from 'posenc';

// Shaped like onnxruntime-common's Tensor: readonly dims, data, type, size, getData(), dispose().
class OrtTensor {
  constructor(type, data, dims) {
    Object.defineProperties(this, {
      type: { value: type, enumerable: true },
      data: { value: data, enumerable: true },
      dims: { value: Object.freeze([...dims]), enumerable: true },
      size: { value: data.length, enumerable: true },
    });
  }
  async getData() {
    return this.data;
  }
  dispose() {}
}

let pe;
before(async () => {
  pe = await load();
  setWasmPaths(new URL('../../node_modules/@tensorflow/tfjs-backend-wasm/dist/', import.meta.url).pathname);
  await tf.setBackend('wasm');
});

const x = Float32Array.from({ length: 2 * 3 * 4 }, (_, i) => Math.sin(i));

describe('tensors from other libraries', () => {
  test('an ONNX Runtime tensor (dims + data) is read like { data, shape }', () => {
    const expected = pe.rope({ data: x, shape: [2, 3, 4] });
    const fromOrt = pe.rope(new OrtTensor('float32', x, [2, 3, 4]));
    assert.deepEqual(fromOrt.shape, [2, 3, 4]);
    assert.deepEqual(fromOrt.data, expected.data);
  });

  test('an ONNX Runtime tensor of token ids', () => {
    const table = pe.tokenEmbedding({ vocabSize: 10, dModel: 4 });
    const ids = table.lookup(new OrtTensor('int32', Int32Array.from([1, 2, 3, 4]), [2, 2]));
    assert.deepEqual(ids.shape, [2, 2, 4]);
    assert.deepEqual(ids.data, table.lookup([1, 2, 3, 4]).data);
    table.dispose();
  });

  test('a TF.js tensor (shape + dataSync()) is read like { data, shape }', () => {
    const expected = pe.rope({ data: x, shape: [2, 3, 4] });
    const t = tf.tensor(x, [2, 3, 4]);
    const fromTf = pe.rope(t);
    assert.deepEqual(fromTf.shape, [2, 3, 4]);
    assert.deepEqual(fromTf.data, expected.data);
    t.dispose();
    // and back: a result converts for free
    const back = tf.tensor(fromTf.data, fromTf.shape);
    assert.deepEqual(back.shape, [2, 3, 4]);
    back.dispose();
  });

  test("the same tensors written as plain objects, as index.d.ts's TensorInput lists them", () => {
    const expected = pe.rope({ data: x, shape: [2, 3, 4] });
    assert.deepEqual(pe.rope({ data: x, dims: [2, 3, 4], type: 'float32' }).data, expected.data);
    assert.deepEqual(pe.rope({ shape: [2, 3, 4], dataSync: () => x }).data, expected.data);
    // half floats say which they are by their type, as ONNX Runtime's float16 tensors do (1.0 is 0x3c00)
    const ones = new Uint16Array(24).fill(0x3c00);
    const half = pe.rope({ data: ones, dims: [2, 3, 4], type: 'float16' });
    assert.ok(half.data instanceof Uint16Array);
    assert.deepEqual(half.data, pe.rope({ data: ones, shape: [2, 3, 4] }, { dtype: 'float16' }).data);
    assert.deepEqual(pe.stats({ shape: [3], dataSync: () => Float32Array.of(1, 2, 6) }), { min: 1, max: 6, mean: 3, std: Math.sqrt(14 / 3) });
    // a type that does not describe the data is refused, not read as the data's own type
    assert.throws(() => pe.rope({ data: x, dims: [2, 3, 4], type: 'float16' }), {
      name: 'TypeError',
      message: "posenc.rope: x.type is 'float16' but x.data is a Float32Array of length 24",
    });
    assert.throws(() => pe.rope({ data: ones, dims: [2, 3, 4], type: 'float32' }), {
      name: 'TypeError',
      message: "posenc.rope: x.type is 'float32' but x.data is a Uint16Array of length 24",
    });
    // each form keeps to its own keys
    assert.throws(() => pe.rope({ shape: [2, 3, 4], dataSync: () => x, data: x }), {
      name: 'TypeError',
      message: 'posenc.rope: x.data is not an option (allowed: shape, dataSync)',
    });
    assert.throws(() => pe.rope({ data: x, dims: [2, 3, 4], kind: 'float32' }), {
      name: 'TypeError',
      message: 'posenc.rope: x.kind is not an option (allowed: data, shape, dims, type)',
    });
  });

  test('mismatches name the argument, the type received (with the right article) and the shape', () => {
    assert.throws(() => pe.rope(new OrtTensor('int32', new Int32Array(24), [2, 3, 4])), {
      name: 'TypeError',
      message:
        'posenc.rope: x.data must be a Float32Array (or half floats: a Float16Array, or a Uint16Array with dtype), got an Int32Array of length 24',
    });
    const ints = tf.tensor(new Int32Array(24), [2, 3, 4], 'int32');
    assert.throws(() => pe.rope(ints), {
      name: 'TypeError',
      message: /^posenc\.rope: x\.data must be a Float32Array .*got an Int32Array of length 24$/,
    });
    ints.dispose();
    assert.throws(() => pe.rope(new OrtTensor('float32', x, [2, 3, 5])), {
      name: 'RangeError',
      message: /^posenc\.rope: x\.shape \[2,3,5\] holds 30 values but data has 24$/,
    });
    assert.throws(() => pe.rope(x), {
      name: 'TypeError',
      message: /^posenc\.rope: x is a Float32Array of length 24 without a shape: pass \{ data, shape \}/,
    });
    assert.throws(() => pe.sinusoidal({ length: NaN, dModel: 4 }), { name: 'RangeError', message: /got NaN/ });
  });
});
