# Compile options shared by every project target: warnings (errors with CHIPFIT_WERROR), optional sanitizers.
add_library(chipfit_options INTERFACE)
# Host compiler flags apply to C and C++ only; nvcc gets its own (devices/cuda/CMakeLists.txt).
target_compile_options(chipfit_options INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:-Wall$<SEMICOLON>-Wextra>)
if(CHIPFIT_WERROR)
  target_compile_options(chipfit_options INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
endif()
# Project headers are included from the repository root ("core/status.h", "devices/device.h").
target_include_directories(chipfit_options INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
if(CHIPFIT_SANITIZE)
  target_compile_options(chipfit_options INTERFACE
                         $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined$<SEMICOLON>-fno-omit-frame-pointer$<SEMICOLON>-fno-sanitize-recover=undefined>)
  target_link_options(chipfit_options INTERFACE -fsanitize=address,undefined)
endif()

# chipfit_add_test(NAME [NO_MAIN] [RESOURCE_LOCK R] SOURCES... LIBS ...): one GoogleTest executable, its tests listed by
# CTest. NO_MAIN: the sources bring their own main (widget tests create a QApplication first).
# RESOURCE_LOCK: its tests never run beside another test holding the same lock.
include(GoogleTest)
function(chipfit_add_test name)
  cmake_parse_arguments(ARG "NO_MAIN" "RESOURCE_LOCK" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE chipfit_options GTest::gtest ${ARG_LIBS})
  if(NOT ARG_NO_MAIN)
    target_link_libraries(${name} PRIVATE GTest::gtest_main)
  endif()
  target_compile_definitions(${name} PRIVATE CHIPFIT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             CHIPFIT_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(lock)
  if(ARG_RESOURCE_LOCK)
    set(lock RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES ENVIRONMENT "QT_QPA_PLATFORM=offscreen" LABELS ${name} ${lock})
endfunction()
