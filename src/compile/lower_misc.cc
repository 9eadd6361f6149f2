#include "compile/lower_families.h"

namespace kiln::compile {

void RegisterMiscLowerings() {}

}  // namespace kiln::compile
