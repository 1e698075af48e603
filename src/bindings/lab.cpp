// embind registration of the teaching models' module (posenc/lab, src/js/lab/): the permutation lab
// (src/core/lab.hpp) and the toy trainer (src/core/toy.hpp). Raw entry points as in bindings.cpp: one
// struct of named fields in (raw.hpp), a status code out, the message read with _errorMessage; the
// trainer is an embind object, made by _toyMake (null when that fails) and freed with .delete().
#include <emscripten/bind.h>

#include <new>
#include <string_view>
#include <utility>

#include "lab.hpp"
#include "raw.hpp"
#include "toy.hpp"

using posenc::bindings::Address;
using posenc::bindings::Args;
using posenc::bindings::code;
using posenc::bindings::Count;
using posenc::bindings::Flag;
using posenc::bindings::Index;
using posenc::bindings::none;
using posenc::bindings::view;
using posenc::toy::Trainer;

namespace {

// Tokens arrive as UTF-8 bytes and the end offset of each token (int32); the core checks how many
// there may be.
using Tokens = posenc::Buffer<std::string_view>;
posenc::Status read_tokens(Tokens& words, Address bytes, Address ends, Count n) {
  POSENC_TRY(words.allocate(n, "the tokens"));
  const char* b = reinterpret_cast<const char*>(bytes);
  const auto* e = reinterpret_cast<const std::int32_t*>(ends);
  for (Count i = 0, start = 0; i < n; start = Count(e[i]), ++i) words[i] = {b + start, Count(e[i]) - start};
  return {};
}

// The sentence and the model of the lab's calls; seed: an integer below 2^53.
struct SentenceArgs : Args {
  Address bytes, ends;
  Count nTokens;
  Index encoding;
  Count dModel;
  double seed;
};

// Outputs at the given addresses: outPermutation [L] (int32), output and permutedOutput [L, d],
// weights and permutedWeights [heads, L, L], metrics: 2 doubles (equivarianceError, pooledDifference);
// permutation: nPermutation int32 (0: the lab draws one).
struct PermutationLabArgs : SentenceArgs {
  Address permutation;
  Count nPermutation;
  Address outPermutation, output, permutedOutput, weights, permutedWeights, metrics;
};
int permutation_lab(const PermutationLabArgs& a) {
  const SentenceArgs& in = a;
  Tokens tokens;
  if (const auto status = read_tokens(tokens, in.bytes, in.ends, in.nTokens); !status.ok()) return code(status);
  const Count L = in.nTokens, plane = posenc::lab::kHeads * L * L;
  const posenc::lab::Outputs out{view<std::int32_t>(a.outPermutation, L), view<float>(a.output, L * in.dModel),
                                 view<float>(a.permutedOutput, L * in.dModel), view<float>(a.weights, plane),
                                 view<float>(a.permutedWeights, plane)};
  posenc::lab::Metrics m;
  const auto status = posenc::lab::permutation_lab(tokens.span(), view<const std::int32_t>(a.permutation, a.nPermutation),
                                                   static_cast<posenc::lab::Encoding>(in.encoding), in.dModel,
                                                   static_cast<std::uint64_t>(in.seed), out, m);
  if (status.ok()) {
    double* o = reinterpret_cast<double*>(a.metrics);
    o[0] = m.equivariance_error, o[1] = m.pooled_difference;
  }
  return code(status);
}

// terms: five [L, L] float arrays, one after the other: contentContent, contentPosition,
// positionContent, positionPosition, total.
struct ScoreTermsArgs : SentenceArgs {
  Address terms;
};
int score_terms(const ScoreTermsArgs& a) {
  const SentenceArgs& in = a;
  Tokens tokens;
  if (const auto status = read_tokens(tokens, in.bytes, in.ends, in.nTokens); !status.ok()) return code(status);
  const Count plane = in.nTokens * in.nTokens;
  const auto at = [&](Count i) { return view<float>(a.terms + i * plane * sizeof(float), plane); };
  return code(posenc::lab::score_terms(tokens.span(), static_cast<posenc::lab::Encoding>(in.encoding), in.dModel,
                                       static_cast<std::uint64_t>(in.seed), {at(0), at(1), at(2), at(3), at(4)}));
}

// The lab's argument rules (posenc::lab::check_args), asked before the outputs are allocated.
struct LabCheckArgs : Args {
  Count nTokens;
  Index encoding;
  Count dModel;
};
int lab_check(const LabCheckArgs& a) {
  return code(posenc::lab::check_args(a.nTokens, static_cast<posenc::lab::Encoding>(a.encoding), a.dModel));
}

// ---- the toy model (trainToy): embind objects over a posenc::toy::Trainer ----------------------------
// The trainer moved to the heap, or null (its message for _errorMessage) when out of memory.
Trainer* store(Trainer&& t) {
  auto* trainer = new (std::nothrow) Trainer(std::move(t));
  return trainer ? trainer : none(posenc::out_of_memory("the toy model", double(sizeof(Trainer))));
}

// toy::Config, task and encoding as their index in ENUMS.toyTask and ENUMS.labEncoding; seed below 2^53.
struct ToyConfigArgs : Args {
  Index task, encoding;
  Count length, dModel, heads, layers, batch, vocab;
  Flag causal;
  double learningRate, seed;
};
Trainer* toy_make(const ToyConfigArgs& a) {
  posenc::toy::Config c;
  c.task = static_cast<posenc::toy::Task>(a.task);
  c.encoding = static_cast<posenc::toy::Encoding>(a.encoding);
  c.length = a.length, c.d_model = a.dModel, c.heads = a.heads, c.layers = a.layers, c.batch = a.batch, c.vocab = a.vocab;
  c.causal = a.causal, c.learning_rate = a.learningRate, c.seed = static_cast<std::uint64_t>(a.seed);
  Trainer t;
  if (!Trainer::make(t, c).ok()) return nullptr;
  return store(std::move(t));
}

// A copy of the trainer in its current state (null as toy_make's).
Trainer* toy_clone(const Trainer& trainer) {
  Trainer t;
  if (!trainer.copy(t).ok()) return nullptr;
  return store(std::move(t));
}

// Where a call trains or evaluates: length (0 = the configured one), and for RoPE nFreq frequencies
// at invFreq (0 = base 10000's) with their attention factor.
struct SettingArgs : Args {
  Count length;
  Address invFreq;
  Count nFreq;
  double attentionFactor;
};
posenc::toy::Setting setting(const SettingArgs& a) {
  return {a.length, view<const double>(a.invFreq, a.nFreq), a.attentionFactor};
}

// report: 4 doubles, step, loss, trainAccuracy, heldOutAccuracy (measured when heldOut).
struct TrainArgs : SettingArgs {
  Count steps;
  Flag heldOut;
  Address report;
};
int toy_train(Trainer& trainer, const TrainArgs& a) {
  posenc::toy::Report r;
  const auto status = trainer.train(a.steps, r, setting(a), a.heldOut);
  if (status.ok()) {
    double* o = reinterpret_cast<double*>(a.report);
    o[0] = double(r.step), o[1] = r.loss, o[2] = r.train_accuracy, o[3] = r.held_out_accuracy;
  }
  return code(status);
}

// accuracy: 1 double.
struct EvaluateArgs : SettingArgs {
  Address accuracy;
};
int toy_evaluate(Trainer& trainer, const EvaluateArgs& a) {
  return code(trainer.evaluate(setting(a), *reinterpret_cast<double*>(a.accuracy)));
}

// out: 2 doubles, chance and orderBlind.
struct BaselineArgs : Args {
  Count length;
  Address out;
};
int toy_baseline(const Trainer& trainer, const BaselineArgs& a) {
  posenc::toy::Baseline b;
  const auto status = posenc::toy::baseline(trainer.config(), a.length, b);
  if (status.ok()) reinterpret_cast<double*>(a.out)[0] = b.chance, reinterpret_cast<double*>(a.out)[1] = b.order_blind;
  return code(status);
}

// The fields a struct S shares with others, from the struct it derives (flat at the boundary: raw.hpp).
// (o is args<S>()'s temporary: registered once, when the whole registration expression ends.)
template <class S>
emscripten::value_object<S>& sentence_fields(emscripten::value_object<S>&& o) {
  return o POSENC_FIELD(bytes) POSENC_FIELD(ends) POSENC_FIELD(nTokens) POSENC_FIELD(encoding) POSENC_FIELD(dModel)
      POSENC_FIELD(seed);
}
template <class S>
emscripten::value_object<S>& setting_fields(emscripten::value_object<S>&& o) {
  return o POSENC_FIELD(length) POSENC_FIELD(invFreq) POSENC_FIELD(nFreq) POSENC_FIELD(attentionFactor);
}

}  // namespace

