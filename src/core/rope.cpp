#include "rope.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ops.hpp"
#include "sinusoidal.hpp"
#include "status.hpp"

namespace posenc::rope {
namespace {

constexpr double kPi = 3.141592653589793;
constexpr double kMaxAttentionFactor = contract::kFloat32Max;  // FLT_MAX: the factor multiplies float32 sin/cos
constexpr double kMaxInvFreq = kMaxAttentionFactor;            // FLT_MAX: invFreq is returned as float32

using bf = simd::batch<float>;
constexpr std::size_t W = simd::floats;

POSENC_COLD Status require_factor(const Scaling& s) {
  // transformers validates factor >= 1 (it warns and goes on; nothing published sets less): a scaling
  // stretches wavelengths, and below 1 every formula here would shrink them instead
  if (!(std::isfinite(s.factor) && s.factor >= 1))
    return fail("scaling.factor must be a finite number >= 1 (a scaling stretches wavelengths), got ", s.factor);
  return {};
}

// originalMaxPositions, required by yarn / llama3 / longrope / dynamic.
POSENC_COLD Status require_original(const Scaling& s) {
  if (!(std::isfinite(s.original_max_positions) && s.original_max_positions > 0))
    return fail("'", type_name(s.type), "' scaling needs scaling.originalMaxPositions > 0, got ", s.original_max_positions);
  return {};
}

POSENC_COLD Status require_factor_list(std::span<const double> v, std::size_t half, const char* name) {
  if (v.size() != half) return fail("scaling.", name, " must hold dim/2 = ", half, " values, got ", v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::isfinite(v[i]) && v[i] > 0)) return fail("scaling.", name, "[", i, "] must be a finite number > 0, got ", v[i]);
  return {};
}

// The NTK-aware base change (bloc97): base * alpha^(dim/(dim-2)).
POSENC_COLD Status ntk_frequencies(std::size_t dim, double base, double alpha, Buffer<double>& out) {
  if (dim <= 2) return fail("dim must be > 2 for NTK scaling (exponent dim/(dim-2)), got ", dim);
  return sinusoidal::inv_frequencies(dim, base * std::pow(alpha, double(dim) / double(dim - 2)), dim / 2, out);
}

// YaRN (Peng et al. 2023), HF _compute_yarn_parameters.
POSENC_COLD Status yarn(std::size_t dim, double base, const Scaling& s, Frequencies& f) {
  POSENC_TRY(require_original(s));
  const double orig = s.original_max_positions;
  if (!(base > 1)) return fail("'yarn' scaling needs base > 1, got ", base);
  if (!(std::isfinite(s.beta_fast) && s.beta_fast > 0))
    return fail("scaling.betaFast must be a finite number > 0, got ", s.beta_fast);
  if (!(std::isfinite(s.beta_slow) && s.beta_slow > 0))
    return fail("scaling.betaSlow must be a finite number > 0, got ", s.beta_slow);
  if (s.beta_fast < s.beta_slow)
    return fail("scaling.betaFast must be >= scaling.betaSlow, got betaFast ", s.beta_fast, " and betaSlow ", s.beta_slow);
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
    POSENC_TRY(require_finite(s.mscale, "scaling.mscale"));                // invariant: validate.js reads only finite numbers
    POSENC_TRY(require_finite(s.mscale_all_dim, "scaling.mscaleAllDim"));  // invariant: validate.js reads only finite numbers
  }
  f.attention_factor = deepseek ? get_mscale(s.mscale) / get_mscale(s.mscale_all_dim) : get_mscale(1.0);
  return {};
}

