# AWS backend: invocations/s and latency through the local Lambda server, against boto3.
if(TARGET cppless_aws AND TARGET lambda_server)
  add_executable(bench_aws ${CMAKE_CURRENT_LIST_DIR}/aws_bench.cpp)
  target_link_libraries(bench_aws PRIVATE cppless::aws cppless_warnings)
  add_dependencies(bench_aws lambda_server)
  target_compile_definitions(bench_aws PRIVATE LAMBDA_SERVER="$<TARGET_FILE:lambda_server>"
    BOTO3_BENCH="${CMAKE_CURRENT_LIST_DIR}/aws_boto3_bench.py"
    CPPLESS_VENV_PYTHON="${PROJECT_SOURCE_DIR}/build/venv/bin/python")
endif()
