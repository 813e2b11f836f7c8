/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops_26_11.c - the topology plugin API of Slurm 26.11 (a development
 * snapshot, 26.11.0-0rc1, until SchedMD releases it): the same 26 entries as
 * 26.05's ops table, with the same names, order and signatures, so a 26.11
 * build compiles ops_25_05.c, ops_25_11.c and ops_26_05.c and this file adds
 * no symbol. What changed under the plugin, read in upstream's history:
 * - each topology plugin is loaded once per type for several topologies
 *   (437fa2397f, a4215a5f09): nvlblock keeps its state in the context Slurm
 *   passes and reads neither index that changed (ops_25_05.c);
 * - job_record_t changed layout (alloc_partition, runtime): the plugin is
 *   rebuilt, no source changes;
 * - the preemptor treats a candidate that is neither running nor suspended
 *   as exempt (f5b4a5aa74): reclaim.c only ever moves running jobs.
 * This file keeps the generation's guard and this record: a build for 26.11
 * compiles it, a build for any other release stops here.
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"

#include "topology_nvlblock.h"

#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(26, 11, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(27, 5, 0))
#error "ops_26_11.c is the Slurm 26.11 API; configure against a Slurm 26.11 tree"
#endif
