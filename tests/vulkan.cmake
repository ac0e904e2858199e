# The Vulkan backend on whatever device the loader gives (mesa lavapipe in CI: correctness only; its times are not
# GPU performance numbers and the rows' context says so). Only when the build has Vulkan.
if(HSDR_VULKAN_ON)
  # every vector, every Vulkan variant (integers exact, production y bit for bit)
  cli_test(check_vulkan 0 "^[1-9][0-9]* passed, 0 failed$" -- $<TARGET_FILE:hsdr> check --backend vulkan ${VEC})
  # the integer dot product shader runs (lavapipe has shaderIntegerDotProduct): were it skipped as unavailable, the
  # check above would still pass without it
  cli_test(check_vulkan_int_dot 0 "^[1-9][0-9]* passed, 0 failed$"
    -- $<TARGET_FILE:hsdr> check --variant vulkan.q8_0_dot ${VEC}/matvec.json)
  # the fork's integer-dot path: its device-side q8_1 and y bit for bit against hsdr_matvec_q8_1 in its Vulkan order
  # (one subgroup below K = 1024, four from it: both reductions)
  cli_test(check_vulkan_mmvq 0 "^[1-9][0-9]* passed, 0 failed$"
    -- $<TARGET_FILE:hsdr> check --variant vulkan.mmvq ${VEC}/matvec.json)
  # the fork's fp32 dequantizing path likewise (vectors on both sides of K = 1024: one subgroup and four), and the
  # production row, which runs it up to K = 4096 and the integer-dot path above
  cli_test(check_vulkan_dmmv 0 "^[1-9][0-9]* passed, 0 failed$"
    -- $<TARGET_FILE:hsdr> check --variant vulkan.dmmv ${VEC}/matvec.json)
  cli_test(check_vulkan_production 0 "^[1-9][0-9]* passed, 0 failed$"
    -- $<TARGET_FILE:hsdr> check --variant vulkan.production ${VEC}/matvec.json)
  # the fused-fma probe: what it finds decides fma_f32, and the bit-exact check tells a fused fma from an unfused one
  add_test(NAME cli.vulkan_fma COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/vulkan_fma.sh $<TARGET_FILE:hsdr> ${VEC})
  set_tests_properties(cli.vulkan_fma PROPERTIES PASS_REGULAR_EXPRESSION "vulkan_fma: ok")
  # the timed path validates before it times, also with state sets shared by R > 1 rows and more rows than one
  # dispatch's workgroups hold together
  cli_test(run_vulkan 0 "cases in .*: [1-9][0-9]* ok, 0 failed validation, 0 errors"
    -- $<TARGET_FILE:hsdr> run ${RUN_SMALL} --out ${CMAKE_CURRENT_BINARY_DIR}/run-out/vulkan --quiet --stages none
    --set variants=backend:vulkan --set K=256,1024 --set N=100 --set R=1,8 --set threads=1 --set mode=hot
    --set extra=none)
  cli_test(vulkan_bad_device 1 "HSDR_VULKAN_DEVICE=nosuchgpu: no Vulkan device has that in its name"
    "none of the selected variants can run here"
    -- ${CMAKE_COMMAND} -E env HSDR_VULKAN_DEVICE=nosuchgpu $<TARGET_FILE:hsdr> check --backend vulkan
    ${VEC}/spec-examples.json)
  # vulkan.planar2 on a workgroup of the user's choice (HSDR_VULKAN_PLANAR2_SHAPE): checked in the order it gives; a
  # shape it cannot run names the variable and the rule
  cli_test(check_vulkan_planar2_shape 0 "^43 passed, 0 failed$"
    -- ${CMAKE_COMMAND} -E env HSDR_VULKAN_PLANAR2_SHAPE=64,3 $<TARGET_FILE:hsdr> check --variant vulkan.planar2
    ${VEC}/matvec.json)
  cli_test(vulkan_planar2_shape_bad 1 "HSDR_VULKAN_PLANAR2_SHAPE='64,0': expected LOCAL,RPW with LOCAL a multiple"
    "none of the selected variants can run here"
    -- ${CMAKE_COMMAND} -E env HSDR_VULKAN_PLANAR2_SHAPE=64,0 $<TARGET_FILE:hsdr> check --variant vulkan.planar2
    ${VEC}/matvec.json)
  # the token's barriers as an experiment (HSDR_VULKAN_TOKEN_BARRIERS): a token without any still runs and is timed;
  # a value it does not know is an error naming it
  cli_test(vulkan_token_barriers 0 "^vulkan\\.mmvq +[0-9.]+ +[0-9.]+"
    -- ${CMAKE_COMMAND} -E env HSDR_VULKAN_TOKEN_BARRIERS=none $<TARGET_FILE:hsdr> profile --model bonsai-4b
    --layers 1 --tokens 1 --variants vulkan.mmvq)
  cli_test(vulkan_token_barriers_bad 1 "HSDR_VULKAN_TOKEN_BARRIERS='bogus': expected all, encode or none"
    -- ${CMAKE_COMMAND} -E env HSDR_VULKAN_TOKEN_BARRIERS=bogus $<TARGET_FILE:hsdr> profile --model bonsai-4b
    --layers 1 --tokens 1 --variants vulkan.mmvq)
  # a device variant in the quality study runs on each token's activations (uploaded per run): vulkan.q8_0 must give
  # cpu.production's numbers exactly
  add_test(NAME cli.quality_device COMMAND $<TARGET_FILE:hsdr> quality --model bonsai-4b
    --layers 1 --seeds 1 --tokens 2 --vocab 1024 --variants cpu.production,vulkan.q8_0
    --json ${CMAKE_CURRENT_BINARY_DIR}/quality-device.json)
  add_test(NAME cli.quality_device_same COMMAND ${HSDR_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/quality_device.py
    ${CMAKE_CURRENT_BINARY_DIR}/quality-device.json)
  set_tests_properties(cli.quality_device_same PROPERTIES DEPENDS cli.quality_device
    PASS_REGULAR_EXPRESSION "quality_device: vulkan.q8_0 equals cpu.production")
  set_tests_properties(cli.check_vulkan cli.check_vulkan_int_dot cli.check_vulkan_mmvq cli.check_vulkan_dmmv
    cli.check_vulkan_production cli.vulkan_fma cli.run_vulkan
    cli.vulkan_bad_device cli.check_vulkan_planar2_shape cli.vulkan_planar2_shape_bad cli.vulkan_token_barriers
    cli.vulkan_token_barriers_bad cli.quality_device
    cli.quality_device_same PROPERTIES LABELS "cli;vulkan")
endif()
