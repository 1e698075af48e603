#include "toy.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "angles.hpp"
#include "attention.hpp"
#include "lab.hpp"
#include "ops.hpp"
#include "relative.hpp"
#include "rng.hpp"

namespace posenc::toy {
namespace {

using Floats = Buffer<float>;
using attention::Matrix;

// The encodings' settings: the lab's (lab.hpp, from the package's defaults in contract.hpp).
using lab::kBase;
using lab::kLearnedStd;
using lab::kT5Buckets;
using lab::kT5MaxDistance;
constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;
constexpr std::size_t kEvalBlock = 32;  // held-out examples per forward pass
static_assert(kHeldOut % kEvalBlock == 0);

// ENUMS.toyEncoding is a prefix of ENUMS.labEncoding: a trainable encoding crosses as its lab index.
constexpr bool trainable_is_prefix() {
  for (std::int32_t i = 0; i < contract::kToyEncodingCount; ++i)
    if (std::string_view(contract::kToyEncodingNames[i]) != contract::kLabEncodingNames[i]) return false;
  return contract::kToyEncodingCount <= contract::kLabEncodingCount;
}
static_assert(trainable_is_prefix());

std::size_t classes_of(const Config& c) {
  return c.task == Task::before ? 2 : c.task == Task::copy ? c.vocab : kCountMax + 1;
}

// Where each parameter lives in the flat vector (the gradients and Adam's moments share the layout).
struct Layout {
  std::size_t d, heads, hd, tokens, embed, position, layer0, layer_size, readout, readout_bias, total;
  std::size_t wq(std::size_t l) const { return layer0 + l * layer_size; }
  std::size_t wk(std::size_t l) const { return wq(l) + d * d; }
  std::size_t wv(std::size_t l) const { return wq(l) + 2 * d * d; }
  std::size_t wo(std::size_t l) const { return wq(l) + 3 * d * d; }
  std::size_t t5(std::size_t l) const { return wq(l) + 4 * d * d; }
};

Layout layout_of(const Config& c, std::size_t classes) {
  Layout L{};
  L.d = c.d_model;
  L.heads = c.heads;
  L.hd = c.d_model / c.heads;
  L.tokens = c.vocab + c.length + 1;  // content tokens, the copy task's queries Q_0..Q_{length-1}, [CLS]
  L.embed = 0;
  L.position = L.tokens * L.d;
  const std::size_t positions = c.encoding == Encoding::learned ? (c.length + 1) * L.d : 0;
  L.layer0 = L.position + positions;
  L.layer_size = 4 * L.d * L.d + (c.encoding == Encoding::t5 ? c.heads * kT5Buckets : 0);
  L.readout = L.layer0 + c.layers * L.layer_size;
  L.readout_bias = L.readout + L.d * classes;
  L.total = L.readout_bias + classes;
  return L;
}

// sin/cos of p * w_i for p < rows and i < half, times `factor`, as floats [rows, half]: w_i from
// `inv_freq`, or base^(-2i / (2 half)) when it is empty. From the exact reduction and rng's
// deterministic sincos, so every backend gets the same bits.
void sincos_table(std::size_t rows, std::size_t half, std::span<const double> inv_freq, double factor, float* s, float* c) {
  const double log_base = rng::det_log(kBase);
  for (std::size_t i = 0; i < half; ++i) {
    const double w = inv_freq.empty() ? rng::det_exp(-double(2 * i) / double(2 * half) * log_base) : inv_freq[i];
    for (std::size_t p = 0; p < rows; ++p) {
      double u = angles::reduce(double(p), w) / (2 * 3.141592653589793);  // in about [-0.5, 0.5]
      u -= std::floor(u);
      if (u >= 1.0) u = 0.0;
      double sn, cs;
      rng::det_sincos_2pi(u, sn, cs);
      s[p * half + i] = float(factor * sn);
      c[p * half + i] = float(factor * cs);
    }
  }
}

// RoPE in the half layout on every head of x: [rows, heads * hd], row r at position r % period.
// inverse: the transposed rotation (the backward pass).
void rotate(std::span<float> x, std::size_t period, std::size_t heads, std::size_t hd, const float* s, const float* c,
            bool inverse) {
  const std::size_t half = hd / 2, rows = x.size() / (heads * hd);
  const float sign = inverse ? -1.f : 1.f;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t p = r % period;
    for (std::size_t h = 0; h < heads; ++h) {
      float* v = x.data() + (r * heads + h) * hd;
      for (std::size_t i = 0; i < half; ++i) {
        const float sn = sign * s[p * half + i], cs = c[p * half + i], a = v[i], b = v[i + half];
        v[i] = a * cs - b * sn;
        v[i + half] = b * cs + a * sn;
      }
    }
  }
}

// Softmax of a row over its first `valid` entries (the rest 0), with rng::det_exp.
void softmax(float* row, std::size_t n, std::size_t valid) {
  float mx = row[0];
  for (std::size_t j = 1; j < valid; ++j) mx = std::max(mx, row[j]);
  float sum = 0;
  for (std::size_t j = 0; j < valid; ++j) sum += (row[j] = float(rng::det_exp(double(row[j]) - mx)));
  for (std::size_t j = 0; j < valid; ++j) row[j] /= sum;
  for (std::size_t j = valid; j < n; ++j) row[j] = 0;
}

// out [cols, rows] = in^T for in [rows, cols] with row stride `stride`.
void transpose(const float* in, std::size_t rows, std::size_t cols, std::size_t stride, float* out) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * stride + c];
}

