# Third-party dependencies, from Debian and, for OpenBLAS, the Python package
# index (see scripts/setup.sh).

find_package(Threads REQUIRED)

# A wheel build from a fresh clone (pip install .) sets up what is missing
# itself: scripts/setup.sh installs the Debian packages and fills .deps/.
# Elsewhere a missing dependency is an error that names setup.sh.
set(KILN_DEPS_DIR "${CMAKE_SOURCE_DIR}/.deps" CACHE PATH "Built dependencies")
if(SKBUILD AND NOT KILN_DEPS_READY)
  message(STATUS "Kiln: scripts/setup.sh (the dependencies a build needs)")
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/setup.sh
                  RESULT_VARIABLE kiln_setup_result)
  if(NOT kiln_setup_result EQUAL 0)
    message(FATAL_ERROR "scripts/setup.sh failed (${kiln_setup_result})")
  endif()
  set(KILN_DEPS_READY ON CACHE INTERNAL "scripts/setup.sh ran")
endif()

# protobuf-lite: position-independent static build made by scripts/setup.sh
# from Debian's source package, linked into the plugin with hidden symbols.
file(GLOB KILN_PROTOBUF_PREFIXES "${KILN_DEPS_DIR}/protobuf-lite-*")
list(SORT KILN_PROTOBUF_PREFIXES)
list(REVERSE KILN_PROTOBUF_PREFIXES)
list(GET KILN_PROTOBUF_PREFIXES 0 KILN_PROTOBUF_PREFIX)
if(NOT KILN_PROTOBUF_PREFIX OR NOT EXISTS "${KILN_PROTOBUF_PREFIX}/lib/libprotobuf-lite.a")
  message(FATAL_ERROR "protobuf-lite (PIC) not found under ${KILN_DEPS_DIR}; run scripts/setup.sh")
endif()
add_library(kiln_protobuf_lite STATIC IMPORTED GLOBAL)
set_target_properties(kiln_protobuf_lite PROPERTIES
  IMPORTED_LOCATION "${KILN_PROTOBUF_PREFIX}/lib/libprotobuf-lite.a"
  INTERFACE_INCLUDE_DIRECTORIES "${KILN_PROTOBUF_PREFIX}/include"
  INTERFACE_LINK_LIBRARIES Threads::Threads)
find_program(KILN_PROTOC protoc REQUIRED)

# Gloo (Debian's libgloo-dev): the TCP transport of collectives between
# processes (runtime/gloo_collectives.h). Debian's package has a CMake
# config, but found by hand it works with any install that has the header
# and the library.
find_path(KILN_GLOO_INCLUDE_DIR gloo/allreduce.h)
find_library(KILN_GLOO_LIBRARY gloo)
if(NOT KILN_GLOO_INCLUDE_DIR OR NOT KILN_GLOO_LIBRARY)
  message(FATAL_ERROR "Gloo not found (gloo/allreduce.h, libgloo); run scripts/setup.sh")