// Llama 3.1 (Meta's apply_scaling; HF _compute_llama3_parameters).
POSENC_COLD Status llama3(const Scaling& s, Frequencies& f) {
  POSENC_TRY(require_original(s));
  const double orig = s.original_max_positions;
  const double lo = s.low_freq_factor, hi = s.high_freq_factor;
  if (!(std::isfinite(lo) && lo > 0)) return fail("scaling.lowFreqFactor must be a finite number > 0, got ", lo);
  // highFreqFactor == lowFreqFactor (Llama 4 Scout's config) leaves no band to blend: transformers warns
  // and runs; so do we (a wavelength exactly at the boundary is kept, where transformers' 0/0 gives NaN).
  if (!(std::isfinite(hi) && hi >= lo))
    return fail("scaling.highFreqFactor must be a finite number >= lowFreqFactor (", lo, "), got ", hi);
  const double low_freq_wavelen = orig / lo, high_freq_wavelen = orig / hi;
  for (double& w : f.inv_freq) {
    const double wavelen = 2 * kPi / w;
    if (wavelen < high_freq_wavelen) continue;  // high frequencies: unchanged
    if (wavelen > low_freq_wavelen) {           // low frequencies: interpolated
      w /= s.factor;
      continue;
    }
    if (hi == lo) continue;
    const double smooth = (orig / wavelen - lo) / (hi - lo);
    w = (1 - smooth) * w / s.factor + smooth * w;
  }
  return {};
}

// LongRoPE (Ding et al. 2024; HF _compute_longrope_parameters).
POSENC_COLD Status longrope(std::size_t half, const Scaling& s, Frequencies& f) {
  POSENC_TRY(require_original(s));
  const double orig = s.original_max_positions;
  POSENC_TRY(require_factor_list(s.short_factor, half, "shortFactor"));
  POSENC_TRY(require_factor_list(s.long_factor, half, "longFactor"));
  const bool extended = s.seq_length > orig;
  const auto& ext = extended ? s.long_factor : s.short_factor;
  for (std::size_t i = 0; i < half; ++i) f.inv_freq[i] /= ext[i];
  const double mscale = extended ? s.long_mscale : s.short_mscale;
  if (!std::isnan(mscale)) {
    if (!(mscale > 0 && mscale <= kMaxAttentionFactor))
      return fail("scaling.", extended ? "longMscale" : "shortMscale",
                  " must be a number in (0, " POSENC_LIMIT_FLOAT32_MAX "], got ", mscale);
    f.attention_factor = mscale;
  } else {
    f.attention_factor = s.factor <= 1 ? 1.0 : std::sqrt(1 + std::log(s.factor) / std::log(orig));
  }
  return {};
}

}  // namespace

const char* type_name(ScalingType type) {
  const auto i = static_cast<std::int32_t>(type);
  return i >= 0 && i < contract::kScalingTypeCount ? contract::kScalingTypeNames[i] : "unknown";
}

namespace {
// The rotary dimension's one rule (ropeFrequencies' dim, rope's and ropeCache's rotaryDim).
POSENC_COLD Status require_rotary_dim(std::size_t dim) {
  if (dim == 0 || dim % 2)
    return fail("rotaryDim (dim; by default the head dimension) must be a positive even integer, got ", dim);
  return {};
}
}  // namespace

