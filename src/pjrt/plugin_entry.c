/* The plugin's exported entry point, the one symbol of libpjrt_kiln.so.
 * It lives here, outside the kiln_pjrt archive, because the plugin is
 * linked with --exclude-libs,ALL: nothing from an archive is exported. */
#include "pjrt_c_api.h"

/* Defined in api.cc. */
const PJRT_Api* KilnPjrtApi(void);

__attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi(void) {
  return KilnPjrtApi();
}
