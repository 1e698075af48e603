#include "rope.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "errors.hpp"
#include "sinusoidal.hpp"

namespace posenc::rope {
namespace {

constexpr double kPi = 3.141592653589793;

using bf = simd::batch<float>;
constexpr std::size_t W = simd::floats;

void require_factor(const Scaling& s) {
  if (!(std::isfinite(s.factor) && s.factor > 0)) fail("factor must be a finite number > 0, got ", s.factor);
}

// originalMaxPositions, required by yarn / llama3 / longrope / dynamic.
double require_original(const Scaling& s) {
  if (!(std::isfinite(s.original_max_positions) && s.original_max_positions > 0))
    fail("'", type_name(s.type), "' scaling needs originalMaxPositions > 0, got ", s.original_max_positions);
  return s.original_max_positions;
}

void require_factor_list(const std::vector<double>& v, std::size_t half, const char* name) {
  if (v.size() != half) fail(name, " must hold dim/2 = ", half, " values, got ", v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::isfinite(v[i]) && v[i] > 0)) fail(name, "[", i, "] must be a finite number > 0, got ", v[i]);
}

// The NTK-aware base change (bloc97): base * alpha^(dim/(dim-2)).
std::vector<double> ntk_frequencies(std::size_t dim, double base, double alpha) {
  if (dim <= 2) fail("dim must be > 2 for NTK scaling (exponent dim/(dim-2)), got ", dim);
  return sinusoidal::inv_frequencies(dim, base * std::pow(alpha, double(dim) / double(dim - 2)), dim / 2);
}

// YaRN (Peng et al. 2023), HF _compute_yarn_parameters.
void yarn(std::size_t dim, double base, const Scaling& s, Frequencies& f) {
  const double orig = require_original(s);
  if (!(base > 1)) fail("'yarn' scaling needs base > 1, got ", base);
  if (!(std::isfinite(s.beta_fast) && s.beta_fast > 0)) fail("betaFast must be a finite number > 0, got ", s.beta_fast);
  if (!(std::isfinite(s.beta_slow) && s.beta_slow > 0)) fail("betaSlow must be a finite number > 0, got ", s.beta_slow);
  if (s.beta_fast < s.beta_slow) fail("betaFast must be >= betaSlow, got betaFast ", s.beta_fast, " and betaSlow ", s.beta_slow);
  // Dimension index at which a frequency makes `rotations` turns over the original length.
  const auto correction_dim = [&](double rotations) {
    return double(dim) * std::log(orig / (rotations * 2 * kPi)) / (2 * std::log(base));
  };
  double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(dim - 1));
  if (low == high) high += 0.001;  // HF: prevent the singularity
  for (std::size_t i = 0; i < f.inv_freq.size(); ++i) {
    // ramp 0 -> extrapolate (keep w_i), ramp 1 -> interpolate (w_i / factor)
    const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    f.inv_freq[i] = f.inv_freq[i] / s.factor * ramp + f.inv_freq[i] * (1 - ramp);
  }
  const auto get_mscale = [&](double m) { return s.factor <= 1 ? 1.0 : 0.1 * m * std::log(s.factor) + 1.0; };
  const bool deepseek = !std::isnan(s.mscale) && s.mscale != 0 && !std::isnan(s.mscale_all_dim) && s.mscale_all_dim != 0;
  if (deepseek) {
    require_finite(s.mscale, "mscale");
    require_finite(s.mscale_all_dim, "mscaleAllDim");
  }
  f.attention_factor = deepseek ? get_mscale(s.mscale) / get_mscale(s.mscale_all_dim) : get_mscale(1.0);
}

// Llama 3.1 (Meta's apply_scaling; HF _compute_llama3_parameters).
void llama3(const Scaling& s, Frequencies& f) {
  const double orig = require_original(s);
  const double lo = s.low_freq_factor, hi = s.high_freq_factor;
  if (!(std::isfinite(lo) && lo > 0)) fail("lowFreqFactor must be a finite number > 0, got ", lo);
  if (!(std::isfinite(hi) && hi > lo)) fail("highFreqFactor must be a finite number > lowFreqFactor (", lo, "), got ", hi);
  const double low_freq_wavelen = orig / lo, high_freq_wavelen = orig / hi;
  for (double& w : f.inv_freq) {
    const double wavelen = 2 * kPi / w;
    if (wavelen < high_freq_wavelen) continue;  // high frequencies: unchanged
    if (wavelen > low_freq_wavelen) {           // low frequencies: interpolated
      w /= s.factor;
      continue;
    }
    const double smooth = (orig / wavelen - lo) / (hi - lo);
    w = (1 - smooth) * w / s.factor + smooth * w;
  }
}

