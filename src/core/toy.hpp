// A toy transformer that has to learn word order: the claim that attention without positions cannot
// use order, shown by training instead of by an equivariance error; and how each encoding fares at
// lengths it was not trained at ("train short, test long", Press et al. 2022, "Train Short, Test
// Long: Attention with Linear Biases Enables Input Length Extrapolation"), with RoPE's scalings
// applied at test time or during a short fine-tune at the longer length (Chen et al. 2023, "Extending
// Context Window of Large Language Models via Positional Interpolation"; Peng et al. 2023, "YaRN").
//
// The model (every choice deterministic, so a seed gives bit-identical training on every backend):
//  - Input: `length` tokens from a vocabulary of `vocab` content tokens, then one readout token at
//    position `length` (a [CLS] token, or for the copy task the query token "which position?").
//    x = E[token] (+ P[position] for the additive encodings).
//  - `layers` residual self-attention layers, x <- x + concat_h(softmax(q_h k_h^T / sqrt(d_h) + bias_h) v_h) W_O,
//    bidirectional unless `causal` (then query i sees keys j <= i).
//  - A linear readout of the readout token's final vector to the task's classes, softmax
//    cross-entropy, trained with Adam (Kingma & Ba 2015) on fresh batches from a seeded stream.
//  - Encodings: none (nothing, NoPE: the model is permutation-invariant over the tokens when
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
// At another length than the configured one (evaluation up to kToyMaxEvalLength, or training there)
// the readout token stays the same token, and the copy task still asks about k < the configured
// length (there are no query tokens past it).
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
inline constexpr std::size_t kHeldOut = contract::kToyHeldOut;  // held-out examples per evaluation
inline constexpr std::size_t kWindow = 10;                      // steps averaged in the training loss and accuracy

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

// Where a call trains or evaluates: the sequence length, and for RoPE the frequencies (by default
// base 10000's, as trained). A scaling's frequencies come from rope::frequencies (pe.ropeFrequencies).
struct Setting {
  std::size_t length = 0;            // 0: the configured length
  std::span<const double> inv_freq;  // rope only: head_dim / 2 frequencies; empty: base 10000's
  double attention_factor = 1;       // rope only: multiplies cos and sin (so q.k by its square)
};

// What a model can reach on a task at a length without learning order: `chance`, the best constant
// guess (the most frequent label); `order_blind`, the best any function of the readout token and
// the bag (multiset) of tokens can do, e.g. a model without positions that attends bidirectionally.
// before: 1/2 and 1/2 (given the bag, A before B has probability 1/2); count: 1/(kCountMax + 1) and
// 1 (the count is a function of the bag); copy: 1/vocab and E[max_v n_v] / length, where n_v counts
// token v among `length` uniform tokens: given the bag, the token at any position is v with
// probability n_v / length, so the best guess is a most frequent token.
struct Baseline {
  double chance = 0, order_blind = 0;
};
Status baseline(const Config& config, std::size_t length, Baseline& out);

struct Report {
  std::size_t step = 0;
  double loss = 0;               // mean cross-entropy over the last kWindow steps' batches
  double train_accuracy = 0;     // accuracy over the same batches
  double held_out_accuracy = 0;  // accuracy on kHeldOut held-out examples where the call trained (0 when not asked)
};

class Trainer {
 public:
  // Checks the configuration and initialises the parameters; fails on bad arguments or out of memory.
  static Status make(Trainer& out, const Config& config);

  // A copy of this trainer in its current state (parameters, Adam's moments, step, training
  // stream): both go on to train to the same bits.
  Status copy(Trainer& out) const;

  // Trains `steps` more steps (one batch each, of sequences as `at` says) and fills the report; its
  // held-out accuracy is measured as `at` says when `held_out`.
  Status train(std::size_t steps, Report& report, const Setting& at = {}, bool held_out = true);
  // Accuracy on kHeldOut held-out examples as `at` says (the same examples for the same seed and
  // length, whatever the frequencies). A learned table has no rows past the length it was trained
  // at: RangeError.
  Status evaluate(const Setting& at, double& accuracy);

  // One forward pass over n = labels.size() examples of `at.length` tokens each (tokens:
  // [n, length + 1], the readout token last): the mean cross-entropy and the number classified
  // right; with `backward`, also the gradient of that loss with respect to every parameter, into
  // gradients().
  Status loss_and_gradients(std::span<const std::int32_t> tokens, std::span<const std::int32_t> labels, const Setting& at,
                            bool backward, double& loss, std::size_t& correct);

  const Config& config() const { return config_; }
  std::size_t step() const { return step_; }
  std::span<float> parameters() { return params_; }
  std::span<const float> gradients() const { return grads_; }

 private:
  Status check(const Setting& at, Setting& resolved) const;

  Config config_;
  std::size_t step_ = 0, classes_ = 0;
  Buffer<float> params_, grads_, adam_m_, adam_v_;
  Buffer<double> window_;  // per recent step: mean loss, accuracy
  double beta1_power_ = 1, beta2_power_ = 1;
  rng::SplitMix64 train_stream_{0};
};

}  // namespace posenc::toy
