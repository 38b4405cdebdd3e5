# Task graph benchmark: per-node cost of the graph API against plain async and an in-process DAG.
add_executable(bench_graph ${CMAKE_CURRENT_LIST_DIR}/graph_bench.cpp)
target_link_libraries(bench_graph PRIVATE cppless::cppless cppless_warnings)
