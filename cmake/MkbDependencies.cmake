# Finds the system dependencies of libmkb. A missing one stops configuration with a message
# naming the Debian / Ubuntu package that provides it (scripts/setup.sh installs them all).

include_guard(GLOBAL)

# mkb_require(<found-var> <what> <debian-packages>)
function(mkb_require found what packages)
  if(NOT ${found})
    message(FATAL_ERROR
      "metakernelbench: ${what} was not found.\n"
      "  Install it with:  sudo apt-get install ${packages}\n"
      "  (or run scripts/setup.sh, which installs every dependency).")
  endif()
endfunction()

find_package(absl CONFIG QUIET)
mkb_require(absl_FOUND "Abseil (absl)" "libabsl-dev")

find_package(Protobuf QUIET)
if(Protobuf_FOUND AND NOT Protobuf_PROTOC_EXECUTABLE)
  set(Protobuf_FOUND FALSE)
endif()
mkb_require(Protobuf_FOUND "Protocol Buffers (libprotobuf and protoc)" "libprotobuf-dev protobuf-compiler")

find_package(SQLite3 QUIET)
mkb_require(SQLite3_FOUND "SQLite 3" "libsqlite3-dev")

find_package(CURL QUIET)
mkb_require(CURL_FOUND "libcurl" "libcurl4-openssl-dev")

find_package(nlohmann_json 3 CONFIG QUIET)
mkb_require(nlohmann_json_FOUND "nlohmann/json" "nlohmann-json3-dev")

find_path(MKB_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(MKB_DLPACK_INCLUDE_DIR)
  set(MKB_DLPACK_FOUND TRUE)
endif()
mkb_require(MKB_DLPACK_FOUND "DLPack headers" "libdlpack-dev")
if(NOT TARGET mkb_dlpack)
  add_library(mkb_dlpack INTERFACE)
  target_include_directories(mkb_dlpack INTERFACE "$<BUILD_INTERFACE:${MKB_DLPACK_INCLUDE_DIR}>")
endif()

find_package(Threads REQUIRED)

# CUDA Toolkit with CUPTI: the judge's device-side comparison and the CUPTI tracer.
# MKB_WITH_CUDA=AUTO builds them when a toolkit is found; ON requires one. NVML (clocks and
# throttle reasons) is loaded at run time from the driver, so it needs no toolkit part.
set(MKB_WITH_CUDA "AUTO" CACHE STRING "Build the CUDA parts of the judge: AUTO, ON or OFF")
set_property(CACHE MKB_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(MKB_HAVE_CUDA OFF)
if(NOT MKB_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit QUIET)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cupti)
    set(MKB_HAVE_CUDA ON)
  elseif(MKB_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR
      "metakernelbench: MKB_WITH_CUDA=ON but the CUDA Toolkit (nvcc and CUPTI) was not found.\n"
      "  Install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads) and put nvcc on PATH,\n"
      "  or configure with -DMKB_WITH_CUDA=OFF for a CPU-only judge.")
  else()
    message(WARNING
      "metakernelbench: no CUDA Toolkit with CUPTI found; building the CPU-only judge. "
      "Install the CUDA Toolkit for GPU evaluation.")
  endif()
endif()
