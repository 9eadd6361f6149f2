# `cmake --install`: the plugin, the client library (static, with the
# libraries it needs), its headers, the `kiln` command, and a CMake package
# configuration so that another project can `find_package(Kiln)` and link
# `Kiln::client`.
#
# Layout under the prefix:
#   lib/libpjrt_kiln.so                      the plugin
#   lib/kiln/libkiln_client.a ...            the client and its dependencies
#   include/kiln/*.h                         the client's public headers
#   include/kiln/pjrt_c_api.h, include/kiln/base/*.h   what they include
#   lib/cmake/Kiln/KilnConfig*.cmake         the package
#   bin/kiln                                 the command line
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kiln)
set(KILN_INSTALL_ARCHIVEDIR ${CMAKE_INSTALL_LIBDIR}/kiln)

# The wheel (component `wheel`, what pyproject.toml installs): the plugin
# and OpenBLAS in the package kiln_pjrt, with Kiln's LICENSE and the
# notices of what the plugin carries and loads. The system libraries it
# loads (oneDNN, Gloo, the OpenMP runtime and theirs) are grafted into the
# wheel afterwards by auditwheel (scripts/build_wheel.sh).
if(SKBUILD AND TARGET pjrt_kiln)
  install(TARGETS pjrt_kiln LIBRARY DESTINATION kiln_pjrt COMPONENT wheel)
  install(FILES $<TARGET_FILE:kiln_openblas> ${CMAKE_SOURCE_DIR}/LICENSE
          DESTINATION kiln_pjrt COMPONENT wheel)
  install(CODE "
    execute_process(
      COMMAND ${CMAKE_SOURCE_DIR}/scripts/third_party_notices.sh
              $<TARGET_FILE:pjrt_kiln>
              \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/kiln_pjrt/THIRD_PARTY_NOTICES.txt
      COMMAND_ERROR_IS_FATAL ANY)" COMPONENT wheel)
endif()

if(TARGET pjrt_kiln)
  install(TARGETS pjrt_kiln LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  # OpenBLAS is not a system library: it goes beside the plugin, which
  # finds it through its RUNPATH $ORIGIN.
  install(FILES $<TARGET_FILE:kiln_openblas> DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
if(TARGET kiln_client)
  install(TARGETS kiln_client kiln_base kiln_xla_proto
          ARCHIVE DESTINATION ${KILN_INSTALL_ARCHIVEDIR})
  install(FILES ${KILN_PROTOBUF_PREFIX}/lib/libprotobuf-lite.a
          DESTINATION ${KILN_INSTALL_ARCHIVEDIR}
          RENAME libkiln_protobuf_lite.a)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/kiln/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln
          FILES_MATCHING PATTERN "*.h")
  install(FILES ${CMAKE_SOURCE_DIR}/include/pjrt_c_api.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln)
  # The public headers use Kiln's Status and string helpers.
  install(FILES ${CMAKE_SOURCE_DIR}/src/base/status.h
                ${CMAKE_SOURCE_DIR}/src/base/strings.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kiln/base)
endif()
if(TARGET kiln)
  # OPTIONAL: a tree that built only the client and the plugin still
  # installs (the command links every layer).
  install(TARGETS kiln RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} OPTIONAL)
endif()

configure_package_config_file(
  ${CMAKE_SOURCE_DIR}/cmake/KilnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/KilnConfig.cmake
  INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR
            KILN_INSTALL_ARCHIVEDIR)
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/cmake/KilnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/KilnConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/KilnConfigVersion.cmake
        DESTINATION ${KILN_INSTALL_CMAKEDIR})