Status mm(Matrix a, Matrix b, bool transpose_b, float alpha, float* out, std::size_t out_stride) {
  return attention::matmul(a, b, transpose_b, alpha, out, out_stride);
}
Matrix dense(const float* data, std::size_t rows, std::size_t cols) {
  return {data, rows, cols, cols};
}

// One example: tokens [length + 1] (the last is the readout token) and its label.
void example(Task task, std::size_t length, std::size_t train_length, std::size_t vocab, rng::SplitMix64& g, std::int32_t* tokens,
             std::int32_t& label) {
  const auto below = [&g](std::size_t n) { return std::int32_t(g.uniform() * double(n)); };
  const auto cls = std::int32_t(vocab + train_length);
  tokens[length] = cls;
  if (task == Task::before) {  // A = 0 and B = 1 once each, fillers 2..vocab-1
    for (std::size_t i = 0; i < length; ++i) tokens[i] = 2 + below(vocab - 2);
    const std::int32_t a = below(length);
    std::int32_t b = below(length - 1);
    if (b >= a) ++b;
    tokens[a] = 0;
    tokens[b] = 1;
    label = a < b ? 1 : 0;
  } else if (task == Task::copy) {  // which token is at position k?
    for (std::size_t i = 0; i < length; ++i) tokens[i] = below(vocab);
    const std::int32_t k = below(std::min(length, train_length));
    tokens[length] = std::int32_t(vocab) + k;
    label = tokens[k];
  } else {  // count: n copies of token 0 at distinct positions, the others from 1..vocab-1
    const std::int32_t n = below(kCountMax + 1);
    for (std::size_t i = 0; i < length; ++i) tokens[i] = 1 + below(vocab - 1);
    for (std::int32_t placed = 0; placed < n;) {
      const std::int32_t p = below(length);
      if (tokens[p] != 0) tokens[p] = 0, ++placed;
    }
    label = n;
  }
}

}  // namespace

