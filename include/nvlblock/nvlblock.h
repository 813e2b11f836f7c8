/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock.h - the C ABI of the nvlblock core.
 *
 * This is the whole contract between the Slurm plugins (C, compiled against
 * Slurm's tree) and the C++ core: opaque handles, explicit status codes and
 * messages, plain integers and arrays. No exception and no C++ type crosses
 * it. Nodes are indices 0..node_count-1; when a planner is loaded with Slurm's
 * node names in Slurm's order, the indices are Slurm's node indices.
 *
 * Every function that takes a planner is safe to call from several threads:
 * the handle serialises calls internally.
 *
 * One header per face, each function documented where it is declared, and
 * one source file per face in src/capi; this header includes them all.
 */
#ifndef NVLBLOCK_NVLBLOCK_H
#define NVLBLOCK_NVLBLOCK_H

#include "nvlblock/base.h"
#include "nvlblock/config.h"
#include "nvlblock/placement.h"
#include "nvlblock/reasons.h"
#include "nvlblock/reclaim.h"
#include "nvlblock/recovery.h"
#include "nvlblock/reports.h"
#include "nvlblock/state.h"

#endif /* NVLBLOCK_NVLBLOCK_H */
