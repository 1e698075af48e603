// trainToy's model (src/core/toy.hpp) in TF.js, for the steps/s comparison: the same shapes (batch 16,
// 8 tokens + a readout token, d = 16, 2 heads, 2 residual attention layers, a linear readout to 2
// classes, no positional encoding), softmax cross-entropy, Adam (0.003, 0.9, 0.999, 1e-8), fresh
// 'before' batches each step (tokens 0 and 1 once each among fillers 2..7; is 0 before 1?).
// Embeddings are a one-hot product (tf.gather's gradient is not a wasm kernel).
export function toyTrainerTF(tf, { batch = 16, length = 8, d = 16, heads = 2, layers = 2, vocab = 8, seed = 1 } = {}) {
  const T = length + 1;
  const hd = d / heads;
  const tokens = vocab + length + 1;
  const readout = tokens - 1;
  let s = seed >>> 0;
  const random = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const below = (n) => Math.floor(random() * n);
  const normal = (shape, std) => tf.variable(tf.randomNormal(shape, 0, std, 'float32', below(2 ** 30)));
  const embed = normal([tokens, d], 1);
  const weights = Array.from({ length: layers }, () => Array.from({ length: 4 }, () => normal([d, d], 1 / Math.sqrt(d))));
  const wr = normal([d, 2], 1 / Math.sqrt(d));
  const br = tf.variable(tf.zeros([2]));
  const optimizer = tf.train.adam(0.003, 0.9, 0.999, 1e-8);

  const examples = (n) => {
    const ids = new Int32Array(n * T);
    const labels = new Int32Array(n);
    for (let b = 0; b < n; b++) {
      const row = ids.subarray(b * T, (b + 1) * T);
      for (let i = 0; i < length; i++) row[i] = 2 + below(vocab - 2);
      const a = below(length);
      let c = below(length - 1);
      if (c >= a) c++;
      row[a] = 0;
      row[c] = 1;
      row[length] = readout;
      labels[b] = a < c ? 1 : 0;
    }
    return { ids, labels };
  };
  // (tfjs-core without the chained-op API: every op is a function)
  const logitsOf = (ids, n) => {
    let x = tf.reshape(tf.matMul(tf.oneHot(tf.tensor1d(ids, 'int32'), tokens), embed), [n, T, d]);
    for (const [wq, wk, wv, wo] of weights) {
      const flat = tf.reshape(x, [n * T, d]);
      const split = (w) => tf.reshape(tf.transpose(tf.reshape(tf.matMul(flat, w), [n, T, heads, hd]), [0, 2, 1, 3]), [n * heads, T, hd]);
      const [q, k, v] = [wq, wk, wv].map(split);
      const attention = tf.softmax(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(hd)));
      const o = tf.reshape(tf.transpose(tf.reshape(tf.matMul(attention, v), [n, heads, T, hd]), [0, 2, 1, 3]), [n * T, d]);
      x = tf.add(x, tf.reshape(tf.matMul(o, wo), [n, T, d]));
    }
    return tf.add(tf.matMul(tf.reshape(tf.slice(x, [0, length, 0], [n, 1, d]), [n, d]), wr), br);
  };
  return {
    // One Adam step on a fresh batch; returns the loss (read back, as posenc's step reports it).
    step() {
      const { ids, labels } = examples(batch);
      const cost = optimizer.minimize(() => tf.losses.softmaxCrossEntropy(tf.oneHot(tf.tensor1d(labels, 'int32'), 2), logitsOf(ids, batch)), true);
      const loss = cost.dataSync()[0];
      cost.dispose();
      return loss;
    },
    accuracy(n = 256) {
      const { ids, labels } = examples(n);
      const predicted = tf.tidy(() => tf.argMax(logitsOf(ids, n), 1).dataSync());
      return predicted.reduce((a, p, i) => a + (p === labels[i]), 0) / n;
    },
    dispose() {
      tf.dispose([embed, ...weights.flat(), wr, br]);
      optimizer.dispose();
    },
  };
}