Status Trainer::make(Trainer& out, const Config& c) {
  using namespace contract;
  // invariant: validate.js maps the option's names to these indices
  if (int(c.task) < 0 || int(c.task) >= kToyTaskCount) return fail("task ", int(c.task), " is unknown; allowed: ", kToyTaskList);
  // invariant: toy.js offers the trainable encodings only
  if (int(c.encoding) < 0 || int(c.encoding) >= kToyEncodingCount)
    return fail("encoding ", int(c.encoding), " is not trainable; allowed: ", kToyEncodingList);
  const struct {
    const char* name;
    std::size_t value, lo, hi;
  } sizes[] = {{"length", c.length, kToyMinLength, kToyMaxLength},
               {"heads", c.heads, 1, kToyMaxHeads},
               {"dModel", c.d_model, kToyMinDModel, kToyMaxDModel},
               {"layers", c.layers, 1, kToyMaxLayers},
               {"batch", c.batch, 1, kToyMaxBatch},
               {"vocab", c.vocab, kToyMinVocab, kToyMaxVocab}};
  for (const auto& s : sizes)
    if (s.value < s.lo || s.value > s.hi) return fail(s.name, " must be an integer in [", s.lo, ", ", s.hi, "], got ", s.value);
  if (c.d_model % (2 * c.heads)) return fail("dModel must be a multiple of 2 * heads = ", 2 * c.heads, ", got ", c.d_model);
  if (!(c.learning_rate > 0 && c.learning_rate <= 1)) return fail("learningRate must be in (0, 1], got ", c.learning_rate);

  Trainer t;
  t.config_ = c;
  t.classes_ = classes_of(c);
  const Layout L = layout_of(c, t.classes_);
  POSENC_TRY(t.params_.allocate(L.total, "the toy model's parameters"));
  POSENC_TRY(t.grads_.allocate(L.total, "the toy model's gradients"));
  POSENC_TRY(t.adam_m_.allocate(L.total, "Adam's first moments"));
  POSENC_TRY(t.adam_v_.allocate(L.total, "Adam's second moments"));
  POSENC_TRY(t.window_.allocate(2 * kWindow, "the training window"));
  // Token embeddings N(0, 1) (as the lab's words), learned positions N(0, 1/2) (the RMS of a
  // sinusoidal entry), weights N(0, 1/d) (LeCun), T5 biases and the readout bias 0.
  auto g = rng::make(c.seed, rng::Stream::toy);
  const auto p = t.params_.span();
  const double w = 1.0 / std::sqrt(double(L.d));
  rng::fill_normal(g, p.subspan(L.embed, L.tokens * L.d), 0.0, 1.0);
  rng::fill_normal(g, p.subspan(L.position, L.layer0 - L.position), 0.0, kLearnedStd);
  for (std::size_t l = 0; l < c.layers; ++l) rng::fill_normal(g, p.subspan(L.wq(l), 4 * L.d * L.d), 0.0, w);
  rng::fill_normal(g, p.subspan(L.readout, L.d * t.classes_), 0.0, w);
  t.train_stream_ = rng::make(c.seed, rng::Stream::toy_train);
  out = std::move(t);
  return {};
}

// The setting with its length filled in, after checking it against the model.
Status Trainer::check(const Setting& at, Setting& resolved) const {
  const Config& c = config_;
  resolved = at;
  if (!resolved.length) resolved.length = c.length;
  const std::size_t length = resolved.length;
  if (length < contract::kToyMinLength || length > contract::kToyMaxEvalLength)
    return fail("length must be an integer in [", contract::kToyMinLength, ", ", contract::kToyMaxEvalLength, "], got ", length);
  if (c.encoding == Encoding::learned && length > c.length)
    return fail("length ", length, " is longer than the learned table's ", c.length,
                " positions: a learned encoding has no rows past the length it was trained at");
  if (at.inv_freq.empty() && at.attention_factor == 1) return {};
  // invariant: toy.js passes frequencies for the 'rope' encoding only
  if (c.encoding != Encoding::rope)
    return fail("RoPE frequencies apply to the 'rope' encoding only; this model's encoding is '", lab::encoding_name(c.encoding),
                "'");
  const std::size_t half = c.d_model / c.heads / 2;
  // invariant: toy.js computes the frequencies with ropeFrequencies()
  if (at.inv_freq.size() != half) return fail("invFreq holds ", at.inv_freq.size(), " values; a head of this model needs ", half);
  // invariant: toy.js computes the frequencies with ropeFrequencies()
  for (double w : at.inv_freq)
    if (!std::isfinite(w)) return fail("invFreq must be finite, got ", w);
  // invariant: toy.js computes the frequencies with ropeFrequencies()
  if (!(at.attention_factor > 0 && at.attention_factor <= 1e6))
    return fail("attentionFactor must be a number in (0, 1e6], got ", at.attention_factor);
  return {};
}

