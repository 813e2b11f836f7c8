// SPDX-License-Identifier: GPL-2.0-or-later
#include "lemon_request.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nvlblock::status {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    throw std::runtime_error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

// The directory, SlurmUser's, so that slurmctld can remove what it took.
void make_request_dir(const std::string& dir, const std::string& slurm_user) {
    if (mkdir(dir.c_str(), 0755) != 0) {
        if (errno != EEXIST)
            fail("create", dir);
        return;
    }
    if (geteuid() != 0 || slurm_user.empty())
        return;
    const passwd* pw = getpwnam(slurm_user.c_str());
    if (!pw)
        throw std::runtime_error("SlurmUser " + slurm_user + " is not a user here (" + dir + " left to root)");
    if (chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        fail("give SlurmUser", dir);
}

} // namespace

std::vector<std::string> request_clear_lemons(const std::string& state_save_location,
                                              const std::vector<std::string>& nodes, const std::string& slurm_user) {
    const std::string dir = state_save_location + "/nvlblock-requests";
    make_request_dir(dir, slurm_user);
    std::vector<std::string> written;
    for (const std::string& node : nodes) {
        if (node.empty() || node.find('/') != std::string::npos || node.front() == '.')
            throw std::runtime_error("'" + node + "' is not a node name");
        const std::string path = dir + "/clear-lemon." + node, temp = dir + "/.clear-lemon." + node;
        const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            fail("write", temp);
        close(fd);
        if (rename(temp.c_str(), path.c_str()) != 0)
            fail("rename into place", path);
        written.push_back(path);
    }
    return written;
}

} // namespace nvlblock::status
