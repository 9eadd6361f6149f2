// `kiln version`: prints Kiln's version and the PJRT C API version it speaks.
#include <cstdio>

#include "pjrt_c_api.h"
#include "tools/kiln/command.h"

namespace kiln::cli {
namespace {

int RunVersion(Arguments& args) {
  if (!args.RejectUnknownFlags("version")) return 2;
  std::printf("kiln %s (PJRT C API %d.%d)\n", KILN_VERSION_STRING, PJRT_API_MAJOR,
              PJRT_API_MINOR);
  return 0;
}

}  // namespace

KILN_REGISTER_COMMAND(version, "version", "version",
                      "print Kiln's version and the PJRT C API version", RunVersion);

}  // namespace kiln::cli