Status Trainer::copy(Trainer& out) const {
  Trainer t;
  t.config_ = config_;
  t.step_ = step_;
  t.classes_ = classes_;
  t.beta1_power_ = beta1_power_;
  t.beta2_power_ = beta2_power_;
  t.train_stream_ = train_stream_;
  POSENC_TRY(t.params_.assign(params_.span(), "the toy model's parameters"));
  POSENC_TRY(t.grads_.allocate(grads_.size(), "the toy model's gradients"));
  POSENC_TRY(t.adam_m_.assign(adam_m_.span(), "Adam's first moments"));
  POSENC_TRY(t.adam_v_.assign(adam_v_.span(), "Adam's second moments"));
  POSENC_TRY(t.window_.assign(window_.span(), "the training window"));
  out = std::move(t);
  return {};
}

Status Trainer::loss_and_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> labels,
                                   const Setting& requested, bool backward, double& loss, std::size_t& correct) {
  const Config& c = config_;
  const Layout L = layout_of(c, classes_);
  Setting set;
  POSENC_TRY(check(requested, set));
  const std::size_t length = set.length;
  const std::size_t n = labels.size(), T = length + 1, d = L.d, H = L.heads, hd = L.hd, C = classes_, NL = c.layers;
  std::size_t rows = 0;
  // invariant: the trainer's limits (contract.js toyMax*) keep every size of the workspace far below size_t
  POSENC_TRY(checked_product(rows, {n, T}, "the training batch"));
  // invariant: the trainer generates its own tokens and labels
  if (tokens.size() != rows) return fail("tokens holds ", tokens.size(), " values, expected ", rows);
  // invariant: the trainer generates its own tokens and labels
  for (auto t : tokens)
    if (t < 0 || std::size_t(t) >= L.tokens) return fail("token ", t, " is out of range [0, ", L.tokens, ")");
  // invariant: the trainer generates its own tokens and labels
  for (auto y : labels)
    if (y < 0 || std::size_t(y) >= C) return fail("label ", y, " is out of range [0, ", C, ")");
  const float* P = params_.data();
  float* G = grads_.data();
  const bool rope = c.encoding == Encoding::rope;
  const float scale = float(1.0 / std::sqrt(double(hd)));

  // One workspace: the position tables and biases for this length, the activations saved for the
  // backward pass (x [NL][rows, d], each layer's input; q, k, v, o [NL][rows, d]; a [NL][n, H, T, T]) and scratch
  // (which ends the forward pass holding the last layer's output at the readout rows).
  // Every size through the checked products (the trainer's limits keep them small; a product that
  // wrapped around would size the workspace too small), and so every offset into the workspace below.
  const char* const what = "the toy model's workspace";
  const std::size_t half = (rope ? hd : d) / 2;
  // invariant (next 10): the trainer's limits (contract.js toyMax*) keep every size of the workspace far below size_t
  std::size_t act = 0, plane = 0, wide = 0, th = 0, hp = 0, xs = 0, ls = 0, as = 0, nd = 0, nc = 0;
  POSENC_TRY(checked_product(act, {rows, d}, what));
  POSENC_TRY(checked_product(plane, {T, T}, what));
  POSENC_TRY(checked_product(wide, {d, std::max(rows, n)}, what));
  POSENC_TRY(checked_product(th, {T, half}, what));
  POSENC_TRY(checked_product(hp, {H, plane}, what));
  POSENC_TRY(checked_product(xs, {NL, act}, what));
  POSENC_TRY(checked_product(ls, {NL, act}, what));
  POSENC_TRY(checked_product(as, {NL, n, hp}, what));
  POSENC_TRY(checked_product(nd, {n, d}, what));
  POSENC_TRY(checked_product(nc, {n, C}, what));
  // clang-format off
  const std::size_t parts[] = {th, th, hp,                                    // sn, cs, bias
                               xs, ls, ls, ls, ls,                            // x, q, k, v, o
                               as, act, nd, nc, nc,                           // a, y, scratch, z, dz
                               wide, plane, act, act, act, act, plane, plane};  // xt, tt, dx, dq, dk, dv, da, ds
  // clang-format on
  std::size_t total = 0;
  for (std::size_t part : parts) POSENC_TRY(checked_sum(total, {total, part}, what));  // invariant: as above
  Floats work;
  Buffer<std::int32_t> buckets;
  POSENC_TRY(work.allocate(total, "the toy model's workspace"));
  POSENC_TRY(buckets.allocate(c.encoding == Encoding::t5 ? plane : 0, "the T5 buckets"));
  float* at = work.data();
  float* spans[std::size(parts)];
  for (std::size_t i = 0; i < std::size(parts); ++i) spans[i] = at, at += parts[i];
  auto [sn, cs, bias, x, q, k, v, o, a, y, scratch, z, dz, xt, tt, dx, dq, dk, dv, da, ds] = spans;
  if (c.encoding == Encoding::sinusoidal || rope) sincos_table(T, half, set.inv_freq, set.attention_factor, sn, cs);
  if (c.encoding == Encoding::alibi) POSENC_TRY(relative::alibi_bias(H, T, T, /*symmetric=*/!c.causal, {bias, H * plane}));
  if (c.encoding == Encoding::t5)
    POSENC_TRY(relative::t5_buckets(T, T, kT5Buckets, kT5MaxDistance, /*bidirectional=*/!c.causal, buckets));
  const bool biased = c.encoding == Encoding::alibi || c.encoding == Encoding::t5;

  // Embedding (+ the additive table).
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t t = r % T;
    float* xr = x + r * d;
    std::copy_n(P + L.embed + std::size_t(tokens[r]) * d, d, xr);
    if (c.encoding == Encoding::learned) ops::add({xr, d}, {P + L.position + t * d, d}, {xr, d});
    if (c.encoding == Encoding::sinusoidal)
      for (std::size_t i = 0; i < d / 2; ++i) xr[2 * i] += sn[t * (d / 2) + i], xr[2 * i + 1] += cs[t * (d / 2) + i];
  }

  // Forward. The loss reads each example's readout row (its last) alone, so the last layer computes
  // the queries of those rows only: a row's query, scores, softmax and output depend on no other row's
  // (matmul adds each term in the same order whatever the number of rows), so they get the bits the
  // whole layer would give them, for 1 / T of its queries' work (half the exponentials of a two-layer
  // model). The backward pass mirrors it: the other rows' gradients there are zeros, which add nothing.
  for (std::size_t l = 0; l < NL; ++l) {
    const bool readout_only = l + 1 == NL;
    // per example: Tq query rows, the first at position p0
    const std::size_t Tq = readout_only ? 1 : T, p0 = readout_only ? length : 0, qrows = n * Tq;
    const float* xl = x + l * act;
    float *ql = q + l * act, *kl = k + l * act, *vl = v + l * act, *ol = o + l * act;
    float* al = a + l * n * H * plane;
    const float* xq = xl;  // the query rows' input
    if (readout_only) {
      for (std::size_t b = 0; b < n; ++b) std::copy_n(xl + (b * T + length) * d, d, scratch + b * d);
      xq = scratch;
    }
    POSENC_TRY(mm(dense(xq, qrows, d), dense(P + L.wq(l), d, d), false, 1.f, ql, d));
    POSENC_TRY(mm(dense(xl, rows, d), dense(P + L.wk(l), d, d), false, 1.f, kl, d));
    POSENC_TRY(mm(dense(xl, rows, d), dense(P + L.wv(l), d, d), false, 1.f, vl, d));
    if (rope) {
      rotate({ql, qrows * d}, Tq, H, hd, sn + p0 * half, cs + p0 * half, false);
      rotate({kl, act}, T, H, hd, sn, cs, false);
    }
    if (c.encoding == Encoding::t5)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t ij = 0; ij < plane; ++ij) bias[h * plane + ij] = P[L.t5(l) + h * kT5Buckets + std::size_t(buckets[ij])];
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t at = b * T * d + h * hd, qat = b * Tq * d + h * hd, scores = Tq * T;
        float* w = al + (b * H + h) * scores;
        POSENC_TRY(mm({ql + qat, Tq, hd, d}, {kl + at, T, hd, d}, true, scale, w, T));
        if (biased) ops::add({w, scores}, {bias + h * plane + p0 * T, scores}, {w, scores});
        for (std::size_t i = 0; i < Tq; ++i) softmax(w + i * T, T, c.causal ? p0 + i + 1 : T);
        POSENC_TRY(mm(dense(w, Tq, T), {vl + at, T, hd, d}, false, 1.f, ol + qat, d));
      }
    POSENC_TRY(mm(dense(ol, qrows, d), dense(P + L.wo(l), d, d), false, 1.f, y, d));
    float* next = readout_only ? scratch : x + (l + 1) * act;  // the last layer's output stays in scratch, [n, d]
    ops::add({xq, qrows * d}, {y, qrows * d}, {next, qrows * d});
  }

  // Readout: logits of each example's last row (scratch).
  POSENC_TRY(mm(dense(scratch, n, d), dense(P + L.readout, d, C), false, 1.f, z, C));
  loss = 0;
  correct = 0;
  for (std::size_t b = 0; b < n; ++b) {
    float* zb = z + b * C;
    ops::add({zb, C}, {P + L.readout_bias, C}, {zb, C});
    const std::size_t best = std::size_t(std::max_element(zb, zb + C) - zb);
    correct += best == std::size_t(labels[b]);
    softmax(zb, C, C);
    loss -= rng::det_log(std::max(double(zb[labels[b]]), 1e-30));  // libm log differs in the last bit between builds
    for (std::size_t j = 0; j < C; ++j) dz[b * C + j] = (zb[j] - (j == std::size_t(labels[b]) ? 1.f : 0.f)) / float(n);
  }
  loss /= double(n);
  if (!backward) return {};

  // Backward.
  std::fill(grads_.begin(), grads_.end(), 0.f);

  transpose(scratch, n, d, d, xt);
  POSENC_TRY(mm(dense(xt, d, n), dense(dz, n, C), false, 1.f, G + L.readout, C));
  for (std::size_t b = 0; b < n; ++b) ops::add({G + L.readout_bias, C}, {dz + b * C, C}, {G + L.readout_bias, C});
  POSENC_TRY(mm(dense(dz, n, C), dense(P + L.readout, d, C), true, 1.f, scratch, d));  // dz W_r^T
  for (std::size_t b = 0; b < n; ++b) std::copy_n(scratch + b * d, d, dx + (b * T + length) * d);

  for (std::size_t l = NL; l-- > 0;) {
    const bool readout_only = l + 1 == NL;  // as in the forward pass: Tq query rows per example, from p0
    const std::size_t Tq = readout_only ? 1 : T, p0 = readout_only ? length : 0, qrows = n * Tq;
    const float* xl = x + l * act;
    const float *ql = q + l * act, *kl = k + l * act, *vl = v + l * act, *ol = o + l * act;
    const float* al = a + l * n * H * plane;
    const float* dy = readout_only ? scratch : dx;  // the residual's gradient at the query rows
    // y = o W_o: dW_o = o^T dy, do = dy W_o^T (into y's buffer; dx still holds dy).
    transpose(ol, qrows, d, d, xt);
    POSENC_TRY(mm(dense(xt, d, qrows), dense(dy, qrows, d), false, 1.f, G + L.wo(l), d));
    POSENC_TRY(mm(dense(dy, qrows, d), dense(P + L.wo(l), d, d), true, 1.f, y, d));
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t at = b * T * d + h * hd, qat = b * Tq * d + h * hd;
        const float* w = al + (b * H + h) * Tq * T;
        POSENC_TRY(mm({y + qat, Tq, hd, d}, {vl + at, T, hd, d}, true, 1.f, da, T));  // dA = dO V^T
        transpose(w, Tq, T, T, tt);
        POSENC_TRY(mm(dense(tt, T, Tq), {y + qat, Tq, hd, d}, false, 1.f, dv + at, d));  // dV = A^T dO
        for (std::size_t i = 0; i < Tq; ++i) {                                           // softmax: dS = A (dA - sum_j A dA)
          float dot = 0;
          for (std::size_t j = 0; j < T; ++j) dot += w[i * T + j] * da[i * T + j];
          for (std::size_t j = 0; j < T; ++j) ds[i * T + j] = w[i * T + j] * (da[i * T + j] - dot);
        }
        if (c.encoding == Encoding::t5)
          for (std::size_t ij = 0; ij < Tq * T; ++ij) G[L.t5(l) + h * kT5Buckets + std::size_t(buckets[p0 * T + ij])] += ds[ij];
        POSENC_TRY(mm(dense(ds, Tq, T), {kl + at, T, hd, d}, false, scale, dq + qat, d));  // dQ = dS K
        transpose(ds, Tq, T, T, tt);
        POSENC_TRY(mm(dense(tt, T, Tq), {ql + qat, Tq, hd, d}, false, scale, dk + at, d));  // dK = dS^T Q
      }
    if (rope) {
      rotate({dq, qrows * d}, Tq, H, hd, sn + p0 * half, cs + p0 * half, true);
      rotate({dk, act}, T, H, hd, sn, cs, true);
    }
    // dW_k = x^T dK, dW_v = x^T dV, dW_q = x_q^T dQ (x_q: the query rows' input, every T-th row of x
    // from `length` in the last layer)
    transpose(xl, rows, d, d, xt);
    POSENC_TRY(mm(dense(xt, d, rows), dense(dk, rows, d), false, 1.f, G + L.wk(l), d));
    POSENC_TRY(mm(dense(xt, d, rows), dense(dv, rows, d), false, 1.f, G + L.wv(l), d));
    if (readout_only) transpose(xl + length * d, qrows, d, T * d, xt);
    POSENC_TRY(mm(dense(xt, d, qrows), dense(dq, qrows, d), false, 1.f, G + L.wq(l), d));
    // dx (the residual's) += dQ W_q^T (at the query rows) + dK W_k^T + dV W_v^T
    POSENC_TRY(mm(dense(dq, qrows, d), dense(P + L.wq(l), d, d), true, 1.f, y, d));
    for (std::size_t r = 0; r < qrows; ++r) {
      float* dxr = dx + (readout_only ? r * T + length : r) * d;
      ops::add({dxr, d}, {y + r * d, d}, {dxr, d});
    }
    for (auto [dm, wm] : {std::pair{dk, L.wk(l)}, std::pair{dv, L.wv(l)}}) {
      POSENC_TRY(mm(dense(dm, rows, d), dense(P + wm, d, d), true, 1.f, y, d));
      ops::add({dx, act}, {y, act}, {dx, act});
    }
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const std::span<const float> g{dx + r * d, d};
    float* ge = G + L.embed + std::size_t(tokens[r]) * d;
    ops::add({ge, d}, g, {ge, d});
    if (c.encoding == Encoding::learned) {
      float* gp = G + L.position + (r % T) * d;
      ops::add({gp, d}, g, {gp, d});
    }
  }
  return {};
}