EMSCRIPTEN_BINDINGS(posenc_lab) {
  using emscripten::allow_raw_pointers;
  using emscripten::class_;
  using emscripten::function;
  using posenc::bindings::args;
  posenc::bindings::register_common();
  {
    using S = LabCheckArgs;
    args<S>("LabCheckArgs") POSENC_FIELD(nTokens) POSENC_FIELD(encoding) POSENC_FIELD(dModel);
  }
  function("_labCheck", &lab_check);
  {
    using S = PermutationLabArgs;
    sentence_fields(args<S>("PermutationLabArgs")) POSENC_FIELD(permutation) POSENC_FIELD(nPermutation)
        POSENC_FIELD(outPermutation) POSENC_FIELD(output) POSENC_FIELD(permutedOutput) POSENC_FIELD(weights)
            POSENC_FIELD(permutedWeights) POSENC_FIELD(metrics);
  }
  function("_permutationLab", &permutation_lab);
  {
    using S = ScoreTermsArgs;
    sentence_fields(args<S>("ScoreTermsArgs")) POSENC_FIELD(terms);
  }
  function("_scoreTerms", &score_terms);

  {
    using S = ToyConfigArgs;
    args<S>("ToyConfigArgs") POSENC_FIELD(task) POSENC_FIELD(encoding) POSENC_FIELD(length) POSENC_FIELD(dModel)
        POSENC_FIELD(heads) POSENC_FIELD(layers) POSENC_FIELD(batch) POSENC_FIELD(vocab) POSENC_FIELD(causal)
            POSENC_FIELD(learningRate) POSENC_FIELD(seed);
  }
  {
    using S = TrainArgs;
    setting_fields(args<S>("TrainArgs")) POSENC_FIELD(steps) POSENC_FIELD(heldOut) POSENC_FIELD(report);
  }
  {
    using S = EvaluateArgs;
    setting_fields(args<S>("EvaluateArgs")) POSENC_FIELD(accuracy);
  }
  {
    using S = BaselineArgs;
    args<S>("BaselineArgs") POSENC_FIELD(length) POSENC_FIELD(out);
  }
  class_<Trainer>("Trainer")
      .function("train", &toy_train)
      .function("evaluate", &toy_evaluate)
      .function("baseline", &toy_baseline)
      .function("clone", &toy_clone, allow_raw_pointers());
  function("_toyMake", &toy_make, allow_raw_pointers());
}