POSENC_COLD Status frequencies(std::size_t dim, double base, const Scaling& s, Frequencies& f) {
  POSENC_TRY(require_rotary_dim(dim));
  std::size_t half = 0;
  // invariant: rope.js limits the rotary dimension to LIMITS.maxRotaryDim
  POSENC_TRY(checked_size(half, dim / 2, 1, "invFreq"));  // refused before allocating
  POSENC_TRY(sinusoidal::require_base(base));
  if (!(std::isfinite(s.seq_length) && s.seq_length >= 0))
    return fail("scaling.seqLength must be a finite number >= 0, got ", s.seq_length);
  if (!(std::isfinite(s.original_max_positions) && s.original_max_positions >= 0))
    return fail("scaling.originalMaxPositions must be a finite number >= 0, got ", s.original_max_positions);
  // invariant: validate.js maps the option's names to these indices
  if (std::string_view(type_name(s.type)) == "unknown")
    return fail("scaling type ", static_cast<int>(s.type), " is unknown; allowed: ", contract::kScalingTypeList);
  if (s.type != ScalingType::none) POSENC_TRY(require_factor(s));
  f.attention_factor = 1.0;
  POSENC_TRY(sinusoidal::inv_frequencies(dim, base, half, f.inv_freq));

  switch (s.type) {
    case ScalingType::none:
      break;
    case ScalingType::linear:
      for (double& w : f.inv_freq) w /= s.factor;
      break;
    case ScalingType::ntk:
      POSENC_TRY(ntk_frequencies(dim, base, s.factor, f.inv_freq));
      break;
    case ScalingType::dynamic: {
      POSENC_TRY(require_original(s));
      const double orig = s.original_max_positions;
      if (!(s.seq_length > 0))
        return fail("'dynamic' scaling needs scaling.seqLength (the current sequence length) > 0, got ", s.seq_length);
      const double seq = std::max(s.seq_length, orig);
      POSENC_TRY(ntk_frequencies(dim, base, s.factor * seq / orig - (s.factor - 1), f.inv_freq));
      break;
    }
    case ScalingType::yarn:
      POSENC_TRY(yarn(dim, base, s, f));
      break;
    case ScalingType::llama3:
      POSENC_TRY(llama3(s, f));
      break;
    case ScalingType::longrope:
      POSENC_TRY(longrope(half, s, f));
      break;
  }

  if (!std::isnan(s.attention_factor)) {
    if (!(s.attention_factor > 0 && s.attention_factor <= kMaxAttentionFactor))
      return fail("scaling.attentionFactor must be a number in (0, " POSENC_LIMIT_FLOAT32_MAX
                  "] (it scales float32 values), got ",
                  s.attention_factor);
    f.attention_factor = s.attention_factor;
  }
  if (!(f.attention_factor > 0 && f.attention_factor <= kMaxAttentionFactor))
    return fail("'", type_name(s.type), "' scaling gives the attention factor ", f.attention_factor,
                "; check factor, mscale and originalMaxPositions");
  for (std::size_t i = 0; i < half; ++i)  // finite in float32 too: ropeFrequencies returns them as a Float32Array
    if (!(std::fabs(f.inv_freq[i]) <= kMaxInvFreq))
      return fail("'", type_name(s.type), "' scaling gives invFreq[", i, "] = ", f.inv_freq[i],
                  ", beyond float32; check base and factor");
  return {};
}

