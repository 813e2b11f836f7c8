/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The C ABI (include/nvlblock/nvlblock.h) from C, as the Slurm plugins use
 * it: loading and checking files, errors with file and line, block queries,
 * placement, the recovery ledger, saved state, reports, and NULL arguments.
 * Check runs each test in its own process, so a crash fails only that test.
 */
#define _XOPEN_SOURCE 700

#include <nvlblock/nvlblock.h>

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NODES 36

static char root[64]; /* one per test case, made and removed by the parent process */
static char dir[96];  /* one per test, inside root */
static char yaml_path[160];
static nvlb_planner_t* planner;
static uint8_t states[NODES];

/* The block holding a node, as the plugins learn it: each block's nodes
 * (nvlb_block_nodes); -1 outside every block. */
static int32_t block_of(const nvlb_planner_t* p, uint32_t node) {
    uint32_t nodes[NODES * 4];

    for (size_t b = 0; b < nvlb_block_count(p); b++) {
        size_t n = nvlb_block_nodes(p, (uint32_t)b, nodes, sizeof nodes / sizeof nodes[0]);

        for (size_t i = 0; i < n; i++)
            if (nodes[i] == node)
                return (int32_t)b;
    }
    return -1;
}

/* A node failure Slurm requeued the job for, as prep's epilog reports it
 * (nvlb_job_ended): a batch job ending NODE_FAIL, its failed nodes DOWN. */
static nvlb_status_t fail_job(nvlb_planner_t* p, uint32_t job_id, const uint32_t* nodes, size_t node_count,
                              const uint32_t* failed, size_t failed_count, int64_t now) {
    nvlb_ended_node_t ended[64];
    nvlb_job_end_t end = {job_id,    NVLB_END_BATCH | NVLB_END_REQUEUE_ALLOWED | NVLB_END_NODE_FAIL, now, 0, ended,
                          node_count};

    ck_assert_uint_le(node_count, sizeof ended / sizeof ended[0]);
    for (size_t i = 0; i < node_count; i++) {
        ended[i] = (nvlb_ended_node_t){nodes[i], 0, NULL};
        for (size_t f = 0; f < failed_count; f++)
            if (failed[f] == nodes[i])
                ended[i].signs = NVLB_NODE_SIGN_DOWN;
    }
    return nvlb_job_ended(p, &end, NULL);
}

static const char* const kYaml = "defaults:\n"
                                 "  slice: 16\n"
                                 "  spares: 2\n"
                                 "  reserve: idle\n"
                                 "recovery:\n"
                                 "  wait: 5m\n"
                                 "preemptible:\n"
                                 "  qos: [scavenger]\n"
                                 "  partitions: [preempt]\n"
                                 "status:\n"
                                 "  interval: 15\n"
                                 "  json: /tmp/nvlblock-status.json\n"
                                 "blocks:\n"
                                 "  - name: rack01\n"
                                 "    nodes: gb[0001-0018]\n"
                                 "  - name: rack02\n"
                                 "    nodes: gb[0019-0036]\n"
                                 "    lending: yes\n";

/* ---- helpers --------------------------------------------------------------- */

