/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * packed_info.c - what topology/nvlblock sends to clients and keeps in job
 * state: the `scontrol show topology` data (packed by slurmctld, printed by
 * every client the same way) and a job's segment node lists (Slurm 25.11+'s
 * job topology info). Packing, unpacking, printing and freeing only: these
 * functions use nothing but Slurm's pack, list, hostlist and string helpers,
 * so the unpacking of outside bytes can be fuzzed on its own
 * (test/fuzz/fuzz_packed.c). Both layouts are nvlblock's own and versioned.
 */
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "topology_nvlblock.h"

/* Layout of the topology info: a format number, then blocks (name, nodes,
 * line), groups (name, line), the summary line and the recovery lines. */
#define TOPOINFO_FORMAT 2
/* A packed string takes at least its 4-byte length: a count is believed only
 * if the bytes left could hold that many strings, so a corrupt count cannot
 * make a client allocate without limit. */
#define PACKED_STR_MIN 4

static bool _count_fits(uint32_t count, uint32_t strings_each, buf_t *buffer)
{
	return (uint64_t) count * strings_each * PACKED_STR_MIN <= remaining_buf(buffer);
}

extern void nvlbt_topoinfo_free(nvlbt_topoinfo_t *info)
{
	if (!info)
		return;
	for (uint32_t i = 0; i < info->record_count; i++) {
		xfree(info->names[i]);
		xfree(info->nodes[i]);
		xfree(info->lines[i]);
	}
	for (uint32_t i = 0; i < info->group_count; i++) {
		xfree(info->group_names[i]);
		xfree(info->group_lines[i]);
	}
	xfree(info->names);
	xfree(info->nodes);
	xfree(info->lines);
	xfree(info->group_names);
	xfree(info->group_lines);
	xfree(info->summary);
	xfree(info->recoveries);
	xfree(info);
}

extern int nvlbt_topoinfo_pack(nvlbt_topoinfo_t *info, buf_t *buffer, uint16_t protocol_version)
{
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		return SLURM_ERROR;
	pack16(TOPOINFO_FORMAT, buffer);
	pack32(info->record_count, buffer);
	for (uint32_t i = 0; i < info->record_count; i++) {
		packstr(info->names[i], buffer);
		packstr(info->nodes[i], buffer);
		packstr(info->lines[i], buffer);
	}
	pack32(info->group_count, buffer);
	for (uint32_t i = 0; i < info->group_count; i++) {
		packstr(info->group_names[i], buffer);
		packstr(info->group_lines[i], buffer);
	}
	packstr(info->summary, buffer);
	packstr(info->recoveries, buffer);
	return SLURM_SUCCESS;
}

extern int nvlbt_topoinfo_unpack(nvlbt_topoinfo_t **out, buf_t *buffer, uint16_t protocol_version)
{
	nvlbt_topoinfo_t *info;
	uint16_t format;
	uint32_t count;

	*out = NULL;
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		return SLURM_ERROR;
	info = xmalloc(sizeof(*info));
	safe_unpack16(&format, buffer);
	if (format != TOPOINFO_FORMAT)
		goto unpack_error;
	safe_unpack32(&count, buffer);
	if (!_count_fits(count, 3, buffer))
		goto unpack_error;
	info->names = xcalloc(count + 1, sizeof(char *));
	info->nodes = xcalloc(count + 1, sizeof(char *));
	info->lines = xcalloc(count + 1, sizeof(char *));
	for (uint32_t i = 0; i < count; i++) {
		info->record_count = i + 1;
		safe_unpackstr(&info->names[i], buffer);
		safe_unpackstr(&info->nodes[i], buffer);
		safe_unpackstr(&info->lines[i], buffer);
	}
	safe_unpack32(&count, buffer);
	if (!_count_fits(count, 2, buffer))
		goto unpack_error;
	info->group_names = xcalloc(count + 1, sizeof(char *));
	info->group_lines = xcalloc(count + 1, sizeof(char *));
	for (uint32_t i = 0; i < count; i++) {
		info->group_count = i + 1;
		safe_unpackstr(&info->group_names[i], buffer);
		safe_unpackstr(&info->group_lines[i], buffer);
	}
	safe_unpackstr(&info->summary, buffer);
	safe_unpackstr(&info->recoveries, buffer);
	*out = info;
	return SLURM_SUCCESS;

unpack_error:
	nvlbt_topoinfo_free(info);
	return SLURM_ERROR;
}