namespace {

// Swaps neighbouring lanes: (x0, x1, x2, x3, ..) -> (x1, x0, x3, x2, ..).
struct SwapPairs {
  static constexpr unsigned get(unsigned i, unsigned) { return i ^ 1u; }
};

using Row = angles::RowSource::Row;

// Each kernel rotates one row (every head at one position) from the row's sin/cos, which rotate_pass
// writes once for all heads: `c`, `s` (one value per pair) for the half layout, `C`, `S` (two per pair,
// 2 * width floats each) for the interleaved one. It rotates the heads two at a time (one load of the
// sin/cos for both): contiguous streams through x and out, the sin/cos from L1. x and o may be the
// same row (in place): each value is read before it is written, by the same iteration.

// Half layout (GPT-NeoX / HF rotate_half): (x1, x2) -> (x1 c - x2 s, x2 c + x1 s) for the n channels
// x1 = x[0, n) and x2 = x[pair, pair + n) of each of the G heads at x, x + head_dim, .. (pair is
// rotaryDim/2; n is all of it, or one M-RoPE section).
template <std::size_t G>
inline void rotate_half_heads(const float* x, float* o, std::size_t head_dim, std::size_t n, std::size_t pair, const float* c,
                              const float* s) {
  const std::size_t nv = n - n % W;
  std::size_t i = 0;
  for (; i < nv; i += W) {
    const bf cv = bf::load_unaligned(c + i), sv = bf::load_unaligned(s + i);
    for (std::size_t g = 0; g < G; ++g) {
      const float* xg = x + g * head_dim;
      float* og = o + g * head_dim;
      const bf x1 = bf::load_unaligned(xg + i), x2 = bf::load_unaligned(xg + pair + i);
      (x1 * cv - x2 * sv).store_unaligned(og + i);
      (x2 * cv + x1 * sv).store_unaligned(og + pair + i);
    }
  }
  for (; i < n; ++i)
    for (std::size_t g = 0; g < G; ++g) {
      const float a = x[g * head_dim + i], b = x[g * head_dim + pair + i];
      o[g * head_dim + i] = a * c[i] - b * s[i];
      o[g * head_dim + pair + i] = b * c[i] + a * s[i];
    }
}

// Interleaved layout (GPT-J / Meta LLaMA): pairs (x_2i, x_2i+1) -> (a c - b s, b c + a s), as
// x * C + swap_pairs(x) * S with C = (c0, c0, c1, c1, ..) and S = (-s0, s0, -s1, s1, ..), for the
// n = 2h channels of each of the G heads at x, x + head_dim, ..
template <std::size_t G>
inline void rotate_interleaved_heads(const float* x, float* o, std::size_t head_dim, std::size_t n, const float* C,
                                     const float* S) {
  constexpr auto swap = xsimd::make_batch_constant<std::uint32_t, simd::arch, SwapPairs>();
  const std::size_t nv = n - n % W;  // W is even, so batches hold whole pairs
  std::size_t j = 0;
  for (; j < nv; j += W) {
    const bf cv = bf::load_unaligned(C + j), sv = bf::load_unaligned(S + j);
    for (std::size_t g = 0; g < G; ++g) {
      const bf v = bf::load_unaligned(x + g * head_dim + j);
      (v * cv + xsimd::swizzle(v, swap) * sv).store_unaligned(o + g * head_dim + j);
    }
  }
  for (; j < n; j += 2)
    for (std::size_t g = 0; g < G; ++g) {
      const float a = x[g * head_dim + j], b = x[g * head_dim + j + 1];
      o[g * head_dim + j] = a * C[j] + b * S[j];
      o[g * head_dim + j + 1] = b * C[j + 1] + a * S[j + 1];
    }
}

// One pass of rotations over every row: the frequencies [first, first + n) of the rotary half, all
// of them or one M-RoPE section, at one stream of positions.
struct Pass {
  std::size_t first;
  std::span<const double> inv_freq;  // n values
  angles::Positions positions;
};

// Rotates one row in double from the float sin/cos: for rows with values near float32's limit, where
// float products or sums could overflow (and Infinity - Infinity is NaN). Fails when a rotated value
// is beyond float32 (a pair of norm > 3.4e38 can rotate there).
POSENC_COLD Status rotate_row_exact(const float* x, float* o, std::size_t r, std::size_t heads, std::size_t head_dim,
                                    std::size_t first, std::size_t n, std::size_t pair, Layout layout, const float* c,
                                    const float* s) {
  for (std::size_t k = 0; k < heads; ++k)
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t ja = k * head_dim + (layout == Layout::half ? first + i : 2 * (first + i));
      const std::size_t jb = ja + (layout == Layout::half ? pair : 1);
      const double a = x[ja], b = x[jb], ci = c[i], si = s[i];
      const double ra = a * ci - b * si, rb = b * ci + a * si;
      if (std::isfinite(a) && std::isfinite(b) && !(std::fabs(ra) <= kMaxAttentionFactor && std::fabs(rb) <= kMaxAttentionFactor))
        return fail("x at row ", r, ", head ", k, ", pair (", a, ", ", b, ") rotates to (", ra, ", ", rb,
                    "), beyond float32's range (|value| <= " POSENC_LIMIT_FLOAT32_MAX ")");
      o[ja] = float(ra);
      o[jb] = float(rb);
    }
  return {};
}

