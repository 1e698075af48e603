// The teaching models of posenc/lab on both backends: the permutation lab (a content-only layer is
// permutation-equivariant, every positional encoding breaks it) and the score terms (the logits split
// into content and position parts). (trainToy: toy.test.js.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tokenize } from '../../src/js/lab/lab.js';
import { labBackends, maxAbsDiff } from './helpers.js';

const [simd, scalar] = await labBackends(); // loadLab(): the core's methods and the teaching models

const SENTENCES = ['The cat sat on the mat', 'Geoffrey loves exploring AI.', 'I am a robot', 'Artificial Intelligence is transforming the world.'];

for (const pe of [simd, scalar]) {
  describe(`permutation lab (${pe.backend})`, () => {
    test("'The cat sat on the mat': ~1e-7 without an encoding, clearly non-zero with every encoding", () => {
      const none = pe.permutationLab({ sentence: 'The cat sat on the mat' });
      assert.deepEqual(none.tokens, ['The', 'cat', 'sat', 'on', 'the', 'mat']);
      assert.deepEqual(
        none.permutedTokens,
        none.permutation.map((i) => none.tokens[i]),
      );
      assert.notDeepEqual(
        none.permutedTokens.map((t) => t.toLowerCase()),
        none.tokens.map((t) => t.toLowerCase()),
      );
      assert.ok(none.equivarianceError < 1e-5 && none.pooledDifference < 1e-5, String(none.equivarianceError));
      assert.deepEqual(none.output.shape, [6, 16]);
      assert.deepEqual(none.weights.shape, [2, 6, 6]);
      for (const sentence of SENTENCES)
        for (const encoding of ['sinusoidal', 'learned', 'rope', 'alibi', 't5', 'xpos']) {
          const r = pe.permutationLab({ sentence, encoding });
          assert.ok(r.equivarianceError >= 0.01, `${encoding} on "${sentence}": ${r.equivarianceError}`);
        }
    });

    test('the permuted output of a content-only layer is the output permuted', () => {
      const r = pe.permutationLab({ sentence: 'mat the on sat cat The', permutation: [3, 1, 4, 0, 5, 2] });
      const d = 16;
      for (let i = 0; i < 6; i++)
        assert.ok(
          maxAbsDiff(r.permutedOutput.data.subarray(i * d, i * d + d), r.output.data.subarray(r.permutation[i] * d, r.permutation[i] * d + d)) < 1e-5,
        );
    });

    test('a symmetric relative bias cannot tell a sentence from its reverse; RoPE, T5 and absolute encodings can', () => {
      const reversal = [5, 4, 3, 2, 1, 0];
      const alibi = pe.permutationLab({ encoding: 'alibi', permutation: reversal });
      assert.deepEqual(alibi.permutedTokens, ['mat', 'the', 'on', 'sat', 'cat', 'The']);
      assert.ok(alibi.equivarianceError < 1e-5 && alibi.pooledDifference < 1e-5);
      for (const encoding of ['sinusoidal', 'learned', 'rope', 't5', 'xpos'])
        assert.ok(pe.permutationLab({ encoding, permutation: reversal }).equivarianceError >= 0.01, encoding);
    });

    test("'nope' (the NoPE paper's name) is 'none': one encoding, reported under one name", () => {
      for (const sentence of SENTENCES)
        for (const permutation of [undefined, [...tokenize(sentence).keys()].reverse()]) {
          const none = pe.permutationLab({ sentence, permutation, encoding: 'none', seed: 4 });
          const nope = pe.permutationLab({ sentence, permutation, encoding: 'nope', seed: 4 });
          assert.equal(nope.encoding, 'none');
          assert.deepEqual(nope.permutation, none.permutation);
          assert.deepEqual(nope.output.data, none.output.data);
          assert.deepEqual(nope.permutedOutput.data, none.permutedOutput.data);
          assert.deepEqual(nope.weights.data, none.weights.data);
          assert.equal(nope.equivarianceError, none.equivarianceError);
          assert.ok(nope.equivarianceError < 1e-5 && nope.pooledDifference < 1e-5, `${sentence}: ${nope.equivarianceError}`);
        }
    });

    test('the core module does not carry the teaching models: load() has no permutationLab, scoreTerms or trainToy', async () => {
      const { load } = await import('posenc');
      const core = await load({ simd: pe.backend === 'wasm-simd' });
      for (const name of ['permutationLab', 'scoreTerms', 'trainToy']) {
        assert.equal(name in core, false, name);
        assert.equal(typeof pe[name], 'function', name);
      }
      assert.equal(core._mod, pe._mod); // loadLab() reuses load()'s core module
      assert.equal(
        Object.keys(core._mod).some((k) => /^_(permutationLab|scoreTerms|toy)/.test(k)),
        false,
      );
    });

    test("'xpos' breaks equivariance like 'rope' and is not 'rope' (tests/cpp checks it against a float64 model)", () => {
      const identity = [0, 1, 2, 3, 4, 5];
      const r = pe.permutationLab({ encoding: 'xpos', permutation: identity });
      const rope = pe.permutationLab({ encoding: 'rope', permutation: identity });
      assert.ok(maxAbsDiff(r.output.data, rope.output.data) > 1e-4, 'xpos differs from rope');
      assert.ok(r.equivarianceError === 0 && r.pooledDifference === 0); // nothing moved
      assert.ok(pe.permutationLab({ encoding: 'xpos' }).equivarianceError >= 0.01);
      const one = pe.permutationLab({ sentence: 'solo', encoding: 'xpos' });
      assert.equal(one.equivarianceError, 0);
    });

    test('deterministic per seed; tokenisation splits punctuation and folds case for the embeddings', () => {
      const a = pe.permutationLab({ encoding: 'rope', seed: 3 });
      const b = pe.permutationLab({ encoding: 'rope', seed: 3 });
      assert.deepEqual(a.output.data, b.output.data);
      assert.deepEqual(pe.permutationLab({ sentence: "Don't panic, robot!" }).tokens, ["Don't", 'panic', ',', 'robot', '!']);
      const upper = pe.permutationLab({ sentence: 'THE CAT', permutation: [0, 1] });
      const lower = pe.permutationLab({ sentence: 'the cat', permutation: [0, 1] });
      assert.deepEqual(upper.output.data, lower.output.data);
    });

    test('score terms sum to the logits', () => {
      for (const encoding of ['sinusoidal', 'learned']) {
        const t = pe.scoreTerms({ sentence: 'The cat sat on the mat', encoding });
        assert.deepEqual(t.total.shape, [6, 6]);
        const sum = t.total.data.map(
          (_, i) => t.contentContent.data[i] + t.contentPosition.data[i] + t.positionContent.data[i] + t.positionPosition.data[i],
        );
        assert.ok(maxAbsDiff(sum, t.total.data) < 1e-4);
        assert.ok(t.positionPosition.data.some((v) => Math.abs(v) > 1e-3));
      }
    });
  });
}

describe('SIMD and scalar agree on the lab', () => {
  test('to float rounding', () => {
    for (const encoding of ['sinusoidal', 'rope', 't5', 'xpos']) {
      const a = simd.permutationLab({ encoding });
      const b = scalar.permutationLab({ encoding });
      assert.deepEqual(a.permutation, b.permutation);
      assert.ok(maxAbsDiff(a.output.data, b.output.data) < 1e-5);
    }
  });
});
