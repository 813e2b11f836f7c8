// SPDX-License-Identifier: GPL-2.0-or-later
//
// What slurmctld writes (saved state, status and metrics files): atomic, and
// safe in a directory others can write. The hostile cases plant what an
// attacker with write access to the directory could plant beforehand and
// check that nothing outside the directory changes.
#include "state/atomic_file.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace nvlblock {
namespace {

using test::TempDir;

std::vector<std::string> entries(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode;
}

// A file outside the directory being written: the attacker's target.
struct Victim {
    TempDir elsewhere;
    std::string path = elsewhere.write("victim", "precious\n");
    void expect_untouched() const {
        EXPECT_EQ(slurp(path), "precious\n");
        EXPECT_EQ(entries(elsewhere.path()), std::vector<std::string>{"victim"});
    }
};

TEST(AtomicFile, MissingFileIsNullopt) {
    TempDir dir;
    EXPECT_EQ(read_file_if_exists(dir.path() + "/nothing"), std::nullopt);
}

TEST(AtomicFile, RoundTripAndNoTemporaryLeft) {
    TempDir dir;
    const std::string path = dir.path() + "/state";
    std::string content = "nvlblock-state 1\n";
    content += std::string("binary\0bytes\n", 13);
    content += std::string(200000, 'x'); // more than one read buffer
    write_file_atomically(path, content, kPrivateFileMode);
    EXPECT_EQ(read_file_if_exists(path), content);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"state"});
}

TEST(AtomicFile, ReplacesTheOldContents) {
    TempDir dir;
    const std::string path = dir.path() + "/state";
    write_file_atomically(path, "a much longer first version\n", kPrivateFileMode);
    write_file_atomically(path, "second\n", kPrivateFileMode, false);
    EXPECT_EQ(read_file_if_exists(path), "second\n");
    write_file_atomically(path, "", kPrivateFileMode);
    EXPECT_EQ(read_file_if_exists(path), "");
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"state"});
}

TEST(AtomicFile, RelativePath) {
    TempDir dir;
    const auto old = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    write_file_atomically("rel", "x", kReportFileMode);
    std::filesystem::current_path(old);
    EXPECT_EQ(read_file_if_exists(dir.path() + "/rel"), "x");
}

TEST(AtomicFile, ErrorsNameThePath) {
    TempDir dir;
    const std::string missing = dir.path() + "/no/such/dir";
    try {
        write_file_atomically(missing + "/state", "x", kPrivateFileMode);
        FAIL() << "no error";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), ENOENT);
        EXPECT_NE(std::string(e.what()).find("cannot open directory " + missing), std::string::npos) << e.what();
    }
    // Renaming onto a directory fails, and the temporary file is removed.
    std::filesystem::create_directory(dir.path() + "/adir");
    std::filesystem::create_directory(dir.path() + "/adir/inside");
    EXPECT_THROW(write_file_atomically(dir.path() + "/adir", "x", kReportFileMode), std::system_error);
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"adir"});
    // Reading a directory is an error, not "missing".
    EXPECT_THROW(read_file_if_exists(dir.path() + "/adir"), std::system_error);
}

TEST(AtomicFile, ModesDoNotDependOnTheUmask) {
    TempDir dir;
    for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}}) {
        const mode_t old = ::umask(mask);
        write_file_atomically(dir.path() + "/state", "s", kPrivateFileMode);
        write_file_atomically(dir.path() + "/status.json", "{}", kReportFileMode);
        ::umask(old);
        EXPECT_EQ(mode_of(dir.path() + "/state") & 07777, 0600u) << "umask " << mask;
        EXPECT_EQ(mode_of(dir.path() + "/status.json") & 07777, 0644u) << "umask " << mask;
    }
    // Rewriting a file that an operator loosened puts its mode back.
    ASSERT_EQ(::chmod((dir.path() + "/state").c_str(), 0666), 0);
    write_file_atomically(dir.path() + "/state", "s2", kPrivateFileMode);
    EXPECT_EQ(mode_of(dir.path() + "/state") & 07777, 0600u);
}

