/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the bytes a Slurm client unpacks from nvlblock
 * (plugin/topology/packed_info.c): the `scontrol show topology` data and a
 * job's segment node lists. Each input is offered to both unpackers; what
 * unpacks is printed (every filter kind), packed again and unpacked again,
 * and must come back equal. A refusal (SLURM_ERROR) is the documented
 * answer to bad bytes; a crash, leak, sanitizer report or a round trip that
 * changes the data is a bug. Built and run by test/fuzz/run against the
 * cached Slurm build (its libslurmfull provides pack, list and hostlist).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "topology_nvlblock.h"

static buf_t* _buf_of(const uint8_t* data, size_t size) {
    char* copy = xmalloc(size ? size : 1);

    memcpy(copy, data, size);
    return create_buf(copy, size);
}

static void _same_string(const char* a, const char* b) {
    /* An empty packed string and a missing one may swap; nothing else. */
    if (xstrcmp(a ? a : "", b ? b : ""))
        abort();
}

static void _topoinfo(const uint8_t* data, size_t size) {
    buf_t *in = _buf_of(data, size), *again;
    nvlbt_topoinfo_t *info = NULL, *back = NULL;
    char* out = NULL;

    if (nvlbt_topoinfo_unpack(&info, in, SLURM_PROTOCOL_VERSION) != SLURM_SUCCESS) {
        if (info)
            abort(); /* a refusal hands nothing back */
        free_buf(in);
        return;
    }
    nvlbt_topoinfo_print(info, NULL, NULL, &out);
    xfree(out);
    nvlbt_topoinfo_print(info, "gb[01-04]", NULL, &out);
    xfree(out);
    nvlbt_topoinfo_print(info, NULL, info->record_count ? info->names[0] : "r1", &out);
    xfree(out);
    nvlbt_topoinfo_print(info, "gb01", "r1", &out);
    xfree(out);

    again = init_buf(1024);
    nvlbt_topoinfo_pack(info, again, SLURM_PROTOCOL_VERSION);
    set_buf_offset(again, 0);
    if (nvlbt_topoinfo_unpack(&back, again, SLURM_PROTOCOL_VERSION) != SLURM_SUCCESS)
        abort();
    if (back->record_count != info->record_count || back->group_count != info->group_count)
        abort();
    for (uint32_t i = 0; i < info->record_count; i++) {
        _same_string(info->names[i], back->names[i]);
        _same_string(info->nodes[i], back->nodes[i]);
        _same_string(info->lines[i], back->lines[i]);
    }
    for (uint32_t i = 0; i < info->group_count; i++) {
        _same_string(info->group_names[i], back->group_names[i]);
        _same_string(info->group_lines[i], back->group_lines[i]);
    }
    _same_string(info->summary, back->summary);
    _same_string(info->recoveries, back->recoveries);
    nvlbt_topoinfo_free(back);
    nvlbt_topoinfo_free(info);
    free_buf(again);
    free_buf(in);
}

static void _segments(const uint8_t* data, size_t size) {
    buf_t *in = _buf_of(data, size), *again;
    nvlbt_segments_t *segments = NULL, *back = NULL;

    if (nvlbt_segments_unpack(&segments, in) != SLURM_SUCCESS) {
        if (segments)
            abort();
        free_buf(in);
        return;
    }
    again = init_buf(1024);
    nvlbt_segments_pack(segments, again);
    set_buf_offset(again, 0);
    if (nvlbt_segments_unpack(&back, again) != SLURM_SUCCESS)
        abort();
    if (list_count(back->list) != list_count(segments->list))
        abort();
    nvlbt_segments_free(back);
    nvlbt_segments_free(segments);
    free_buf(again);
    free_buf(in);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
    log_options_t quiet = LOG_OPTS_INITIALIZER;

    (void)argc;
    quiet.stderr_level = LOG_LEVEL_QUIET;
    quiet.syslog_level = LOG_LEVEL_QUIET;
    quiet.logfile_level = LOG_LEVEL_QUIET;
    log_init((*argv)[0], quiet, 0, NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    _topoinfo(data, size);
    _segments(data, size);
    return 0;
}
