# bench_serialization: the cppless archive (+ base64) against cereal's binary and JSON archives and
# memcpy. Needs cereal's headers (and the rapidjson they use), as the tests do.
add_executable(bench_serialization ${CMAKE_CURRENT_LIST_DIR}/serialization_bench.cpp)
target_link_libraries(bench_serialization PRIVATE cppless::cppless cppless_warnings)
# Debian's rapidjson 1.1.0 (used by cereal's JSON archive) has a member function that assigns a
# const member; Clang 19 rejects it even uninstantiated. Parsing template bodies lazily in this
# one file works around it without touching the system headers.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(bench_serialization PRIVATE -fdelayed-template-parsing -Wno-delayed-template-parsing-in-cxx20)
endif()
# Measured at -O2 whatever the build type (the numbers in the docs are -O2).
target_compile_options(bench_serialization PRIVATE -O2)