// Runs one pass over every row of x [seq, heads, head_dim] into out (which may be x).
Status rotate_pass(std::span<const float> x, std::span<float> out, std::size_t heads, std::size_t head_dim, std::size_t half,
                   Layout layout, const Pass& pass, double attention_factor, const XPos* xpos, std::size_t first_row) {
  const std::size_t n = pass.inv_freq.size(), row_size = heads * head_dim;
  angles::RowSource source;
  POSENC_TRY(source.init(pass.positions, pass.inv_freq, attention_factor));
  const std::size_t width = source.width();
  // c, s: the row's cos and sin (times the xPos scale); C, S: the interleaved kernel's form of them;
  // log_zeta: ln of xPos's per-pair scale
  Buffer<float> buffer;
  POSENC_TRY(buffer.allocate(6 * width, "the sin/cos row"));
  float *c = buffer.data(), *s = c + width, *C = s + width, *S = C + 2 * width;
  Buffer<double> log_zeta;
  if (xpos) {
    POSENC_TRY(log_zeta.allocate(n, "the xPos scales"));
    const double d = double(2 * half);
    for (std::size_t i = 0; i < n; ++i) log_zeta[i] = std::log((2.0 * double(pass.first + i) + 0.4 * d) / (1.4 * d));
  }
  Status status;
  source.for_each([&](std::size_t r, const Row& row) {
    if (!status.ok()) return;
    const float* xr = x.data() + r * row_size;
    float* o = out.data() + r * row_size;
    for (std::size_t i = 0; i < width; i += W) {
      const auto [sv, cv] = row.at(i);
      sv.store_unaligned(s + i);
      cv.store_unaligned(c + i);
    }
    double scale_max = 1;  // the largest xPos scale of the row
    if (xpos) {
      // torchscale XPOS: scale_i^((p - center) / scale_base), inverted for keys; in double
      const double e = (pass.positions.at(r) - xpos->center) / xpos->scale_base * (xpos->role == XposRole::key ? -1.0 : 1.0);
      for (std::size_t i = 0; i < n; ++i) {
        const double f = std::exp(e * log_zeta[i]);
        scale_max = std::max(scale_max, f);
        c[i] = float(double(c[i]) * f);
        s[i] = float(double(s[i]) * f);
      }
      if (!(scale_max * attention_factor <= kMaxAttentionFactor)) {
        status = fail("the xPos scale at row ", first_row + r, " (position ", pass.positions.at(r), ") is ", scale_max,
                      ", beyond float32; use a larger xpos.scaleBase or positions nearer xpos.center");
        return;
      }
    }
    // In float, |a c - b s| <= (|a| + |b|) * max |c|, |s|: rows below this bound cannot overflow.
    const float safe = float(kMaxAttentionFactor / (2 * std::max(1.0, std::fabs(attention_factor) * scale_max)));
    if (!(ops::max_abs({xr, row_size}) <= safe)) {
      status = rotate_row_exact(xr, o, first_row + r, heads, head_dim, pass.first, n, half, layout, c, s);
      return;
    }
    std::size_t k = 0;
    if (layout == Layout::half) {
      const float* xf = xr + pass.first;
      float* of = o + pass.first;
      for (; k + 2 <= heads; k += 2) rotate_half_heads<2>(xf + k * head_dim, of + k * head_dim, head_dim, n, half, c, s);
      if (k < heads) rotate_half_heads<1>(xf + k * head_dim, of + k * head_dim, head_dim, n, half, c, s);
      return;
    }
    for (std::size_t i = 0; i < width; i += W) {
      const bf cv = bf::load_unaligned(c + i), sv = bf::load_unaligned(s + i);
      xsimd::zip_lo(cv, cv).store_unaligned(C + 2 * i);
      xsimd::zip_hi(cv, cv).store_unaligned(C + 2 * i + W);
      xsimd::zip_lo(-sv, sv).store_unaligned(S + 2 * i);
      xsimd::zip_hi(-sv, sv).store_unaligned(S + 2 * i + W);
    }
    const float* xf = xr + 2 * pass.first;
    float* of = o + 2 * pass.first;
    for (; k + 2 <= heads; k += 2) rotate_interleaved_heads<2>(xf + k * head_dim, of + k * head_dim, head_dim, 2 * n, C, S);
    if (k < heads) rotate_interleaved_heads<1>(xf + k * head_dim, of + k * head_dim, head_dim, 2 * n, C, S);
  });
  return status;
}