/* The group of the hierarchy (a scalable unit, a BlockSizes aggregate) named so. */
static bool _print_group(nvlbt_topoinfo_t *info, const char *name, char **out)
{
	if (!name || !name[0])
		return false;
	for (uint32_t i = 0; i < info->group_count; i++) {
		if (!xstrcmp(info->group_names[i], name)) {
			xstrfmtcat(*out, "%s\n", info->group_lines[i]);
			return true;
		}
	}
	return false;
}

extern int nvlbt_topoinfo_print(nvlbt_topoinfo_t *info, const char *nodes_list, const char *unit, char **out)
{
	bool by_unit = unit && unit[0], by_nodes = nodes_list && nodes_list[0];
	int matches = 0;

	*out = NULL;
	if (!info || !info->record_count) {
		error("No topology information available");
		return SLURM_SUCCESS;
	}
	if (!by_unit && !by_nodes) {
		for (uint32_t i = 0; i < info->record_count; i++)
			xstrfmtcat(*out, "%s\n", info->lines[i]);
		if (info->summary && info->summary[0])
			xstrfmtcat(*out, "%s\n", info->summary);
		for (uint32_t i = 0; i < info->group_count; i++)
			xstrfmtcat(*out, "%s\n", info->group_lines[i]);
		if (info->recoveries && info->recoveries[0])
			xstrfmtcat(*out, "%s\n", info->recoveries);
		return SLURM_SUCCESS;
	}
	/* 24.11's scontrol passes its one argument as the node list: a block
	 * name there selects that block. */
	if (!by_unit) {
		for (uint32_t i = 0; i < info->record_count; i++) {
			if (!xstrcmp(info->names[i], nodes_list)) {
				xstrfmtcat(*out, "%s\n", info->lines[i]);
				return SLURM_SUCCESS;
			}
		}
		if (_print_group(info, nodes_list, out))
			return SLURM_SUCCESS;
	} else if (!by_nodes && _print_group(info, unit, out)) {
		return SLURM_SUCCESS; /* block=<group name> */
	}
	for (uint32_t i = 0; i < info->record_count; i++) {
		hostset_t *hs;
		bool within;

		if (by_unit && xstrcmp(info->names[i], unit))
			continue;
		if (by_nodes) {
			if (!info->nodes[i] || !info->nodes[i][0] || !(hs = hostset_create(info->nodes[i])))
				continue;
			within = hostset_within(hs, nodes_list);
			hostset_destroy(hs);
			if (!within)
				continue;
		}
		xstrfmtcat(*out, "%s\n", info->lines[i]);
		matches++;
	}
	if (matches)
		return SLURM_SUCCESS;
	if (by_unit && by_nodes)
		error("Topology information contains no block %s holding %s", unit, nodes_list);
	else if (by_unit)
		error("Topology information contains no block named %s", unit);
	else
		error("Topology information contains no block or node named %s", nodes_list);
	return SLURM_SUCCESS;
}

extern void nvlbt_segments_free(nvlbt_segments_t *segments)
{
	if (!segments)
		return;
	FREE_NULL_LIST(segments->list);
	xfree(segments);
}

/* Our own layout, versioned: job state written by one nvlblock release may
 * be read by the next. */
#define SEGMENTS_FORMAT 1

static int _pack_segment(void *x, void *arg)
{
	packstr(x, arg);
	return 0;
}

extern void nvlbt_segments_pack(nvlbt_segments_t *segments, buf_t *buffer)
{
	uint32_t count = (segments && segments->list) ? list_count(segments->list) : 0;

	pack16(SEGMENTS_FORMAT, buffer);
	pack32(count, buffer);
	if (count)
		list_for_each(segments->list, _pack_segment, buffer);
}

extern int nvlbt_segments_unpack(nvlbt_segments_t **out, buf_t *buffer)
{
	nvlbt_segments_t *segments = xmalloc(sizeof(*segments));
	uint16_t format;
	uint32_t count;

	*out = NULL;
	segments->list = list_create(xfree_ptr);
	safe_unpack16(&format, buffer);
	if (format != SEGMENTS_FORMAT)
		goto unpack_error;
	safe_unpack32(&count, buffer);
	if (!_count_fits(count, 1, buffer))
		goto unpack_error;
	for (uint32_t i = 0; i < count; i++) {
		char *nodes = NULL;

		safe_unpackstr(&nodes, buffer);
		list_append(segments->list, nodes);
	}
	*out = segments;
	return SLURM_SUCCESS;

unpack_error:
	nvlbt_segments_free(segments);
	return SLURM_ERROR;
}
