# Application and limit benchmarks of the peer suite (bench/run.sh): pi and n-queens strong
# scaling (serial, std::thread, cppless local), eventfd and TCP loopback round trips, cold start of
# Python workers. The peers themselves are built by bench/run.sh (they need the bench venv).
add_executable(bench_apps ${CMAKE_CURRENT_LIST_DIR}/apps/apps_bench.cpp)
target_link_libraries(bench_apps PRIVATE cppless::cppless)
if(TARGET cppless_warnings)
  target_link_libraries(bench_apps PRIVATE cppless_warnings)
endif()
