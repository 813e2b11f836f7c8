/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * last_good.c - the topology files slurmctld last accepted, kept under
 * StateSaveLocation, so that a broken nvlblock.yaml on `scontrol reconfigure`
 * never stops the controller.
 *
 * Since Slurm 23.11 a reconfigure starts slurmctld afresh: a daemonized
 * slurmctld forks a new one and keeps running if it fails, but one running
 * in the foreground (-D: containers, test clusters) replaces itself with
 * execve(), and a fatal error at start-up ends the controller. The new
 * process cannot keep a previous topology in memory: there is none. So
 * every accepted topology is copied to <StateSaveLocation>/nvlblock-config/
 * (nvlblock.yaml, and the topology.conf or topology.yaml file it includes by
 * a relative path, e.g. a generator's topology.d/racks.yaml), and
 * a reconfigure (SLURMCTLD_RECONF in the environment, set by Slurm) that
 * meets a broken file loads that copy instead, with the errors logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

static char *_dir(void)
{
	return xstrdup_printf("%s/nvlblock-config", slurm_conf.state_save_location);
}

static const char *_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The whole file, or NULL (with errno) if it cannot be read. */
static char *_read(const char *path)
{
	char *text = NULL, buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	text = xstrdup("");
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		xstrncat(text, buf, n);
	if (n < 0)
		xfree(text);
	close(fd);
	return text;
}

static void _copy(const char *from, const char *dir, const char *name)
{
	nvlb_error_t err;
	char *text = _read(from), *to = xstrdup_printf("%s/%s", dir, name);

	if (!text)
		error("nvlblock: cannot keep a copy of %s: %m", from);
	else if (nvlb_write_file(to, text, true, &err) != NVLB_OK)
		error("nvlblock: cannot keep a copy of %s: %s", from, err.message);
	xfree(text);
	xfree(to);
}

/* A relative path inside the directory: no "..", not absolute. */
static bool _stays_inside(const char *relative)
{
	return relative[0] && (relative[0] != '/') && !xstrstr(relative, "..");
}

/* The folders of `relative` under dir (topology.d/ of topology.d/racks.yaml). */
static bool _make_parents(const char *dir, const char *relative)
{
	char *path = xstrdup_printf("%s/%s", dir, relative);
	bool ok = true;

	for (char *slash = path + strlen(dir) + 1; ok && (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		if ((mkdir(path, 0700) != 0) && (errno != EEXIST)) {
			error("nvlblock: cannot create %s: %m", path);
			ok = false;
		}
		*slash = '/';
	}
	xfree(path);
	return ok;
}

extern void nvlbt_keep_last_good(nvlb_planner_t *planner)
{
	nvlb_policy_info_t policy;
	char *dir = _dir();

	if (nvlb_policy_info(planner, &policy) != NVLB_OK || !policy.source[0]) {
		xfree(dir);
		return;
	}
	if ((mkdir(dir, 0700) != 0) && (errno != EEXIST)) {
		error("nvlblock: cannot create %s: %m", dir);
		xfree(dir);
		return;
	}
	/* An included file named by a relative path resolves beside the
	 * copy, so it is copied too, into the same folders; one named by an
	 * absolute path is read where it is (docs/admin.md 5.5). */
	if (_stays_inside(policy.included_conf) && _make_parents(dir, policy.included_conf))
		_copy(policy.included_conf_path, dir, policy.included_conf);
	_copy(policy.source, dir, _base(policy.source));
	xfree(dir);
}

extern char *nvlbt_last_good_copy(const char *path)
{
	char *dir, *copy;

	if (!getenv("SLURMCTLD_RECONF"))
		return NULL; /* a first start: a broken file must stop it */
	dir = _dir();
	copy = xstrdup_printf("%s/%s", dir, _base(path));
	xfree(dir);
	if (access(copy, R_OK) != 0)
		xfree(copy);
	return copy;
}