static void write_file(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

static char* path_in_dir(const char* name) {
    static char buf[4][256];
    static int next;
    char* p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static int remove_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Unchecked fixture: runs in the parent, so the scratch tree goes away even
 * when a test fails (or crashes) before its own teardown. */
static void make_root(void) {
    strcpy(root, "/tmp/nvlblock-capi-XXXXXX");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        exit(EXIT_FAILURE);
    }
}

static void remove_root(void) {
    nftw(root, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void make_dir(void) {
    snprintf(dir, sizeof dir, "%s/test-XXXXXX", root);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(yaml_path, sizeof yaml_path, "%s/nvlblock.yaml", dir);
    write_file(yaml_path, kYaml);
}

static void remove_dir(void) {
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void setup(void) {
    nvlb_error_t err;
    make_dir();
    planner = NULL;
    ck_assert_int_eq(nvlb_planner_load(yaml_path, NULL, 0, 0, &planner, &err), NVLB_OK);
    ck_assert_ptr_nonnull(planner);
    memset(states, NVLB_NODE_FREE, sizeof states);
}

static void teardown(void) {
    nvlb_planner_free(planner);
    planner = NULL;
    remove_dir();
}

static nvlb_request_t request(uint32_t job_id, uint32_t nodes, int64_t now) {
    nvlb_request_t r;
    memset(&r, 0, sizeof r);
    r.job_id = job_id;
    r.min_nodes = r.max_nodes = nodes;
    r.now = now;
    return r;
}

struct lines {
    int count;
    char text[8][512];
};

static void collect(void* ctx, const char* line) {
    struct lines* l = ctx;
    if (l->count < 8)
        snprintf(l->text[l->count], sizeof l->text[0], "%s", line);
    l->count++;
}

/* ---- loading and checking ------------------------------------------------------- */

START_TEST(test_load_and_query) {
    nvlb_block_info_t info;
    nvlb_policy_info_t pol;
    uint32_t nodes[18];

    ck_assert_uint_eq(nvlb_node_count(planner), 36);
    ck_assert_uint_eq(nvlb_block_count(planner), 2);
    ck_assert_int_eq(nvlb_find_block(planner, "rack01"), 0);
    ck_assert_int_eq(nvlb_find_block(planner, "rack02"), 1);
    ck_assert_int_eq(nvlb_find_block(planner, "rack03"), -1);
    ck_assert_int_eq(block_of(planner, 0), 0);
    ck_assert_int_eq(block_of(planner, 17), 0);
    ck_assert_int_eq(block_of(planner, 18), 1);
    ck_assert_int_eq(block_of(planner, 36), -1);

    ck_assert_int_eq(nvlb_block_info(planner, 0, &info), NVLB_OK);
    ck_assert_str_eq(info.name, "rack01");
    ck_assert_str_eq(info.nodes, "gb[0001-0018]");
    ck_assert_uint_eq(info.size, 18);
    ck_assert_uint_eq(info.slice, 16);
    ck_assert_uint_eq(info.spares, 2);
    ck_assert(!info.lending);
    ck_assert_int_eq(nvlb_block_info(planner, 1, &info), NVLB_OK);
    ck_assert_str_eq(info.name, "rack02");
    ck_assert(info.lending);
    ck_assert_int_eq(nvlb_block_info(planner, 2, &info), NVLB_E_INVALID);

    ck_assert_uint_eq(nvlb_block_nodes(planner, 1, nodes, 18), 18);
    ck_assert_uint_eq(nodes[0], 18);
    ck_assert_uint_eq(nodes[17], 35);
    /* A short buffer gets what fits; the size is still the whole block's. */
    memset(nodes, 0xff, sizeof nodes);
    ck_assert_uint_eq(nvlb_block_nodes(planner, 0, nodes, 2), 18);
    ck_assert_uint_eq(nodes[1], 1);
    ck_assert_uint_eq(nodes[2], 0xffffffffu);
    ck_assert_uint_eq(nvlb_block_nodes(planner, 0, NULL, 0), 18);
    ck_assert_uint_eq(nvlb_block_nodes(planner, 9, nodes, 18), 0);

    ck_assert_int_eq(nvlb_policy_info(planner, &pol), NVLB_OK);
    ck_assert_int_eq(pol.recovery_wait_s, 300);
    ck_assert_int_eq(pol.recovery_reclaim_budget_s, 3600);
    ck_assert(pol.block_fault_fraction > 0.49 && pol.block_fault_fraction < 0.51);
    ck_assert_int_eq(pol.status_interval_s, 15);
    ck_assert_str_eq(pol.status_json, "/tmp/nvlblock-status.json");
    ck_assert_str_eq(pol.status_prometheus, "");
    ck_assert(!pol.from_topology_conf);

    ck_assert(nvlb_is_preemptible(planner, "scavenger", NULL));
    ck_assert(nvlb_is_preemptible(planner, NULL, "preempt"));
    ck_assert(nvlb_is_preemptible(planner, "normal", "preempt"));
    ck_assert(!nvlb_is_preemptible(planner, "normal", "batch"));
    ck_assert(!nvlb_is_preemptible(planner, NULL, NULL));
}
END_TEST

START_TEST(test_load_with_slurm_node_order) {
    const char* names[NODES + 1];
    char buf[NODES + 1][16];
    nvlb_planner_t* p = NULL;
    nvlb_error_t err;
    uint32_t nodes[18];

    strcpy(buf[0], "login1");
    names[0] = buf[0];
    for (int i = 1; i <= NODES; i++) {
        snprintf(buf[i], sizeof buf[i], "gb%04d", i);
        names[i] = buf[i];
    }
    ck_assert_int_eq(nvlb_planner_load(yaml_path, names, NODES + 1, 0, &p, &err), NVLB_OK);
    ck_assert_uint_eq(nvlb_node_count(p), 37);
    ck_assert_int_eq(block_of(p, 0), -1);
    ck_assert_int_eq(block_of(p, 1), 0);
    ck_assert_uint_eq(nvlb_block_nodes(p, 0, nodes, 18), 18);
    ck_assert_uint_eq(nodes[0], 1);
    nvlb_planner_free(p);

    /* A block node that slurm.conf lacks is an error for nvlblock.yaml. */
    ck_assert_int_eq(nvlb_planner_load(yaml_path, names, NODES, 0, &p, &err), NVLB_E_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_str_eq(err.file, yaml_path);
    ck_assert_uint_eq(err.line, 16);
    ck_assert_uint_eq(err.problem_count, 2); /* and rack02 is left too small for slice + spares */
    ck_assert_ptr_nonnull(strstr(err.message, ":16: node gb0036 of block 'rack02' is not in slurm.conf\n"));
    ck_assert_ptr_nonnull(strstr(err.message, ":16: block 'rack02': slice 16 plus 2 spares needs 18 nodes; "
                                              "the block has 17"));
}
END_TEST

START_TEST(test_bad_file_fills_the_error) {
    char expect[1024];
    const char* bad = path_in_dir("bad.yaml");
    nvlb_planner_t* p = (nvlb_planner_t*)&p; /* must be reset to NULL */
    nvlb_error_t err;

    write_file(bad, "blocks:\n"
                    "  - name: rack01\n"
                    "    nodes: gb[0001-0018]\n"
                    "    spare: 2\n"
                    "  - name: rack02\n"
                    "    nodes: gb[0019-0036\n");
    ck_assert_int_eq(nvlb_planner_load(bad, NULL, 0, 0, &p, &err), NVLB_E_CONFIG);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(err.status, NVLB_E_CONFIG);
    ck_assert_str_eq(err.file, bad);
    ck_assert_uint_eq(err.line, 4);
    ck_assert_uint_eq(err.problem_count, 2);
    snprintf(expect, sizeof expect,
             "%s:4: unknown key 'spare' in a block entry (did you mean 'spares'?)\n"
             "%s:6: block 'rack02': bad hostlist 'gb[0019-0036': missing ']'",
             bad, bad);
    ck_assert_str_eq(err.message, expect);

    /* A file that cannot be read names the file, with no line. */
    ck_assert_int_eq(nvlb_planner_load(path_in_dir("none.yaml"), NULL, 0, 0, &p, &err), NVLB_E_CONFIG);
    ck_assert_str_eq(err.file, path_in_dir("none.yaml"));
    ck_assert_uint_eq(err.line, 0);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot read the file: No such file or directory"));

    /* The error struct is optional. */
    ck_assert_int_eq(nvlb_planner_load(bad, NULL, 0, 0, &p, NULL), NVLB_E_CONFIG);
}
END_TEST

START_TEST(test_check_file_warns) {
    const char* conf = path_in_dir("topology.conf");
    const char* names[36];
    char buf[36][16];
    struct lines warnings = {0};
    char expect[512];
    nvlb_error_t err;

    for (int i = 0; i < 36; i++) {
        snprintf(buf[i], sizeof buf[i], "gb%04d", i + 1);
        names[i] = buf[i];
    }
    write_file(conf, "BlockSizes=18\n"
                     "BlockName=rack01 Nodes=gb[0001-0018]\n"
                     "BlockName=rack02 Nodes=gb[0019-0037]\n");
    ck_assert_int_eq(nvlb_check_file(conf, names, 36, 0, collect, &warnings, &err), NVLB_OK);
    ck_assert_int_eq(warnings.count, 1);
    snprintf(expect, sizeof expect, "%s:3: node gb0037 of block 'rack02' is not in slurm.conf; ignored", conf);
    ck_assert_str_eq(warnings.text[0], expect);

    /* Without a callback the same file is simply valid. */
    ck_assert_int_eq(nvlb_check_file(conf, names, 36, 0, NULL, NULL, NULL), NVLB_OK);
    /* A good YAML file has nothing to warn about. */
    warnings.count = 0;
    ck_assert_int_eq(nvlb_check_file(yaml_path, NULL, 0, 0, collect, &warnings, &err), NVLB_OK);
    ck_assert_int_eq(warnings.count, 0);

    /* A bad one fails with the same error as loading it. */
    write_file(conf, "BlockSizes=18,27\nBlockName=rack01 Nodes=gb[0001-0018]\n");
    ck_assert_int_eq(nvlb_check_file(conf, NULL, 0, 0, collect, &warnings, &err), NVLB_E_CONFIG);
    ck_assert_uint_eq(err.line, 1);
    snprintf(expect, sizeof expect,
             "%s:1: invalid BlockSizes value '27': each size must be the base size 18 times a power of two", conf);
    ck_assert_str_eq(err.message, expect);
}
END_TEST

START_TEST(test_topology_conf_policy) {
    nvlb_planner_t* p = NULL;
    nvlb_policy_info_t pol;
    nvlb_block_info_t info;
    const char* conf = path_in_dir("topology.conf");

    write_file(conf, "BlockName=rack01 Nodes=gb[0001-0018]\n");
    ck_assert_int_eq(nvlb_planner_load(conf, NULL, 0, 0, &p, NULL), NVLB_OK);
    ck_assert_int_eq(nvlb_policy_info(p, &pol), NVLB_OK);
    ck_assert(pol.from_topology_conf);
    ck_assert_int_eq(nvlb_block_info(p, 0, &info), NVLB_OK);
    ck_assert_uint_eq(info.slice, 18);
    ck_assert_uint_eq(info.spares, 0);
    nvlb_planner_free(p);
}
END_TEST

/* The Slurm release is a parameter of each load, not a setting of the
 * process: a block smaller than the base size is accepted from 25.05 on, and
 * a 25.05 load leaves the next default (24.11) load as it was. */
START_TEST(test_release_is_a_load_parameter) {
    nvlb_planner_t* p = NULL;
    const char* conf = path_in_dir("small-block.conf");

    write_file(conf, "BlockName=a Nodes=n[1-4]\nBlockName=b Nodes=n[5-7]\n");
    ck_assert_int_eq(nvlb_check_file(conf, NULL, 0, 0x190508, NULL, NULL, NULL), NVLB_OK);
    ck_assert_int_eq(nvlb_planner_load(conf, NULL, 0, 0x190508, &p, NULL), NVLB_OK);
    ck_assert_int_eq(nvlb_check_file(conf, NULL, 0, 0, NULL, NULL, NULL), NVLB_E_CONFIG);
    ck_assert_int_eq(nvlb_check_file(conf, NULL, 0, 0x180b05, NULL, NULL, NULL), NVLB_E_CONFIG);
    ck_assert_int_eq(nvlb_planner_reload(p, conf, NULL, 0, 0x180b05, NULL), NVLB_E_CONFIG);
    nvlb_planner_free(p);
}
END_TEST

/* BlockSizes levels through the C ABI: the group a job was confined to, and
 * the refusals topology/block makes at submission. */
START_TEST(test_levels_and_topology_refusals) {
    nvlb_planner_t* p = NULL;
    const char* conf = path_in_dir("levels.conf");
    uint8_t st[16];
    uint32_t nodes[16];
    nvlb_request_t req;
    nvlb_placement_t out;

    write_file(conf, "BlockName=r1 Nodes=n[01-04]\nBlockName=r2 Nodes=n[05-08]\n"
                     "BlockName=r3 Nodes=n[09-12]\nBlockName=r4 Nodes=n[13-16]\nBlockSizes=4,8\n");
    ck_assert_int_eq(nvlb_planner_load(conf, NULL, 0, 0, &p, NULL), NVLB_OK);
    memset(st, NVLB_NODE_FREE, sizeof st);
    st[0] = NVLB_NODE_BUSY;
    memset(&req, 0, sizeof req);
    req.job_id = 5;
    req.min_nodes = req.max_nodes = 6;
    req.now = 1000;
    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 16;
    ck_assert_int_eq(nvlb_place(p, st, 16, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_PLACED);
    ck_assert_str_eq(out.group, "r[1-2]"); /* the fuller pair */
    ck_assert(!out.topology_unavailable);

    req.min_nodes = req.max_nodes = 8;
    req.segment = 8; /* larger than the base block */
    ck_assert_int_eq(nvlb_place(p, st, 16, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_SEGMENT_TOO_LARGE);
    ck_assert(out.topology_unavailable);
    ck_assert_str_eq(out.group, "");

    st[15] = NVLB_NODE_BUSY; /* no aligned pair has 8 free nodes */
    req.segment = 0;
    ck_assert_int_eq(nvlb_place(p, st, 16, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_NO_GROUP_FITS);
    ck_assert_str_eq(nvlb_reason_name(out.reason), "no_group_fits");
    ck_assert(!out.topology_unavailable);
    nvlb_planner_free(p);
}
END_TEST

START_TEST(test_reload) {
    const char* next = path_in_dir("next.yaml");
    const char* bad = path_in_dir("bad.yaml");
    uint32_t failed = 20, nodes[16], pending[4];
    nvlb_error_t err;

    for (uint32_t i = 0; i < 16; i++)
        nodes[i] = 18 + i;
    ck_assert_int_eq(fail_job(planner, 9, nodes, 16, &failed, 1, 1000), NVLB_OK);

    /* A bad file leaves the old topology in place. */
    write_file(bad, "blocks: nope\n");
    ck_assert_int_eq(nvlb_planner_reload(planner, bad, NULL, 0, 0, &err), NVLB_E_CONFIG);
    ck_assert_uint_eq(err.line, 1);
    ck_assert_uint_eq(nvlb_block_count(planner), 2);

    /* rack02 only, now numbered from 0: the pending job follows by name. */
    write_file(next, "blocks:\n  - name: rack02\n    nodes: gb[0019-0036]\n");
    ck_assert_int_eq(nvlb_planner_reload(planner, next, NULL, 0, 0, &err), NVLB_OK);
    ck_assert_uint_eq(nvlb_block_count(planner), 1);
    ck_assert_uint_eq(nvlb_node_count(planner), 18);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, pending, 4), 1);
    ck_assert_uint_eq(pending[0], 9);
}
END_TEST

/* ---- placement ------------------------------------------------------------------- */

START_TEST(test_place_sixteen) {
    nvlb_request_t req = request(1, 16, 100);
    uint32_t nodes[64];
    nvlb_placement_t out;

    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 64;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_PLACED);
    ck_assert_str_eq(nvlb_reason_name(out.reason), "placed");
    ck_assert_uint_eq(out.node_count, 16);
    for (uint32_t i = 0; i < 16; i++)
        ck_assert_uint_eq(nodes[i], i); /* the first 16 of rack01 */
    ck_assert(!out.recovery_in_place);
    ck_assert_uint_eq(out.spares_used, 0);
}
END_TEST

START_TEST(test_place_seventeen_spares_withheld) {
    nvlb_request_t req = request(2, 17, 100);
    uint32_t nodes[64];
    nvlb_placement_t out;

    /* rack02 is busy: a 17-node job would need one of rack01's spares. */
    memset(states + 18, NVLB_NODE_BUSY, 18);
    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 64;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_SPARES_WITHHELD);
    ck_assert_str_eq(nvlb_reason_name(out.reason), "spares_withheld");
    ck_assert_uint_eq(out.node_count, 0);
    ck_assert_uint_eq(out.blocks_if_spares, 1);
    ck_assert_ptr_nonnull(strstr(out.message, "spares are kept for in-place recovery"));

    /* Preemptible work may borrow rack02's spares (lending is on there), not rack01's. */
    memset(states + 18, NVLB_NODE_FREE, 18);
    memset(states, NVLB_NODE_BUSY, 18);
    req.preemptible = true;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_PLACED);
    ck_assert_uint_eq(out.node_count, 17);
    for (size_t i = 0; i < out.node_count; i++)
        ck_assert_int_eq(block_of(planner, nodes[i]), 1);
}
END_TEST

START_TEST(test_place_argument_errors) {
    nvlb_request_t req = request(3, 16, 100);
    uint32_t nodes[4];
    nvlb_placement_t out;

    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 4;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_E_INVALID);
    ck_assert_str_eq(out.message, "placement buffer too small");
    ck_assert_uint_eq(out.node_count, 0);

    out.nodes_capacity = 4;
    ck_assert_int_eq(nvlb_place(planner, states, NODES - 1, &req, &out), NVLB_E_INVALID);
    ck_assert_str_eq(out.message, "node count does not match the topology");

    /* An impossible request is an answer, not an error. */
    req.min_nodes = 0;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_INVALID_REQUEST);
    ck_assert_str_eq(out.message, "invalid node count 0-16");
}
END_TEST

/* ---- recovery -------------------------------------------------------------------- */

START_TEST(test_recovery_flow) {
    uint32_t job[16], failed = 3, nodes[64], pending[4];
    nvlb_request_t req = request(100, 16, 1000);
    nvlb_placement_t out;
    struct lines log = {0};

    nvlb_set_requeue_delay(planner, 11);
    for (uint32_t i = 0; i < 16; i++)
        job[i] = i;
    ck_assert_uint_eq(nvlb_pending_jobs(planner, pending, 4), 0);
    ck_assert_int_eq(fail_job(planner, 100, job, 16, &failed, 1, 1000), NVLB_OK);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, pending, 4), 1);
    ck_assert_uint_eq(pending[0], 100);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 1);

    /* Requeued: its nodes are free again except the failed one. */
    states[3] = NVLB_NODE_DOWN;
    req.now = 1015;
    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 64;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_PLACED);
    ck_assert(out.recovery_in_place);
    ck_assert_uint_eq(out.spares_used, 1);
    ck_assert_uint_eq(out.node_count, 16);
    for (size_t i = 0; i < out.node_count; i++) {
        ck_assert_uint_ne(nodes[i], 3);
        ck_assert_int_eq(block_of(planner, nodes[i]), 0);
    }
    /* Its 15 healthy nodes and one spare, in ascending order. */
    ck_assert_uint_eq(nodes[0], 0);
    ck_assert_uint_eq(nodes[2], 2);
    ck_assert_uint_eq(nodes[3], 4);
    ck_assert_uint_eq(nodes[14], 15);
    ck_assert_uint_ge(nodes[15], 16);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 1); /* until it starts */

    ck_assert_int_eq(nvlb_job_started(planner, 100, nodes, out.node_count, 1020), NVLB_OK);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, pending, 4), 0);

    ck_assert_uint_eq(nvlb_drain_log(planner, collect, &log), 2);
    ck_assert_int_eq(log.count, 2);
    ck_assert_str_eq(log.text[0], "nvlblock: recovery JobId=100 lost 1 of 16 nodes (gb0004) on rack01; holding "
                                  "rack01 for an in-place restart (15 prior nodes + 1 spares), fallback after 300 s");
    ck_assert_ptr_nonnull(strstr(log.text[1], "nvlblock: recovery JobId=100 restarted in place on rack01: 15 "
                                              "prior nodes + 1 spares ("));
    ck_assert_ptr_nonnull(strstr(log.text[1], ") 20 s after the failure"));
    /* Drained: nothing left. */
    ck_assert_uint_eq(nvlb_drain_log(planner, collect, &log), 0);
    ck_assert_int_eq(log.count, 2);
}
END_TEST

