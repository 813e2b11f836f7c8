# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installation layout and the Debian package (CPack DEB).
#
#   cmake --install BUILD --prefix PREFIX
#     PREFIX/<NVLBLOCK_SLURM_PLUGIN_INSTALL_DIR>  topology_nvlblock.so, prep_nvlblock.so and
#                                                 libnvlblock.so.1 (the plugins find it via
#                                                 RUNPATH $ORIGIN, so PluginDir is all a site sets)
#     PREFIX/bin                                  nvlblock-capacity and the other tools
#     PREFIX/share/man/man1, man5, man7           the man pages (when scdoc was found)
#     PREFIX/share/doc/nvlblock                   docs/*.md, README.md, CHANGELOG.md, COPYING
#                                                 and examples/ (topology.conf.examples)
#
#   cpack --config BUILD/CPackConfig.cmake -G DEB
#     nvlblock-slurm-<Slurm version>_<nvlblock version>-<release>_<arch>.deb, laid out as
#     above under NVLBLOCK_PACKAGE_PREFIX (default /usr). The package name carries the Slurm
#     release it was built for: plugin_version must equal the running Slurm's, so a package
#     serves exactly one Slurm micro release. All such packages provide, conflict with and
#     replace the virtual package "nvlblock-plugin", so installing the one for a new Slurm
#     release swaps out the old one.
#
# Included from the top-level CMakeLists.txt after every target exists.

