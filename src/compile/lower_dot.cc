#include "compile/lower_families.h"

namespace kiln::compile {

void RegisterDotLowerings() {}

}  // namespace kiln::compile
