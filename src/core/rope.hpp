// Rotary position embedding, RoPE (Su et al. 2021, "RoFormer", eq. 34): channel pairs (x_a, x_b) of
// a query/key at position p are rotated by the angle p * w_i,
//     x_a' = x_a cos(p w_i) - x_b sin(p w_i),   x_b' = x_b cos(p w_i) + x_a sin(p w_i),
// with w_i = base^(-2i/dim), so that <R(m) q, R(n) k> depends only on m - n.
//
// Frequencies follow Hugging Face transformers `modeling_rope_utils.py` (`_compute_*_parameters`),
// one function per `rope_type`, computed in double (HF computes in float32; values agree to float
// rounding). Where HF versions differ we resolved it as follows:
//  - yarn, original length: the first versions (2024) used `max_position_embeddings` as the
//    pre-training length; later ones read `original_max_position_embeddings`. We require
//    `originalMaxPositions`.
//  - yarn, factor: 2025 versions replaced `factor` by max_position_embeddings /
//    original_max_position_embeddings whenever the latter was set; since transformers PR #40320 the
//    explicit factor is used, as we do (we have no max_position_embeddings).
//  - yarn, attention factor: the first versions used 0.1 ln(factor) + 1 for every factor; later ones
//    use 1 when factor <= 1 and DeepSeek's mscale / mscale_all_dim ratio when both are set (and
//    non-zero). We follow the later.
//  - yarn, `truncate` (added with gpt-oss): true floors/ceils the correction range as before; false
//    keeps it fractional. Every version clamps the range to [0, dim - 1] (not dim/2 - 1, though the
//    ramp runs over dim/2 indices), as the YaRN reference code does; so do we.
//  - longrope: the first version picked `long_factor` whenever the model was extended at all; later
//    ones pick it only when the current length seqLength > original_max_position_embeddings, as we
//    do (seqLength 0 = not given = short). For Phi-3 style configs HF derives factor as
//    max_position_embeddings / original_max_position_embeddings; pass that ratio as `factor`.
//  - dynamic: HF uses config.max_position_embeddings as the original length (a TODO there says it
//    should be original_max_position_embeddings); we take `originalMaxPositions`. seqLength is the
//    current length, clamped below at originalMaxPositions (no change up to it).
//  - ntk (static NTK-aware, bloc97) is not a type of current HF versions; base' = base * factor^(dim/(dim-2)).
//  - an explicit `attentionFactor` overrides the derived one for every type (HF reads it only for
//    yarn and longrope).
#pragma once
#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include "angles.hpp"
#include "buffer.hpp"
#include "contract.hpp"

