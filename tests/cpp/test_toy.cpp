#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "lab.hpp"
#include "reference.hpp"
#include "rng.hpp"
#include "rope.hpp"
#include "status_check.hpp"
#include "toy.hpp"

using posenc::toy::Baseline;
using posenc::toy::Config;
using posenc::toy::Encoding;
using posenc::toy::Setting;
using posenc::toy::Task;
using posenc::toy::Trainer;

namespace {

constexpr Encoding kTrainable[] = {Encoding::none, Encoding::sinusoidal, Encoding::learned,
                                   Encoding::rope, Encoding::alibi,      Encoding::t5};

Config small(Encoding e, bool causal, Task task = Task::before) {
  Config c;
  c.task = task;
  c.encoding = e;
  c.causal = causal;
  c.length = 5;
  c.d_model = 8;
  c.heads = 2;
  c.layers = 2;
  c.vocab = 6;
  c.seed = 11;
  return c;
}

Setting len(std::size_t length) {
  Setting s;
  s.length = length;
  return s;
}

Trainer made(const Config& c) {
  Trainer t;
  REQUIRE_OK(Trainer::make(t, c));
  return t;
}

// Three hand-written examples of length 5 (+ the readout token: [CLS] = vocab + length = 11).
const std::vector<std::int32_t> kTokens = {2, 0, 3, 1, 5, 11, 1, 4, 4, 0, 2, 11, 3, 3, 0, 5, 1, 11};
const std::vector<std::int32_t> kLabels = {1, 0, 1};
// Two of length 8, past the configured 5 (the readout token stays 11).
const std::vector<std::int32_t> kLongTokens = {2, 0, 3, 4, 4, 1, 5, 2, 11, 5, 1, 2, 2, 3, 4, 0, 4, 11};
const std::vector<std::int32_t> kLongLabels = {1, 0};

// ---- an independent reference: the documented model, written out in double ----------------------
// The T5 bucket as HF transformers' _relative_position_bucket (32 buckets, max distance 128).
int t5_bucket(long rel, bool bidirectional) {
  int buckets = 32, ret = 0;
  long n;
  if (bidirectional) {
    buckets /= 2;
    if (rel > 0) ret += buckets;
    n = std::labs(rel);
  } else {
    n = std::max(-rel, 0L);
  }
  const int exact = buckets / 2;
  if (n < exact) return ret + int(n);
  const int large = exact + int(std::log(double(n) / exact) / std::log(128.0 / exact) * (buckets - exact));
  return ret + std::min(large, buckets - 1);
}

// Examples of tokens.size() / labels.size() - 1 tokens; RoPE with `inv_freq` (empty: base 10000's)
// and cos, sin times `attention_factor`.
double reference_loss(const Config& c, std::span<const float> p, const std::vector<std::int32_t>& tokens,
                      const std::vector<std::int32_t>& labels, std::span<const double> inv_freq = {},
                      double attention_factor = 1) {
  const std::size_t T = tokens.size() / labels.size(), L = T - 1, d = c.d_model, H = c.heads, hd = d / H;
  const std::size_t classes = c.task == Task::before ? 2 : c.task == Task::copy ? c.vocab : posenc::toy::kCountMax + 1;
  const std::size_t n_tokens = c.vocab + c.length + 1;
  std::size_t at = n_tokens * d;  // after the token embeddings
  const float* pos = p.data() + at;
  if (c.encoding == Encoding::learned) at += (c.length + 1) * d;
  std::vector<std::size_t> layer(c.layers);
  for (auto& l : layer) {
    l = at;
    at += 4 * d * d + (c.encoding == Encoding::t5 ? H * 32 : 0);
  }
  const float* wr = p.data() + at;
  const float* br = wr + d * classes;
  double total = 0;
  for (std::size_t e = 0; e < labels.size(); ++e) {
    std::vector<std::vector<double>> x(T, std::vector<double>(d));
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < d; ++j) {
        x[t][j] = p[std::size_t(tokens[e * T + t]) * d + j];
        if (c.encoding == Encoding::learned) x[t][j] += pos[t * d + j];
        if (c.encoding == Encoding::sinusoidal) {
          const double a = double(t) * ref::inv_freq(j / 2, d, 10000.0);
          x[t][j] += j % 2 ? std::cos(a) : std::sin(a);
        }
      }
    for (std::size_t l = 0; l < c.layers; ++l) {
      const float* w = p.data() + layer[l];
      auto project = [&](const float* m) {
        std::vector<std::vector<double>> out(T, std::vector<double>(d, 0.0));
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t j = 0; j < d; ++j)
            for (std::size_t k = 0; k < d; ++k) out[t][j] += x[t][k] * m[k * d + j];
        return out;
      };
      auto q = project(w), k = project(w + d * d), v = project(w + 2 * d * d);
      if (c.encoding == Encoding::rope)
        for (auto* m : {&q, &k})
          for (std::size_t t = 0; t < T; ++t)
            for (std::size_t h = 0; h < H; ++h)
              for (std::size_t i = 0; i < hd / 2; ++i) {
                const double a = double(t) * (inv_freq.empty() ? ref::inv_freq(i, hd, 10000.0) : inv_freq[i]);
                const double cs = attention_factor * std::cos(a), sn = attention_factor * std::sin(a);
                double& x1 = (*m)[t][h * hd + i];
                double& x2 = (*m)[t][h * hd + i + hd / 2];
                const double r1 = x1 * cs - x2 * sn, r2 = x2 * cs + x1 * sn;
                x1 = r1, x2 = r2;
              }
      std::vector<std::vector<double>> heads_out(T, std::vector<double>(d, 0.0));
      for (std::size_t h = 0; h < H; ++h) {
        const double slope = std::exp2(-8.0 * double(h + 1) / double(H));  // H a power of two
        for (std::size_t i = 0; i < T; ++i) {
          const std::size_t valid = c.causal ? i + 1 : T;
          std::vector<double> s(valid);
          double mx = -1e300, sum = 0;
          for (std::size_t j = 0; j < valid; ++j) {
            for (std::size_t t = 0; t < hd; ++t) s[j] += q[i][h * hd + t] * k[j][h * hd + t];
            s[j] /= std::sqrt(double(hd));
            const long rel = long(j) - long(i);
            if (c.encoding == Encoding::alibi) s[j] -= slope * double(c.causal ? -rel : std::labs(rel));
            if (c.encoding == Encoding::t5) s[j] += w[4 * d * d + h * 32 + std::size_t(t5_bucket(rel, !c.causal))];
            mx = std::max(mx, s[j]);
          }
          for (auto& z : s) sum += (z = std::exp(z - mx));
          for (std::size_t j = 0; j < valid; ++j)
            for (std::size_t t = 0; t < hd; ++t) heads_out[i][h * hd + t] += s[j] / sum * v[j][h * hd + t];
        }
      }
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < d; ++j)
          for (std::size_t k2 = 0; k2 < d; ++k2) x[t][j] += heads_out[t][k2] * w[3 * d * d + k2 * d + j];
    }
    std::vector<double> z(classes);
    double mx = -1e300, sum = 0;
    for (std::size_t j = 0; j < classes; ++j) {
      z[j] = br[j];
      for (std::size_t k = 0; k < d; ++k) z[j] += x[L][k] * wr[k * classes + j];
      mx = std::max(mx, z[j]);
    }
    for (double zj : z) sum += std::exp(zj - mx);
    total += -(z[std::size_t(labels[e])] - mx - std::log(sum));
  }
  return total / double(labels.size());
}

