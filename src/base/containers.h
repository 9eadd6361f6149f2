// Small helpers over standard containers.
#ifndef KILN_BASE_CONTAINERS_H_
#define KILN_BASE_CONTAINERS_H_

#include <algorithm>
#include <iterator>

namespace kiln {

// Whether `list` holds `value` (a linear scan: for the short lists of
// dimension numbers and ids the compiler reads).
template <typename List, typename T>
bool Contains(const List& list, const T& value) {
  return std::find(std::begin(list), std::end(list), value) != std::end(list);
}

}  // namespace kiln

#endif  // KILN_BASE_CONTAINERS_H_
