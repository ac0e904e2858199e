# Run at every build (target hsdr_buildinfo): writes OUT with the source tree's current commit and whether its
# source files had uncommitted changes, and only when that changed, so results record the commit the binary was
# built from (and that it was built from a dirty tree) even without a re-configure.
execute_process(COMMAND git -C ${SRC} rev-parse --short=12 HEAD OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
# dirty: uncommitted changes to source files at build time (a result of such a binary is not reproducible from
# the commit alone); -1 when git cannot tell
execute_process(COMMAND git -C ${SRC} status --porcelain -- "*.c" "*.h" "*.cc" "*.cmake" "*CMakeLists.txt"
                RESULT_VARIABLE status_rc OUTPUT_VARIABLE changes ERROR_QUIET)
if(NOT commit)
  set(commit unknown)
endif()
if(NOT status_rc EQUAL 0 OR commit STREQUAL "unknown")
  set(dirty -1)
elseif(changes)
  set(dirty 1)
else()
  set(dirty 0)
endif()
set(text "/* generated at build time by cmake/buildinfo.cmake */\n#define HSDR_BUILD_COMMIT \"${commit}\"\n#define HSDR_BUILD_DIRTY ${dirty}\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