# --- documentation and examples ---------------------------------------------------------
# Every docs/*.md (admin.md, users.md, config.md, ...), the README, the
# changelog and the licence.
file(GLOB _nvlb_docs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
foreach(_f README.md CHANGELOG.md COPYING)
  if(EXISTS "${PROJECT_SOURCE_DIR}/${_f}")
    list(APPEND _nvlb_docs "${PROJECT_SOURCE_DIR}/${_f}")
  endif()
endforeach()
install(FILES ${_nvlb_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT doc)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/topology.conf.examples/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT doc)

# --- what the Slurm build tree says about its own layout --------------------------------
# Slurm's build tree records its default PluginDir and slurm.conf path in
# src/common/global_defaults.c. Reported, never applied: installing into a
# Slurm prefix is the operator's explicit choice (--prefix).
set(SLURM_DEFAULT_PLUGIN_DIR "")
set(SLURM_DEFAULT_CONF "")
if(SLURM_BUILD_DIR AND EXISTS "${SLURM_BUILD_DIR}/src/common/global_defaults.c")
  file(STRINGS "${SLURM_BUILD_DIR}/src/common/global_defaults.c" _nvlb_defaults REGEX "default_")
  foreach(_line IN LISTS _nvlb_defaults)
    if(_line MATCHES "default_plugin_path = \"([^\"]*)\"")
      set(SLURM_DEFAULT_PLUGIN_DIR "${CMAKE_MATCH_1}")
    elseif(_line MATCHES "default_slurm_config_file = \"([^\"]*)\"")
      set(SLURM_DEFAULT_CONF "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endif()

if(NOT TARGET topology_nvlblock)
  message(STATUS "nvlblock: no Slurm plugins in this build; `cmake --install` installs the tools "
                 "and docs only, and no Debian package is configured")
  return()
endif()

if(SLURM_DEFAULT_PLUGIN_DIR)
  message(STATUS "nvlblock: this Slurm's default PluginDir is ${SLURM_DEFAULT_PLUGIN_DIR}; plugins install "
                 "into <prefix>/${NVLBLOCK_SLURM_PLUGIN_INSTALL_DIR}")
endif()

# --- the Debian package ------------------------------------------------------------------
# None for a development snapshot: its plugins would load into the release
# of the same number (plugin/CMakeLists.txt), and no Breaks range can keep a
# package of it apart from that release's packages. Build it for tests only.
if(SLURM_SNAPSHOT)
  message(STATUS "nvlblock: Slurm ${SLURM_RELEASE_STRING} is a development snapshot: no Debian package")
  return()
endif()
# 24.11.5 (minor zero-padded as Slurm writes it: 25.05.0, not 25.5.0).
string(REGEX MATCH "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$" _nvlb_v "${SLURM_VERSION}")
if(NOT _nvlb_v)
  message(FATAL_ERROR "nvlblock: unexpected SLURM_VERSION '${SLURM_VERSION}'")
endif()
# (plugin/CMakeLists.txt already pads it; pad here only what is not padded.)
string(LENGTH "${CMAKE_MATCH_2}" _nvlb_minor_len)
if(_nvlb_minor_len EQUAL 1)
  set(NVLBLOCK_SLURM_RELEASE "${CMAKE_MATCH_1}.0${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
else()
  set(NVLBLOCK_SLURM_RELEASE "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
endif()

set(NVLBLOCK_PACKAGE_NAME "nvlblock-slurm-${NVLBLOCK_SLURM_RELEASE}")
set(NVLBLOCK_PACKAGE_PREFIX "/usr" CACHE PATH
    "Install prefix inside the Debian package; the plugins go to <this>/NVLBLOCK_SLURM_PLUGIN_INSTALL_DIR")
set(NVLBLOCK_PACKAGE_RELEASE "1" CACHE STRING "Debian revision of the package")
set(NVLBLOCK_PACKAGE_MAINTAINER "nvlblock maintainers <maintainers@nvlblock.invalid>" CACHE STRING
    "Maintainer field of the package (set your site's)")
set(NVLBLOCK_DEB_SLURM_DEPENDS "" CACHE STRING
    "Extra Depends for the Slurm packages the plugins are built for, e.g. 'slurmctld (= 24.11.5-4+deb13u1)'; empty for a site-built Slurm")
# Slurm loads a plugin only into the exact release it was built for, so a
# Slurm package of any other release breaks this one: dpkg and apt refuse to
# install such a Slurm beside it (or this package beside such a Slurm)
# instead of letting slurmctld stop at its next start. Breaks, not Depends:
# a site-built Slurm has no package, and then nothing is asked. Debian's
# package names and SchedMD's (slurm-smd-*). docs/admin.md "Upgrading Slurm".
string(REGEX MATCH "^(.*)\\.([0-9]+)$" _nvlb_m "${NVLBLOCK_SLURM_RELEASE}")
math(EXPR _nvlb_next_micro "${CMAKE_MATCH_2} + 1")
set(NVLBLOCK_SLURM_NEXT_RELEASE "${CMAKE_MATCH_1}.${_nvlb_next_micro}")
set(_nvlb_breaks "")
foreach(_pkg slurmctld slurmd slurm-client slurm-smd-slurmctld slurm-smd-slurmd slurm-smd-client)
  list(APPEND _nvlb_breaks "${_pkg} (<< ${NVLBLOCK_SLURM_RELEASE}~)" "${_pkg} (>= ${NVLBLOCK_SLURM_NEXT_RELEASE}~)")
endforeach()
string(REPLACE ";" ", " _nvlb_breaks "${_nvlb_breaks}")
set(NVLBLOCK_DEB_SLURM_BREAKS "${_nvlb_breaks}")

# `cpack` and `make install` package what is built and do not build the whole
# tree first (test programs, benchmarks: nothing of it is installed). Build
# first (`cmake --build`, or the nvlblock_installed target for the installed
# parts alone, as `scripts/test --every-slurm` does); a missing file then stops
# the install with its name.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_PACKAGE_NAME "${NVLBLOCK_PACKAGE_NAME}")
set(CPACK_PACKAGE_VENDOR "nvlblock")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${NVLBLOCK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "NVLink-domain-aware Slurm topology plugin for Slurm ${NVLBLOCK_SLURM_RELEASE}")
set(CPACK_PACKAGING_INSTALL_PREFIX "${NVLBLOCK_PACKAGE_PREFIX}")
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_PACKAGE_FILE_NAME "nvlblock-${PROJECT_VERSION}")
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build/" "/build-[^/]*/" "/_cluster/" "__pycache__" "\\\\.pyc$")
# Binaries are stripped in the package; their debug information goes into a
# separate <package>-dbgsym .ddeb (install it to read a slurmctld core dump).
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)

set(CPACK_DEBIAN_PACKAGE_NAME "${NVLBLOCK_PACKAGE_NAME}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_PACKAGE_RELEASE "${NVLBLOCK_PACKAGE_RELEASE}")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PROJECT_HOMEPAGE_URL}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${NVLBLOCK_PACKAGE_MAINTAINER}")
# libc, libstdc++, libgcc and libyaml, as dpkg-shlibdeps finds them. libnvlblock
# is private to the plugin directory (found via $ORIGIN), not a system library.
# (dpkg-shlibdeps resolves the plugins' $ORIGIN inside the staging tree.)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${NVLBLOCK_DEB_SLURM_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_BREAKS "${NVLBLOCK_DEB_SLURM_BREAKS}")
set(CPACK_DEBIAN_PACKAGE_PROVIDES "nvlblock-plugin")
set(CPACK_DEBIAN_PACKAGE_CONFLICTS "nvlblock-plugin")
set(CPACK_DEBIAN_PACKAGE_REPLACES "nvlblock-plugin")
set(CPACK_DEBIAN_PACKAGE_ENHANCES "slurmctld, slurmd, slurm-client")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "NVLink-domain-aware Slurm topology plugin (Slurm ${NVLBLOCK_SLURM_RELEASE})
topology/nvlblock is a drop-in superset of Slurm's topology/block for
GB200/GB300 NVL72 racks: best-fit packing, --segment slices that never
cross an NVLink domain, per-rack spares held back for in-place recovery of
jobs hit by a node failure, lending of spares to preemptible work, and
block-fault handling. prep/nvlblock records where a failed job ran.
.
Built for Slurm ${NVLBLOCK_SLURM_RELEASE} exactly (plugin_version must match the
running Slurm): install the same package on every host that runs
slurmctld, slurmd or a Slurm client command. Includes the tools
nvlblock-capacity, nvlblock-check, nvlblock-status and nvlblock-sim where
built, and their man pages.")
# DEB-only files (copyright, changelog.Debian) go into the staging tree, not
# into what `cmake --install` writes.
# (string(TIMESTAMP) honours SOURCE_DATE_EPOCH, for reproducible packages.)
string(TIMESTAMP NVLBLOCK_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/changelog.in
               ${CMAKE_BINARY_DIR}/packaging/changelog.Debian @ONLY)
set(NVLBLOCK_DEB_EXTRA_DOC_DIR "share/doc/${NVLBLOCK_PACKAGE_NAME}")
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/cpack-pre-build.cmake.in
               ${CMAKE_BINARY_DIR}/packaging/cpack-pre-build.cmake @ONLY)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_BINARY_DIR}/packaging/cpack-pre-build.cmake)

include(CPack)
message(STATUS "nvlblock: `cpack -G DEB` builds ${NVLBLOCK_PACKAGE_NAME}_${PROJECT_VERSION}-${NVLBLOCK_PACKAGE_RELEASE} "
               "(plugins in ${NVLBLOCK_PACKAGE_PREFIX}/${NVLBLOCK_SLURM_PLUGIN_INSTALL_DIR})")
