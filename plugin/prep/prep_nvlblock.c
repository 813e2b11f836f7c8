/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prep_nvlblock.c - prep/nvlblock, the companion PrEp plugin of
 * topology/nvlblock. It exists for one moment topology plugins never see:
 * epilog_slurmctld runs when a job's nodes are released, with node_bitmap and
 * failed_node still set. For a batch job Slurm requeues (a node failure,
 * RequeueExit, scontrol requeue), that is the last time Slurm knows where it
 * ran (the requeue clears the node list), so its end goes to the shared
 * core as one event (nvlb_job_ended): the core records the allocation in its
 * ledger, saved under StateSaveLocation before the job can be scheduled
 * again, or watches it for a node drained by its Epilog.
 *
 * eval_nodes cannot do this: it is also called for will-run and test-only
 * evaluations, with nothing to tell them apart from a real start.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/hostlist.h"
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

/* The PrEp API and the job fields used here are the same from 24.11 to 26.11. */
#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 11, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(27, 5, 0))
#error "prep_nvlblock.c implements the PrEp API of Slurm 24.11, 25.05, 25.11, 26.05 and 26.11 (prep.h unchanged)"
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

/*
 * Whether PrEpPlugins names prep/script. Slurm runs Prolog=, Epilog=,
 * PrologSlurmctld= and EpilogSlurmctld= through that plugin only, and it is
 * loaded by default only while PrEpPlugins is unset: a slurm.conf that
 * says PrEpPlugins=prep/nvlblock alone silently stops every such script,
 * health checks in node Epilogs included (the drains that tell nvlblock of
 * GPU faults).
 */
static bool _prep_script_loaded(void)
{
	char *list = xstrdup(slurm_conf.prep_plugins), *save = NULL, *tok;
	bool found = !list; /* unset: Slurm loads prep/script */

	for (tok = strtok_r(list, ",", &save); tok && !found; tok = strtok_r(NULL, ",", &save)) {
		if (!xstrncmp(tok, "prep/", 5))
			tok += 5;
		found = !xstrcmp(tok, "script");
	}
	xfree(list);
	return found;
}

static void _warn_scripts_not_run(void)
{
	uint32_t scripts = slurm_conf.prolog_cnt + slurm_conf.epilog_cnt + slurm_conf.prolog_slurmctld_cnt +
			   slurm_conf.epilog_slurmctld_cnt;

	if (scripts && !_prep_script_loaded())
		error("prep/nvlblock: PrEpPlugins=%s does not include prep/script, so Slurm runs none of the %u "
		      "Prolog/Epilog/PrologSlurmctld/EpilogSlurmctld scripts configured (node health checks "
		      "included). Set PrEpPlugins=prep/script,prep/nvlblock",
		      slurm_conf.prep_plugins, scripts);
}

extern int init(void)
{
	if (_topology_yaml_shadows_nvlblock() != SLURM_SUCCESS)
		return SLURM_ERROR;
	_warn_scripts_not_run();
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
	/* The flag, not DRAINING/DRAINED: the node is still allocated here
	 * (DRAINING) and becomes IDLE+COMPLETING+DRAIN (DRAINED) after. */
	if (IS_NODE_DRAIN(node_ptr))
		signs |= NVLB_NODE_SIGN_DRAIN;
	if (job_ptr->failed_node && !xstrcmp(job_ptr->failed_node, node_ptr->name))
		signs |= NVLB_NODE_SIGN_NAMED_FAILED;
	return signs;
}

/*
 * Whether slurm.conf's RequeueExit (or RequeueExitHold) value lists the exit
 * status. Slurm reads the value as the numbers of a host range ("1-10,75");
 * it is read here with Slurm's own host range parser, the same way.
 */
static bool _exit_listed(const char *values, int status)
{
	hostset_t *hs;
	char *range = NULL, *tok, *end;
	bool listed = false;

	if (!values || !values[0])
		return false;
	xstrfmtcat(range, "[%s]", values);
	hs = hostset_create(range);
	xfree(range);
	if (!hs)
		return false;
	while (!listed && (tok = hostset_shift(hs))) {
		long v = strtol(tok, &end, 10);

		listed = (*end == '\0') && (v == status);
		free(tok);
	}
	hostset_destroy(hs);
	return listed;
}

