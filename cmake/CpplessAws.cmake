# aws_lambda_serverless_target(<target> [PREFIX <name>] [ROLE <arn>])
#
# The paper's CMake entry point: links <target> with the AWS backend and adds a target
# <target>_deploy that builds it and runs `cppless deploy` on it (one Lambda function per
# offloaded function, created or updated, unchanged ones skipped). Credentials, region and role
# come from the environment at build time (AWS_*, CPPLESS_LAMBDA_ROLE) unless ROLE is given.
#
#   add_executable(app main.cpp)
#   aws_lambda_serverless_target(app)
#   # cmake --build build --target app_deploy
function(aws_lambda_serverless_target target)
  cmake_parse_arguments(ARG "" "PREFIX;ROLE" "" ${ARGN})
  target_link_libraries(${target} PRIVATE cppless::aws)
  if(TARGET cppless_cli)
    set(cli $<TARGET_FILE:cppless_cli>)
    set(cli_dep cppless_cli)
  else()
    find_program(CPPLESS_CLI cppless REQUIRED)
    set(cli ${CPPLESS_CLI})
    set(cli_dep)
  endif()
  set(args deploy $<TARGET_FILE:${target}>)
  if(ARG_PREFIX)
    list(APPEND args --prefix ${ARG_PREFIX})
  endif()
  if(ARG_ROLE)
    list(APPEND args --role ${ARG_ROLE})
  endif()
  add_custom_target(${target}_deploy
    COMMAND ${cli} ${args}
    DEPENDS ${target} ${cli_dep}
    USES_TERMINAL
    COMMENT "Deploying the functions of ${target} to AWS Lambda")
endfunction()