std::uint64_t fingerprint(std::span<const float> p) {
  std::string bytes(p.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), p.data(), bytes.size());
  return posenc::lab::fnv1a64(bytes);
}

}  // namespace

TEST_CASE("det_exp agrees with libm") {
  CHECK(posenc::rng::det_exp(0.0) == 1.0);
  for (double x = -700; x < 700; x += 0.731) REQUIRE(posenc::rng::det_exp(x) == Approx(std::exp(x)).epsilon(1e-15));
  CHECK(posenc::rng::det_exp(-800) == 0.0);
  CHECK(std::isinf(posenc::rng::det_exp(800)));
}

// The loss of the three examples above (or of `tokens` as `at` says), with the gradients when `backward`.
double loss_of(Trainer& t, bool backward, const Setting& at = len(5), const std::vector<std::int32_t>& tokens = kTokens,
               const std::vector<std::int32_t>& labels = kLabels) {
  double loss = 0;
  std::size_t correct = 0;
  REQUIRE_OK(t.loss_and_gradients(tokens, labels, at, backward, loss, correct));
  return loss;
}

// Every 7th parameter's gradient against central differences of the loss.
void check_gradients(Trainer& t, const Setting& at, const std::vector<std::int32_t>& tokens,
                     const std::vector<std::int32_t>& labels) {
  loss_of(t, true, at, tokens, labels);
  const std::vector<float> g(t.gradients().begin(), t.gradients().end());
  auto p = t.parameters();
  // every group (embeddings, positions, W_Q..W_O, T5 biases, readout) is hit
  for (std::size_t i = 0; i < p.size(); i += 7) {
    const float saved = p[i], h = 1e-2f;
    p[i] = saved + h;
    const double up = loss_of(t, false, at, tokens, labels);
    p[i] = saved - h;
    const double down = loss_of(t, false, at, tokens, labels);
    p[i] = saved;
    const double numeric = (up - down) / (double(saved + h) - double(saved - h));
    INFO("parameter " << i);
    REQUIRE(g[i] == Approx(numeric).margin(3e-4).epsilon(2e-2));
  }
}

