# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hardening for code that runs inside slurmctld: stack protector, fortified
# libc calls, read-only relocations. Not -z now: Slurm plugins rely on lazy
# binding for slurmctld-only symbols when slurmd loads them.
include(CheckCCompilerFlag)
add_compile_options(-fstack-protector-strong)
if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
  add_compile_definitions($<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>)
endif()
check_c_compiler_flag(-fstack-clash-protection NVLBLOCK_HAVE_STACK_CLASH)
if(NVLBLOCK_HAVE_STACK_CLASH)
  add_compile_options(-fstack-clash-protection)
endif()
add_link_options(-Wl,-z,relro -Wl,-z,noexecstack)