/* Asks p to place job_id on more nodes than the cluster has: refused, and
 * the refusal's sentence in *out (nvlb_place keeps it as the job's reason). */
static void refuse(nvlb_planner_t* p, uint32_t job_id, nvlb_placement_t* out) {
    nvlb_request_t req = request(job_id, NODES + 1, 1000);

    memset(out, 0, sizeof *out);
    ck_assert_int_eq(nvlb_place(p, states, NODES, &req, out), NVLB_OK);
    ck_assert_int_ne(out->reason, NVLB_PLACED);
    ck_assert_str_ne(out->message, "");
}

/* The plugin keeps one planner per topology context (plugin/topology:
 * nvlbt_topo_t in tctx->plugin_ctx) and registers one as the process
 * planner: two planners in one process share nothing, whatever happens to
 * the other or to the registration. */
static bool count_reason(void* ctx, uint32_t job_id, const char* text) {
    (void)job_id;
    (void)text;
    (*(int*)ctx)++;
    return true;
}

/* Places req in p (it must be placed); the block of its first node. */
static int32_t placed_block(nvlb_planner_t* p, const nvlb_request_t* req) {
    uint32_t nodes[64];
    nvlb_placement_t out;

    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 64;
    ck_assert_int_eq(nvlb_place(p, states, NODES, req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_PLACED);
    return block_of(p, nodes[0]);
}

START_TEST(test_two_planners_share_nothing) {
    nvlb_planner_t* other = NULL;
    nvlb_error_t err;
    uint32_t job[16], failed = 3;
    nvlb_request_t req = request(200, 16, 1010);
    uint64_t other_version;
    int reasons = 0;
    nvlb_placement_t refused;

    ck_assert_int_eq(nvlb_planner_load(yaml_path, NULL, 0, 0, &other, &err), NVLB_OK);
    nvlb_process_planner_set(other);
    ck_assert_ptr_eq(nvlb_process_planner(), other);
    other_version = nvlb_state_version(other);

    /* A failure, a hold and a pending reason in one planner... */
    for (uint32_t i = 0; i < 16; i++)
        job[i] = i;
    ck_assert_int_eq(fail_job(planner, 100, job, 16, &failed, 1, 1000), NVLB_OK);
    refuse(planner, 300, &refused);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 1);

    /* ...are not in the other: nothing pending, no reason kept, the same
     * state version, and rack01 is free for a new job there. */
    ck_assert_uint_eq(nvlb_pending_jobs(other, NULL, 0), 0);
    ck_assert_uint_eq(nvlb_reasons_each(other, count_reason, &reasons), 0);
    ck_assert_int_eq(reasons, 0);
    ck_assert_uint_eq(nvlb_state_version(other), other_version);
    ck_assert_int_eq(placed_block(other, &req), 0);
    /* The planner holding rack01 puts the same job on rack02. */
    ck_assert_int_eq(placed_block(planner, &req), 1);

    /* Ending the registered one leaves the other whole. */
    nvlb_process_planner_set(NULL);
    ck_assert_ptr_null(nvlb_process_planner());
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 1);
}
END_TEST

/* The reclaim flow's topology: two racks of 16 nodes and 2 spares, their
 * spares reserved for reclaim, taken from account ml's work for at most
 * 5 minutes. Loads it (rack01 reclaims) and returns the planner. */
static nvlb_planner_t* load_reclaim_planner(void) {
    static const char* const yaml = "defaults:\n  slice: 16\n  spares: 2\n  reserve: reclaim\n"
                                    "recovery:\n  reclaim_budget: 5m\n  reclaim_from:\n    accounts: [ml]\n"
                                    "blocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n"
                                    "  - name: rack02\n    nodes: gb[0019-0036]\n";
    char* path = path_in_dir("reclaim.yaml");
    nvlb_planner_t* p = NULL;
    nvlb_error_t err;
    nvlb_block_info_t info;

    write_file(path, yaml);
    ck_assert_int_eq(nvlb_planner_load(path, NULL, 0, 0, &p, &err), NVLB_OK);
    ck_assert_int_eq(nvlb_block_info(p, 0, &info), NVLB_OK);
    ck_assert(info.reclaim);
    return p;
}

/* Job 100 fails on rack01 (node 3 down) and becomes the one reclaim
 * candidate; rack01's nodes 16 and 17 are busy (jobs 7 and 8 run there). */
static void fail_job_100_on_rack01(nvlb_planner_t* p) {
    uint32_t job[16], failed = 3, one[1];

    nvlb_set_requeue_delay(p, 41);
    for (uint32_t i = 0; i < 16; i++)
        job[i] = i;
    ck_assert_uint_eq(nvlb_reclaim_candidates(p, 1000, NULL, 0), 0);
    ck_assert_int_eq(fail_job(p, 100, job, 16, &failed, 1, 1000), NVLB_OK);
    ck_assert_uint_eq(nvlb_reclaim_candidates(p, 1001, one, 1), 1);
    ck_assert_uint_eq(one[0], 100);
    states[3] = NVLB_NODE_DOWN;
    states[16] = states[17] = NVLB_NODE_BUSY;
}

/* Whether the running jobs matter is asked first (before Slurm is asked
 * about them): here they do; a held job's reclaim is ruled out. */
static void check_reclaim_ruled_out(nvlb_planner_t* p, const nvlb_request_t* req, const nvlb_reclaimer_t* who,
                                    nvlb_reclaim_t* plan) {
    nvlb_reclaimer_t held = {.user = 1000, .held = true};

    ck_assert_int_eq(nvlb_reclaim_ruled_out(p, states, NODES, req, who, plan), NVLB_OK);
    ck_assert(!plan->refusal.refused);
    ck_assert_int_eq(nvlb_reclaim_ruled_out(p, states, NODES, req, &held, plan), NVLB_OK);
    ck_assert(plan->refusal.refused); /* worded when handed to nvlb_reclaim_refused: test_reclaim_refusals */
    ck_assert_int_eq(nvlb_reclaim_ruled_out(NULL, states, NODES, req, who, plan), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_reclaim_ruled_out(p, states, NODES - 1, req, who, plan), NVLB_E_INVALID);
}