// The checks every entry point shares; total = seq * heads * head_dim.
POSENC_COLD Status check_apply(std::span<const float> x, std::size_t seq, std::size_t heads, std::size_t head_dim,
                               std::size_t rotary_dim, const FrequencyView& freqs, Layout layout, std::span<float> out,
                               const XPos* xpos) {
  POSENC_TRY(require_positive(heads, "heads"));       // invariant: rope.js checks x's shape (at least one head of 2 channels)
  POSENC_TRY(require_positive(head_dim, "headDim"));  // invariant: rope.js checks x's shape (at least one head of 2 channels)
  // invariant: frequencies() checked it when they were computed for rotary_dim
  POSENC_TRY(require_rotary_dim(rotary_dim));
  if (rotary_dim > head_dim) return fail("rotaryDim must be at most headDim (", head_dim, "), got ", rotary_dim);
  // invariant: validate.js maps the option's names to these indices
  if (layout != Layout::half && layout != Layout::interleaved)
    return fail("layout ", static_cast<int>(layout), " is unknown; allowed: ", contract::kRopeLayoutList);
  std::size_t row_size = 0, total = 0;
  // invariant: validate.js tensor() refuses a tensor past LIMITS.maxElements
  POSENC_TRY(checked_size(row_size, heads, head_dim, "one row of x"));
  // invariant: validate.js tensor() refuses a tensor past LIMITS.maxElements
  POSENC_TRY(checked_size(total, seq, row_size, "x"));
  // invariant: the wrapper passes blocks of whole rows of x
  if (x.size() != total) return fail("x holds ", x.size(), " values, expected seq*heads*headDim = ", total);
  // invariant: the wrapper allocates the output at this size
  if (out.size() != total) return fail("the output holds ", out.size(), " values, expected ", total);
  const std::size_t half = rotary_dim / 2;
  // invariant: the binding computes the frequencies with frequencies()
  if (freqs.inv_freq.size() != half)
    return fail("invFreq holds ", freqs.inv_freq.size(), " values, expected rotaryDim/2 = ", half);
  // invariant: the binding computes the frequencies with frequencies()
  for (std::size_t i = 0; i < half; ++i)
    if (!std::isfinite(freqs.inv_freq[i])) return fail("invFreq[", i, "] must be a finite number, got ", freqs.inv_freq[i]);
  // Beyond float32 the scaled sin/cos would be infinite, and 0 * Infinity is NaN.
  // invariant: the binding computes the frequencies with frequencies()
  if (!(std::fabs(freqs.attention_factor) <= kMaxAttentionFactor))
    return fail("attentionFactor must be a finite float32, got ", freqs.attention_factor);
  if (xpos) {
    // invariant: validate.js maps the option's names to these indices
    if (xpos->role != XposRole::query && xpos->role != XposRole::key)
      return fail("xposRole ", static_cast<int>(xpos->role), " is unknown; allowed: ", contract::kXposRoleList);
    if (!(std::isfinite(xpos->scale_base) && xpos->scale_base > 0))
      return fail("xpos.scaleBase must be a finite number > 0, got ", xpos->scale_base);
    POSENC_TRY(require_finite(xpos->center, "xpos.center"));  // invariant: validate.js reads only finite numbers
  }
  return {};
}

// Copies the channels past rotary_dim when rotating into another buffer.
void copy_rest(std::span<const float> x, std::span<float> out, std::size_t seq, std::size_t heads, std::size_t head_dim,
               std::size_t rotary_dim) {
  if (rotary_dim == head_dim || out.data() == x.data()) return;
  for (std::size_t r = 0; r < seq * heads; ++r)
    std::memcpy(out.data() + r * head_dim + rotary_dim, x.data() + r * head_dim + rotary_dim,
                (head_dim - rotary_dim) * sizeof(float));
}

}  // namespace

Status apply(std::span<const float> x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
             const angles::Positions& positions, const FrequencyView& freqs, Layout layout, std::span<float> out,
             const XPos* xpos, std::size_t first_row) {
  POSENC_TRY(check_apply(x, seq, heads, head_dim, rotary_dim, freqs, layout, out, xpos));
  // invariant: rope.js checks the positions against x's shape
  if (positions.size() != seq) return fail("positions holds ", positions.size(), " values, expected seq = ", seq);
  POSENC_TRY(require_finite(positions.offset, "offset"));  // invariant: validate.js reads only finite numbers
  // invariant: validate.js reads only finite numbers
  for (std::size_t r = 0; r < positions.values.size(); ++r)
    if (!std::isfinite(positions.values[r])) return fail("positions[", r, "] must be a finite number, got ", positions.values[r]);
  if (seq == 0) return {};
  copy_rest(x, out, seq, heads, head_dim, rotary_dim);
  return rotate_pass(x, out, heads, head_dim, rotary_dim / 2, layout, {0, freqs.inv_freq, positions}, freqs.attention_factor,
                     xpos, first_row);
}

