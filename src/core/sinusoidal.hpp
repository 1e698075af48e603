// Sinusoidal absolute positional encoding (Vaswani et al. 2017, "Attention Is All You Need", 3.5):
//     PE(pos, 2i) = sin(pos * w_i),  PE(pos, 2i+1) = cos(pos * w_i),  w_i = base^(-2i / d_model).
#pragma once
#include <cstddef>
#include <span>
#include "angles.hpp"
#include "buffer.hpp"
#include "contract.hpp"

namespace posenc::sinusoidal {

// interleaved: sin on even columns, cos on odd columns (Vaswani et al.).
// split: [sin_0 .. sin_{h-1} | cos_0 .. cos_{h-1}] (tensor2tensor / fairseq arrangement).
using Layout = contract::SinusoidalLayout;

// vaswani:       w_i = base^(-2i/d) (Vaswani et al.)
// tensor2tensor: w_i = base^(-i/(h-1)), h = floor(d/2) (tensor2tensor's get_timing_signal_1d, fairseq's
//                SinusoidalPositionalEmbedding, Whisper's sinusoids: the h frequencies run from 1 to exactly
//                1/base; h = 1 gives w_0 = 1)
using Spacing = contract::SinusoidalSpacing;

// Number of frequencies a layout uses: ceil(d/2) interleaved (an odd d ends with the sin of the next
// frequency), floor(d/2) split (an odd d ends with a zero column).
std::size_t frequency_count(std::size_t d_model, Layout layout);

// w_i for i < count, in double (vaswani: base^(-2i/d_model)).
Status inv_frequencies(std::size_t d_model, double base, std::size_t count, Buffer<double>& out,
                       Spacing spacing = Spacing::vaswani);

// Wavelengths 2*pi / w_i, i < ceil(d_model/2): a geometric progression from 2*pi towards 2*pi*base.
Status wavelengths(std::size_t d_model, double base, std::span<double> out, Spacing spacing = Spacing::vaswani);

// The [positions.size(), d_model] table, row-major, into out.
Status table(const angles::Positions& positions, std::size_t d_model, double base, Layout layout, std::span<float> out,
             Spacing spacing = Spacing::vaswani);

// The same table a block of rows at a time: init() checks the arguments and does the setup once
// (frequencies, exact anchors, the fine table of angle offsets); write(r0, out) fills rows
// [r0, r0 + out.size() / d_model). Consecutive blocks continue from each other's anchors, so blocks
// small enough to stay in cache cost no more than one table() call (the JS API copies each block out
// of wasm memory while it is still in cache). Holds pointers into itself: not copyable or movable.
class Table {
 public:
  Status init(const angles::Positions& positions, std::size_t d_model, double base, Layout layout,
              Spacing spacing = Spacing::vaswani);
  Status write(std::size_t r0, std::span<float> out);
  std::size_t d_model() const { return d_model_; }
  std::size_t size() const { return size_; }  // rows * dModel, checked by init()

 private:
  std::size_t rows_ = 0, d_model_ = 0, n_ = 0, size_ = 0;
  Layout layout_ = Layout::interleaved;
  Buffer<double> w_;
  angles::RowSource source_;
};

// The 2-D sin-cos table of MAE (He et al. 2022; facebookresearch/mae util/pos_embed.py
// get_2d_sincos_pos_embed, also HF ViTMAE) for a height x width grid of patches, row-major over
// (row, column): [cls_token + height * width, d_model]. The first d_model/2 channels encode the
// patch's column and the last d_model/2 its row (MAE builds its grid with meshgrid(grid_w, grid_h), so
// its "emb_h" half holds the column), each as the split-layout 1-D table of d_model/2 channels:
// [sin(p w_k) | cos(p w_k)], w_k = base^(-k / (d_model/4)). With cls_token the first row is zeros.
// d_model must be a multiple of 4. Angles are reduced exactly, in double.
Status table_2d(std::size_t height, std::size_t width, std::size_t d_model, double base, bool cls_token, std::span<float> out);

// d_model > 0 and base in [kMinBase, kMaxBase].
Status check_args(std::size_t d_model, double base);
inline constexpr double kMinBase = contract::kMinBase, kMaxBase = contract::kMaxBase;
// base in [kMinBase, kMaxBase] (LIMITS.minBase, maxBase): the frequency bases' one rule (sinusoidal, RoPE).
Status require_base(double base);

}  // namespace posenc::sinusoidal
