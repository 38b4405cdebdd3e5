# bench_trace: the cost of invocation tracing on the hot no-op call (goal: at most 5%).
add_executable(bench_trace ${CMAKE_CURRENT_LIST_DIR}/trace_bench.cpp)
target_link_libraries(bench_trace PRIVATE cppless::cppless cppless_warnings)
