# cppless_function_build(<target> ARCHITECTURE <x86_64|arm64> [EXECUTABLE <var>] [ALL])
#
# The Lambda function build of <target>: the same sources, configured again in
# <build>/cppless-lambda-<arch> with `zig c++ -target <arch>-linux-gnu.2.34` (PyPI `ziglang`), so
# the executable needs at most glibc 2.34 and carries its own C++ runtime (libc++, linked
# statically): it starts on provided.al2023 for either architecture, built without Docker.
# Function ids agree with the host build (both map the source root away), so the host build
# calls what this one serves. In that build CPPLESS_FUNCTION_BUILD is ON: cppless builds only
# its runtime (no libcurl: a function cannot dispatch further Lambda calls, see docs/aws.md).
# Adds the target <target>_lambda_<arch>; <var> receives the executable's path.
#
# zig is CPPLESS_ZIG, else `zig` on the PATH, else the `ziglang` package of the build's venv
# (scripts/setup-python.sh) or of python3.
include_guard(GLOBAL)

function(cppless_find_zig out)
  if(CPPLESS_ZIG)
    set(${out} ${CPPLESS_ZIG} PARENT_SCOPE)
    return()
  endif()
  find_program(CPPLESS_ZIG_ON_PATH zig)
  if(CPPLESS_ZIG_ON_PATH)
    set(${out} ${CPPLESS_ZIG_ON_PATH} PARENT_SCOPE)
    return()
  endif()
  foreach(python ${CMAKE_BINARY_DIR}/venv/bin/python ${PROJECT_SOURCE_DIR}/build/venv/bin/python python3)
    execute_process(COMMAND ${python} -c "import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"
                    OUTPUT_VARIABLE zig OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND EXISTS "${zig}")
      set(${out} ${zig} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

function(cppless_function_build target)
  cmake_parse_arguments(ARG "ALL" "ARCHITECTURE;EXECUTABLE" "" ${ARGN})
  if(ARG_ARCHITECTURE STREQUAL "x86_64")
    set(triple x86_64-linux-gnu.2.34)
    set(processor x86_64)
  elseif(ARG_ARCHITECTURE STREQUAL "arm64")
    set(triple aarch64-linux-gnu.2.34)
    set(processor aarch64)
  else()
    message(FATAL_ERROR "cppless_function_build(${target}): ARCHITECTURE must be x86_64 or arm64")
  endif()
  set(dir ${CMAKE_BINARY_DIR}/cppless-lambda-${ARG_ARCHITECTURE})
  set(exe ${dir}/bin/${target})
  if(ARG_EXECUTABLE)
    set(${ARG_EXECUTABLE} ${exe} PARENT_SCOPE)
  endif()
  set(all)
  if(ARG_ALL)
    set(all ALL)
  endif()
  if(TARGET ${target}_lambda_${ARG_ARCHITECTURE})
    return()
  endif()

  cppless_find_zig(zig)
  if(NOT zig)
    add_custom_target(${target}_lambda_${ARG_ARCHITECTURE} ${all}
      COMMAND ${CMAKE_COMMAND} -E echo "cppless: the Lambda function build needs zig: pip install ziglang (scripts/setup-python.sh) or set CPPLESS_ZIG"
      COMMAND ${CMAKE_COMMAND} -E false)
    return()
  endif()
  # Compiler wrappers: CMake wants one program per tool.
  set(bin ${CMAKE_BINARY_DIR}/cppless-zig/${ARG_ARCHITECTURE})
  foreach(tool c++ cc ar ranlib)
    set(args ${tool})
    if(tool STREQUAL "c++" OR tool STREQUAL "cc")
      set(args "${tool} -target ${triple}")
    endif()
    file(CONFIGURE OUTPUT ${bin}/${tool}
         CONTENT "#!/bin/sh\n# cppless function build (${ARG_ARCHITECTURE}): zig for the Lambda OS\nexec \"${zig}\" ${args} \"$@\"\n")
    file(CHMOD ${bin}/${tool} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  endforeach()
  add_custom_target(${target}_lambda_${ARG_ARCHITECTURE} ${all}
    COMMAND ${CMAKE_COMMAND} -S ${CMAKE_SOURCE_DIR} -B ${dir} -G ${CMAKE_GENERATOR}
            -DCMAKE_BUILD_TYPE=Release -DCPPLESS_FUNCTION_BUILD=ON
            -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=${processor}
            -DCMAKE_CXX_COMPILER=${bin}/c++ -DCMAKE_C_COMPILER=${bin}/cc
            -DCMAKE_AR=${bin}/ar -DCMAKE_RANLIB=${bin}/ranlib
            -DCMAKE_RUNTIME_OUTPUT_DIRECTORY=${dir}/bin
            # the package carries no debug information; the linker keeps the cppless marker
            "-DCMAKE_EXE_LINKER_FLAGS=-s -Wl,--no-gc-sections"
    COMMAND ${CMAKE_COMMAND} --build ${dir} --target ${target}
    BYPRODUCTS ${exe}
    USES_TERMINAL
    COMMENT "Lambda function build of ${target} (${ARG_ARCHITECTURE}, zig, glibc 2.34)")
endfunction()
