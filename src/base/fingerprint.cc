#include "base/fingerprint.h"

#include <cstdio>
#include <cstring>

namespace kiln {
namespace {

// The finalizer of SplitMix64: a bijective mix with good avalanche.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t Fingerprint64(std::string_view bytes) {
  // Word-at-a-time multiply-mix over 8-byte little-endian chunks, with the
  // length folded in so that prefixes differ.
  uint64_t hash = 0x9e3779b97f4a7c15ULL ^ (bytes.size() * 0xff51afd7ed558ccdULL);
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    hash = Mix(hash ^ word) + 0x632be59bd9b4e019ULL;
  }
  uint64_t tail = 0;
  for (size_t shift = 0; i < bytes.size(); ++i, shift += 8) {
    tail |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << shift;
  }
  return Mix(hash ^ tail ^ 0x2545f4914f6cdd1dULL);
}

uint64_t FingerprintCombine(uint64_t seed, uint64_t value) {
  return Mix(seed * 0x9e3779b97f4a7c15ULL + value + 0x7f4a7c15ULL);
}

std::string FingerprintToHex(uint64_t fingerprint) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(fingerprint));
  return text;
}

}  // namespace kiln