// LongRoPE (Ding et al. 2024; HF _compute_longrope_parameters).
void longrope(std::size_t half, const Scaling& s, Frequencies& f) {
  const double orig = require_original(s);
  require_factor_list(s.short_factor, half, "shortFactor");
  require_factor_list(s.long_factor, half, "longFactor");
  const auto& ext = s.seq_length > orig ? s.long_factor : s.short_factor;
  for (std::size_t i = 0; i < half; ++i) f.inv_freq[i] /= ext[i];
  f.attention_factor = s.factor <= 1 ? 1.0 : std::sqrt(1 + std::log(s.factor) / std::log(orig));
}

}  // namespace

const char* type_name(ScalingType type) {
  switch (type) {
    case ScalingType::none: return "none";
    case ScalingType::linear: return "linear";
    case ScalingType::ntk: return "ntk";
    case ScalingType::dynamic: return "dynamic";
    case ScalingType::yarn: return "yarn";
    case ScalingType::llama3: return "llama3";
    case ScalingType::longrope: return "longrope";
  }
  return "unknown";
}

Frequencies frequencies(std::size_t dim, double base, const Scaling& s) {
  if (dim == 0 || dim % 2) fail("dim must be a positive even integer, got ", dim);
  if (!(std::isfinite(base) && base > 0)) fail("base must be a finite number > 0, got ", base);
  if (!(std::isfinite(s.seq_length) && s.seq_length >= 0)) fail("seqLength must be a finite number >= 0, got ", s.seq_length);
  if (!(std::isfinite(s.original_max_positions) && s.original_max_positions >= 0))
    fail("originalMaxPositions must be a finite number >= 0, got ", s.original_max_positions);
  if (std::string_view(type_name(s.type)) == "unknown")
    fail("scaling type ", static_cast<int>(s.type), " is unknown; allowed: none, linear, ntk, dynamic, yarn, llama3, longrope");
  if (s.type != ScalingType::none) require_factor(s);
  const std::size_t half = dim / 2;
  Frequencies f{sinusoidal::inv_frequencies(dim, base, half), 1.0};

  switch (s.type) {
    case ScalingType::none:
      break;
    case ScalingType::linear:
      for (double& w : f.inv_freq) w /= s.factor;
      break;
    case ScalingType::ntk:
      f.inv_freq = ntk_frequencies(dim, base, s.factor);
      break;
    case ScalingType::dynamic: {
      const double orig = require_original(s);
      if (!(s.seq_length > 0)) fail("'dynamic' scaling needs seqLength (the current sequence length) > 0, got ", s.seq_length);
      const double seq = std::max(s.seq_length, orig);
      f.inv_freq = ntk_frequencies(dim, base, s.factor * seq / orig - (s.factor - 1));
      break;
    }
    case ScalingType::yarn:
      yarn(dim, base, s, f);
      break;
    case ScalingType::llama3:
      llama3(s, f);
      break;
    case ScalingType::longrope:
      longrope(half, s, f);
      break;
  }

  if (!std::isnan(s.attention_factor)) {
    if (!(std::isfinite(s.attention_factor) && s.attention_factor > 0))
      fail("attentionFactor must be a finite number > 0, got ", s.attention_factor);
    f.attention_factor = s.attention_factor;
  }
  if (!(std::isfinite(f.attention_factor) && f.attention_factor > 0))
    fail("'", type_name(s.type), "' scaling gives the attention factor ", f.attention_factor, "; check factor, mscale and originalMaxPositions");
  for (std::size_t i = 0; i < half; ++i)
    if (!std::isfinite(f.inv_freq[i])) fail("'", type_name(s.type), "' scaling gives invFreq[", i, "] = ", f.inv_freq[i], "; check base and factor");
  return f;
}

