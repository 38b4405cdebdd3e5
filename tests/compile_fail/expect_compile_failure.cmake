# cmake -DCOMPILER=.. -DSOURCE=.. -DINCLUDE=.. -DREGEX=.. -P expect_compile_failure.cmake
# The source must fail to compile (non-zero exit), and the FIRST error must be cppless' own
# message: a match further down could come from an unrelated cascade after some other error.
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only -I${INCLUDE} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must be rejected")
endif()
string(REGEX MATCH "[^\n]*error:[^\n]*" first_error "${out}${err}")
if(NOT first_error)
  message(FATAL_ERROR "${SOURCE} was rejected (exit ${rc}) without any 'error:' line:\n${out}${err}")
endif()
if(NOT first_error MATCHES "${REGEX}")
  message(FATAL_ERROR "the first error for ${SOURCE} is not the expected '${REGEX}':\n${first_error}\n\nfull output:\n${err}")
endif()
message(STATUS "rejected as expected: ${first_error}")
