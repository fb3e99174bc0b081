# The install_layout test (cmake -P): installs the build into a scratch prefix and checks that every
# file the installed binaries and the desktop need is there, so a resource missing from the package
# fails CTest rather than a user's first run. -DBUILD_DIR=... -DPREFIX=... -DWITH_GUI=ON|OFF
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE result OUTPUT_QUIET ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${result}): ${errors}")
endif()

# The data the code reads (DefaultCostTablePath, DefaultEnergyTablePath) and the sample models.
set(expected bin/chipfit share/chipfit/costs/default.yaml share/chipfit/energy/coefficients.json share/chipfit/hardware/t4.yaml
             share/chipfit/schema/profile.schema.json share/chipfit/models/cnn.onnx)
if(WITH_GUI)
  list(APPEND expected bin/chipfit-gui share/applications/chipfit.desktop
       share/icons/hicolor/scalable/apps/chipfit.svg share/mime/packages/chipfit-onnx.xml)
endif()
set(missing "")
foreach(path IN LISTS expected)
  if(NOT EXISTS "${PREFIX}/${path}")
    list(APPEND missing "${path}")
  endif()
endforeach()

if(WITH_GUI AND NOT missing)
  # The menu entry must start the installed binary, show the installed icon, and claim the MIME type
  # the installed XML defines.
  file(READ "${PREFIX}/share/applications/chipfit.desktop" desktop)
  file(READ "${PREFIX}/share/mime/packages/chipfit-onnx.xml" mime)
  string(REGEX MATCH "\nExec=([^ \n]+)" _ "${desktop}")
  if(NOT EXISTS "${PREFIX}/bin/${CMAKE_MATCH_1}")
    list(APPEND missing "bin/${CMAKE_MATCH_1} (the desktop entry's Exec)")
  endif()
  string(REGEX MATCH "\nIcon=([^\n]+)" _ "${desktop}")
  if(NOT EXISTS "${PREFIX}/share/icons/hicolor/scalable/apps/${CMAKE_MATCH_1}.svg")
    list(APPEND missing "icon '${CMAKE_MATCH_1}' (the desktop entry's Icon)")
  endif()
  string(REGEX MATCH "\nMimeType=([^;\n]+)" _ "${desktop}")
  if(NOT mime MATCHES "type=\"${CMAKE_MATCH_1}\"")
    list(APPEND missing "MIME type '${CMAKE_MATCH_1}' in chipfit-onnx.xml (the desktop entry's MimeType)")
  endif()
endif()
file(REMOVE_RECURSE "${PREFIX}")
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "install tree lacks:\n  ${text}")
endif()
message(STATUS "install tree complete: ${expected}")
