# ctest script: kilnc must reject TEMPLATE (under ROOT) with exit status 1 and print
# "TEMPLATE:<expected>" where <expected> is the template's first line,
# <%# expect: LINE:COL: error: MESSAGE %>, with "%%>" standing for "%>".
file(READ ${TEMPLATE} _src)
if(NOT _src MATCHES "^<%# expect: ([^\n]*) %>")
  message(FATAL_ERROR "${TEMPLATE}: first line must be <%# expect: LINE:COL: error: MESSAGE %>")
endif()
string(REPLACE "%%>" "%>" _expected "${CMAKE_MATCH_1}")
execute_process(COMMAND ${KILNC} --root ${ROOT} --out ${OUT} ${TEMPLATE}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
if(NOT _rc EQUAL 1)
  message(FATAL_ERROR "kilnc exited with ${_rc}, expected 1\nstderr: ${_err}")
endif()
if(NOT _err STREQUAL "${TEMPLATE}:${_expected}\n")
  message(FATAL_ERROR "kilnc said:\n  ${_err}expected:\n  ${TEMPLATE}:${_expected}")
endif()
message(STATUS "rejected as expected: ${_err}")
