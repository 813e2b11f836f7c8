/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/state.h - the C ABI, state face (src/capi/state.cpp): saving and
 * loading the ledger, waiting for it to change, writing report files.
 */
#ifndef NVLBLOCK_STATE_H
#define NVLBLOCK_STATE_H

#include "nvlblock/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Persistence: atomic (write, fsync, rename), mode 0600, written as
 * nvlb_write_file writes (below). Loading a missing file is OK; a symlink or
 * anything but a regular file in its place is NVLB_E_IO. */
nvlb_status_t nvlb_state_save(nvlb_planner_t* planner, const char* path, nvlb_error_t* err);
/* Moves with every change to the state nvlb_state_save writes: a caller
 * that saved at version v saves again when it differs. */
uint64_t nvlb_state_version(const nvlb_planner_t* planner);
/* Waits until the state version differs from `seen`, nvlb_state_wake() is
 * called, or the Unix time until_ms (milliseconds) passes. Returns true when
 * the version differs. For the one thread that saves the state (slurmctld's
 * status thread), so that saving never happens under Slurm's locks and
 * still follows a change at once. */
bool nvlb_state_wait(nvlb_planner_t* planner, uint64_t seen, int64_t until_ms);
/* Ends every nvlb_state_wait() now (the waiter is stopping). */
void nvlb_state_wake(nvlb_planner_t* planner);
nvlb_status_t nvlb_state_load(nvlb_planner_t* planner, const char* path, nvlb_error_t* err);

/* Replace a report file (status, metrics) atomically, mode 0644: a
 * temporary file with an unpredictable name, created exclusively without
 * following symlinks in the target's directory, then renamed over the
 * target (a symlink there is replaced, never followed); with durable, fsync
 * of the file and its directory too. Readers see the old or the new file.
 * NVLB_E_IO, naming the directory, when it is writable by every user and has
 * no sticky bit: nothing is written there. */
nvlb_status_t nvlb_write_file(const char* path, const char* text, bool durable, nvlb_error_t* err);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_STATE_H */