/* Which running job the plan takes, and how, as the jobs' preemption,
 * account and PreemptMode change; with neither allowed, nothing, and why
 * (logged once). Leaves running[0] not preemptible by Slurm and running[1]
 * of account ml with PreemptMode REQUEUE. */
static void check_reclaim_victim_choice(nvlb_planner_t* p, const nvlb_request_t* req, const nvlb_reclaimer_t* who,
                                        nvlb_running_job_t running[2], nvlb_reclaim_t* plan) {
    /* Slurm's own preemption goes first, though job 8 lost less. */
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, plan), NVLB_OK);
    ck_assert_uint_eq(plan->job_count, 1);
    ck_assert_uint_eq(plan->jobs[0], 7);
    ck_assert_uint_eq(plan->actions[0], NVLB_RECLAIM_PREEMPT);
    ck_assert_uint_eq(plan->block_count, 1);
    ck_assert_uint_eq(plan->blocks[0], 0); /* rack01 */
    /* Without it, the site-named job is requeued. */
    running[0].slurm_may_preempt = false;
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, plan), NVLB_OK);
    ck_assert_uint_eq(plan->job_count, 1);
    ck_assert_uint_eq(plan->jobs[0], 8);
    /* Its own PreemptMode is OFF: after a GraceTime Slurm would kill it,
     * so it is requeued at once. With REQUEUE, through the preemption. */
    ck_assert_uint_eq(plan->actions[0], NVLB_RECLAIM_REQUEUE_NOW);
    running[1].preempt_mode = NVLB_PREEMPT_REQUEUE;
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, plan), NVLB_OK);
    ck_assert_uint_eq(plan->actions[0], NVLB_RECLAIM_REQUEUE);
    ck_assert_uint_eq(plan->nodes, 1);
    ck_assert_int_eq(plan->lost_node_seconds, 101);
    ck_assert_int_eq(plan->budget_node_seconds, 15 * 300);
    /* Neither: nothing, and why. */
    running[1].account = "other";
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, plan), NVLB_OK);
    ck_assert_uint_eq(plan->job_count, 0);
    ck_assert(plan->refusal.refused);
    ck_assert_uint_eq(plan->refusal.jobs_by_status[2], 2); /* not_allowed, worded in the log below */
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &plan->refusal), NVLB_OK);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &plan->refusal), NVLB_OK); /* logged once */
    running[1].account = "ml";
}

/* A buffer too small for the plan is an error, not a silent cut; so are
 * no planner and no running jobs. */
static void check_plan_reclaim_rejects_bad_arguments(nvlb_planner_t* p, const nvlb_request_t* req,
                                                     const nvlb_reclaimer_t* who, const nvlb_running_job_t running[2],
                                                     nvlb_reclaim_t* plan) {
    uint32_t one[1];
    uint8_t one_action[1];
    uint32_t two[2];
    uint8_t two_actions[2];
    nvlb_reclaim_t small = {.jobs = one, .actions = one_action, .jobs_capacity = 0};
    nvlb_reclaim_t no_blocks = {.jobs = two, .actions = two_actions, .jobs_capacity = 2};

    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, &small), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, &no_blocks), NVLB_E_INVALID);
    ck_assert_uint_eq(no_blocks.job_count, 0);
    ck_assert_int_eq(nvlb_plan_reclaim(NULL, states, NODES, req, who, running, 2, plan), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, NULL, 2, plan), NVLB_E_INVALID);
}

/* The reclaim is started (job 8 requeued); no second round while the
 * first one's node is released; the log tells the refusal and the reclaim. */
static void check_reclaim_started_once(nvlb_planner_t* p, const nvlb_request_t* req, const nvlb_reclaimer_t* who,
                                       const nvlb_running_job_t running[2], nvlb_reclaim_t* plan) {
    struct lines log = {0};

    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, plan), NVLB_OK);
    ck_assert_int_eq(nvlb_reclaim_started(p, 100, who, plan, 1001, 1001), NVLB_OK);
    /* No second round while the first one's node is released. */
    ck_assert_int_eq(nvlb_plan_reclaim(p, states, NODES, req, who, running, 2, plan), NVLB_OK);
    ck_assert_uint_eq(plan->job_count, 0);
    ck_assert_int_eq(nvlb_reclaim_ruled_out(p, states, NODES, req, who, plan), NVLB_OK);
    ck_assert(plan->refusal.refused);
    ck_assert_uint_eq(nvlb_drain_log(p, collect, &log), 3);
    ck_assert_str_eq(log.text[1], "nvlblock: recovery JobId=100: nothing reclaimed: not enough work there may "
                                  "lose its nodes (jobs there: 2 not_allowed)");
    ck_assert_str_eq(log.text[2], "nvlblock: recovery JobId=100 reclaiming 1 spare node on rack01: requeueing "
                                  "JobId=8 (recovery.reclaim_from) (101 node-seconds of run time lost, budget 4500)");
}

/* The plugin times its pass under Slurm's locks: reported, nothing else
 * (no wake-up of the state's waiters). */
static void check_reclaim_pass_reported(nvlb_planner_t* p) {
    uint64_t version = nvlb_state_version(p);
    char* prom;

    nvlb_note_reclaim_pass(p, 250, 200, 1);
    nvlb_note_reclaim_pass(NULL, 250, 200, 1);
    ck_assert_uint_eq(nvlb_state_version(p), version);
    prom = nvlb_report(p, states, NODES, 1001, NVLB_REPORT_PROMETHEUS);
    ck_assert_ptr_nonnull(strstr(prom, "\nnvlblock_reclaim_passes_total 1\n"));
    ck_assert_ptr_nonnull(strstr(prom, "\nnvlblock_reclaim_pass_lock_seconds_max 0.00025\n"));
    nvlb_free(prom);
}

/* A refusal crosses the ABI as facts and is worded in the log, once per
 * new reason: the core's (a held job) and Slurm's, which the caller found;
 * codes nvlblock does not know are refused. */
START_TEST(test_reclaim_refusals) {
    nvlb_planner_t* p = load_reclaim_planner();
    nvlb_reclaimer_t held = {.user = 1000, .held = true};
    nvlb_request_t req = request(100, 16, 1001);
    nvlb_reclaim_t plan = {0};
    nvlb_reclaim_refusal_t slurm = {.refused = true, .slurm = NVLB_SLURM_RESERVATION};
    nvlb_reclaim_refusal_t unknown = {.refused = true, .reason = 200}, not_refused = {0};
    nvlb_reclaim_refusal_t bad_slurm = {.refused = true, .slurm = 99};
    struct lines log = {0};

    fail_job_100_on_rack01(p);
    ck_assert_int_eq(nvlb_reclaim_ruled_out(p, states, NODES, &req, &held, &plan), NVLB_OK);
    ck_assert(plan.refusal.refused);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &plan.refusal), NVLB_OK);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &plan.refusal), NVLB_OK); /* logged once */
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &slurm), NVLB_OK);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &unknown), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &not_refused), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, &bad_slurm), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_reclaim_refused(p, 100, NULL), NVLB_E_INVALID);
    ck_assert_uint_eq(nvlb_drain_log(p, collect, &log), 3);
    ck_assert_str_eq(log.text[1], "nvlblock: recovery JobId=100: nothing reclaimed: it is held (priority 0) and "
                                  "cannot start until it is released");
    ck_assert_str_eq(log.text[2], "nvlblock: recovery JobId=100: nothing reclaimed: Slurm would not start it on "
                                  "the nodes a reclaim would free on rack01 (a reservation keeps some of them)");
    nvlb_planner_free(p);
}
END_TEST

START_TEST(test_reclaim_flow) {
    nvlb_planner_t* p = load_reclaim_planner();
    uint32_t young_node = 17, old_node = 16, victims[2];
    uint8_t actions[2];
    /* Job 7: Slurm's preemption may requeue it. Job 8: ordinary work of
     * account ml, which the site names in recovery.reclaim_from. */
    nvlb_running_job_t running[2] = {
        {.job_id = 7,
         .nodes = &old_node,
         .node_count = 1,
         .started = 0,
         .requeueable = true,
         .slurm_may_preempt = true,
         .preempt_mode = NVLB_PREEMPT_REQUEUE},
        {.job_id = 8, .nodes = &young_node, .node_count = 1, .started = 900, .account = "ml", .requeueable = true},
    };
    nvlb_reclaimer_t who = {.user = 1000};
    nvlb_request_t req = request(100, 16, 1001);
    uint32_t blocks[2];
    nvlb_reclaim_t plan = {
        .jobs = victims, .actions = actions, .jobs_capacity = 2, .blocks = blocks, .blocks_capacity = 2};

    fail_job_100_on_rack01(p);
    check_reclaim_ruled_out(p, &req, &who, &plan);
    check_reclaim_victim_choice(p, &req, &who, running, &plan);
    check_plan_reclaim_rejects_bad_arguments(p, &req, &who, running, &plan);
    check_reclaim_started_once(p, &req, &who, running, &plan);
    check_reclaim_pass_reported(p);
    nvlb_planner_free(p);
}
END_TEST

START_TEST(test_recovery_gone) {
    uint32_t job[2] = {20, 21}, failed = 21;
    struct lines log = {0};

    ck_assert_int_eq(fail_job(planner, 7, job, 2, &failed, 1, 50), NVLB_OK);
    ck_assert_int_eq(nvlb_job_gone(planner, 7, 60), NVLB_OK);
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 0);
    /* Unknown jobs are fine. */
    ck_assert_int_eq(nvlb_job_gone(planner, 12345, 60), NVLB_OK);
    ck_assert_int_eq(nvlb_job_started(planner, 12345, job, 2, 60), NVLB_OK);
    ck_assert_uint_eq(nvlb_drain_log(planner, NULL, NULL), 2); /* counted even without a callback */
    ck_assert_uint_eq(nvlb_drain_log(planner, collect, &log), 0);
}
END_TEST