namespace posenc::rope {

using ScalingType = contract::ScalingType;

struct Scaling {
  ScalingType type = ScalingType::none;
  double factor = 1.0;
  double original_max_positions = 0;                                   // 0 = not given
  double beta_fast = 32, beta_slow = 1;                                // yarn
  double low_freq_factor = 1, high_freq_factor = 4;                    // llama3
  std::span<const double> short_factor, long_factor;                   // longrope, dim/2 values each
  bool truncate = true;                                                // yarn
  double seq_length = 0;                                               // dynamic / longrope: current length, 0 = not given
  double attention_factor = std::numeric_limits<double>::quiet_NaN();  // explicit override; NaN = derive
  double mscale = std::numeric_limits<double>::quiet_NaN();            // yarn (DeepSeek variant), optional
  double mscale_all_dim = std::numeric_limits<double>::quiet_NaN();
  // longrope: the attention factor of the short and the long factors (vLLM, Phi-3-small's
  // short_mscale / long_mscale); NaN = derived
  double short_mscale = std::numeric_limits<double>::quiet_NaN();
  double long_mscale = std::numeric_limits<double>::quiet_NaN();
};

// What the rotations read of a Frequencies: a view, so that frequencies computed once (and kept by
// the caller, e.g. the JS layer's cache in wasm memory) serve many calls.
struct FrequencyView {
  std::span<const double> inv_freq;  // dim/2 values
  double attention_factor = 1.0;     // multiplies cos and sin
};
struct Frequencies {
  Buffer<double> inv_freq;        // dim/2 values
  double attention_factor = 1.0;  // multiplies cos and sin
  operator FrequencyView() const { return {inv_freq.span(), attention_factor}; }
};

// inv_freq and attention factor for a rotary dimension `dim` (even, > 0):
//  none:     w_i = base^(-2i/dim)
//  linear:   w_i / factor (position interpolation, Chen et al. 2023; kaiokendev)
//  ntk:      base' = base * factor^(dim/(dim-2))
//  dynamic:  base' = base * (factor*s/orig - (factor-1))^(dim/(dim-2)), s = max(seqLength, orig)
//  yarn:     Peng et al. 2023: ramp between w_i/factor (low frequencies) and w_i (high frequencies)
//            over the correction range of betaFast/betaSlow rotations in orig; attention factor
//            0.1 ln(factor) + 1 (or mscale(factor, mscale) / mscale(factor, mscaleAllDim))
//  llama3:   Meta's Llama 3.1 rule: wavelengths < orig/highFreqFactor kept, > orig/lowFreqFactor
//            divided by factor, smooth interpolation between
//  longrope: w_i / ext_i, ext = longFactor if seqLength > orig else shortFactor; attention factor
//            sqrt(1 + ln(factor)/ln(orig)), 1 if factor <= 1, or longMscale / shortMscale when given
//            (vLLM's reading of Phi-3-small's config; transformers ignores those keys)
Status frequencies(std::size_t dim, double base, const Scaling& scaling, Frequencies& out);

// half:        GPT-NeoX / HF rotate_half: channel i pairs with channel i + rotaryDim/2
// interleaved: GPT-J / Meta LLaMA: channel 2i pairs with 2i + 1
using Layout = contract::RopeLayout;

// x and out: [seq, heads, head_dim] row-major (heads = 1 for [seq, dim]). Rotates the first
// rotary_dim channels of every head (freqs.inv_freq has rotary_dim/2 values), copies the rest;
// cos/sin are multiplied by freqs.attention_factor. Row r uses positions.at(r) (offset + r for a KV
// cache, or explicit positions). out may be x itself (in place) but must not otherwise overlap it.
// Angles are reduced exactly (angles::RowSource): every value is within ~1e-6 of the exact
// result for |x| <= 1 at any finite position. Finite input never gives NaN or
// Infinity: a row whose values are near float32's limit is rotated in double, and a pair whose
// rotation is beyond float32 is an error.
//
// xPos (Sun et al. 2022, microsoft/torchscale XPOS in xpos_relative_position.py), when given: pair i
// of a row at position p is also scaled by zeta_i^((p - center) / scale_base), zeta_i = (2i + 0.4 d)
// / (1.4 d) with d = rotaryDim, the inverse power for keys, so q.k decays with the distance.
// torchscale centres at ceil(N / 2) for N positions 0 .. N-1 (its exponent is p + floor(-N/2)).
// Exponents are computed in double; a scale beyond float32 is an error.
using XposRole = contract::XposRole;
struct XPos {
  double scale_base = contract::kDefaultXposScaleBase;
  double center = 0;
  XposRole role = XposRole::query;
};

// first_row: the index of x's first row in the caller's tensor, for messages (a caller rotating a
// tensor in blocks names the failing row of the whole tensor).
Status apply(std::span<const float> x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
             const angles::Positions& positions, const FrequencyView& freqs, Layout layout, std::span<float> out,
             const XPos* xpos = nullptr, std::size_t first_row = 0);

// The cos and sin of every row's angles, times the attention factor: cos[r, i] = factor *
// cos(p_r w_i), sin likewise, for the rotaryDim/2 frequencies of freqs ([rows, half] each, what ONNX
// Runtime's RotaryEmbedding and GroupQueryAttention take as cos_cache / sin_cache). With `expand`
// the rows are rotaryDim wide in the layout's order: half repeats them ([c_0 .. c_h-1, c_0 .. c_h-1],
// transformers' cat(freqs, freqs)), interleaved doubles each ([c_0, c_0, c_1, c_1, ..]).
Status cache(const angles::Positions& positions, const FrequencyView& freqs, bool expand, Layout layout, std::span<float> cos,
             std::span<float> sin);

// Multimodal RoPE (Qwen2-VL, HF apply_multimodal_rotary_pos_emb): three position streams
// (temporal, height, width; positions is [3, seq]) and the rotary half split into sections: frequency
// j takes stream 0 if j < section[0], 1 if j < section[0] + section[1], else 2. Half layout only
// (channel j pairs with j + rotaryDim/2, both taking frequency j's stream). The sections must sum to
// rotaryDim/2.
Status apply_mrope(std::span<const float> x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
                   std::span<const double> positions, const std::array<std::size_t, 3>& section, const FrequencyView& freqs,
                   std::span<float> out);

// Name of a scaling type as the JS API spells it ("none", "linear", ...).
const char* type_name(ScalingType type);

}  // namespace posenc::rope
