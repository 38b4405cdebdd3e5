# Lease backend: hot and warm call latency against a raw TCP ping-pong, lease request to first
# result (executable cached or shipped), payload sweep. Starts its own resource manager and
# executor managers (the `cppless` tool) on loopback ports, with the tests' cluster fixture.
if(TARGET cppless_lease AND TARGET cppless_cli)
  add_executable(bench_lease ${CMAKE_CURRENT_LIST_DIR}/lease_bench.cpp ${PROJECT_SOURCE_DIR}/tests/lease/cluster_fixture.cpp)
  target_include_directories(bench_lease PRIVATE ${PROJECT_SOURCE_DIR}/tests/lease)
  target_link_libraries(bench_lease PRIVATE cppless::lease cppless_lease_common cppless_warnings)
  add_dependencies(bench_lease cppless_cli)
  target_compile_definitions(bench_lease PRIVATE CPPLESS_CLI="$<TARGET_FILE:cppless_cli>" CPPLESS_LEASE_TEST_SANITIZED=0)
endif()
