// Deterministic random numbers, bit-identical on every backend (native, wasm SIMD, wasm scalar).
//
// Generator: SplitMix64 (Steele, Lea & Flood 2014) seeded with `seed` mixed with a per-purpose salt.
// Uniforms: the top 53 bits of each output scaled by 2^-53, in [0, 1).
// Normals: Box-Muller in double, z0 = r cos(2 pi u2), z1 = r sin(2 pi u2), r = sqrt(-2 ln(1 - u1)),
// consumed in that order. log/sin/cos are evaluated by this file's own polynomials using only IEEE
// +, -, *, / and sqrt (correctly rounded everywhere), never by the platform's libm, whose last bit
// differs between glibc and the wasm libc.
#pragma once
#include <cstdint>
#include <span>

namespace posenc::rng {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }

 private:
  std::uint64_t state_;
};

// Salts keep the streams of different tables apart for the same user seed.
enum class Stream : std::uint64_t {
  learned = 0x6C6561726E6564ull,     // "learned"
  token = 0x746F6B656Eull,           // "token"
  projections = 0x70726F6A00ull,     // toy attention projections
  words = 0x776F726473ull,           // per-word embeddings
  shuffle = 0x73687566666C65ull,     // default permutation
  toy = 0x746F79ull,                 // the toy model's parameters (trainToy)
  toy_train = 0x746F7974726Eull,     // its training examples
  toy_held_out = 0x746F79686C64ull,  // its held-out examples
};

SplitMix64 make(std::uint64_t seed, Stream stream);

// Fills out with N(mean, std) values / U(lo, hi) values, as float32.
void fill_normal(SplitMix64& g, std::span<float> out, double mean, double std);
void fill_uniform(SplitMix64& g, std::span<float> out, double lo, double hi);

// Deterministic elementary functions used above (exposed for tests).
double det_log(double x);                             // x > 0
void det_sincos_2pi(double u, double& s, double& c);  // sin/cos of 2*pi*u for u in [0, 1)
double det_exp(double x);                             // e^x (0 below -745, +Infinity above 709.78)

}  // namespace posenc::rng
