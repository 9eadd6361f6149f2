// Kiln's PJRT_Error: a Status behind the function table that PJRT 0.112
// requires at the start of every error.
#ifndef KILN_PJRT_ERROR_H_
#define KILN_PJRT_ERROR_H_

#include "base/status.h"
#include "pjrt_c_api.h"

namespace kiln::pjrt {

struct Error : PJRT_Error {
  Status status;
};

// A new error holding `status` (which must not be OK).
PJRT_Error* NewError(Status status);

// Whether `error` was made by Kiln (its table is Kiln's).
bool IsKilnError(const PJRT_Error* error);

// The status of any error, Kiln's or one made elsewhere with a function
// table (through that table).
Status StatusOfError(const PJRT_Error* error);

// Converts a PJRT_Error_Code, INVALID_ARGUMENT unless it is 0..16.
StatusOr<StatusCode> StatusCodeFromPjrt(int code, std::string_view what);

}  // namespace kiln::pjrt

#endif  // KILN_PJRT_ERROR_H_