Status Trainer::train(std::size_t steps, Report& report, const Setting& requested, bool held_out) {
  const Config& c = config_;
  // invariant: LIMITS.toyMaxSteps is toy.js's rule (trainToy's steps, which run() trains in chunks); step(n) is
  // refused by its cost first (cost.js estimates a million steps of the smallest model at 11 s)
  if (steps > contract::kToyMaxSteps) return fail("steps must be at most ", contract::kToyMaxSteps, ", got ", steps);
  Setting at;
  POSENC_TRY(check(requested, at));
  const std::size_t T = at.length + 1;
  Buffer<std::int32_t> tokens, labels;
  POSENC_TRY(tokens.allocate({c.batch, T}, "the training batch"));
  POSENC_TRY(labels.allocate(c.batch, "the training labels"));
  for (std::size_t s = 0; s < steps; ++s) {
    for (std::size_t b = 0; b < c.batch; ++b)
      example(c.task, at.length, c.length, c.vocab, train_stream_, tokens.data() + b * T, labels[b]);
    double loss = 0;
    std::size_t correct = 0;
    POSENC_TRY(loss_and_gradients(tokens, labels, at, true, loss, correct));
    // Adam with bias correction: p -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps').
    beta1_power_ *= double(kBeta1);
    beta2_power_ *= double(kBeta2);
    const float lr = float(c.learning_rate * std::sqrt(1.0 - beta2_power_) / (1.0 - beta1_power_));
    const float eps = float(double(kEpsilon) * std::sqrt(1.0 - beta2_power_));
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const float g = grads_[i];
      adam_m_[i] = kBeta1 * adam_m_[i] + (1.f - kBeta1) * g;
      adam_v_[i] = kBeta2 * adam_v_[i] + (1.f - kBeta2) * (g * g);
      params_[i] -= lr * adam_m_[i] / (std::sqrt(adam_v_[i]) + eps);
    }
    window_[2 * (step_ % kWindow)] = loss;
    window_[2 * (step_ % kWindow) + 1] = double(correct) / double(c.batch);  // exact: batch <= 256
    ++step_;
  }
  const std::size_t seen = std::min(step_, kWindow);
  report = {};
  report.step = step_;
  for (std::size_t i = 0; i < seen; ++i) {
    report.loss += window_[2 * i];
    report.train_accuracy += window_[2 * i + 1];
  }
  report.loss /= double(seen ? seen : 1);
  report.train_accuracy /= double(seen ? seen : 1);
  return held_out ? evaluate(at, report.held_out_accuracy) : Status{};
}

