/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prep_nvlblock.c - prep/nvlblock, the companion PrEp plugin of
 * topology/nvlblock. It exists for one moment topology plugins never see:
 * epilog_slurmctld runs when a job's nodes are released, with node_bitmap and
 * failed_node still set. For a batch job requeued because a node failed,
 * that is the last time Slurm knows where it ran (the requeue clears the node
 * list), so the allocation is recorded in the shared core's ledger then, and
 * saved under StateSaveLocation before the job can be scheduled again.
 *
 * eval_nodes cannot do this: it is also called for will-run and test-only
 * evaluations, with nothing to tell them apart from a real start.
 */
#include <sys/stat.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/prep.h"
#include "src/slurmctld/slurmctld.h"

#include "../common/slurm_bridge.h"
#include "nvlblock/nvlblock.h"

/* The PrEp API and the job fields used here are the same from 24.11 to 26.05. */
#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 11, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 11, 0))
#error "prep_nvlblock.c implements the PrEp API of Slurm 24.11, 25.05, 25.11 and 26.05"
#endif

const char plugin_name[] = "PrEp plugin nvlblock";
const char plugin_type[] = "prep/nvlblock";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * From Slurm 25.05 on, a topology.yaml beside slurm.conf replaces
 * TopologyPlugin= and topology.conf, and it can name only Slurm's own
 * plugins: with one there, topology/nvlblock is never loaded and jobs would
 * be placed, and failures handled, without it, silently. slurmctld loads this
 * plugin, so it refuses to start here and says why (slurmctld then stops with
 * "failed to initialize prep plugin").
 */
static int _topology_yaml_shadows_nvlblock(void)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
	struct stat st;
	char *path;
	int rc = SLURM_SUCCESS;

	if (!running_in_slurmctld() || xstrcasecmp(slurm_conf.topology_plugin, "topology/nvlblock"))
		return SLURM_SUCCESS;
	path = get_extra_conf_path("topology.yaml");
	if (path && !stat(path, &st)) {
		error("prep/nvlblock: %s exists: Slurm reads it instead of TopologyPlugin=topology/nvlblock and "
		      "topology.conf, so nvlblock would not run. Convert its block topology with "
		      "`nvlblock-check --from-topology-yaml %s`, move the file away and start slurmctld again",
		      path, path);
		rc = SLURM_ERROR;
	}
	xfree(path);
	return rc;
#else
	return SLURM_SUCCESS; /* 24.11 does not read topology.yaml */
#endif
}

extern int init(void)
{
	if (_topology_yaml_shadows_nvlblock() != SLURM_SUCCESS)
		return SLURM_ERROR;
	debug("%s loaded", plugin_name);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	return SLURM_SUCCESS;
}

extern void prep_p_register_callbacks(prep_callbacks_t *callbacks)
{
	(void) callbacks; /* nothing runs asynchronously */
}

extern int prep_p_prolog(job_env_t *job_env, slurm_cred_t *cred)
{
	(void) job_env;
	(void) cred;
	return SLURM_SUCCESS;
}

extern int prep_p_epilog(job_env_t *job_env, slurm_cred_t *cred)
{
	(void) job_env;
	(void) cred;
	return SLURM_SUCCESS;
}

extern int prep_p_prolog_slurmctld(job_record_t *job_ptr, bool *async)
{
	(void) job_ptr;
	*async = false;
	return SLURM_SUCCESS;
}

/* What Slurm says about a node of the job; the core decides what counts. */
static uint32_t _node_signs(job_record_t *job_ptr, node_record_t *node_ptr)
{
	uint32_t signs = 0;

	if (!node_ptr)
		return NVLB_NODE_SIGN_MISSING;
	if (IS_NODE_DOWN(node_ptr))
		signs |= NVLB_NODE_SIGN_DOWN;
	if (IS_NODE_NO_RESPOND(node_ptr))
		signs |= NVLB_NODE_SIGN_NOT_RESPONDING;
	if (IS_NODE_FAIL(node_ptr))
		signs |= NVLB_NODE_SIGN_FAILING;
	if (job_ptr->failed_node && !xstrcmp(job_ptr->failed_node, node_ptr->name))
		signs |= NVLB_NODE_SIGN_NAMED_FAILED;
	return signs;
}

/* What Slurm says about the job whose nodes are being released: Slurm
 * requeues a batch job that may be requeued when a node fails under it, and
 * its state is then NODE_FAIL (job_mgr.c, kill_running_job_by_node_name()). */
static uint32_t _job_signs(job_record_t *job_ptr)
{
	uint32_t signs = 0;

	if (job_ptr->batch_flag)
		signs |= NVLB_JOB_SIGN_BATCH;
	if (job_ptr->details && job_ptr->details->requeue)
		signs |= NVLB_JOB_SIGN_REQUEUE_ALLOWED;
	if ((job_ptr->job_state & JOB_STATE_BASE) == JOB_NODE_FAIL)
		signs |= NVLB_JOB_SIGN_NODE_FAIL;
	return signs;
}

extern int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async)
{
	nvlb_planner_t *planner = nvlb_process_planner();
	uint32_t *nodes, *failed;
	size_t count, nfailed = 0;
	bool changed = false, requeued, recovering;
	time_t now = time(NULL);

	*async = false;
	if (!planner || !job_ptr || !job_ptr->node_bitmap)
		return SLURM_SUCCESS;
	requeued = nvlb_requeued_after_node_failure(_job_signs(job_ptr));
	recovering = nvlb_is_recovering(planner, job_ptr->job_id);
	if (!requeued && !recovering)
		return SLURM_SUCCESS;

	nodes = nvlbs_bitmap_indices(job_ptr->node_bitmap, &count);
	/*
	 * A job restarting after an earlier failure ran on these nodes. The
	 * status thread closes such records every few seconds; a job that
	 * ends or fails again sooner must have its restart counted here, or
	 * the new failure would overwrite the record (and the restart would
	 * never be counted) or the end would count as abandoned.
	 */
	if (recovering) {
		nvlb_job_started(planner, job_ptr->job_id, nodes, count,
				 job_ptr->start_time ? job_ptr->start_time : now);
		changed = true;
	}
	if (requeued) {
		failed = xcalloc(count + 1, sizeof(uint32_t));
		for (size_t i = 0; i < count; i++)
			if (nvlb_node_counts_as_failed(_node_signs(job_ptr, node_record_table_ptr[nodes[i]])))
				failed[nfailed++] = nodes[i];
		if (nfailed) {
			nvlb_job_failed(planner, job_ptr->job_id, nodes, count, failed, nfailed, now);
			changed = true;
		}
		xfree(failed);
	}
	/* The state file is written by slurmctld's status thread, which the
	 * change wakes, after Slurm's locks are released: never here. */
	if (changed)
		nvlbs_flush_log(planner);
	xfree(nodes);
	return SLURM_SUCCESS;
}

extern void prep_p_required(prep_call_type_t type, bool *required)
{
	/* epilog_slurmctld is always called; asking for the prolog would put
	 * every job through CONFIGURING for nothing. */
	(void) type;
	*required = false;
}
