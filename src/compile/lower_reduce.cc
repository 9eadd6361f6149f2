#include "compile/lower_families.h"

namespace kiln::compile {

void RegisterReduceLowerings() {}

}  // namespace kiln::compile
