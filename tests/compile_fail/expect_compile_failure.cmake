# cmake -DCOMPILER=.. -DSOURCE=.. -DINCLUDE=.. -DREGEX=.. -P expect_compile_failure.cmake
execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only -I${INCLUDE} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must be rejected")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "${SOURCE} failed to compile without the expected message '${REGEX}':\n${err}")
endif()
message(STATUS "rejected as expected: ${REGEX}")
