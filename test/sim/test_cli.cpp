// SPDX-License-Identifier: GPL-2.0-or-later
//
// The tool end to end: the documented command line, its outputs, the same
// bytes twice for a seed, and usage errors.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int run(const std::string& args) {
    const std::string cmd = std::string(NVLBLOCK_SIM_BINARY) + " " + args + " >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

struct Scratch {
    std::string dir;
    Scratch() {
        char tmpl[] = "/tmp/nvlblock-sim-cli-XXXXXX";
        dir = mkdtemp(tmpl);
    }
    ~Scratch() { std::filesystem::remove_all(dir); }
};

TEST(Cli, RunsAllFourPoliciesAndWritesTheSameOutputTwice) {
    Scratch s;
    const std::string common = std::string("--trace ") + NVLBLOCK_SOURCE_DIR +
                               "/data/traces/philly_small72.csv --racks 4 --nodes-per-rack 18 --slice 16 --spares 2 "
                               "--failures mtbi=50h,mttr=5h,rack_mtbf=500h,rack_mttr=2h "
                               "--policies full-rack,block,nvlblock,nvlblock+lend --seed 7 --time-scale 60 --quiet";
    ASSERT_EQ(run(common + " --json " + s.dir + "/a.json --csv " + s.dir + "/a.csv"), 0);
    ASSERT_EQ(run(common + " --threads 1 --json " + s.dir + "/b.json --csv " + s.dir + "/b.csv"), 0);
    const std::string a = slurp(s.dir + "/a.json"), b = slurp(s.dir + "/b.json");
    EXPECT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << "JSON differs between two runs with the same seed";
    EXPECT_TRUE(slurp(s.dir + "/a.csv") == slurp(s.dir + "/b.csv"));
    for (const char* key : {"\"policy\": \"full-rack\"", "\"policy\": \"nvlblock+lend\"", "\"useful_gpu_hours\"",
                            "\"utilization\"", "\"goodput\"", "\"stranded_nodes_mean\"", "\"wait_s\"", "\"gpus_1_4\"",
                            "\"p99\"", "\"restarts\"", "\"in_place\"", "\"lost_failure_gpu_hours\""})
        EXPECT_NE(a.find(key), std::string::npos) << key;
    EXPECT_EQ(a.find("wall_s"), std::string::npos); // timing only with --timing
    EXPECT_EQ(slurp(s.dir + "/a.csv").rfind("policy,t_start_s,t_end_s,healthy_nodes,", 0), 0u);
}

TEST(Cli, AFailureTraceAndASyntheticMixAreAccepted) {
    Scratch s;
    std::ofstream(s.dir + "/f.csv") << "node_id,down_s,up_s,why\n0,100,5000,test\n20,200,,test\n";
    EXPECT_EQ(run("--trace synthetic:load=saturate,small_load=0.1,max_slices=2,mean_hours=1 --racks 4 --horizon 1d "
                  "--failures " +
                  s.dir + "/f.csv --quiet --json " + s.dir + "/s.json"),
              0);
    const std::string j = slurp(s.dir + "/s.json");
    EXPECT_NE(j.find("\"node_failures\": 2"), std::string::npos);
}

// The kill wait is recorded in the run object (0 by default) and stated above the table when set.
TEST(Cli, TheKillWaitIsRecordedInTheJsonAndTheTable) {
    Scratch s;
    const std::string base = "--trace synthetic:load=saturate,small_load=0.1,max_slices=2,mean_hours=1 --racks 4 "
                             "--horizon 6h --policies block --quiet --json " +
                             s.dir + "/s.json";
    ASSERT_EQ(run(base), 0);
    EXPECT_NE(slurp(s.dir + "/s.json").find("\"kill_wait_s\": 0"), std::string::npos);
    // Without --quiet for the table (the progress bar is drawn only on a terminal).
    std::string table_run = base;
    table_run.replace(table_run.find(" --quiet"), 8, "");
    const std::string cmd =
        std::string(NVLBLOCK_SIM_BINARY) + " " + table_run + " --kill-wait 30 > " + s.dir + "/t.txt 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_NE(slurp(s.dir + "/s.json").find("\"kill_wait_s\": 30"), std::string::npos);
    EXPECT_NE(slurp(s.dir + "/t.txt").find("complete for 30s before they are free"), std::string::npos);
}

