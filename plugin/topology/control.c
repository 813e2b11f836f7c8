/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.c - whether this slurmctld is the one in control. With two or
 * more SlurmctldHost lines a backup that takes over runs read_slurm_conf()
 * (so topology build_config), and one that gives control back goes to
 * standby without unloading its plugins: nvlblock's status thread runs on
 * with a job list that no longer changes. It must then write nothing (no
 * state file over the primary's, no status files) and move no job.
 *
 * What says so, by release (read in each one's src/slurmctld):
 *  - everywhere: slurmctld_config.shutdown_time is set while a controller
 *    gives up control (or shuts down);
 *  - everywhere (24.11 to 26.11): slurmctld_config.thread_id_save is set
 *    once a round of controller.c's main loop runs as the controller
 *    (after "Running as primary controller", the jobs recovered) and
 *    joined to 0 when the round ends (shutdown, reconfigure, a backup
 *    giving control back): 0 while starting, while a backup stands by,
 *    and in the window netns.failover found, a 24.11 backup back in
 *    standby with its claim not yet replaced (the primary slow to load
 *    its state). The global control_time served before and does not:
 *    a reconfigure that fails (daemonized or under systemd: "Resuming
 *    operation, reconfigure failed.") goes round the loop again with
 *    `reconfiguring` set and leaves it 0 while the same process goes on
 *    as the controller (design.md 8), which stopped nvlblock for good;
 *  - 25.11 and later: slurmctld_listeners_in_standby();
 *  - everywhere, and the only sign 24.11 and 25.05 give a plugin: a small
 *    file of nvlblock's own, <StateSaveLocation>/nvlblock_owner, that the
 *    controller which last took control writes (its host, pid and time).
 *    A controller whose claim has been overwritten has lost control; one
 *    that takes control and finds another's claim there re-reads the saved
 *    state, which that one kept since.
 * With a single SlurmctldHost nothing is written or read: that controller
 * is always in control.
 *
 * The file is read and written by the status thread only, with none of
 * Slurm's locks held; build_config reads it once (takeover, reconfigure).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

/* slurmctld's own; weak so that slurmd and the clients still load the
 * plugin (data symbols bind at load time, see slurm_bridge.c). */
extern slurmctld_config_t slurmctld_config __attribute__((weak));

static char claim[256]; /* what this controller wrote; "" before it claims */
static bool claim_wanted = false;
static bool lost = false; /* another controller's claim replaced ours */

static bool _several_controllers(void)
{
	return slurm_conf.control_cnt > 1;
}

static char *_owner_path(void)
{
	return xstrdup_printf("%s/nvlblock_owner", slurm_conf.state_save_location);
}

/* The claim in the file, "" when there is none. */
static void _read_owner(char *out, size_t size)
{
	char *path = _owner_path();
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (f) {
		if (!fgets(out, (int) size, f))
			out[0] = '\0';
		fclose(f);
	}
	xfree(path);
}

extern void nvlbt_control_taken(void)
{
	claim_wanted = _several_controllers();
	lost = false;
}

extern bool nvlbt_other_had_control(void)
{
	char owner[sizeof(claim)];

	if (!_several_controllers() || !claim[0])
		return false;
	if (lost)
		return true;
	_read_owner(owner, sizeof(owner));
	return strcmp(owner, claim) != 0;
}

/* Writes this controller's claim (status thread, no locks held). */
static void _claim(void)
{
	char *path = _owner_path();
	nvlb_error_t err;

	snprintf(claim, sizeof(claim), "%s %ld %ld\n", slurmctld_config.node_name_short, (long) getpid(),
		 (long) time(NULL));
	if (nvlb_write_file(path, claim, true, &err) != NVLB_OK)
		error("nvlblock: cannot write %s: %s", path, err.message);
	else
		info("nvlblock: in control (%s)", path);
	claim_wanted = false;
	xfree(path);
}

/* What Slurm itself says, without nvlblock's claim (no file read). */
static bool _slurm_says_in_control(void)
{
	if (!&slurmctld_config || slurmctld_config.shutdown_time || !slurmctld_config.thread_id_save)
		return false;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	if (_several_controllers() && slurmctld_listeners_in_standby())
		return false;
#endif
	return true;
}

extern bool nvlbt_still_in_control(void)
{
	return !lost && _slurm_says_in_control();
}

extern bool nvlbt_in_control(void)
{
	char owner[sizeof(claim)];

	if (!_slurm_says_in_control())
		return false;
	if (!_several_controllers())
		return true;
	if (claim_wanted)
		_claim();
	if (lost || !claim[0])
		return false;
	_read_owner(owner, sizeof(owner));
	if (strcmp(owner, claim)) {
		info("nvlblock: another slurmctld has taken control (%s): writing nothing until this one takes it "
		     "again",
		     owner[0] ? owner : "its claim unreadable");
		lost = true;
		return false;
	}
	return true;
}
