// Native contender for scripts/bench: the same core kernels compiled with g++ -O3 for the host
// (CMake target posenc_bench; scripts/bench.sh builds it twice, -msse4.2 and -mavx2). It times the
// kernels exactly as the wasm `_bench*` bindings do and prints one JSON line per workload.
//
// Usage: posenc-bench-<arch> <samples> <workload>:<reps> [<workload>:<reps> ...]
//   sinusoidal/<rows>x<dModel>        interleaved table, base 10000, positions 0 .. rows-1
//   rope/<seq>x<heads>x<headDim>/<half|interleaved>[-inplace]   x -> out, or in place (as the
//                                     API does), full rotary dim
//   alibi/<heads>x<q>x<k>             causal ALiBi bias
//   t5/<q>x<k>                        T5 buckets, 32 buckets, max distance 128, bidirectional
//   attention/<seq>x<d>               one head, softmax(q k^T / sqrt(d)) v
//   copy/<bytes>, fill/<bytes>        std::memcpy / std::memset baselines
// Each sample runs the kernel `reps` times; the line reports the median per call in ms over
// `samples` samples (after one warm-up sample), a checksum of the output and, for sinusoidal, the
// max abs error against float64.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention.hpp"
#include "relative.hpp"
#include "rope.hpp"
#include "simd.hpp"
#include "sinusoidal.hpp"

namespace {

using namespace posenc;

inline void clobber() {
  __asm__ __volatile__("" ::: "memory");
}

template <class F>
double median_ms(int samples, long reps, F&& kernel) {
  std::vector<double> t;
  for (int s = -1; s < samples; ++s) {  // s = -1: warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (long r = 0; r < reps; ++r) {
      kernel();
      clobber();
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / double(reps);
    if (s >= 0) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Sum of x[i] * (i % 7 + 1) in double, as scripts/bench/plain.js computes it.
template <class T>
double checksum(const std::vector<T>& v) {
  double s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) s += double(v[i]) * double(i % 7 + 1);
  return s;
}

// Deterministic inputs in [-0.5, 0.5), the same formula as scripts/bench/workloads.js.
std::vector<float> input(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t s = seed;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(s >> 8) / 16777216.0f - 0.5f;
  }
  return v;
}

std::vector<std::size_t> dims(const std::string& s) {
  std::vector<std::size_t> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t x = s.find('x', at);
    out.push_back(std::stoul(s.substr(at, x == std::string::npos ? std::string::npos : x - at)));
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return out;
}

void report(const std::string& workload, int samples, long reps, double ms, double sum, double max_error = -1) {
  std::printf("{\"workload\":\"%s\",\"arch\":\"%s\",\"samples\":%d,\"reps\":%ld,\"ms\":%.6g,\"checksum\":%.17g", workload.c_str(),
              simd::arch_name(), samples, reps, ms, sum);
  if (max_error >= 0) std::printf(",\"maxError\":%.3g", max_error);
  std::printf("}\n");
  std::fflush(stdout);
}

// A kernel call that must succeed (the workloads are valid): a failure ends the run with its message.
void must(Status status) {
  if (status.ok()) return;
  const auto m = posenc::message();
  std::fprintf(stderr, "bench: the kernel failed: %.*s\n", int(m.size()), m.data());
  std::exit(1);
}

void run(const std::string& spec, int samples) {
  const std::size_t colon = spec.rfind(':');
  const std::string workload = spec.substr(0, colon);
  const long reps = std::max(1L, std::atol(spec.c_str() + colon + 1));
  const std::size_t slash = workload.find('/');
  const std::string kind = workload.substr(0, slash);
  std::string rest = workload.substr(slash + 1);
  std::string variant;
  if (const std::size_t s2 = rest.find('/'); s2 != std::string::npos) {
    variant = rest.substr(s2 + 1);
    rest = rest.substr(0, s2);
  }
  const auto d = dims(rest);

  if (kind == "sinusoidal") {
    const std::size_t rows = d[0], dm = d[1];
    std::vector<float> out(rows * dm);
    const angles::Positions pos{0, rows, {}};
    const double ms =
        median_ms(samples, reps, [&] { must(sinusoidal::table(pos, dm, 10000, sinusoidal::Layout::interleaved, out)); });
    double err = 0;
    for (std::size_t p = 0; p < rows; ++p)
      for (std::size_t c = 0; c < dm; ++c) {
        const double a = double(p) * std::pow(10000.0, -double(c / 2 * 2) / double(dm));
        err = std::max(err, std::fabs(double(out[p * dm + c]) - (c % 2 ? std::cos(a) : std::sin(a))));
      }
    report(workload, samples, reps, ms, checksum(out), err);
  } else if (kind == "rope") {
    const std::size_t seq = d[0], heads = d[1], hd = d[2];
    const auto x = input(seq * heads * hd, 1);
    std::vector<float> out(x.size());
    rope::Frequencies freqs;
    must(rope::frequencies(hd, 10000, {}, freqs));
    const auto layout = variant.starts_with("interleaved") ? rope::Layout::interleaved : rope::Layout::half;
    const bool in_place = variant.ends_with("-inplace");
    if (in_place) out = x;  // rotated again and again while timing; the checksum is of one rotation
    const std::vector<float>& source = in_place ? out : x;
    const double ms = median_ms(samples, reps, [&] {
      must(rope::apply(source, seq, heads, hd, hd, {0, seq, {}}, freqs, layout, out));
    });
    if (in_place) {
      out = x;
      must(rope::apply(out, seq, heads, hd, hd, {0, seq, {}}, freqs, layout, out));
    }
    report(workload, samples, reps, ms, checksum(out));
  } else if (kind == "alibi") {
    std::vector<float> out(d[0] * d[1] * d[2]);
    const double ms = median_ms(samples, reps, [&] { must(relative::alibi_bias(d[0], d[1], d[2], false, out)); });
    report(workload, samples, reps, ms, checksum(out));
  } else if (kind == "t5") {
    std::vector<std::int32_t> out(d[0] * d[1]);
    const double ms = median_ms(samples, reps, [&] { must(relative::t5_buckets(d[0], d[1], 32, 128, true, out)); });
    report(workload, samples, reps, ms, checksum(out));
  } else if (kind == "attention") {
    const std::size_t seq = d[0], dh = d[1];
    const auto q = input(seq * dh, 1), k = input(seq * dh, 2), v = input(seq * dh, 3);
    std::vector<float> out(seq * dh), w(seq * seq);
    const double ms = median_ms(samples, reps, [&] {
      must(attention::attention(q, k, v, {seq, seq, 1, dh, dh}, {}, false, 1.0 / std::sqrt(double(dh)), out, w));
    });
    report(workload, samples, reps, ms, checksum(out));
  } else if (kind == "copy" || kind == "fill") {
    const std::size_t bytes = d[0];
    std::vector<unsigned char> a(bytes, 1), b(bytes, 2);
    const double ms = kind == "copy" ? median_ms(samples, reps, [&] { std::memcpy(b.data(), a.data(), bytes); })
                                     : median_ms(samples, reps, [&] { std::memset(b.data(), 0, bytes); });
    report(workload, samples, reps, ms, checksum(b));
  } else {
    std::fprintf(stderr, "unknown workload %s\n", spec.c_str());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <samples> <workload>:<reps> ...\n", argv[0]);
    return 2;
  }
  const int samples = std::atoi(argv[1]);
  for (int i = 2; i < argc; ++i) run(argv[i], samples);
}
