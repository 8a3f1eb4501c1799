# Browser tests (tests/browser): Debian's chromium driven by playwright-core. run.sh
# installs the pinned node packages on first use and fails, saying what is missing,
# without chromium, node or npm. Serial: chromium takes both cores of a small machine,
# and would starve the timing checks of tests running beside it.
if(TARGET blog)
  add_test(NAME browser_blog
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run.sh blog $<TARGET_FILE:blog> ${CMAKE_BINARY_DIR}/browser)
  set_tests_properties(browser_blog PROPERTIES TIMEOUT 300 LABELS browser RUN_SERIAL TRUE)
endif()
if(TARGET chat)
  add_test(NAME browser_chat
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run.sh chat $<TARGET_FILE:chat> ${CMAKE_BINARY_DIR}/browser)
  set_tests_properties(browser_chat PROPERTIES TIMEOUT 240 LABELS browser RUN_SERIAL TRUE)
endif()
