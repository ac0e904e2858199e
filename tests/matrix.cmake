# The experiment matrix (harness/matrix_load.c, harness/shapes.c): the unit test reads the committed matrix.yaml and the
# files of tests/data/matrix/ (a hand-counted matrix, model shapes, and one malformed file per kind of error, each
# checked for its file:line:column, key path and message) from the source tree. There is no `hsdr run` yet, so no
# CLI tests here.
if(TARGET test_matrix)
  target_compile_definitions(test_matrix PRIVATE HSDR_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endif()
