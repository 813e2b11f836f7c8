# SPDX-License-Identifier: GPL-2.0-or-later
#
# cmake -DSCDOC=... -DGZIP=... -DIN=page.1.scd -DOUT=page.1 [-DEPOCH=secs] -P scdoc.cmake
# Renders one page with scdoc (which reads stdin) and writes OUT and OUT.gz.
if(EPOCH)
  set(ENV{SOURCE_DATE_EPOCH} "${EPOCH}")
endif()
execute_process(COMMAND "${SCDOC}" INPUT_FILE "${IN}" OUTPUT_FILE "${OUT}.tmp"
                ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}.tmp")
  message(FATAL_ERROR "scdoc failed on ${IN}: ${err}")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
# -n: no file name or time in the gzip header (reproducible).
execute_process(COMMAND "${GZIP}" -9nc "${OUT}" OUTPUT_FILE "${OUT}.gz.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip failed on ${OUT}")
endif()
file(RENAME "${OUT}.gz.tmp" "${OUT}.gz")
