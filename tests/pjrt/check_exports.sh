#!/usr/bin/env bash
# Checks that a PJRT plugin exports exactly GetPjrtApi and depends on no
# shared C++ library or protobuf (so it loads next to any other libstdc++ or
# protobuf). The unwinder, libgcc_s, is shared on purpose: Gloo (a shared
# library) throws exceptions the plugin catches, which works only with one
# unwinder in the process (src/pjrt/CMakeLists.txt).
#   check_exports.sh path/to/libpjrt_kiln.so
set -euo pipefail
plugin="$1"
exported="$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort)"
if [ "$exported" != "GetPjrtApi" ]; then
  echo "FAIL: $plugin must export only GetPjrtApi; it exports:"
  echo "$exported"
  exit 1
fi
needed="$(readelf -d "$plugin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')"
for library in $needed; do
  case "$library" in
    libstdc++*|libprotobuf*|libabsl*)
      echo "FAIL: $plugin depends on $library, which must be linked in"
      exit 1 ;;
  esac
done
echo "OK: $plugin exports only GetPjrtApi; needs: $(echo $needed)"
