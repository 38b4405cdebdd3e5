# find_package(cppless) entry point: imports cppless::cppless.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/cpplessTargets.cmake")
