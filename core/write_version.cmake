# Writes chipfit/version.h from version.h.in with the revision checked out now; run at every build (the
# chipfit_version target), so binaries name the commit they were built from, not the one CMake was
# configured at. The header is rewritten only when its text changes, so an unchanged revision rebuilds
# nothing. Expects SOURCE_DIR, INPUT, OUTPUT and PROJECT_VERSION.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE CHIPFIT_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT CHIPFIT_GIT_REVISION)
  set(CHIPFIT_GIT_REVISION "unknown")
endif()
configure_file(${INPUT} ${OUTPUT}.new @ONLY)
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