// A scaling's frequencies for the small model's heads (head_dim 4), from the RoPE module.
posenc::rope::Frequencies scaled(posenc::rope::ScalingType type, double factor) {
  posenc::rope::Scaling s;
  s.type = type;
  s.factor = factor;
  s.original_max_positions = 5;
  posenc::rope::Frequencies f;
  REQUIRE_OK(posenc::rope::frequencies(4, 10000.0, s, f));
  return f;
}

// Runs check(trainer, name) on the small model with every trainable encoding, bidirectional and causal.
template <class Check>
void for_each_model(Check check) {
  for (bool causal : {false, true})
    for (Encoding e : kTrainable) {
      INFO(posenc::lab::encoding_name(e) << (causal ? " causal" : ""));
      Trainer t = made(small(e, causal));
      check(t);
    }
}

TEST_CASE("toy model: the loss is the documented model's, computed independently in double") {
  for_each_model([](Trainer& t) {
    CHECK(loss_of(t, false) == Approx(reference_loss(t.config(), t.parameters(), kTokens, kLabels)).epsilon(2e-5));
  });
}

TEST_CASE("toy model: every model's loss and gradients, bit for bit") {
  // Pinned from the implementation that computed every query row of the last layer: computing there
  // the readout rows alone (the only rows the loss reads) must not change a bit, forward or backward.
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the losses' bits, the counts and the gradients' fingerprints
  const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for_each_model([&](Trainer& t) {
    const bool learned = t.config().encoding == Encoding::learned;  // no rows past 5
    for (const auto& [at, tokens, labels] :
         {std::tuple{len(5), kTokens, kLabels}, std::tuple{len(8), kLongTokens, kLongLabels}}) {
      if (learned && at.length == 8) continue;
      for (bool backward : {false, true}) {
        double loss = 0;
        std::size_t right = 0;
        REQUIRE_OK(t.loss_and_gradients(tokens, labels, at, backward, loss, right));
        std::uint64_t bits = 0;
        std::memcpy(&bits, &loss, sizeof bits);
        mix(bits);
        mix(right);
        if (backward) mix(fingerprint(t.gradients()));
      }
    }
  });
  INFO("fingerprint " << std::hex << h);
  CHECK(h == 0x1e35d03f18aed195ull);
}

TEST_CASE("toy model: the gradients match finite differences of the loss") {
  for_each_model([](Trainer& t) { check_gradients(t, len(5), kTokens, kLabels); });
}

TEST_CASE("toy model: at a longer length, and RoPE with a scaling's frequencies, it is still the documented model") {
  for_each_model([](Trainer& t) {
    if (t.config().encoding == Encoding::learned) return;  // no rows past 5
    CHECK(loss_of(t, false, len(8), kLongTokens, kLongLabels) ==
          Approx(reference_loss(t.config(), t.parameters(), kLongTokens, kLongLabels)).epsilon(2e-5));
  });
  using posenc::rope::ScalingType;
  for (auto [type, factor] : {std::pair{ScalingType::linear, 1.6}, std::pair{ScalingType::yarn, 2.0}}) {
    const auto f = scaled(type, factor);
    if (type == ScalingType::yarn) CHECK(f.attention_factor > 1.05);  // 0.1 ln 2 + 1
    for (bool causal : {false, true}) {
      Trainer t = made(small(Encoding::rope, causal));
      const Setting at{8, f.inv_freq.span(), f.attention_factor};
      CHECK(loss_of(t, false, at, kLongTokens, kLongLabels) ==
            Approx(reference_loss(t.config(), t.parameters(), kLongTokens, kLongLabels, f.inv_freq.span(), f.attention_factor))
                .epsilon(2e-5));
      check_gradients(t, at, kLongTokens, kLongLabels);
    }
  }
}

