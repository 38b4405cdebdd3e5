# find_package(cppless) entry point: imports cppless::cppless.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/cpplessTargets.cmake")
# Function ids name lambdas by file:line:column: map the consumer's source root away so two
# builds of the same sources in different directories agree on every id.
set_property(TARGET cppless::cppless APPEND PROPERTY INTERFACE_COMPILE_OPTIONS "-ffile-prefix-map=${CMAKE_SOURCE_DIR}/=")