START_TEST(test_clear_lemon) {
    uint32_t job[2] = {20, 21}, failed = 21;
    bool cleared = true;
    struct lines log = {0};

    /* gb0022 fails under three jobs within the week: a lemon (logged). */
    for (uint32_t i = 0; i < 3; i++)
        ck_assert_int_eq(fail_job(planner, 7 + i, job, 2, &failed, 1, 50 + (int64_t)i), NVLB_OK);
    ck_assert_uint_eq(nvlb_drain_log(planner, NULL, NULL), 4);
    ck_assert_int_eq(nvlb_clear_lemon(planner, "gb0022", &cleared), NVLB_OK);
    ck_assert(cleared);
    ck_assert_uint_eq(nvlb_drain_log(planner, collect, &log), 1);
    ck_assert_str_eq(log.text[0], "nvlblock: recovery failures of gb0022 cleared by an operator: no longer a lemon");
    ck_assert_int_eq(nvlb_clear_lemon(planner, "gb0022", &cleared), NVLB_OK);
    ck_assert(!cleared);
    ck_assert_int_eq(nvlb_clear_lemon(planner, "nosuchnode", &cleared), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_clear_lemon(planner, NULL, NULL), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_clear_lemon(NULL, "gb0022", NULL), NVLB_E_INVALID);
}
END_TEST

/* ---- saved state ----------------------------------------------------------------- */

START_TEST(test_state_round_trip) {
    const char* state = path_in_dir("nvlblock_state");
    uint32_t job[16], failed[2] = {20, 21}, pending[4];
    nvlb_planner_t* other = NULL;
    nvlb_error_t err;
    FILE* f;
    char text[256] = {0};

    for (uint32_t i = 0; i < 16; i++)
        job[i] = 18 + i;
    ck_assert_int_eq(fail_job(planner, 555, job, 16, failed, 2, 1000), NVLB_OK);
    ck_assert_int_eq(nvlb_state_save(planner, state, &err), NVLB_OK);

    f = fopen(state, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(text, 1, sizeof text - 1, f), 0);
    fclose(f);
    ck_assert_str_eq(text, "nvlblock-state 2\n"
                           "counters 1 0 0 0 0 0 1 0 0 0 1 0 0\n"
                           "record 555 1000 1300 1300 0 gb[0019-0034] gb[0021-0022] rack02=gb[0019-0036]\n"
                           "end 1 0 0\n"
                           "node-failures gb0021 1000\n"
                           "node-failures gb0022 1000\n"
                           "end-node-failures 2\n");

    ck_assert_int_eq(nvlb_planner_load(yaml_path, NULL, 0, 0, &other, &err), NVLB_OK);
    ck_assert_int_eq(nvlb_state_load(other, state, &err), NVLB_OK);
    ck_assert_uint_eq(nvlb_pending_jobs(other, pending, 4), 1);
    ck_assert_uint_eq(pending[0], 555);
    nvlb_planner_free(other);

    /* A missing state file is a first start, not an error. */
    ck_assert_int_eq(nvlb_planner_load(yaml_path, NULL, 0, 0, &other, &err), NVLB_OK);
    ck_assert_int_eq(nvlb_state_load(other, path_in_dir("none"), &err), NVLB_OK);
    ck_assert_uint_eq(nvlb_pending_jobs(other, NULL, 0), 0);
    nvlb_planner_free(other);
}
END_TEST

START_TEST(test_state_corrupt) {
    const char* state = path_in_dir("nvlblock_state");
    uint32_t job[2] = {0, 1}, failed = 1;
    nvlb_error_t err;

    ck_assert_int_eq(fail_job(planner, 8, job, 2, &failed, 1, 10), NVLB_OK);
    write_file(state, "nvlblock-state 1\ncounters 0 0 0 0\nrecord 1 2 3\nend 1 0\n");
    ck_assert_int_eq(nvlb_state_load(planner, state, &err), NVLB_E_STATE);
    ck_assert_int_eq(err.status, NVLB_E_STATE);
    ck_assert_str_eq(err.file, state);
    ck_assert_uint_eq(err.line, 3);
    ck_assert_ptr_nonnull(strstr(err.message, ":3: corrupt nvlblock state: bad record line"));
    /* The ledger is untouched. */
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 1);

    /* Truncated (no end line), and without an error struct: still NVLB_E_STATE. */
    write_file(state, "nvlblock-state 1\ncounters 0 0 0 0\n");
    ck_assert_int_eq(nvlb_state_load(planner, state, NULL), NVLB_E_STATE);
    ck_assert_str_eq(nvlb_status_name(NVLB_E_STATE), "corrupt state");

    /* Saving into a directory that does not exist is an I/O error. */
    ck_assert_int_eq(nvlb_state_save(planner, path_in_dir("no/such/dir/state"), &err), NVLB_E_IO);
    ck_assert_int_eq(err.status, NVLB_E_IO);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot open directory"));
}
END_TEST

