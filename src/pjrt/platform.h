// The platform's names as the C API reports them.
#ifndef KILN_PJRT_PLATFORM_H_
#define KILN_PJRT_PLATFORM_H_

#include <string>

namespace kiln::pjrt {

// "kiln": also the name frameworks register the plugin under.
const std::string& PlatformName();
// "kiln 0.1.0 (PJRT 0.112)".
const std::string& PlatformVersion();

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_PLATFORM_H_
