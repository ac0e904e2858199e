# The CLI's conventions (issue 20): every command parsed by getopt_long, --help on stdout with exit 0, one usage text
# (harness/cli.c) behind --help, the README's command table and the man page.
set(HSDR $<TARGET_FILE:hsdr>)
add_test(NAME cli.help_all COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_help.sh ${HSDR})
add_test(NAME cli.readme_synopses COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_readme.sh ${HSDR}
  ${PROJECT_SOURCE_DIR}/README.md)
add_test(NAME cli.man_page COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_man.sh ${HSDR} ${PROJECT_BINARY_DIR}/man/hsdr.1)
set_tests_properties(cli.help_all cli.readme_synopses cli.man_page PROPERTIES LABELS cli)
set_tests_properties(cli.man_page PROPERTIES SKIP_RETURN_CODE 77)
cli_test(help_run 0 "^usage: hsdr run \\[MATRIX\\]" "--resume" -- ${HSDR} help run)
cli_test(help_overview 0 "^Usage: hsdr COMMAND" "^  states " -- ${HSDR} help)
cli_test(help_dashdash 0 "^Usage: hsdr COMMAND" "^  encode " -- ${HSDR} --help)
cli_test(help_unknown 2 "hsdr help: unknown command 'nosuch'" -- ${HSDR} help nosuch)
cli_test(version 0 "^hsdr [0-9]+\\.[0-9]+\\.[0-9]+" -- ${HSDR} --version)
cli_test(no_command 2 "^Usage: hsdr COMMAND" -- ${HSDR})
cli_test(unknown_global_option 2 "hsdr: unknown option '--bogus'" -- ${HSDR} --bogus)
# unknown options: exit 2, the option named, the usage line on stderr
cli_test(run_bogus 2 "hsdr run: unknown option '--bogus'" "^usage: hsdr run \\[MATRIX\\]" -- ${HSDR} run --bogus)
cli_test(check_bogus_short 2 "hsdr check: unknown option '-x'" "^usage: hsdr check" -- ${HSDR} check -x vectors)
cli_test(list_value 2 "hsdr list: --json takes no value" -- ${HSDR} list --json=1)
cli_test(run_missing_value 2 "hsdr run: --out needs a value" -- ${HSDR} run --out)
cli_test(states_operand 2 "hsdr states: unexpected argument 'extra'" -- ${HSDR} states extra)
# options after operands (getopt_long permutes), --opt=value, and encode's negative operands
cli_test(check_option_after_path 0 "^7 passed, 0 failed$"
  -- ${HSDR} check ${CMAKE_CURRENT_SOURCE_DIR}/data/other-conforming.json --backend=reference)
cli_test(encode_negative 0 "^prescale_e -2$" "^-3 +0xe7" -- ${HSDR} encode --prescale -2 -3)
cli_test(encode_negative_first 0 "^prescale_e 0$" "^-0\\.5 " "^-inf +0xff" -- ${HSDR} encode -0.5 -inf)
cli_test(encode_dashdash 0 "^-3 +0xd7" -- ${HSDR} encode -- -3)
cli_test(encode_not_number 2 "argument 1 '-x' is not a number" -- ${HSDR} encode -- -x)