static char* read_all(const char* path) {
    static char buf[4096];
    FILE* f = fopen(path, "r");
    size_t n;

    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* What slurmctld writes: modes whatever its umask, a symlink planted at the
 * target replaced and never followed, a directory anyone may write refused;
 * the file outside (the attacker's target) never changes. */
START_TEST(test_files_are_written_safely) {
    const char *state = path_in_dir("nvlblock_state"), *status = path_in_dir("status.json");
    const char *victim = path_in_dir("victim"), *hostile = path_in_dir("hostile");
    char prom[300];
    uint32_t job[2] = {0, 1}, failed = 1;
    nvlb_error_t err;
    struct stat st;
    mode_t old = umask(0);

    write_file(victim, "precious\n");
    ck_assert_int_eq(fail_job(planner, 8, job, 2, &failed, 1, 10), NVLB_OK);
    ck_assert_int_eq(nvlb_state_save(planner, state, &err), NVLB_OK);
    ck_assert_int_eq(nvlb_write_file(status, "{}\n", false, &err), NVLB_OK);
    umask(old);
    ck_assert_int_eq(lstat(state, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    ck_assert_int_eq(lstat(status, &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0644);

    /* A symlink planted where the status file goes. */
    ck_assert_int_eq(unlink(status), 0);
    ck_assert_int_eq(symlink(victim, status), 0);
    ck_assert_int_eq(nvlb_write_file(status, "{\"n\": 1}\n", true, &err), NVLB_OK);
    ck_assert_str_eq(read_all(victim), "precious\n");
    ck_assert_int_eq(lstat(status, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_str_eq(read_all(status), "{\"n\": 1}\n");

    /* ...and where the state file is read from: an I/O error, not state. */
    ck_assert_int_eq(unlink(state), 0);
    ck_assert_int_eq(symlink(victim, state), 0);
    ck_assert_int_eq(nvlb_state_load(planner, state, &err), NVLB_E_IO);
    ck_assert_ptr_nonnull(strstr(err.message, "symbolic link"));
    ck_assert_uint_eq(nvlb_pending_jobs(planner, NULL, 0), 1);

    /* A metrics directory anyone may write, without the sticky bit. */
    ck_assert_int_eq(mkdir(hostile, 0700), 0);
    ck_assert_int_eq(chmod(hostile, 0777), 0);
    snprintf(prom, sizeof prom, "%s/nvlblock.prom", hostile);
    ck_assert_int_eq(symlink(victim, prom), 0);
    ck_assert_int_eq(nvlb_write_file(prom, "metrics\n", false, &err), NVLB_E_IO);
    ck_assert_ptr_nonnull(strstr(err.message, "refusing to write"));
    ck_assert_ptr_nonnull(strstr(err.message, "writable by every user"));
    ck_assert_str_eq(read_all(victim), "precious\n");
    ck_assert_int_eq(lstat(prom, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    ck_assert_int_eq(nvlb_state_save(planner, prom, &err), NVLB_E_IO);
    ck_assert_str_eq(read_all(victim), "precious\n");
}
END_TEST

/* ---- the recovery module through the C ABI ---------------------------------------- */

/* A job's end crosses once (nvlb_job_ended): a GPU fault (node up,
 * drained, requeued by its exit status) opens a recovery; preemption and a
 * job with every node healthy do not; the watch shows in nvlb_pending_jobs. */
START_TEST(test_job_ended) {
    nvlb_ended_node_t nodes[16];
    nvlb_job_end_t end = {.job_id = 100, .ended_at = 1000, .started_at = 10, .nodes = nodes, .node_count = 16};
    nvlb_end_outcome_t outcome = NVLB_END_OPENED;
    uint32_t pending[4];
    struct lines log = {0};

    nvlb_set_requeue_delay(planner, 11);
    for (uint32_t i = 0; i < 16; i++)
        nodes[i] = (nvlb_ended_node_t){.node = i, .signs = 0, .reason = NULL};
    nodes[3].signs = NVLB_NODE_SIGN_DRAIN;
    nodes[3].reason = "gpu-xid-79";
    end.facts = NVLB_END_BATCH | NVLB_END_REQUEUE_ALLOWED | NVLB_END_PENDING | NVLB_END_PREEMPTED;
    ck_assert_int_eq(nvlb_job_ended(planner, &end, &outcome), NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_END_NOTHING);
    end.facts = NVLB_END_BATCH | NVLB_END_REQUEUE_ALLOWED | NVLB_END_COMPLETING | NVLB_END_EXIT_REQUEUES;
    ck_assert_int_eq(nvlb_job_ended(planner, &end, &outcome), NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_END_OPENED);
    ck_assert(nvlb_is_recovering(planner, 100));
    ck_assert_uint_eq(nvlb_drain_log(planner, collect, &log), 1);
    ck_assert_ptr_nonnull(strstr(log.text[0], "; drained: gb0004 (gpu-xid-79); requeued by its exit status"));

    nodes[3].signs = 0;
    end.job_id = 101;
    end.facts = NVLB_END_BATCH | NVLB_END_REQUEUE_ALLOWED | NVLB_END_PENDING | NVLB_END_COMPLETING;
    ck_assert_int_eq(nvlb_job_ended(planner, &end, &outcome), NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_END_WATCHING);
    ck_assert(!nvlb_is_recovering(planner, 101));
    ck_assert_uint_eq(nvlb_pending_jobs(planner, pending, 4), 2);
    ck_assert_uint_eq(pending[0], 100);
    ck_assert_uint_eq(pending[1], 101);

    ck_assert_int_eq(nvlb_job_ended(NULL, &end, &outcome), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_job_ended(planner, NULL, NULL), NVLB_E_INVALID);
    end.nodes = NULL;
    ck_assert_int_eq(nvlb_job_ended(planner, &end, NULL), NVLB_E_INVALID);
}
END_TEST

/* nvlb_place() never moves time: a job past its wait still waits until
 * nvlb_advance() says its wait is over. */
START_TEST(test_advance_moves_time) {
    uint32_t job[16], failed[3] = {3, 4, 5}, nodes[64];
    nvlb_request_t req = request(100, 16, 5000);
    nvlb_placement_t out;
    size_t fell = 99;
    struct lines log = {0};

    nvlb_set_requeue_delay(planner, 11);
    for (uint32_t i = 0; i < 16; i++)
        job[i] = i;
    ck_assert(!nvlb_is_recovering(planner, 100));
    ck_assert_int_eq(fail_job(planner, 100, job, 16, failed, 3, 1000), NVLB_OK);
    ck_assert(nvlb_is_recovering(planner, 100));
    ck_assert(!nvlb_is_recovering(planner, 101));
    states[3] = states[4] = states[5] = NVLB_NODE_DOWN;
    ck_assert_int_eq(nvlb_next_deadline(planner, 1000), 1300);
    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = 64;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_RECOVERY_WAITING);
    ck_assert_int_eq(nvlb_advance(planner, states, NODES, 1299, &fell), NVLB_OK);
    ck_assert_uint_eq(fell, 0);
    ck_assert_int_eq(nvlb_advance(planner, states, NODES, 1300, &fell), NVLB_OK);
    ck_assert_uint_eq(fell, 1);
    ck_assert_int_eq(nvlb_next_deadline(planner, 1300), INT64_MAX);
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    ck_assert_int_eq(out.reason, NVLB_PLACED);
    ck_assert(!out.recovery_in_place);
    ck_assert_uint_eq(nvlb_drain_log(planner, collect, &log), 2);
    ck_assert_str_eq(log.text[1], "nvlblock: recovery JobId=100 fallback after 300 s: rack01 has room for 15 of the "
                                  "16 nodes it needs (3 failed, 2 spares); placing it anywhere (had rack01)");
    ck_assert_int_eq(nvlb_advance(NULL, states, NODES, 1, NULL), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_advance(planner, states, NODES - 1, 1, NULL), NVLB_E_INVALID);
}
END_TEST

START_TEST(test_segments) {
    uint32_t nodes[10] = {20, 21, 22, 23, 0, 1, 2, 3, 4, 5}, seg[10];

    ck_assert_uint_eq(nvlb_segments(planner, nodes, 10, 4, seg), 3);
    ck_assert_uint_eq(seg[4], 0); /* rack01's first four */
    ck_assert_uint_eq(seg[7], 0);
    ck_assert_uint_eq(seg[8], 1); /* rack01's last two */
    ck_assert_uint_eq(seg[0], 2); /* rack02 */
    ck_assert_uint_eq(nvlb_segments(planner, nodes, 10, 0, NULL), 2);
    ck_assert_uint_eq(nvlb_segments(NULL, nodes, 10, 0, NULL), 0);
}
END_TEST

/* Slurm asks whether a job could ever run through eval_nodes like any other
 * question, every configured node offered (failed ones included): the plugin
 * has no other entry for it. A hold for a job waiting to restart in place
 * does not answer it: rack01 waits for job 100, and a 32-node job (16 on each
 * rack) could still run one day. */
static nvlb_reason_t ever_question(uint32_t nodes_wanted, int64_t now) {
    uint8_t every[NODES];
    uint32_t nodes[NODES];
    nvlb_request_t req = request(1, nodes_wanted, now);
    nvlb_placement_t out;

    memset(every, 1, sizeof every);
    req.available = every;
    memset(&out, 0, sizeof out);
    out.nodes = nodes;
    out.nodes_capacity = NODES;
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_OK);
    return out.reason;
}

START_TEST(test_could_ever_run_through_place) {
    uint32_t job[16], failed[3] = {3, 4, 5};

    for (uint32_t i = 0; i < 16; i++)
        job[i] = i;
    ck_assert_int_eq(ever_question(32, 1000), NVLB_PLACED);
    ck_assert_int_ne(ever_question(33, 1000), NVLB_PLACED); /* only rack02's lent spares could make it */
    ck_assert_int_ne(ever_question(37, 1000), NVLB_PLACED);
    ck_assert_int_eq(fail_job(planner, 100, job, 16, failed, 3, 1000), NVLB_OK);
    for (int i = 3; i <= 5; i++)
        states[i] = NVLB_NODE_DOWN;
    ck_assert_int_eq(ever_question(32, 1001), NVLB_PLACED);
}
END_TEST

START_TEST(test_report_data) {
    nvlb_report_data_t* data;
    nvlb_block_report_t b;
    uint32_t job[16], failed = 3;

    for (uint32_t i = 0; i < 16; i++)
        job[i] = i;
    ck_assert_int_eq(fail_job(planner, 7, job, 16, &failed, 1, 1000), NVLB_OK);
    states[3] = NVLB_NODE_DOWN;
    states[20] = states[21] = states[22] = NVLB_NODE_DRAINED;
    data = nvlb_report_data(planner, states, NODES, 1005);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(nvlb_report_block_count(data), 2);
    ck_assert_int_eq(nvlb_report_block(data, 0, &b), NVLB_OK);
    ck_assert_str_eq(b.name, "rack01");
    ck_assert_str_eq(b.nodes, "gb[0001-0018]");
    ck_assert_str_eq(b.failed_nodes, "gb0004");
    ck_assert_uint_eq(b.failed, 1);
    ck_assert_uint_eq(b.size, 18);
    ck_assert_int_eq(b.health, NVLB_HEALTHY);
    ck_assert_uint_eq(b.held, 16);
    ck_assert_ptr_nonnull(strstr(b.line, "BlockName=rack01 Nodes=gb[0001-0018] "));
    ck_assert_int_eq(nvlb_report_block(data, 1, &b), NVLB_OK);
    ck_assert_int_eq(b.health, NVLB_DEGRADED);
    ck_assert(b.lending);
    ck_assert_int_eq(nvlb_report_block(data, 2, &b), NVLB_E_INVALID);
    ck_assert_uint_eq(nvlb_report_group_count(data), 0);
    ck_assert_ptr_nonnull(strstr(nvlb_report_summary(data), "nvlblock: Blocks=2 Nodes=36 "));
    ck_assert_ptr_null(strchr(nvlb_report_summary(data), '\n'));
    ck_assert_ptr_nonnull(strstr(nvlb_report_recoveries(data), "RecoveryPending JobId=7 Blocks=rack01 Lost=1"));
    nvlb_report_data_free(data);
    ck_assert_ptr_null(nvlb_report_data(planner, states, NODES - 1, 0));
    nvlb_report_data_free(NULL);
}
END_TEST

struct reason_check {
    const char* want;
    size_t seen;
};

static bool check_reason(void* ctx, uint32_t job_id, const char* text) {
    struct reason_check* c = ctx;

    ck_assert_str_eq(text, c->want);
    c->seen++;
    return job_id % 2 == 0; /* drop the odd ones */
}

/* A refusal's sentence is kept as the job's pending reason (the plugin shows
 * it again from there); a placed answer keeps none; the planner's state
 * does not move. */
START_TEST(test_refusal_kept_as_reason) {
    nvlb_placement_t refused;
    struct reason_check expect = {0};
    nvlb_request_t req = request(400, 16, 1000);
    uint64_t version = nvlb_state_version(planner);

    ck_assert_int_eq(placed_block(planner, &req), 0);
    ck_assert_uint_eq(nvlb_reasons_each(planner, NULL, NULL), 0);
    refuse(planner, 402, &refused);
    expect.want = refused.message;
    ck_assert_uint_eq(nvlb_reasons_each(planner, check_reason, &expect), 1);
    ck_assert_uint_eq(expect.seen, 1);
    ck_assert_uint_eq(nvlb_state_version(planner), version);
}
END_TEST

/* A planner told which nodes changed (nvlb_track_changes, nvlb_nodes_changed)
 * answers as one that reads every node, over random changes of a few nodes
 * and maps that alternate (Slurm's per-partition maps in one buffer); a
 * change it is not told of is not read, which shows it reads only what it
 * was told. */
START_TEST(test_tracked_changes_answer_the_same) {
    nvlb_planner_t* told = NULL;
    uint8_t avail[NODES], last_map[NODES];
    uint32_t nodes_a[NODES], nodes_b[NODES], changed[NODES];
    unsigned seed = 11;
    int placed = 0;

    ck_assert_int_eq(nvlb_planner_load(yaml_path, NULL, 0, 0, &told, NULL), NVLB_OK);
    ck_assert_int_eq(nvlb_track_changes(told, true), NVLB_OK);
    memset(last_map, 0, sizeof last_map);
    for (int step = 0; step < 400; step++) {
        nvlb_request_t req = request(500 + step, 1 + (uint32_t)(step % 6) * 2, 1000);
        nvlb_placement_t a = {0}, b = {0};
        size_t n = 0;
        for (int k = rand_r(&seed) % 4; k > 0; k--) {
            uint32_t node = (uint32_t)rand_r(&seed) % NODES;
            states[node] = (uint8_t)(rand_r(&seed) % 5);
            changed[n++] = node;
        }
        for (uint32_t i = 0; i < NODES; i++) { /* this step's map: free nodes, every other step all */
            avail[i] = (step % 2) || states[i] == NVLB_NODE_FREE;
            if (avail[i] != last_map[i] && n < NODES)
                changed[n++] = i;
            last_map[i] = avail[i];
        }
        ck_assert_int_eq(nvlb_nodes_changed(told, changed, n), NVLB_OK);
        req.available = avail;
        a.nodes = nodes_a;
        a.nodes_capacity = NODES;
        b.nodes = nodes_b;
        b.nodes_capacity = NODES;
        ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &a), NVLB_OK);
        ck_assert_int_eq(nvlb_place(told, states, NODES, &req, &b), NVLB_OK);
        ck_assert_int_eq(a.reason, b.reason);
        ck_assert_str_eq(a.message, b.message);
        ck_assert_uint_eq(a.node_count, b.node_count);
        ck_assert_mem_eq(a.nodes, b.nodes, a.node_count * sizeof a.nodes[0]);
        placed += a.reason == NVLB_PLACED;
    }
    ck_assert_int_gt(placed, 50);
    {
        /* A node taken that the told planner is not told of. */
        nvlb_request_t req = request(999, 1, 1000);
        nvlb_placement_t out = {0};
        uint32_t nodes[NODES], first;
        memset(states, NVLB_NODE_FREE, sizeof states);
        ck_assert_int_eq(nvlb_track_changes(told, true), NVLB_OK); /* read every node once */
        out.nodes = nodes;
        out.nodes_capacity = NODES;
        ck_assert_int_eq(nvlb_place(told, states, NODES, &req, &out), NVLB_OK);
        ck_assert_int_eq(out.reason, NVLB_PLACED);
        first = nodes[0];
        states[first] = NVLB_NODE_BUSY;
        ck_assert_int_eq(nvlb_place(told, states, NODES, &req, &out), NVLB_OK);
        ck_assert_uint_eq(nodes[0], first); /* not told: read as it was */
        ck_assert_int_eq(nvlb_nodes_changed(told, &first, 1), NVLB_OK);
        ck_assert_int_eq(nvlb_place(told, states, NODES, &req, &out), NVLB_OK);
        ck_assert_uint_ne(nodes[0], first);
        /* Asked to track again: every node may have changed, the decision
         * reads them all, its block counts included. rack01 with one node
         * busy (not named) has 15 nodes beside its spares: a 16-node job
         * goes to rack02. */
        memset(states, NVLB_NODE_FREE, sizeof states);
        ck_assert_int_eq(nvlb_track_changes(told, true), NVLB_OK);
        req = request(998, 16, 1000);
        ck_assert_int_eq(nvlb_place(told, states, NODES, &req, &out), NVLB_OK);
        ck_assert_int_eq(block_of(told, nodes[0]), 0);
        states[0] = NVLB_NODE_BUSY;
        ck_assert_int_eq(nvlb_track_changes(told, true), NVLB_OK);
        ck_assert_int_eq(nvlb_place(told, states, NODES, &req, &out), NVLB_OK);
        ck_assert_int_eq(out.reason, NVLB_PLACED);
        ck_assert_int_eq(block_of(told, nodes[0]), 1);
    }
    ck_assert_int_eq(nvlb_nodes_changed(told, NULL, 1), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_track_changes(NULL, true), NVLB_E_INVALID);
    nvlb_planner_free(told);
}
END_TEST

/* No fixed caps anywhere: 10,000 open recoveries on 1,250 racks, and pending
 * reasons for 100,000 jobs, each kept whole. */
START_TEST(test_no_fixed_caps) {
    char *path = path_in_dir("big.yaml"), *state = path_in_dir("big_state");
    FILE* f = fopen(path, "w");
    nvlb_planner_t *p = NULL, *q = NULL;
    nvlb_error_t err;
    uint32_t *ids, nodes[2], failed;
    size_t n;
    nvlb_placement_t refused;
    struct reason_check expect = {0};

    ck_assert_ptr_nonnull(f);
    fputs("blocks:\n", f);
    for (int r = 0; r < 1250; r++)
        fprintf(f, "  - name: r%04d\n    nodes: n[%05d-%05d]\n", r, r * 18 + 1, r * 18 + 18);
    fclose(f);
    ck_assert_int_eq(nvlb_planner_load(path, NULL, 0, 0, &p, &err), NVLB_OK);
    for (uint32_t j = 1; j <= 10000; j++) {
        nodes[0] = (j - 1) / 8 * 18 + (j - 1) % 8 * 2;
        nodes[1] = nodes[0] + 1;
        failed = nodes[1];
        ck_assert_int_eq(fail_job(p, j, nodes, 2, &failed, 1, 1000), NVLB_OK);
    }
    ck_assert_uint_eq(nvlb_pending_jobs(p, NULL, 0), 10000);
    ids = calloc(10000, sizeof *ids);
    ck_assert_uint_eq(nvlb_pending_jobs(p, ids, 10000), 10000);
    ck_assert_uint_eq(ids[9999], 10000);
    for (uint32_t j = 1; j <= 10000; j++)
        ck_assert(nvlb_is_recovering(p, j));
    free(ids);
    ck_assert_int_eq(nvlb_state_save(p, state, &err), NVLB_OK);
    ck_assert_int_eq(nvlb_planner_load(path, NULL, 0, 0, &q, &err), NVLB_OK);
    ck_assert_int_eq(nvlb_state_load(q, state, &err), NVLB_OK);
    ck_assert_uint_eq(nvlb_pending_jobs(q, NULL, 0), 10000);
    ck_assert(nvlb_is_recovering(q, 10000));
    nvlb_planner_free(q);

    nvlb_planner_free(p);

    /* 100,000 refusals, each job's sentence kept whole. */
    for (uint32_t j = 1; j <= 100000; j++)
        refuse(planner, j, &refused);
    expect.want = refused.message;
    n = nvlb_reasons_each(planner, check_reason, &expect);
    ck_assert_uint_eq(expect.seen, 100000);
    ck_assert_uint_eq(n, 50000);
    nvlb_reason_forget(planner, 2);
    ck_assert_uint_eq(nvlb_reasons_each(planner, NULL, NULL), 49999);
    nvlb_reasons_clear(planner);
    ck_assert_uint_eq(nvlb_reasons_each(planner, NULL, NULL), 0);
}
END_TEST

/* ---- reports --------------------------------------------------------------------- */

START_TEST(test_reports) {
    char *text, *json, *prom;

    states[20] = NVLB_NODE_DOWN;
    text = nvlb_report(planner, states, NODES, 1234, NVLB_REPORT_TEXT);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "BlockName=rack01 Nodes=gb[0001-0018] BlockSize=18 Slice=16 Spares=2 "));
    ck_assert_ptr_nonnull(strstr(text, "BlockName=rack02 Nodes=gb[0019-0036] "));
    ck_assert_ptr_nonnull(
        strstr(text, "Failed=1 FailedNodes=gb0021 SpareDeficit=1 ShortOfSliceSeconds=0 Lemons=(null)\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nnvlblock: Blocks=2 Nodes=36 Healthy=35 Failed=1 "));
    ck_assert_int_eq(text[strlen(text) - 1], '\n');
    nvlb_free(text);

    json = nvlb_report(planner, states, NODES, 1234, NVLB_REPORT_JSON);
    ck_assert_ptr_nonnull(json);
    ck_assert_int_eq(json[0], '{');
    ck_assert_ptr_nonnull(strstr(json, "\"schema\": \"nvlblock-status/1\""));
    ck_assert_ptr_nonnull(strstr(json, "\"generated_at\": 1234"));
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"rack01\""));
    ck_assert_ptr_nonnull(strstr(json, "\"name\": \"rack02\""));
    nvlb_free(json);

    prom = nvlb_report(planner, states, NODES, 1234, NVLB_REPORT_PROMETHEUS);
    ck_assert_ptr_nonnull(prom);
    ck_assert_ptr_nonnull(strstr(prom, "# TYPE nvlblock_block_nodes gauge\n"));
    ck_assert_ptr_nonnull(strstr(prom, "nvlblock_block_nodes{block=\"rack01\"} 18\n"));
    ck_assert_ptr_nonnull(strstr(prom, "nvlblock_block_failed_nodes{block=\"rack02\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(prom, "nvlblock_status_generated_seconds 1234\n"));
    nvlb_free(prom);

    /* The state array must match the topology. */
    ck_assert_ptr_null(nvlb_report(planner, states, NODES - 1, 0, NVLB_REPORT_TEXT));
}
END_TEST

START_TEST(test_stranded_nodes) {
    uint8_t free_mask[NODES];

    memset(free_mask, 1, sizeof free_mask);
    ck_assert_uint_eq(nvlb_stranded_nodes(planner, free_mask, NODES), 0);
    /* 10 free nodes in rack01: 8 of them ordinary (2 are spares), short of a slice. */
    memset(free_mask, 0, sizeof free_mask);
    memset(free_mask, 1, 10);
    ck_assert_uint_eq(nvlb_stranded_nodes(planner, free_mask, NODES), 8);
    ck_assert_uint_eq(nvlb_stranded_nodes(planner, free_mask, NODES - 1), 0);
}
END_TEST

/* ---- names and NULL arguments ------------------------------------------------------ */

START_TEST(test_names) {
    ck_assert_str_eq(nvlb_status_name(NVLB_OK), "ok");
    ck_assert_str_eq(nvlb_status_name(NVLB_E_INVALID), "invalid argument");
    ck_assert_str_eq(nvlb_status_name(NVLB_E_CONFIG), "configuration error");
    ck_assert_str_eq(nvlb_status_name(NVLB_E_IO), "I/O error");
    ck_assert_str_eq(nvlb_status_name((nvlb_status_t)77), "unknown status");
    ck_assert_str_eq(nvlb_reason_name(NVLB_RECOVERY_WAITING), "recovery_waiting");
    ck_assert_str_eq(nvlb_reason_name(NVLB_NOT_IN_TOPOLOGY), "not_in_topology");
    ck_assert_str_eq(nvlb_reason_name((nvlb_reason_t)99), "unknown");
    ck_assert_str_eq(nvlb_reason_name((nvlb_reason_t)-1), "unknown");
    ck_assert_ptr_nonnull(nvlb_version());
    ck_assert_str_ne(nvlb_version(), "");
}
END_TEST

START_TEST(test_null_arguments) {
    nvlb_planner_t* p = NULL;
    nvlb_error_t err;
    nvlb_block_info_t info;
    nvlb_policy_info_t pol;
    nvlb_request_t req = request(1, 1, 0);
    nvlb_placement_t out;
    uint32_t nodes[4] = {0, 1, 2, 3};

    memset(&out, 0, sizeof out);
    ck_assert_int_eq(nvlb_planner_load(NULL, NULL, 0, 0, &p, &err), NVLB_E_INVALID);
    ck_assert_int_eq(err.status, NVLB_E_INVALID);
    ck_assert_str_eq(err.message, "nvlb_planner_load: path and out are required");
    ck_assert_int_eq(nvlb_planner_load(yaml_path, NULL, 0, 0, NULL, &err), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_planner_load(NULL, NULL, 0, 0, NULL, NULL), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_planner_reload(NULL, yaml_path, NULL, 0, 0, &err), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_planner_reload(planner, NULL, NULL, 0, 0, &err), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_check_file(NULL, NULL, 0, 0, NULL, NULL, &err), NVLB_E_INVALID);
    ck_assert_str_eq(err.message, "nvlb_check_file: path is required");
    nvlb_planner_free(NULL);

    ck_assert_uint_eq(nvlb_node_count(NULL), 0);
    ck_assert_uint_eq(nvlb_block_count(NULL), 0);
    ck_assert_int_eq(nvlb_find_block(NULL, "rack01"), -1);
    ck_assert_int_eq(nvlb_find_block(planner, NULL), -1);
    ck_assert_int_eq(nvlb_block_info(NULL, 0, &info), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_block_info(planner, 0, NULL), NVLB_E_INVALID);
    ck_assert_uint_eq(nvlb_block_nodes(NULL, 0, nodes, 4), 0);
    ck_assert_int_eq(nvlb_policy_info(NULL, &pol), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_policy_info(planner, NULL), NVLB_E_INVALID);
    ck_assert(!nvlb_is_preemptible(NULL, "scavenger", NULL));
    nvlb_set_requeue_delay(NULL, 5);

    out.nodes = nodes;
    out.nodes_capacity = 4;
    ck_assert_int_eq(nvlb_place(NULL, states, NODES, &req, &out), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_place(planner, NULL, NODES, &req, &out), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_place(planner, states, NODES, NULL, &out), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, NULL), NVLB_E_INVALID);
    out.nodes = NULL; /* a placement with nowhere to put its nodes */
    ck_assert_int_eq(nvlb_place(planner, states, NODES, &req, &out), NVLB_E_INVALID);

    {
        nvlb_job_end_t end = {1, NVLB_END_BATCH | NVLB_END_NODE_FAIL, 0, 0, NULL, 4};

        ck_assert_int_eq(nvlb_job_ended(NULL, &end, NULL), NVLB_E_INVALID);
        ck_assert_int_eq(nvlb_job_ended(planner, NULL, NULL), NVLB_E_INVALID);
        ck_assert_int_eq(nvlb_job_ended(planner, &end, NULL), NVLB_E_INVALID); /* 4 nodes, none given */
        end.node_count = 0;
        ck_assert_int_eq(nvlb_job_ended(planner, &end, NULL), NVLB_OK); /* empty is fine */
    }
    ck_assert_int_eq(nvlb_job_started(NULL, 1, nodes, 4, 0), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_job_started(planner, 1, NULL, 4, 0), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_job_gone(NULL, 1, 0), NVLB_E_INVALID);
    ck_assert_uint_eq(nvlb_pending_jobs(NULL, nodes, 4), 0);
    ck_assert_uint_eq(nvlb_drain_log(NULL, NULL, NULL), 0);

    ck_assert_int_eq(nvlb_state_save(NULL, "x", &err), NVLB_E_INVALID);
    ck_assert_str_eq(err.message, "nvlb_state_save: planner and path are required");
    ck_assert_int_eq(nvlb_state_save(planner, NULL, &err), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_state_load(NULL, "x", &err), NVLB_E_INVALID);
    ck_assert_int_eq(nvlb_state_load(planner, NULL, NULL), NVLB_E_INVALID);

    ck_assert_ptr_null(nvlb_report(NULL, states, NODES, 0, NVLB_REPORT_JSON));
    ck_assert_ptr_null(nvlb_report(planner, NULL, NODES, 0, NVLB_REPORT_JSON));
    ck_assert_uint_eq(nvlb_stranded_nodes(NULL, states, NODES), 0);
    ck_assert_uint_eq(nvlb_stranded_nodes(planner, NULL, NODES), 0);
    nvlb_free(NULL);
}
END_TEST

START_TEST(test_node_topology) {
    /* Slurm 25.05+'s add_rm_node: the rule is the core's (unit tests
     * TopologyChange.*); here the C ABI's translation of it. */
    nvlb_change_t outcome = NVLB_CHANGE_APPLIED;
    char msg[256];
    uint32_t nodes[16];
    nvlb_job_nodes_t job = {77, nodes, 16};

    for (uint32_t i = 0; i < 16; i++)
        nodes[i] = i;
    /* Re-applying its block: nothing changes. */
    ck_assert_int_eq(
        nvlb_node_topology(planner, 3, "gb0004", NVLB_UNIT_BLOCK, "rack01", NULL, 0, false, &outcome, msg, sizeof msg),
        NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_CHANGE_NONE);
    ck_assert_str_eq(msg, "node gb0004 is in rack01 already");
    ck_assert_int_eq(
        nvlb_node_topology(planner, 3, "gb0004", NVLB_UNIT_CONFIGURED, NULL, NULL, 0, false, &outcome, msg, sizeof msg),
        NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_CHANGE_NONE);
    /* A node of a running job with 15 more nodes on rack01. */
    ck_assert_int_eq(
        nvlb_node_topology(planner, 3, "gb0004", NVLB_UNIT_BLOCK, "rack02", &job, 1, false, &outcome, msg, sizeof msg),
        NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_CHANGE_REFUSED);
    ck_assert_ptr_nonnull(strstr(msg, "runs JobId=77, which has 15 more nodes in block rack01"));
    /* Restoring skips the job rule; rack01 at 17 nodes is then too small. */
    ck_assert_int_eq(
        nvlb_node_topology(planner, 3, "gb0004", NVLB_UNIT_NONE, NULL, &job, 1, true, &outcome, msg, sizeof msg),
        NVLB_OK);
    ck_assert_int_eq(outcome, NVLB_CHANGE_REFUSED);
    ck_assert_str_eq(msg, "block 'rack01' would have 17 nodes; its slice 16 plus 2 spares needs 18");
    ck_assert_int_eq(block_of(planner, 3), 0);
    /* Bad arguments. */
    ck_assert_int_eq(
        nvlb_node_topology(NULL, 3, "gb0004", NVLB_UNIT_NONE, NULL, NULL, 0, false, &outcome, msg, sizeof msg),
        NVLB_E_INVALID);
    ck_assert_int_eq(
        nvlb_node_topology(planner, 3, "gb0004", NVLB_UNIT_BLOCK, NULL, NULL, 0, false, &outcome, msg, sizeof msg),
        NVLB_E_INVALID);
    ck_assert_int_eq(
        nvlb_node_topology(planner, 3, "gb0004", NVLB_UNIT_NONE, NULL, NULL, 2, false, &outcome, msg, sizeof msg),
        NVLB_E_INVALID);
}
END_TEST

static Suite* capi_suite(void) {
    Suite* s = suite_create("nvlblock C ABI");
    TCase* load = tcase_create("load");
    TCase* place = tcase_create("place");
    TCase* recovery = tcase_create("recovery");
    TCase* state = tcase_create("state");
    TCase* report = tcase_create("report");
    TCase* args = tcase_create("arguments");
    TCase* all[] = {load, place, recovery, state, report, args};

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tcase_add_unchecked_fixture(all[i], make_root, remove_root);
        tcase_add_checked_fixture(all[i], setup, teardown);
        tcase_set_timeout(all[i], 30);
        suite_add_tcase(s, all[i]);
    }
    tcase_add_test(load, test_load_and_query);
    tcase_add_test(load, test_load_with_slurm_node_order);
    tcase_add_test(load, test_bad_file_fills_the_error);
    tcase_add_test(load, test_check_file_warns);
    tcase_add_test(load, test_topology_conf_policy);
    tcase_add_test(load, test_release_is_a_load_parameter);
    tcase_add_test(load, test_reload);
    tcase_add_test(load, test_node_topology);
    tcase_add_test(load, test_levels_and_topology_refusals);
    tcase_add_test(place, test_place_sixteen);
    tcase_add_test(place, test_place_seventeen_spares_withheld);
    tcase_add_test(place, test_place_argument_errors);
    tcase_add_test(place, test_refusal_kept_as_reason);
    tcase_add_test(place, test_tracked_changes_answer_the_same);
    tcase_add_test(recovery, test_recovery_flow);
    tcase_add_test(recovery, test_recovery_gone);
    tcase_add_test(recovery, test_clear_lemon);
    tcase_add_test(recovery, test_reclaim_flow);
    tcase_add_test(recovery, test_reclaim_refusals);
    tcase_add_test(recovery, test_two_planners_share_nothing);
    tcase_add_test(recovery, test_job_ended);
    tcase_add_test(recovery, test_advance_moves_time);
    tcase_add_test(recovery, test_could_ever_run_through_place);
    tcase_add_test(recovery, test_no_fixed_caps);
    tcase_add_test(report, test_segments);
    tcase_add_test(report, test_report_data);
    tcase_add_test(state, test_state_round_trip);
    tcase_add_test(state, test_state_corrupt);
    tcase_add_test(state, test_files_are_written_safely);
    tcase_add_test(report, test_reports);
    tcase_add_test(report, test_stranded_nodes);
    tcase_add_test(args, test_names);
    tcase_add_test(args, test_null_arguments);
    return s;
}

int main(void) {
    SRunner* sr = srunner_create(capi_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
