// embind registration of the teaching models' module (posenc/lab, src/js/lab/): the permutation lab
// (src/core/lab.hpp) and the toy trainer (src/core/toy.hpp). Raw entry points as in bindings.cpp: addresses
// in wasm memory and plain numbers in, a status code out, the message read with _errorMessage.
#include <emscripten/bind.h>

#include <cstdlib>
#include <new>
#include <string_view>

#include "lab.hpp"
#include "raw.hpp"
#include "toy.hpp"

using posenc::bindings::code;
using posenc::bindings::view;

namespace {

// Tokens arrive as UTF-8 bytes and the end offset of each token; the core checks how many there may be.
using Tokens = posenc::Buffer<std::string_view>;
posenc::Status read_tokens(Tokens& words, std::uintptr_t bytes, std::uintptr_t ends, std::size_t n) {
  POSENC_TRY(words.allocate(n, "the tokens"));
  const char* b = reinterpret_cast<const char*>(bytes);
  const auto* e = reinterpret_cast<const std::int32_t*>(ends);
  for (std::size_t i = 0, start = 0; i < n; start = std::size_t(e[i]), ++i) words[i] = {b + start, std::size_t(e[i]) - start};
  return {};
}

// Outputs at the given addresses: permutation [L] (int32), output and permutedOutput [L, d],
// weights and permutedWeights [heads, L, L], metrics: 2 doubles (equivarianceError, pooledDifference).
int permutation_lab(std::uintptr_t bytes, std::uintptr_t ends, std::size_t n_tokens, std::uintptr_t permutation,
                    std::size_t n_permutation, int encoding, std::size_t d_model, double seed, std::uintptr_t out_permutation,
                    std::uintptr_t output, std::uintptr_t permuted_output, std::uintptr_t weights,
                    std::uintptr_t permuted_weights, std::uintptr_t metrics) {
  Tokens tokens;
  if (const auto status = read_tokens(tokens, bytes, ends, n_tokens); !status.ok()) return code(status);
  const std::size_t L = n_tokens, plane = posenc::lab::kHeads * L * L;
  const posenc::lab::Outputs out{view<std::int32_t>(out_permutation, L), view<float>(output, L * d_model),
                                 view<float>(permuted_output, L * d_model), view<float>(weights, plane),
                                 view<float>(permuted_weights, plane)};
  posenc::lab::Metrics m;
  const auto status = posenc::lab::permutation_lab(tokens.span(), view<const std::int32_t>(permutation, n_permutation),
                                                   static_cast<posenc::lab::Encoding>(encoding), d_model,
                                                   static_cast<std::uint64_t>(seed), out, m);
  if (status.ok()) {
    double* o = reinterpret_cast<double*>(metrics);
    o[0] = m.equivariance_error, o[1] = m.pooled_difference;
  }
  return code(status);
}

// terms: five [L, L] float arrays, one after the other: contentContent, contentPosition,
// positionContent, positionPosition, total.
int score_terms(std::uintptr_t bytes, std::uintptr_t ends, std::size_t n_tokens, int encoding, std::size_t d_model, double seed,
                std::uintptr_t terms) {
  Tokens tokens;
  if (const auto status = read_tokens(tokens, bytes, ends, n_tokens); !status.ok()) return code(status);
  const std::size_t plane = n_tokens * n_tokens;
  const auto at = [&](std::size_t i) { return view<float>(terms + i * plane * sizeof(float), plane); };
  return code(posenc::lab::score_terms(tokens.span(), static_cast<posenc::lab::Encoding>(encoding), d_model,
                                       static_cast<std::uint64_t>(seed), {at(0), at(1), at(2), at(3), at(4)}));
}

// ---- the toy model (trainToy): a handle is the address of a heap-allocated posenc::toy::Trainer ----
// *handle = the address of a heap-allocated Trainer moved from t (0 when out of memory).
int toy_store(std::uintptr_t handle, posenc::toy::Trainer&& t) {
  using posenc::toy::Trainer;
  auto* slot = reinterpret_cast<std::uintptr_t*>(handle);
  void* memory = std::malloc(sizeof(Trainer));
  *slot = memory ? reinterpret_cast<std::uintptr_t>(new (memory) Trainer(std::move(t))) : 0;
  return memory ? 0 : code(posenc::out_of_memory("the toy model", double(sizeof(Trainer))));
}

// config: 11 doubles, in toy::Config's order (task, encoding, length, dModel, heads, layers, batch,
// vocab, causal, learningRate, seed).
int toy_make(std::uintptr_t handle, std::uintptr_t config) {
  using posenc::toy::Trainer;
  const double* f = reinterpret_cast<const double*>(config);
  posenc::toy::Config c;
  c.task = static_cast<posenc::toy::Task>(int(f[0]));
  c.encoding = static_cast<posenc::toy::Encoding>(int(f[1]));
  c.length = std::size_t(f[2]), c.d_model = std::size_t(f[3]), c.heads = std::size_t(f[4]), c.layers = std::size_t(f[5]);
  c.batch = std::size_t(f[6]), c.vocab = std::size_t(f[7]), c.causal = f[8] != 0, c.learning_rate = f[9];
  c.seed = static_cast<std::uint64_t>(f[10]);
  *reinterpret_cast<std::uintptr_t*>(handle) = 0;
  Trainer t;
  if (const auto status = Trainer::make(t, c); !status.ok()) return code(status);
  return toy_store(handle, std::move(t));
}

// A copy of trainer in its current state, stored like toy_make's.
int toy_clone(std::uintptr_t handle, std::uintptr_t trainer) {
  *reinterpret_cast<std::uintptr_t*>(handle) = 0;
  posenc::toy::Trainer t;
  if (const auto status = reinterpret_cast<posenc::toy::Trainer*>(trainer)->copy(t); !status.ok()) return code(status);
  return toy_store(handle, std::move(t));
}

// Where a call trains or evaluates: length (0 = the configured one), and for RoPE n_freq frequencies
// at inv_freq (0 = base 10000's) with their attention factor.
posenc::toy::Setting toy_setting(std::size_t length, std::uintptr_t inv_freq, std::size_t n_freq, double attention_factor) {
  return {length, view<const double>(inv_freq, n_freq), attention_factor};
}

// report: 4 doubles, step, loss, trainAccuracy, heldOutAccuracy (measured when held_out).
int toy_train(std::uintptr_t trainer, std::size_t steps, std::size_t length, std::uintptr_t inv_freq, std::size_t n_freq,
              double attention_factor, int held_out, std::uintptr_t report) {
  posenc::toy::Report r;
  const auto status = reinterpret_cast<posenc::toy::Trainer*>(trainer)->train(
      steps, r, toy_setting(length, inv_freq, n_freq, attention_factor), held_out != 0);
  if (status.ok()) {
    double* o = reinterpret_cast<double*>(report);
    o[0] = double(r.step), o[1] = r.loss, o[2] = r.train_accuracy, o[3] = r.held_out_accuracy;
  }
  return code(status);
}

int toy_evaluate(std::uintptr_t trainer, std::size_t length, std::uintptr_t inv_freq, std::size_t n_freq, double attention_factor,
                 std::uintptr_t accuracy) {
  return code(reinterpret_cast<posenc::toy::Trainer*>(trainer)->evaluate(toy_setting(length, inv_freq, n_freq, attention_factor),
                                                                         *reinterpret_cast<double*>(accuracy)));
}

// out: 2 doubles, chance and orderBlind.
int toy_baseline(std::uintptr_t trainer, std::size_t length, std::uintptr_t out) {
  posenc::toy::Baseline b;
  const auto status = posenc::toy::baseline(reinterpret_cast<posenc::toy::Trainer*>(trainer)->config(), length, b);
  if (status.ok()) reinterpret_cast<double*>(out)[0] = b.chance, reinterpret_cast<double*>(out)[1] = b.order_blind;
  return code(status);
}

// The lab's argument rules (posenc::lab::check_args), asked before the outputs are allocated.
int lab_check(std::size_t n_tokens, int encoding, std::size_t d_model) {
  return code(posenc::lab::check_args(n_tokens, static_cast<posenc::lab::Encoding>(encoding), d_model));
}

void toy_free(std::uintptr_t trainer) {
  auto* t = reinterpret_cast<posenc::toy::Trainer*>(trainer);
  t->~Trainer();
  std::free(t);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_lab) {
  using emscripten::function;
  posenc::bindings::register_common();
  function("_labCheck", &lab_check);
  function("_permutationLab", &permutation_lab);
  function("_scoreTerms", &score_terms);
  function("_toyMake", &toy_make);
  function("_toyClone", &toy_clone);
  function("_toyTrain", &toy_train);
  function("_toyEvaluate", &toy_evaluate);
  function("_toyBaseline", &toy_baseline);
  function("_toyFree", &toy_free);
}