TEST(AtomicFile, APlantedSymlinkAtTheTargetIsReplacedNotFollowed) {
    Victim victim;
    TempDir dir;
    const std::string path = dir.path() + "/nvlblock.prom";
    ASSERT_EQ(::symlink(victim.path.c_str(), path.c_str()), 0);
    write_file_atomically(path, "metrics\n", kReportFileMode, false);
    victim.expect_untouched();
    EXPECT_TRUE(S_ISREG(mode_of(path))) << "the target is still a symlink";
    EXPECT_EQ(slurp(path), "metrics\n");
    EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"nvlblock.prom"});
}

TEST(AtomicFile, SymlinksAtPredictableTemporaryNamesAreNeverOpened) {
    // The names an older release used (<path>.tmp.<pid>) and every name
    // derived from the target an attacker might guess: planted as symlinks
    // (and as a dangling one) to a file outside. None is written through.
    Victim victim;
    TempDir dir;
    const std::string path = dir.path() + "/status.json";
    const std::vector<std::string> guesses = {path + ".tmp." + std::to_string(::getpid()),
                                              path + ".tmp",
                                              path + ".new",
                                              path + "~",
                                              dir.path() + "/.status.json.tmp",
                                              dir.path() + "/.status.json.tmp.0000000000000000"};
    for (const auto& g : guesses)
        ASSERT_EQ(::symlink(victim.path.c_str(), g.c_str()), 0) << g;
    ASSERT_EQ(::symlink((victim.elsewhere.path() + "/created-by-us").c_str(), (path + ".part").c_str()), 0);
    for (int i = 0; i < 50; ++i)
        write_file_atomically(path, "{\"n\": " + std::to_string(i) + "}\n", kReportFileMode, false);
    victim.expect_untouched();
    EXPECT_EQ(slurp(path), "{\"n\": 49}\n");
    // Only the planted links and the file itself: no temporary left behind.
    EXPECT_EQ(entries(dir.path()).size(), guesses.size() + 2);
}

TEST(AtomicFile, ADirectoryEveryoneMayWriteIsRefused) {
    Victim victim;
    TempDir dir;
    const std::string hostile = dir.path() + "/textfile_collector";
    ASSERT_EQ(::mkdir(hostile.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(hostile.c_str(), 0777), 0);
    const std::string path = hostile + "/nvlblock.prom";
    ASSERT_EQ(::symlink(victim.path.c_str(), path.c_str()), 0);
    try {
        write_file_atomically(path, "metrics\n", kReportFileMode);
        FAIL() << "wrote into a world-writable directory without the sticky bit";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), EPERM);
        const std::string what = e.what();
        EXPECT_NE(what.find("refusing to write " + path), std::string::npos) << what;
        EXPECT_NE(what.find("writable by every user and has no sticky bit"), std::string::npos) << what;
    }
    victim.expect_untouched();
    EXPECT_EQ(entries(hostile), std::vector<std::string>{"nvlblock.prom"}); // only the planted link
    EXPECT_NE(unsafe_directory_reason(hostile), "");

    // With the sticky bit (as /tmp) others cannot remove or rename our files: accepted.
    ASSERT_EQ(::chmod(hostile.c_str(), 01777), 0);
    EXPECT_EQ(unsafe_directory_reason(hostile), "");
    write_file_atomically(path, "metrics\n", kReportFileMode);
    victim.expect_untouched();
    EXPECT_EQ(slurp(path), "metrics\n");
    EXPECT_TRUE(S_ISREG(mode_of(path)));
}

TEST(AtomicFile, ReadingRefusesSymlinksAndSpecialFiles) {
    // The state file is read at start-up: a symlink planted in its place, or
    // a FIFO (which would block slurmctld forever), is an error, not input.
    Victim victim;
    TempDir dir;
    const std::string link = dir.path() + "/nvlblock_state";
    ASSERT_EQ(::symlink(victim.path.c_str(), link.c_str()), 0);
    try {
        read_file_if_exists(link);
        FAIL() << "read through a symlink";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), ELOOP);
        EXPECT_NE(std::string(e.what()).find(link), std::string::npos);
    }
    const std::string fifo = dir.path() + "/fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_THROW(read_file_if_exists(fifo), std::system_error);
    victim.expect_untouched();
}

} // namespace
} // namespace nvlblock
