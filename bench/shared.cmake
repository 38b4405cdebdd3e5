# Shared objects against a private redis-server: per-operation latency against a raw PING,
# barrier time by party count, counter throughput by number of concurrent clients.
if(TARGET cppless::shared)
  add_executable(bench_shared ${CMAKE_CURRENT_LIST_DIR}/shared_bench.cpp)
  find_package(PkgConfig QUIET)
  pkg_check_modules(HIREDIS_BENCH REQUIRED IMPORTED_TARGET hiredis)
  target_link_libraries(bench_shared PRIVATE cppless::shared cppless_shared_testing PkgConfig::HIREDIS_BENCH cppless_warnings)
endif()

# Write throughput on one server and on local Redis Clusters of 1 and 3 masters, in one run.
if(TARGET cppless::shared)
  add_executable(bench_shared_cluster ${CMAKE_CURRENT_LIST_DIR}/shared_cluster_bench.cpp)
  target_link_libraries(bench_shared_cluster PRIVATE cppless::shared cppless_shared_testing cppless_warnings)
endif()

# Crucial's applications with shared model state: serial, std::thread, cppless (examples/ml).
if(TARGET cppless::shared)
  add_executable(bench_shared_ml ${CMAKE_CURRENT_LIST_DIR}/shared_ml_bench.cpp)
  target_link_libraries(bench_shared_ml PRIVATE cppless::shared cppless_shared_testing cppless_warnings)
endif()
