#include "compile/lower_families.h"

namespace kiln::compile {

void RegisterGatherScatterLowerings() {}

}  // namespace kiln::compile
