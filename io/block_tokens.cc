// ExpandBlockTokens, compiled once per instruction set by Highway's
// foreach_target and picked at run time (the build uses no -march flag).
// Each lane computes one token with 32 x 32 -> 64-bit multiplications
// (MulEven, on every target) standing in for the 64-bit ones of the scalar
// formula, which SSE2 and AVX2 lack.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "io/block_tokens.cc"
#include "io/block_tokens.h"

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "io/mooncake.h"

HWY_BEFORE_NAMESPACE();
namespace kvprefix {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_SCALAR
// The scalar target cannot split a 64-bit lane into 32-bit halves: it takes
// the scalar formula with 128-bit products (CPUs without SSSE3 only).
void ExpandBlockTokens(std::uint64_t id, std::size_t count,
                       const Remainder& remainder, Token* HWY_RESTRICT out) {
  for (std::size_t j = 0; j < count; ++j) {
    const std::uint64_t x = SplitMix64(id * kMooncakeBlockTokens + j);
    const auto t =
        static_cast<std::uint64_t>((Uint128{remainder.multiplier()} * x) >> 64);
    const std::uint64_t quotient =
        (t + ((x - t) >> remainder.shift1())) >> remainder.shift2();
    out[j] = static_cast<Token>(x - quotient * remainder.divisor());
  }
}
#else
using D64 = hn::ScalableTag<std::uint64_t>;
using V64 = hn::Vec<D64>;

// The product of the low 32 bits of each lane of a and b, all 64 bits.
HWY_INLINE V64 MulLow32(V64 a, V64 b) {
  const hn::Repartition<std::uint32_t, D64> d32;
  return hn::MulEven(hn::BitCast(d32, a), hn::BitCast(d32, b));
}

// a * b mod 2^64 per lane: AVX-512DQ has the instruction; elsewhere
// schoolbook from 32-bit halves (the high x high term drops out).
HWY_INLINE V64 MulLow64(V64 a, V64 b) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return hn::Mul(a, b);
#else
  const V64 cross = hn::Add(MulLow32(hn::ShiftRight<32>(a), b),
                            MulLow32(a, hn::ShiftRight<32>(b)));
  return hn::Add(MulLow32(a, b), hn::ShiftLeft<32>(cross));
#endif
}

// (a * b) >> 64 per lane, from the four 32 x 32 partial products.
HWY_INLINE V64 MulHigh64(V64 a, V64 b) {
  const D64 d;
  const V64 low32 = hn::Set(d, 0xFFFFFFFFULL);
  const V64 a_high = hn::ShiftRight<32>(a);
  const V64 b_high = hn::ShiftRight<32>(b);
  const V64 ll = MulLow32(a, b);
  const V64 lh = MulLow32(a, b_high);
  const V64 hl = MulLow32(a_high, b);
  const V64 hh = MulLow32(a_high, b_high);
  const V64 middle =
      hn::Add(hn::Add(hn::ShiftRight<32>(ll), hn::And(lh, low32)),
              hn::And(hl, low32));  // < 3 * 2^32: no overflow
  return hn::Add(hn::Add(hh, hn::ShiftRight<32>(lh)),
                 hn::Add(hn::ShiftRight<32>(hl), hn::ShiftRight<32>(middle)));
}

void ExpandBlockTokens(std::uint64_t id, std::size_t count,
                       const Remainder& remainder, Token* HWY_RESTRICT out) {
  const D64 d;
  const std::size_t lanes = hn::Lanes(d);
  const V64 multiplier = hn::Set(d, remainder.multiplier());
  const V64 divisor = hn::Set(d, remainder.divisor());
  const V64 mix1 = hn::Set(d, 0xBF58476D1CE4E5B9ULL);
  const V64 mix2 = hn::Set(d, 0x94D049BB133111EBULL);
  const V64 step = hn::Set(d, lanes);
  // SplitMix64's input for lane i: id * 512 + j + i plus its increment.
  V64 x = hn::Add(hn::Iota(d, 0), hn::Set(d, id * kMooncakeBlockTokens +
                                                 0x9E3779B97F4A7C15ULL));
  // Whole vectors go to `wide` (512 is a multiple of every lane count), then
  // one narrowing loop, which the compiler vectorizes for this target.
  HWY_ALIGN std::uint64_t wide[kMooncakeBlockTokens];
  for (std::size_t j = 0; j < count; j += lanes) {
    V64 z = MulLow64(hn::Xor(x, hn::ShiftRight<30>(x)), mix1);
    z = MulLow64(hn::Xor(z, hn::ShiftRight<27>(z)), mix2);
    z = hn::Xor(z, hn::ShiftRight<31>(z));
    const V64 t = MulHigh64(multiplier, z);
    const V64 quotient = hn::ShiftRightSame(
        hn::Add(t, hn::ShiftRightSame(hn::Sub(z, t), remainder.shift1())),
        remainder.shift2());
    // The remainder is below 2^31, so only the low 32 bits of q * d matter.
    hn::Store(hn::Sub(z, MulLow32(quotient, divisor)), d, wide + j);
    x = hn::Add(x, step);
  }
  for (std::size_t j = 0; j < count; ++j) {
    out[j] = static_cast<Token>(static_cast<std::uint32_t>(wide[j]));
  }
}
#endif  // HWY_TARGET == HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace kvprefix
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kvprefix {

HWY_EXPORT(ExpandBlockTokens);

void ExpandBlockTokens(std::uint64_t id, std::size_t count,
                       const Remainder& remainder, Token* out) {
  HWY_DYNAMIC_DISPATCH(ExpandBlockTokens)(id, count, remainder, out);
}

}  // namespace kvprefix
#endif  // HWY_ONCE
