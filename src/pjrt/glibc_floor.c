/* What keeps the plugin's glibc floor at 2.35 rather than the build
 * machine's 2.36 (the wheel's manylinux tag, docs/jax.md "The wheel").
 *
 * GCC 12's static C++ library (linked in, -static-libstdc++) brings
 * std::random_device's source, which calls arc4random, new in glibc 2.36.
 * Kiln never constructs a std::random_device; this definition, hidden in
 * the plugin, answers that reference with getrandom (glibc 2.25), so that
 * the plugin loads where glibc is 2.35 (Ubuntu 22.04) too. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value = 0;
  unsigned char* bytes = (unsigned char*)&value;
  size_t have = 0;
  while (have < sizeof value) {
    ssize_t got = getrandom(bytes + have, sizeof value - have, 0);
    if (got > 0) {
      have += (size_t)got;
    } else if (got < 0 && errno != EINTR) {
      abort(); /* as glibc's own arc4random does when it has no entropy */
    }
  }
  return value;
}
