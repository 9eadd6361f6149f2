// Stable 64-bit fingerprints of bytes (the same value in every process and
// on every run), used for executable fingerprints and cache keys.
#ifndef KILN_BASE_FINGERPRINT_H_
#define KILN_BASE_FINGERPRINT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// A fingerprint of `bytes`. Not cryptographic; collisions are unlikely for
// distinct programs, which is all cache keys need.
uint64_t Fingerprint64(std::string_view bytes);

// Mixes `value` into `seed` (order matters).
uint64_t FingerprintCombine(uint64_t seed, uint64_t value);

// 16 lowercase hex digits.
std::string FingerprintToHex(uint64_t fingerprint);

}  // namespace kiln

#endif  // KILN_BASE_FINGERPRINT_H_
