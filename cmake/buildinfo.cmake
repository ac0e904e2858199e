# Run at every build (target hsdr_buildinfo): writes OUT with the source tree's current commit, and only when it
# changed, so results record the commit the binary was built from even without a re-configure.
execute_process(COMMAND git -C ${SRC} rev-parse --short=12 HEAD OUTPUT_VARIABLE commit
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit unknown)
endif()
set(text "/* generated at build time by cmake/buildinfo.cmake */\n#define HSDR_BUILD_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