endif()
add_library(kiln_gloo UNKNOWN IMPORTED GLOBAL)
set_target_properties(kiln_gloo PROPERTIES
  IMPORTED_LOCATION "${KILN_GLOO_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${KILN_GLOO_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES Threads::Threads)

# oneDNN (Debian's libdnnl-dev): the matmul and convolution behind
# dot_general and convolution (exec/kernels/onednn.h). A shared library
# threaded with OpenMP; the wheel carries it (auditwheel grafts it, with
# what it loads, scripts/build_wheel.sh).
find_package(dnnl 2.6 CONFIG REQUIRED)

# OpenBLAS with LAPACK (scripts/setup.sh unpacks the scipy-openblas32 wheel
# into .deps/): the f64 and complex products and the LAPACK routines of the
# linear-algebra targets (exec/kernels/library_blas.h). A shared library; the
# wheel carries it next to the plugin. Its symbols carry the prefix
# `scipy_` (cblas.h declares them so).
file(GLOB KILN_OPENBLAS_PREFIXES "${KILN_DEPS_DIR}/scipy-openblas32-*")
list(SORT KILN_OPENBLAS_PREFIXES)
list(REVERSE KILN_OPENBLAS_PREFIXES)
list(GET KILN_OPENBLAS_PREFIXES 0 KILN_OPENBLAS_PREFIX)
if(NOT KILN_OPENBLAS_PREFIX OR NOT EXISTS "${KILN_OPENBLAS_PREFIX}/lib/libscipy_openblas.so")
  message(FATAL_ERROR "OpenBLAS (scipy-openblas32) not found under ${KILN_DEPS_DIR}; run scripts/setup.sh")
endif()
add_library(kiln_openblas SHARED IMPORTED GLOBAL)
set_target_properties(kiln_openblas PROPERTIES
  IMPORTED_LOCATION "${KILN_OPENBLAS_PREFIX}/lib/libscipy_openblas.so"
  IMPORTED_SONAME "libscipy_openblas.so"
  INTERFACE_INCLUDE_DIRECTORIES "${KILN_OPENBLAS_PREFIX}/include")

# DUCC's FFT (scripts/setup.sh unpacks the sources of the ducc0 source
# distribution into .deps/): FFT, IFFT, RFFT and IRFFT of every length
# (exec/kernels/fft.cc). Those files are BSD-3-Clause (each offers
# "BSD-3-Clause OR GPL-2.0-or-later"; Kiln takes the first, as XLA does). A
# static library of the float and double instantiations and the thread pool
# they refer to; Kiln calls it with one thread a call and splits the lines
# itself. Built without contraction (-ffp-contract=off), so that its vector
# and scalar paths give a line the same bits, and without the sanitizers:
# they check Kiln's code, and ASan and TSan work beside uninstrumented code.
file(GLOB KILN_DUCC_PREFIXES "${KILN_DEPS_DIR}/ducc0-*")
list(SORT KILN_DUCC_PREFIXES)
list(REVERSE KILN_DUCC_PREFIXES)
list(GET KILN_DUCC_PREFIXES 0 KILN_DUCC_PREFIX)
if(NOT KILN_DUCC_PREFIX OR NOT EXISTS "${KILN_DUCC_PREFIX}/src/ducc0/fft/fft.h")
  message(FATAL_ERROR "DUCC (ducc0 sources) not found under ${KILN_DEPS_DIR}; run scripts/setup.sh")
endif()
# The FFT functions are instantiated by Kiln's own file, for the functions
# and types Kiln calls only (DUCC's instantiation files build every
# transform in three precisions).
add_library(kiln_ducc_fft STATIC
  ${PROJECT_SOURCE_DIR}/third_party/ducc_fft_instances.cc
  ${KILN_DUCC_PREFIX}/src/ducc0/infra/mav.cc
  ${KILN_DUCC_PREFIX}/src/ducc0/infra/threading.cc)
target_include_directories(kiln_ducc_fft SYSTEM PUBLIC ${KILN_DUCC_PREFIX}/src)
set_property(TARGET kiln_ducc_fft PROPERTY COMPILE_OPTIONS "")
# Sanitizer builds keep their build type's optimization, as Kiln's kernels
# do there (src/exec/CMakeLists.txt).
if(KILN_SANITIZE)
  target_compile_options(kiln_ducc_fft PRIVATE -ffp-contract=off -w)
else()
  target_compile_options(kiln_ducc_fft PRIVATE -O3 -ffp-contract=off -w)
endif()
# No thread pool of DUCC's own (its default starts one per process on first
# use); its names in a namespace of Kiln's, apart from any other copy of
# DUCC in the process.
target_compile_definitions(kiln_ducc_fft PUBLIC DUCC0_NO_LOWLEVEL_THREADING
                                                DUCC0_NAMESPACE=kiln_ducc0)
target_link_libraries(kiln_ducc_fft PUBLIC Threads::Threads)

# Compiles .proto files into C++ sources under <build>/generated, keeping
# their path relative to the source root: proto/x.proto is included as
# "proto/x.pb.h" (add ${CMAKE_BINARY_DIR}/generated to the include path).
#   kiln_protobuf_generate(OUT_SRCS OUT_HDRS proto...)
function(kiln_protobuf_generate out_srcs out_hdrs)
  set(srcs)
  set(hdrs)
  foreach(proto ${ARGN})
    get_filename_component(abs ${proto} ABSOLUTE)
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${abs})
    get_filename_component(rel_dir ${rel} DIRECTORY)
    get_filename_component(name ${proto} NAME_WE)
    set(out_dir ${CMAKE_BINARY_DIR}/generated/${rel_dir})
    list(APPEND srcs ${out_dir}/${name}.pb.cc)
    list(APPEND hdrs ${out_dir}/${name}.pb.h)
    add_custom_command(
      OUTPUT ${out_dir}/${name}.pb.cc ${out_dir}/${name}.pb.h
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/generated
      COMMAND ${KILN_PROTOC} --cpp_out=${CMAKE_BINARY_DIR}/generated
              -I${CMAKE_SOURCE_DIR} ${abs}
      DEPENDS ${abs}
      COMMENT "protoc ${rel}")
  endforeach()
  set(${out_srcs} ${srcs} PARENT_SCOPE)
  set(${out_hdrs} ${hdrs} PARENT_SCOPE)
endfunction()

if(KILN_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(KILN_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# A library for one layer: every .cc under the folder (tests live in tests/).
#   kiln_layer(NAME DIR DEPS...)
function(kiln_layer name dir)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cc)
  add_library(${name} STATIC ${sources})
  target_link_libraries(${name} PUBLIC ${ARGN})
endfunction()
