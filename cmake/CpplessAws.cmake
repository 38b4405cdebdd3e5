# aws_lambda_serverless_target(<target> [PREFIX <name>] [ROLE <arn>] [ARCHITECTURE x86_64|arm64])
#
# The paper's CMake entry point: links <target> with the AWS backend and adds
#   <target>_package  the Lambda function build of <target> (zig, glibc 2.34: it starts on
#                     provided.al2023; cmake/CpplessFunctionBuild.cmake), zipped by
#                     `cppless package` into <build>/lambda-packages
#   <target>_deploy   the same package deployed by `cppless deploy` (one Lambda function per
#                     offloaded function, created or updated, unchanged ones skipped)
# The host build of <target> is the program that calls them. Credentials, region and role come
# from the environment at build time (AWS_*, CPPLESS_LAMBDA_ROLE) unless ROLE is given.
#
#   add_executable(app main.cpp)
#   aws_lambda_serverless_target(app ARCHITECTURE arm64)
#   # cmake --build build --target app_deploy
include(${CMAKE_CURRENT_LIST_DIR}/CpplessFunctionBuild.cmake)

function(aws_lambda_serverless_target target)
  cmake_parse_arguments(ARG "" "PREFIX;ROLE;ARCHITECTURE" "" ${ARGN})
  target_link_libraries(${target} PRIVATE cppless::aws)
  if(CPPLESS_FUNCTION_BUILD)
    return()  # inside the function build itself
  endif()
  if(NOT ARG_ARCHITECTURE)
    set(ARG_ARCHITECTURE x86_64)
  endif()
  if(TARGET cppless_cli)
    set(cli $<TARGET_FILE:cppless_cli>)
    set(cli_dep cppless_cli)
  else()
    find_program(CPPLESS_CLI cppless REQUIRED)
    set(cli ${CPPLESS_CLI})
    set(cli_dep)
  endif()
  cppless_function_build(${target} ARCHITECTURE ${ARG_ARCHITECTURE} EXECUTABLE function_exe)
  set(prefix ${target})
  if(ARG_PREFIX)
    set(prefix ${ARG_PREFIX})
  endif()
  add_custom_target(${target}_package
    COMMAND ${cli} package ${function_exe} --architecture ${ARG_ARCHITECTURE} --out ${CMAKE_BINARY_DIR}/lambda-packages
    DEPENDS ${target}_lambda_${ARG_ARCHITECTURE} ${cli_dep}
    COMMENT "Packaging the Lambda functions of ${target} (${ARG_ARCHITECTURE})")
  set(args deploy ${function_exe} --architecture ${ARG_ARCHITECTURE} --prefix ${prefix})
  if(ARG_ROLE)
    list(APPEND args --role ${ARG_ROLE})
  endif()
  add_custom_target(${target}_deploy
    COMMAND ${cli} ${args}
    DEPENDS ${target} ${target}_lambda_${ARG_ARCHITECTURE} ${cli_dep}
    USES_TERMINAL
    COMMENT "Deploying the functions of ${target} to AWS Lambda (${ARG_ARCHITECTURE})")
endfunction()
