/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurm_compat.h - the few Slurm internals whose spelling differs between the
 * API generations nvlblock supports, behind one name each. Everything else
 * the shim uses is the same in 24.11, 25.05, 25.11 and 26.05.
 */
#ifndef NVLBLOCK_SLURM_COMPAT_H
#define NVLBLOCK_SLURM_COMPAT_H

#include <pthread.h>

#include "slurm/slurm.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
/* 26.05 starts threads through its thread pool: a name, and a join of its own
 * (a pooled thread may never exit, so pthread_join could wait forever). */
#include "src/common/threadpool.h"
#define NVLB_THREAD_CREATE(name, id_ptr, func, arg) slurm_thread_create(name, id_ptr, func, arg)
#define NVLB_THREAD_JOIN(id)                        slurm_thread_join(id)
#else
#include "src/common/macros.h"
#define NVLB_THREAD_CREATE(name, id_ptr, func, arg) slurm_thread_create(id_ptr, func, arg)
#define NVLB_THREAD_JOIN(id)                        pthread_join(id, NULL)
#endif

#endif
