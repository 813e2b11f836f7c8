// SPDX-License-Identifier: GPL-2.0-or-later
//
// Helpers for the nvlblock-check and nvlblock-status tests: scratch
// directories and running the tools as an operator would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nvlblock::check::test {

inline const std::string kData = CHECK_DATA;

inline std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A scratch directory removed at the end of the test.
class TempDir {
  public:
    TempDir() {
        char tmpl[] = "/tmp/nvlops-check-XXXXXX";
        path_ = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    std::string write(const std::string& name, const std::string& text) const {
        const std::string p = file(name);
        std::filesystem::create_directories(std::filesystem::path(p).parent_path());
        std::ofstream(p) << text;
        return p;
    }

  private:
    std::string path_;
};

struct Result {
    int rc = -1;
    std::string out, err;
};

// Runs a shell command line; `cd` first when `dir` is given, so that the
// paths in messages are the short relative ones an operator types.
inline Result run(const std::string& command, const std::string& dir = "") {
    TempDir tmp;
    const std::string line = (dir.empty() ? "" : "cd '" + dir + "' && ") + command + " >'" + tmp.file("out") + "' 2>'" +
                             tmp.file("err") + "'";
    const int status = std::system(line.c_str());
    Result r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(tmp.file("out"));
    r.err = read_file(tmp.file("err"));
    return r;
}

inline std::string quote(const std::string& s) {
    return "'" + s + "'";
}

} // namespace nvlblock::check::test
