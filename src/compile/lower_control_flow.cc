#include "compile/lower_families.h"

namespace kiln::compile {

void RegisterControlFlowLowerings() {}

}  // namespace kiln::compile
