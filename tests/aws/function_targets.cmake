# Targets of the Lambda function build of this tree (CPPLESS_FUNCTION_BUILD): the app the
# package test ships, from the same source file as the host build's aws_app (same ids).
add_executable(aws_app ${CMAKE_CURRENT_LIST_DIR}/aws_app.cpp)
target_link_libraries(aws_app PRIVATE cppless::aws)
add_executable(aws_app_cmake ${CMAKE_CURRENT_LIST_DIR}/aws_app.cpp)
aws_lambda_serverless_target(aws_app_cmake PREFIX aws_app)