/*
 * What Slurm says about the job whose nodes are being released (read in
 * job_mgr.c of 24.11 to 26.05, docs/placement.md rule 5): `scontrol
 * requeue` and Slurm's own requeues make it PENDING before this; a node
 * failure that requeues it leaves NODE_FAIL without COMPLETING; a status
 * RequeueExit lists requeues it once the last Epilog of its nodes ends
 * (job_hold_requeue), so only the exit status says so here. Preemption sets
 * preempt_time.
 */
static uint32_t _job_facts(job_record_t *job_ptr)
{
	uint32_t base = job_ptr->job_state & JOB_STATE_BASE, facts = 0;
	int status = WEXITSTATUS(job_ptr->exit_code);

	if (job_ptr->batch_flag)
		facts |= NVLB_END_BATCH;
	if (job_ptr->details && job_ptr->details->requeue)
		facts |= NVLB_END_REQUEUE_ALLOWED;
	if (base == JOB_PENDING)
		facts |= NVLB_END_PENDING;
	if (base == JOB_NODE_FAIL)
		facts |= NVLB_END_NODE_FAIL;
	if (base == JOB_CANCELLED)
		facts |= NVLB_END_CANCELLED;
	if (job_ptr->job_state & JOB_COMPLETING)
		facts |= NVLB_END_COMPLETING;
	if (job_ptr->preempt_time)
		facts |= NVLB_END_PREEMPTED;
	if ((facts & NVLB_END_REQUEUE_ALLOWED) && (base != JOB_PENDING)) {
		if (_exit_listed(slurm_conf.requeue_exit, status))
			facts |= NVLB_END_EXIT_REQUEUES;
		if (_exit_listed(slurm_conf.requeue_exit_hold, status))
			facts |= NVLB_END_EXIT_HOLDS;
	}
	return facts;
}

/*
 * When the run that ends began, or 0 when the record does not say: a run
 * starts before it ends, so a start_time later than end_time is the
 * scheduler's estimate for a requeued job (backfill writes it into pending
 * jobs). That is what a slurmctld restarted after a crash shows when it ends
 * the failed run again (a job restored PENDING and COMPLETING): counted as a
 * run's start, the failed run passed for a restart in place.
 */
static time_t _run_start(job_record_t *job_ptr)
{
	if (!job_ptr->start_time || (job_ptr->end_time && (job_ptr->start_time > job_ptr->end_time)))
		return 0;
	return job_ptr->start_time;
}

/* The job's end, as one event: Slurm's facts, for the core to decide. */
extern int prep_p_epilog_slurmctld(job_record_t *job_ptr, bool *async)
{
	nvlb_planner_t *planner = nvlb_process_planner();
	nvlb_job_end_t end = {0};
	nvlb_ended_node_t *ended;
	uint32_t *nodes;
	size_t count;

	*async = false;
	if (!planner || !job_ptr || !job_ptr->node_bitmap)
		return SLURM_SUCCESS;
	nodes = nvlbs_bitmap_indices(job_ptr->node_bitmap, &count);
	ended = xcalloc(count + 1, sizeof(*ended));
	for (size_t i = 0; i < count; i++) {
		node_record_t *node_ptr = node_record_table_ptr[nodes[i]];

		ended[i].node = nodes[i];
		ended[i].signs = _node_signs(job_ptr, node_ptr);
		ended[i].reason = node_ptr ? node_ptr->reason : NULL;
	}
	end.job_id = job_ptr->job_id;
	end.facts = _job_facts(job_ptr);
	end.ended_at = time(NULL);
	end.started_at = _run_start(job_ptr);
	end.nodes = ended;
	end.node_count = count;
	if (nvlb_job_ended(planner, &end, NULL) != NVLB_OK)
		error("nvlblock: %pJ: its end could not be recorded", job_ptr);
	/* The state file is written by slurmctld's status thread, which a
	 * change wakes, after Slurm's locks are released: never here. */
	nvlbs_flush_log(planner);
	xfree(ended);
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
