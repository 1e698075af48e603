// A toy transformer that has to learn word order: seeds 000-004's claim that attention without
// positions cannot use order, shown by training instead of by an equivariance error.
//
// The model (every choice deterministic, so a seed gives bit-identical training on every backend):
//  - Input: `length` tokens from a vocabulary of `vocab` content tokens, then one readout token at
//    position `length` (a [CLS] token, or for the copy task the query token "which position?").
//    x = E[token] (+ P[position] for the additive encodings).
//  - `layers` residual self-attention layers, x <- x + concat_h(softmax(q_h k_h^T / sqrt(d_h) + bias_h) v_h) W_O,
//    bidirectional unless `causal` (then query i sees keys j <= i).
//  - A linear readout of the readout token's final vector to the task's classes, softmax
//    cross-entropy, trained with Adam (Kingma & Ba 2015) on fresh batches from a seeded stream.
//  - Encodings: none/nope (nothing: the model is permutation-invariant over the tokens when
//    bidirectional); sinusoidal (P = the sinusoidal table, base 10000, interleaved); learned (P a
//    trainable [length + 1, d] table); rope (q and k of each head rotated, half layout, base 10000);
//    alibi (bias -m_h |i - j|, or -m_h (i - j) when causal); t5 (a trainable scalar per head and
//    T5 bucket, 32 buckets, max distance 128, bidirectional unless causal).
//
// Bit-identical on every backend: every product goes through attention::matmul, whose SIMD tiles add
// each term in the same order whatever the vector width, and everything else is plain IEEE float
// arithmetic in a fixed order. exp and the sin/cos tables come from rng's deterministic functions
// (never libm or xsimd's vector sincos, whose last bits differ between builds).
//
// Tasks (examples drawn from rng streams keyed by the seed; held-out examples from a separate stream):
//  - before: tokens A = 0 and B = 1 once each at random positions, the others from 2..vocab-1:
//    does A come before B? (2 classes; needs order.)
//  - copy: random tokens, readout token Q_k with k uniform in [0, length): which token is at position
//    k? (vocab classes; needs order.)
//  - count: n copies of token 0 (n uniform in [0, kCountMax]) among tokens 1..vocab-1: what is n?
//    (kCountMax + 1 classes; order-free, the control.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "buffer.hpp"
#include "contract.hpp"
#include "rng.hpp"
#include "status.hpp"

namespace posenc::toy {

using Task = contract::ToyTask;
using Encoding = contract::LabEncoding;

inline constexpr std::size_t kCountMax = 4;
inline constexpr std::size_t kHeldOut = 256;  // held-out examples per evaluation
inline constexpr std::size_t kWindow = 10;    // steps averaged in the training loss and accuracy

struct Config {
  Task task = Task::before;
  Encoding encoding = Encoding::none;
  std::size_t length = std::size_t(contract::kDefaultToyLength);
  std::size_t d_model = std::size_t(contract::kDefaultToyDModel);
  std::size_t heads = std::size_t(contract::kDefaultToyHeads);
  std::size_t layers = std::size_t(contract::kDefaultToyLayers);
  std::size_t batch = std::size_t(contract::kDefaultToyBatch);
  std::size_t vocab = std::size_t(contract::kDefaultToyVocab);
  bool causal = false;
  double learning_rate = contract::kDefaultToyLearningRate;
  std::uint64_t seed = 0;
};

struct Report {
  std::size_t step = 0;
  double loss = 0;               // mean cross-entropy over the last kWindow steps' batches
  double train_accuracy = 0;     // accuracy over the same batches
  double held_out_accuracy = 0;  // accuracy on kHeldOut held-out examples at the training length
};

class Trainer {
 public:
  // Checks the configuration and initialises the parameters; fails on bad arguments or out of memory.
  static Status make(Trainer& out, const Config& config);

  // Trains `steps` more steps (one batch each) and fills the report.
  Status train(std::size_t steps, Report& report);
  // Accuracy on kHeldOut held-out examples of `length` tokens (the same examples for the same
  // seed and length). A learned table cannot go past the length it was trained at: RangeError.
  Status evaluate(std::size_t length, double& accuracy);

  // One forward pass over n = labels.size() examples of `length` tokens each (tokens: [n, length + 1],
  // the readout token last): the mean cross-entropy and the number classified right; with `backward`,
  // also the gradient of that loss with respect to every parameter, into gradients().
  Status loss_and_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> labels, std::size_t length,
                            bool backward, double& loss, std::size_t& correct);

  const Config& config() const { return config_; }
  std::size_t step() const { return step_; }
  std::span<float> parameters() { return params_; }
  std::span<const float> gradients() const { return grads_; }

 private:
  Config config_;
  std::size_t step_ = 0, classes_ = 0;
  Buffer<float> params_, grads_, adam_m_, adam_v_;
  Buffer<double> window_;  // per recent step: mean loss, accuracy
  double beta1_power_ = 1, beta2_power_ = 1;
  rng::SplitMix64 train_stream_{0};
};

}  // namespace posenc::toy