// The failure kinds and the failure window reach the run's record: the
// Llama 3 shares by default with --failures llama3, node down otherwise.
TEST(Cli, TheFailureKindsAreRecordedInTheJson) {
    Scratch s;
    const std::string base = "--trace synthetic:load=saturate,small_load=0.1,max_slices=2,mean_hours=1 --racks 4 "
                             "--horizon 6h --policies block,recommended --quiet --json " +
                             s.dir + "/s.json ";
    ASSERT_EQ(run(base + "--failures llama3"), 0);
    std::string json = slurp(s.dir + "/s.json");
    EXPECT_NE(json.find("\"up\": 0.6281"), std::string::npos);
    EXPECT_NE(json.find("\"failure_window_s\": -1"), std::string::npos);
    ASSERT_EQ(run(base + "--failures p=2% --failure-window 60"), 0);
    json = slurp(s.dir + "/s.json");
    EXPECT_NE(json.find("\"down\": 1.0000"), std::string::npos);
    EXPECT_NE(json.find("\"failure_window_s\": 60"), std::string::npos);
    ASSERT_EQ(run(base + "--failures llama3 --failure-kinds down=1,job=1,epilog=0,requeue=90%"), 0);
    json = slurp(s.dir + "/s.json");
    EXPECT_NE(json.find("\"job\": 0.5000"), std::string::npos);
    EXPECT_NE(json.find("\"epilog_s\": 0"), std::string::npos);
    EXPECT_NE(json.find("\"requeue\": 0.9000"), std::string::npos);
}

// --log is CSV: a host list with several ranges (a restart on 15 prior nodes plus a spare) is quoted.
TEST(Cli, TheLogQuotesHostListsWithCommas) {
    Scratch s;
    std::ofstream(s.dir + "/t.csv") << "job_id,submit_s,nodes,gpus_per_node,duration_s\nbig,0,16,4,100\n";
    std::ofstream(s.dir + "/f.csv") << "node_id,down_s,up_s\n3,10,\n";
    ASSERT_EQ(run("--trace " + s.dir + "/t.csv --racks 2 --policies nvlblock --failures " + s.dir +
                  "/f.csv --window-end 200 --quiet --log " + s.dir + "/l"),
              0);
    std::istringstream log(slurp(s.dir + "/l-nvlblock.csv"));
    std::string line;
    int lines = 0;
    bool quoted = false;
    while (std::getline(log, line)) {
        ++lines;
        int fields = 1;
        bool in_quotes = false;
        for (char c : line) {
            if (c == '"')
                in_quotes = !in_quotes;
            else if (c == ',' && !in_quotes)
                ++fields;
        }
        EXPECT_EQ(fields, 6) << line;
        quoted = quoted || line.find("\"gb[00001-00003,00005-00017]\"") != std::string::npos;
    }
    EXPECT_EQ(lines, 5); // header, start, fail, start (in place), end
    EXPECT_TRUE(quoted) << slurp(s.dir + "/l-nvlblock.csv");
}

TEST(Cli, UsageErrorsExitWithTwo) {
    EXPECT_EQ(run("--racks 4"), 2);                                 // no --trace
    EXPECT_EQ(run("--trace x.csv"), 2);                             // no --racks
    EXPECT_EQ(run("--trace synthetic:load=saturate --racks 4"), 2); // saturating without --horizon
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --policies best"), 2);
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --failures mtbf=1h"), 2);
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --slice 17 --spares 2"), 2);
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --kill-wait -1"), 2);
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --failure-kinds up"), 2); // no --failures
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --failures llama3 --failure-kinds gpu"), 2);
    EXPECT_EQ(run("--trace synthetic:load=1 --racks 4 --failures llama3 --failure-kinds up,epilog=off,periodic=off"),
              2);
    EXPECT_EQ(run("--trace /nonexistent.csv --racks 4"), 1);
    EXPECT_EQ(run("--help"), 0);
}

} // namespace
