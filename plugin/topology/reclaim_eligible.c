/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reclaim_eligible.c - before anyone is preempted or requeued for a job
 * waiting to restart in place, Slurm's own answer on whether that job could
 * use the nodes the reclaim frees (issue 36: other users' work must not be
 * moved for a restart that cannot happen there). nvlblock decides where;
 * whether this job may run on those nodes is Slurm's, read through the
 * functions its scheduler uses (every supported release has them with these
 * signatures: node_scheduler.h valid_feature_counts, reservation.h
 * job_test_resv): a partition of the job holds them and is up, the job does
 * not exclude them, its constraints and its reservation (or the
 * reservations it may not use) allow them. Called with the job, node and
 * partition locks held (reclaim.c).
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/slurmctld/slurmctld.h"
/* After slurmctld.h, whose types they use. */
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"

#include "topology_nvlblock.h"

static bool _partition_holds(part_record_t *part_ptr, bitstr_t *nodes)
{
	return part_ptr && (part_ptr->state_up & PARTITION_SCHED) && part_ptr->node_bitmap &&
	       bit_super_set(nodes, part_ptr->node_bitmap);
}

static int _find_holding_partition(void *x, void *key)
{
	return _partition_holds(x, key) ? 1 : 0;
}

/* Whether Slurm's feature matching keeps every one of `nodes`. */
static bool _features_allow(job_record_t *job_ptr, bitstr_t *nodes)
{
	bitstr_t *kept = bit_copy(nodes);
	bool has_mor = false, all;

	all = (valid_feature_counts(job_ptr, true, kept, &has_mor) == SLURM_SUCCESS) &&
	      (bit_set_count(kept) == bit_set_count(nodes));
	FREE_NULL_BITMAP(kept);
	return all;
}

/* Whether the reservations let the job start on every one of `nodes` now. */
static bool _reservations_allow(job_record_t *job_ptr, bitstr_t *nodes, time_t now)
{
	time_t when = now;
	bitstr_t *usable = NULL;
	resv_exc_t exc = {0};
	bool overlap = false, all;

	all = (job_test_resv(job_ptr, &when, false, &usable, &exc, &overlap, false) == SLURM_SUCCESS) &&
	      (when <= now) && usable && bit_super_set(nodes, usable);
	FREE_NULL_BITMAP(usable);
	reservation_delete_resv_exc_parts(&exc);
	return all;
}

extern uint8_t nvlbt_slurm_refuses(job_record_t *job_ptr, bitstr_t *nodes, time_t now)
{
	job_details_t *details = job_ptr->details;
	bool in_partition = job_ptr->part_ptr_list
				    ? (list_find_first(job_ptr->part_ptr_list, _find_holding_partition, nodes) != NULL)
				    : _partition_holds(job_ptr->part_ptr, nodes);

	if (!details)
		return NVLB_SLURM_NO_DETAILS;
	if (!in_partition)
		return NVLB_SLURM_NOT_IN_PARTITION;
	if (details->exc_node_bitmap && bit_overlap_any(nodes, details->exc_node_bitmap))
		return NVLB_SLURM_EXCLUDED;
	if (!_features_allow(job_ptr, nodes))
		return NVLB_SLURM_CONSTRAINTS;
	if (!_reservations_allow(job_ptr, nodes, now))
		return NVLB_SLURM_RESERVATION;
	return NVLB_SLURM_WOULD_START;
}