namespace {

// Swaps neighbouring lanes: (x0, x1, x2, x3, ..) -> (x1, x0, x3, x2, ..).
struct SwapPairs {
  static constexpr unsigned get(unsigned i, unsigned) { return i ^ 1u; }
};

// out = x * C + swap_pairs(x) * S over n (even) channels, with C = (c0, c0, c1, c1, ..) and
// S = (-s0, s0, -s1, s1, ..): (a, b) -> (a c - b s, b c + a s) for each pair (interleaved layout).
inline void rotate_interleaved(const float* x, const float* C, const float* S, std::size_t n, float* o) {
  constexpr auto swap = xsimd::make_batch_constant<std::uint32_t, simd::arch, SwapPairs>();
  const std::size_t nv = n - n % W;  // W is even, so batches hold whole pairs
  std::size_t j = 0;
  for (; j < nv; j += W) {
    const bf v = bf::load_unaligned(x + j);
    (v * bf::load_unaligned(C + j) + xsimd::swizzle(v, swap) * bf::load_unaligned(S + j)).store_unaligned(o + j);
  }
  for (; j < n; j += 2) {
    const float a = x[j], b = x[j + 1];
    o[j] = a * C[j] + b * S[j];
    o[j + 1] = b * C[j + 1] + a * S[j + 1];
  }
}

// (x1, x2) -> (x1 c - x2 s, x2 c + x1 s) for the two halves x1 = x[0..h), x2 = x[h..2h) (half layout).
inline void rotate_half(const float* x, const float* c, const float* s, std::size_t h, float* o) {
  const std::size_t hv = h - h % W;
  std::size_t i = 0;
  for (; i < hv; i += W) {
    const bf x1 = bf::load_unaligned(x + i), x2 = bf::load_unaligned(x + h + i);
    const bf cv = bf::load_unaligned(c + i), sv = bf::load_unaligned(s + i);
    (x1 * cv - x2 * sv).store_unaligned(o + i);
    (x2 * cv + x1 * sv).store_unaligned(o + h + i);
  }
  for (; i < h; ++i) {
    const float a = x[i], b = x[h + i];
    o[i] = a * c[i] - b * s[i];
    o[h + i] = b * c[i] + a * s[i];
  }
}

}  // namespace

void apply(std::span<const float> x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
           const angles::Positions& positions, const Frequencies& freqs, Layout layout, std::span<float> out) {
  require_positive(heads, "heads");
  require_positive(head_dim, "headDim");
  if (rotary_dim == 0 || rotary_dim % 2 || rotary_dim > head_dim)
    fail("rotaryDim must be a positive even integer <= headDim (", head_dim, "), got ", rotary_dim);
  if (layout != Layout::half && layout != Layout::interleaved)
    fail("layout ", static_cast<int>(layout), " is unknown; allowed: half, interleaved");
  const std::size_t total = checked_size(seq, checked_size(heads, head_dim, "one row of x"), "x");
  if (x.size() != total) fail("x holds ", x.size(), " values, expected seq*heads*headDim = ", total);
  if (out.size() != total) fail("rope: output holds ", out.size(), " values, expected ", total);
  if (positions.size() != seq) fail("positions holds ", positions.size(), " values, expected seq = ", seq);
  require_finite(positions.offset, "offset");
  for (std::size_t r = 0; r < positions.values.size(); ++r)
    if (!std::isfinite(positions.values[r])) fail("positions[", r, "] must be a finite number, got ", positions.values[r]);
  const std::size_t half = rotary_dim / 2;
  if (freqs.inv_freq.size() != half) fail("invFreq holds ", freqs.inv_freq.size(), " values, expected rotaryDim/2 = ", half);
  for (std::size_t i = 0; i < half; ++i)
    if (!std::isfinite(freqs.inv_freq[i])) fail("invFreq[", i, "] must be a finite number, got ", freqs.inv_freq[i]);
  if (!std::isfinite(freqs.attention_factor)) fail("attentionFactor must be a finite number, got ", freqs.attention_factor);
  if (seq == 0) return;

  const bool copy_rest = rotary_dim < head_dim && out.data() != x.data();
  const std::size_t rest = head_dim - rotary_dim;
  angles::RowSource source(positions, freqs.inv_freq, freqs.attention_factor);
  // Interleaved: per row, cos duplicated and sin signed into pair order once, used by every head.
  std::vector<float> C, S;
  if (layout == Layout::interleaved) {
    C.assign(2 * source.width(), 0.f);
    S.assign(2 * source.width(), 0.f);
  }
  source.for_each([&](std::size_t r, std::span<const float> s, std::span<const float> c) {
    if (layout == Layout::interleaved) {
      for (std::size_t i = 0; i < s.size(); i += W) {  // s, c are padded to whole batches
        const bf cv = bf::load_unaligned(c.data() + i), sv = bf::load_unaligned(s.data() + i);
        xsimd::zip_lo(cv, cv).store_unaligned(C.data() + 2 * i);
        xsimd::zip_hi(cv, cv).store_unaligned(C.data() + 2 * i + W);
        xsimd::zip_lo(-sv, sv).store_unaligned(S.data() + 2 * i);
        xsimd::zip_hi(-sv, sv).store_unaligned(S.data() + 2 * i + W);
      }
    }
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t at = (r * heads + h) * head_dim;
      const float* xi = x.data() + at;
      float* o = out.data() + at;
      if (layout == Layout::half) rotate_half(xi, c.data(), s.data(), half, o);
      else rotate_interleaved(xi, C.data(), S.data(), rotary_dim, o);
      if (copy_rest) std::memcpy(o + rotary_dim, xi + rotary_dim, rest * sizeof(float));
    }
  });
}

}  // namespace posenc::rope
