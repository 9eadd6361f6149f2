#include "compile/lower_families.h"

namespace kiln::compile {

void RegisterShapeLowerings() {}

}  // namespace kiln::compile