Status apply_mrope(std::span<const float> x, std::size_t seq, std::size_t heads, std::size_t head_dim, std::size_t rotary_dim,
                   std::span<const double> positions, const std::array<std::size_t, 3>& section, const FrequencyView& freqs,
                   std::span<float> out) {
  POSENC_TRY(check_apply(x, seq, heads, head_dim, rotary_dim, freqs, Layout::half, out, nullptr));
  const std::size_t half = rotary_dim / 2;
  if (section[0] + section[1] + section[2] != half)
    return fail("mropeSection [", section[0], ", ", section[1], ", ", section[2], "] must sum to rotaryDim/2 = ", half, ", got ",
                section[0] + section[1] + section[2]);
  // invariant: rope.js checks the positions against x's shape
  // (compared by division: 3 * seq is not formed, so it cannot wrap around)
  if (positions.size() % 3 != 0 || positions.size() / 3 != seq)
    return fail("positions holds ", positions.size(), " values, expected 3 * seq with seq = ", seq);
  // invariant: validate.js reads only finite numbers
  for (std::size_t i = 0; i < positions.size(); ++i)
    if (!std::isfinite(positions[i]))
      return fail("positions[", i / seq, "][", i % seq, "] must be a finite number, got ", positions[i]);
  if (seq == 0) return {};
  // One pass per stream (temporal, height, width), each over its own section of frequencies, in place
  // on out: the sections are disjoint channels.
  if (out.data() != x.data()) std::memcpy(out.data(), x.data(), x.size() * sizeof(float));
  std::size_t first = 0;
  for (std::size_t stream = 0; stream < 3; first += section[stream], ++stream) {
    if (section[stream] == 0) continue;
    const Pass pass{first, freqs.inv_freq.subspan(first, section[stream]), {0, seq, positions.subspan(stream * seq, seq)}};
    POSENC_TRY(rotate_pass(out, out, heads, head_dim, half, Layout::half, pass, freqs.attention_factor, nullptr, 0));
  }
  return {};
}

Status cache(const angles::Positions& positions, const FrequencyView& freqs, bool expand, Layout layout, std::span<float> cos,
             std::span<float> sin) {
  const std::size_t half = freqs.inv_freq.size(), width = expand ? 2 * half : half;
  // invariant: validate.js maps the option's names to these indices
  if (layout != Layout::half && layout != Layout::interleaved)
    return fail("layout ", static_cast<int>(layout), " is unknown; allowed: ", contract::kRopeLayoutList);
  std::size_t total = 0;
  // invariant: the wrapper refuses this size (validate.js size()) before allocating the output
  POSENC_TRY(checked_size(total, positions.size(), width, "the cache"));
  // invariant: the wrapper allocates the output at this size
  if (cos.size() != total || sin.size() != total)
    return fail("the caches hold ", cos.size(), " and ", sin.size(), " values, expected ", total);
  // invariant: the binding computes the frequencies with frequencies()
  if (!(std::fabs(freqs.attention_factor) <= kMaxAttentionFactor))
    return fail("attentionFactor must be a finite float32, got ", freqs.attention_factor);
  POSENC_TRY(require_finite(positions.offset, "offset"));  // invariant: validate.js reads only finite numbers
  // invariant: validate.js reads only finite numbers
  for (std::size_t r = 0; r < positions.values.size(); ++r)
    if (!std::isfinite(positions.values[r])) return fail("positions[", r, "] must be a finite number, got ", positions.values[r]);
  if (total == 0) return {};
  angles::RowSource source;
  POSENC_TRY(source.init(positions, freqs.inv_freq, freqs.attention_factor));
  Buffer<float> row;
  POSENC_TRY(row.allocate(2 * source.width(), "a row of the cache"));
  float *s = row.data(), *c = s + source.width();
  source.for_each([&](std::size_t r, const angles::RowSource::Row& rw) {
    for (std::size_t i = 0; i < source.width(); i += W) {
      const auto [sv, cv] = rw.at(i);
      sv.store_unaligned(s + i);
      cv.store_unaligned(c + i);
    }
    float *co = cos.data() + r * width, *so = sin.data() + r * width;
    for (std::size_t i = 0; i < half; ++i) {
      if (!expand) {
        co[i] = c[i], so[i] = s[i];
      } else if (layout == Layout::half) {
        co[i] = co[half + i] = c[i], so[i] = so[half + i] = s[i];
      } else {
        co[2 * i] = co[2 * i + 1] = c[i], so[2 * i] = so[2 * i + 1] = s[i];
      }
    }
  });
  return {};
}

}  // namespace posenc::rope