TEST_CASE("toy model: frequencies are for RoPE only, one per channel pair of a head") {
  const auto f = scaled(posenc::rope::ScalingType::linear, 2);
  Trainer sinusoidal = made(small(Encoding::sinusoidal, false));
  double acc = 0;
  posenc::toy::Report r;
  CHECK_RANGE_WITH(sinusoidal.evaluate({8, f.inv_freq.span(), 1}, acc),
                   Catch::Contains("'rope'") && Catch::Contains("sinusoidal"));
  CHECK_RANGE_WITH(sinusoidal.train(1, r, {8, {}, 2}), Catch::Contains("'rope'"));
  CHECK(sinusoidal.step() == 0);
  Trainer rope = made(small(Encoding::rope, false));
  const double three[] = {1, 0.5, 0.25};
  CHECK_RANGE_WITH(rope.evaluate({8, three, 1}, acc), Catch::Contains("invFreq holds 3 values") && Catch::Contains("needs 2"));
  CHECK_RANGE_WITH(rope.evaluate({8, f.inv_freq.span(), 0}, acc), Catch::Contains("attentionFactor"));
  const double inf[] = {1, INFINITY};
  CHECK_RANGE_WITH(rope.evaluate({8, inf, 1}, acc), Catch::Contains("finite"));
  CHECK_OK(rope.evaluate({8, f.inv_freq.span(), 1}, acc));
  CHECK_OK(rope.train(2, r, {8, f.inv_freq.span(), f.attention_factor}));
  CHECK(r.step == 2);
  CHECK_RANGE_WITH(rope.train(1, r, len(posenc::contract::kToyMaxEvalLength + 1)), Catch::Contains("length"));
  CHECK(rope.step() == 2);
}

TEST_CASE("toy model: training is a pure function of the seed, bit for bit on every backend") {
  // Pinned from a native run; the same test runs under wasm SIMD and wasm scalar, so a pass in all
  // three ctest builds means they train to the same bits.
  Config c = small(Encoding::rope, false);
  c.seed = 3;
  Trainer a = made(c), b = made(c);
  posenc::toy::Report ra, rb;
  REQUIRE_OK(a.train(30, ra));
  REQUIRE_OK(b.train(10, rb));
  REQUIRE_OK(b.train(20, rb, {}, false));  // the held-out evaluation changes nothing
  CHECK(rb.held_out_accuracy == 0);
  CHECK(fingerprint(a.parameters()) == fingerprint(b.parameters()));
  CHECK(ra.loss == rb.loss);
  INFO("fingerprint " << std::hex << fingerprint(a.parameters()));
  CHECK(fingerprint(a.parameters()) == 0x5c4ff29b0d86f64cull);
  std::uint64_t loss_bits = 0;  // the reported loss too (its log is rng::det_log, not libm's)
  std::memcpy(&loss_bits, &ra.loss, sizeof loss_bits);
  INFO("loss " << ra.loss << " bits " << std::hex << loss_bits);
  CHECK(loss_bits == 0x3fe0858bf0b66846ull);
  c.encoding = Encoding::t5;
  c.causal = true;
  Trainer t5 = made(c);
  REQUIRE_OK(t5.train(30, ra));
  INFO("fingerprint " << std::hex << fingerprint(t5.parameters()));
  CHECK(fingerprint(t5.parameters()) == 0x9fde1d73ff86466dull);
  c.seed = 4;
  Trainer other = made(c);
  REQUIRE_OK(other.train(30, rb));
  CHECK(fingerprint(other.parameters()) != fingerprint(t5.parameters()));
}

