# The fake libnvidia-ml the NVML tests load by path (nvml_test.cpp), so they run without a GPU or
# driver. Included after profilers_test is created (tests/profilers/CMakeLists.txt); built on every machine,
# CUDA toolkit or not, as NVML is a driver library.
add_library(fake_nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_nvml.cpp)
target_link_libraries(fake_nvml PRIVATE chipfit_options)
add_dependencies(profilers_test fake_nvml)
target_compile_definitions(profilers_test PRIVATE CHIPFIT_FAKE_NVML_PATH="$<TARGET_FILE:fake_nvml>")
# The tests dlopen the fake themselves to reach its controls.
target_link_libraries(profilers_test PRIVATE ${CMAKE_DL_LIBS})
