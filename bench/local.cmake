add_executable(bench_local ${CMAKE_CURRENT_LIST_DIR}/local_bench.cpp)
# The raw ping-pong baselines reuse the backend's own ring (an internal header).
target_include_directories(bench_local PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_local PRIVATE cppless::cppless cppless_warnings)