// In blocks of kEvalBlock examples: every product row depends on its own example only, so the
// count is the same as in one pass, with an eighth of the workspace.
Status Trainer::evaluate(const Setting& requested, double& accuracy) {
  const Config& c = config_;
  Setting at;
  POSENC_TRY(check(requested, at));
  const std::size_t length = at.length, T = length + 1;
  Buffer<std::int32_t> tokens, labels;
  POSENC_TRY(tokens.allocate({kHeldOut, T}, "the held-out examples"));
  POSENC_TRY(labels.allocate(kHeldOut, "the held-out labels"));
  auto g = rng::make(c.seed ^ (0x9E3779B97F4A7C15ull * length), rng::Stream::toy_held_out);
  for (std::size_t b = 0; b < kHeldOut; ++b) example(c.task, length, c.length, c.vocab, g, tokens.data() + b * T, labels[b]);
  std::size_t right = 0;
  for (std::size_t b = 0; b < kHeldOut; b += kEvalBlock) {
    double loss = 0;
    std::size_t correct = 0;
    POSENC_TRY(loss_and_gradients(tokens.span().subspan(b * T, kEvalBlock * T), labels.span().subspan(b, kEvalBlock), at, false,
                                  loss, correct));
    right += correct;
  }
  accuracy = double(right) / double(kHeldOut);
  return {};
}

