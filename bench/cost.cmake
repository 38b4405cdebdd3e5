# bench_cost: pi's cost and time against the number of functions at two memory sizes, from traces
# of a local run priced by `cppless report` (the Lambda price model).
find_package(nlohmann_json 3 REQUIRED)
add_executable(bench_cost ${CMAKE_CURRENT_LIST_DIR}/cost_bench.cpp)
target_include_directories(bench_cost PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(bench_cost PRIVATE cppless::cppless nlohmann_json::nlohmann_json cppless_warnings)
target_compile_definitions(bench_cost PRIVATE CPPLESS_CLI="$<TARGET_FILE:cppless_cli>")
add_dependencies(bench_cost cppless_cli)
