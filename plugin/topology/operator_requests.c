/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * operator_requests.c - what an operator asks slurmctld's nvlblock through
 * files: nvlblock-status --clear-lemon NODE leaves an empty file
 * <StateSaveLocation>/nvlblock-requests/clear-lemon.NODE (written under a
 * dot name and renamed, so a file seen here is whole). The file writer
 * thread (file_writer.c) takes them on each pass while this slurmctld is in
 * control: the only thread here that touches StateSaveLocation, so a slow
 * file system delays requests, never the scheduler. Each is applied through
 * the core (nvlb_clear_lemon), logged, and removed; one naming no node of
 * the topology is logged and removed too.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "../common/slurm_bridge.h"
#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

#define REQUEST_DIR "nvlblock-requests"
#define CLEAR_LEMON "clear-lemon."

static void _clear_lemon(nvlb_planner_t *planner, const char *node)
{
	bool cleared = false;

	if (nvlb_clear_lemon(planner, node, &cleared) != NVLB_OK)
		error("nvlblock: --clear-lemon %s: no such node in nvlblock's topology", node);
	else if (!cleared)
		info("nvlblock: --clear-lemon %s: it had no failures kept (not a lemon)", node);
	nvlbs_flush_log(planner);
}

extern void nvlbt_take_requests(nvlb_planner_t *planner)
{
	char *dir_path = xstrdup_printf("%s/%s", slurm_conf.state_save_location, REQUEST_DIR);
	DIR *dir = opendir(dir_path);
	struct dirent *ent;

	if (!dir) {
		xfree(dir_path);
		return; /* no request ever made */
	}
	while ((ent = readdir(dir))) {
		const char *name = ent->d_name;
		char *path;

		if (name[0] == '.')
			continue; /* ".", "..", or one still being written */
		path = xstrdup_printf("%s/%s", dir_path, name);
		if (!strncmp(name, CLEAR_LEMON, strlen(CLEAR_LEMON)))
			_clear_lemon(planner, name + strlen(CLEAR_LEMON));
		else
			error("nvlblock: unknown request %s (removed)", path);
		if (unlink(path) && (errno != ENOENT))
			error("nvlblock: cannot remove request %s: %m", path);
		xfree(path);
	}
	closedir(dir);
	xfree(dir_path);
}
