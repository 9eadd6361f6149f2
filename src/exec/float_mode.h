// The floating-point mode plans run in: subnormal inputs read as zero and
// subnormal results flush to zero, as on XLA:CPU (which sets the same mode
// on the threads that run its programs), so that results near the bottom
// of a type's range agree with the reference frameworks test against, and
// no kernel slows down on subnormal operands.
#ifndef KILN_EXEC_FLOAT_MODE_H_
#define KILN_EXEC_FLOAT_MODE_H_

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace kiln::exec {

// Sets flush-to-zero and denormals-are-zero on the calling thread for its
// lifetime, then restores the thread's previous mode.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals() {
#if defined(__x86_64__) || defined(__i386__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
#elif defined(__aarch64__)
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    saved_ = fpcr;
    fpcr |= uint64_t{1} << 24;  // FZ
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#endif
  }
  ~ScopedFlushDenormals() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(static_cast<unsigned int>(saved_));
#elif defined(__aarch64__)
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
#if defined(__x86_64__) || defined(__i386__)
  static constexpr unsigned int kFlushToZero = 0x8000;
  static constexpr unsigned int kDenormalsAreZero = 0x0040;
#endif
  uint64_t saved_ = 0;
};

}  // namespace kiln::exec

#endif  // KILN_EXEC_FLOAT_MODE_H_