namespace {

// P(every count < m) for `length` uniform draws among `vocab` values: length! / vocab^length times
// the coefficient of x^length in (sum_{j<m} x^j / j!)^vocab (the exponential generating function of
// a value drawn fewer than m times), the power by squaring.
double all_below(std::size_t length, std::size_t vocab, std::size_t m, Buffer<double>& poly) {
  const std::size_t n = length + 1;
  double *result = poly.data(), *base = result + n, *product = base + n;
  const auto multiply = [&](double* a, const double* b) {  // a = a * b, truncated past degree length
    std::fill_n(product, n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; i + j < n; ++j) product[i + j] += a[i] * b[j];
    std::copy_n(product, n, a);
  };
  std::fill_n(result, n, 0.0);
  result[0] = 1;
  double term = 1;
  for (std::size_t j = 0; j < n; ++j) {
    base[j] = j < m ? term : 0;
    term /= double(j + 1);
  }
  for (std::size_t e = vocab; e; e >>= 1) {
    if (e & 1) multiply(result, base);
    if (e > 1) multiply(base, base);
  }
  double scale = 1;  // length! / vocab^length, never below about 1e-27 on the way
  for (std::size_t i = 1; i <= length; ++i) scale *= double(i) / double(vocab);
  return result[length] * scale;
}

}  // namespace

Status baseline(const Config& c, std::size_t length, Baseline& out) {
  if (length < contract::kToyMinLength || length > contract::kToyMaxEvalLength)
    return fail("length must be an integer in [", contract::kToyMinLength, ", ", contract::kToyMaxEvalLength, "], got ", length);
  out.chance = 1.0 / double(classes_of(c));
  out.order_blind = c.task == Task::before ? 0.5 : c.task == Task::count ? 1.0 : 0.0;
  if (c.task != Task::copy) return {};
  Buffer<double> poly;
  POSENC_TRY(poly.allocate({3, length + 1}, "the order-blind baseline"));
  double expected_max = 0;  // E[max] = sum over m >= 1 of P(max >= m), whose terms fall faster than geometrically
  for (std::size_t m = 1; m <= length; ++m) {
    const double tail = 1.0 - all_below(length, c.vocab, m, poly);
    if (!(tail > 1e-17)) break;
    expected_max += tail;
  }
  out.order_blind = expected_max / double(length);
  return {};
}

}  // namespace posenc::toy
