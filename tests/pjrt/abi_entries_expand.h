// Expands the generated abi_entries.inc with whichever KILN_ABI_* macros
// the includer defined; the others expand to nothing. All are undefined
// afterwards, so the file can be included once per table.
#ifndef KILN_ABI_STRUCT
#define KILN_ABI_STRUCT(S)
#endif
#ifndef KILN_ABI_FIELD
#define KILN_ABI_FIELD(S, f)
#endif
#ifndef KILN_ABI_API_SLOT
#define KILN_ABI_API_SLOT(F)
#endif
#ifndef KILN_ABI_CONSTANT
#define KILN_ABI_CONSTANT(C)
#endif
#ifndef KILN_ABI_TYPE_NAME
#define KILN_ABI_TYPE_NAME(T)
#endif
#ifndef KILN_ABI_FUNCTION_TYPE
#define KILN_ABI_FUNCTION_TYPE(F)
#endif

#include "abi_entries.inc"

#undef KILN_ABI_STRUCT
#undef KILN_ABI_FIELD
#undef KILN_ABI_API_SLOT
#undef KILN_ABI_CONSTANT
#undef KILN_ABI_TYPE_NAME
#undef KILN_ABI_FUNCTION_TYPE