TEST_CASE("toy model: bad configurations and lengths are range errors") {
  Trainer t;
  Config c;
  c.length = 3;
  CHECK_RANGE_WITH(Trainer::make(t, c), Catch::Contains("length"));
  c = Config{};
  c.d_model = 18;  // not a multiple of 2 * heads = 4
  CHECK_RANGE_WITH(Trainer::make(t, c), Catch::Contains("dModel"));
  c = Config{};
  c.encoding = Encoding::xpos;
  CHECK_RANGE_WITH(Trainer::make(t, c), Catch::Contains("encoding"));
  c = Config{};
  c.learning_rate = 0;
  CHECK_RANGE_WITH(Trainer::make(t, c), Catch::Contains("learningRate"));
  c = Config{};
  c.encoding = Encoding::learned;
  Trainer learned = made(c);
  double acc = 0;
  CHECK_RANGE_WITH(learned.evaluate(len(c.length + 1), acc), Catch::Contains("learned"));
  posenc::toy::Report r;
  CHECK_RANGE_WITH(learned.train(1, r, len(c.length + 1)), Catch::Contains("learned"));
  CHECK_OK(learned.evaluate(len(c.length), acc));
  CHECK_RANGE_WITH(learned.evaluate(len(posenc::contract::kToyMaxEvalLength + 1), acc), Catch::Contains("length"));
}

// ---- the baselines: exact sums over every sequence, and a simulation ----------------------------
// E[max count] / length for `length` uniform tokens among `vocab`, summed over all vocab^length sequences.
double enumerated_order_blind(std::size_t length, std::size_t vocab) {
  std::vector<std::size_t> seq(length, 0), counts(vocab);
  std::uint64_t total = 0, sequences = 0;
  for (;;) {
    std::fill(counts.begin(), counts.end(), 0);
    for (auto v : seq) ++counts[v];
    total += *std::max_element(counts.begin(), counts.end());
    ++sequences;
    std::size_t i = 0;
    while (i < length && ++seq[i] == vocab) seq[i++] = 0;
    if (i == length) break;
  }
  return double(total) / double(sequences) / double(length);
}

TEST_CASE("toy baselines: chance and the order-blind ceiling of each task") {
  Config c;
  Baseline b;
  c.task = Task::before;
  REQUIRE_OK(posenc::toy::baseline(c, 8, b));
  CHECK(b.chance == 0.5);
  CHECK(b.order_blind == 0.5);
  c.task = Task::count;
  REQUIRE_OK(posenc::toy::baseline(c, 40, b));
  CHECK(b.chance == Approx(1.0 / (posenc::toy::kCountMax + 1)));
  CHECK(b.order_blind == 1);
  c.task = Task::copy;
  for (auto [length, vocab] : {std::pair<std::size_t, std::size_t>{4, 4}, {5, 7}, {8, 8}, {9, 4}, {6, 12}}) {
    INFO(length << " tokens, vocabulary " << vocab);
    c.vocab = vocab;
    REQUIRE_OK(posenc::toy::baseline(c, length, b));
    CHECK(b.chance == Approx(1.0 / double(vocab)));
    CHECK(b.order_blind == Approx(enumerated_order_blind(length, vocab)).epsilon(1e-12));
  }
  CHECK(b.order_blind > 2.0 / 12);  // far above chance (1/12): the most frequent token is a good guess
  CHECK_RANGE_WITH(posenc::toy::baseline(c, 3, b), Catch::Contains("length"));
  CHECK_RANGE_WITH(posenc::toy::baseline(c, posenc::contract::kToyMaxEvalLength + 1, b), Catch::Contains("length"));
}

TEST_CASE("toy baselines: the order-blind ceiling of 'copy' against a simulated bag-of-tokens guesser") {
  // The guesser sees the tokens without their order, guesses a most frequent one, and is scored on
  // a uniformly chosen position; its mean success over many draws is the ceiling.
  std::mt19937_64 g(12345);
  for (auto [length, vocab] : {std::pair<std::size_t, std::size_t>{16, 8}, {32, 64}, {128, 64}, {128, 4}}) {
    INFO(length << " tokens, vocabulary " << vocab);
    std::uniform_int_distribution<std::size_t> token(0, vocab - 1), position(0, length - 1);
    constexpr int kDraws = 100000;
    double hits = 0;
    std::vector<std::size_t> seq(length), counts(vocab);
    for (int i = 0; i < kDraws; ++i) {
      std::fill(counts.begin(), counts.end(), 0);
      for (auto& v : seq) ++counts[v = token(g)];
      const auto guess = std::size_t(std::max_element(counts.begin(), counts.end()) - counts.begin());
      hits += seq[position(g)] == guess;
    }
    Config c;
    c.task = Task::copy;
    c.vocab = vocab;
    Baseline b;
    REQUIRE_OK(posenc::toy::baseline(c, length, b));
    const double p = b.order_blind, se = std::sqrt(p * (1 - p) / kDraws);
    CHECK(std::fabs(hits / kDraws - p) < 5 * se);
  }
}
