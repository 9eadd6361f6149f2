// The PJRT extensions Kiln offers, chained from PJRT_Api.extension_start.
//
// Extension structs are not in pjrt_c_api.h; their layouts are declared here
// as the framework reads them (XLA's extension headers define the same
// fields in the same order).
#ifndef KILN_PJRT_EXTENSIONS_H_
#define KILN_PJRT_EXTENSIONS_H_

#include <stddef.h>

#include "pjrt_c_api.h"

extern "C" {

#define PJRT_API_SHARDINGS_EXTENSION_VERSION 1

// Shardings (PJRT_Extension_Type_Shardings): an executable's parameter and
// output shardings as serialized `xla.OpSharding` protos, owned by the
// executable; null arrays when it has none.
struct PJRT_Shardings_PJRT_Executable_ParameterShardings_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_parameters;         // out
  const char* const* shardings;  // out
  const size_t* sharding_sizes;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args, sharding_sizes);

struct PJRT_Shardings_PJRT_Executable_OutputShardings_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_Executable* executable;
  size_t num_outputs;            // out
  const char* const* shardings;  // out
  const size_t* sharding_sizes;  // out
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Shardings_PJRT_Executable_OutputShardings_Args,
                          sharding_sizes);

typedef PJRT_Error* PJRT_Shardings_PJRT_Executable_ParameterShardings(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args);
typedef PJRT_Error* PJRT_Shardings_PJRT_Executable_OutputShardings(
    PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args);

typedef struct PJRT_Shardings_Extension {
  PJRT_Extension_Base base;
  PJRT_Shardings_PJRT_Executable_ParameterShardings*
      PJRT_Shardings_PJRT_Executable_ParameterShardings;
  PJRT_Shardings_PJRT_Executable_OutputShardings*
      PJRT_Shardings_PJRT_Executable_OutputShardings;
} PJRT_Shardings_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_Shardings_Extension,
                          PJRT_Shardings_PJRT_Executable_OutputShardings);

}  // extern "C"

namespace kiln::pjrt {

// The first extension of Kiln's chain (PJRT_Api.extension_start).
PJRT_Extension_Base* ExtensionChain();

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_EXTENSIONS_H_
