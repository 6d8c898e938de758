# ctest script: installs the cpp component of the build, then builds and runs the example
# consumer with find_package(metakernelbench).
set(prefix "${MKB_BINARY_DIR}/example_consumer/prefix")
set(build "${MKB_BINARY_DIR}/example_consumer/build")
file(REMOVE_RECURSE "${prefix}")

macro(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endmacro()

run("${CMAKE_COMMAND}" --install "${MKB_BINARY_DIR}" --component cpp --prefix "${prefix}")
run("${CMAKE_COMMAND}" -S "${MKB_SOURCE_DIR}/examples/cpp/load_suite" -B "${build}" -G "${MKB_GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix}")
run("${CMAKE_COMMAND}" --build "${build}")
run("${build}/load_suite" "${MKB_SOURCE_DIR}/problems")
message(STATUS "${out}")
if(NOT out MATCHES "fused_add_rmsnorm_h4096_llama31_8b_bf16")
  message(FATAL_ERROR "the example did not list problem 28:\n${out}")
endif()
