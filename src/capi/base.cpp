// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, base face (include/nvlblock/base.h): the names of status codes
// and the version of nvlblock a library is.
#include "nvlblock/base.h"

#ifndef NVLBLOCK_VERSION
#define NVLBLOCK_VERSION "0.0.0"
#endif

extern "C" {

const char* nvlb_status_name(nvlb_status_t s) {
    switch (s) {
    case NVLB_OK:
        return "ok";
    case NVLB_E_INVALID:
        return "invalid argument";
    case NVLB_E_CONFIG:
        return "configuration error";
    case NVLB_E_IO:
        return "I/O error";
    case NVLB_E_STATE:
        return "corrupt state";
    case NVLB_E_NOMEM:
        return "out of memory";
    case NVLB_E_INTERNAL:
        return "internal error";
    }
    return "unknown status";
}

const char* nvlb_version(void) {
    return NVLBLOCK_VERSION;
}

} // extern "C"
