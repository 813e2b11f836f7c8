// SPDX-License-Identifier: GPL-2.0-or-later
#include "state/atomic_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace nvlblock {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    throw std::system_error(errno, std::generic_category(), what + " " + path);
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }
    int release() {
        int f = fd_;
        fd_ = -1;
        return f;
    }

private:
    int fd_;
};

} // namespace

void write_file_atomically(const std::string& path, const std::string& contents, bool durable) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0)
        fail("cannot create", tmp);
    std::size_t done = 0;
    while (done < contents.size()) {
        ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            ::unlink(tmp.c_str());
            errno = e;
            fail("cannot write", tmp);
        }
        done += static_cast<std::size_t>(n);
    }
    if (durable && ::fsync(fd.get()) != 0) {
        int e = errno;
        ::unlink(tmp.c_str());
        errno = e;
        fail("cannot fsync", tmp);
    }
    if (::close(fd.release()) != 0) {
        int e = errno;
        ::unlink(tmp.c_str());
        errno = e;
        fail("cannot close", tmp);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        int e = errno;
        ::unlink(tmp.c_str());
        errno = e;
        fail("cannot rename onto", path);
    }
    if (durable) {
        auto slash = path.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
        Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (dfd.get() >= 0)
            ::fsync(dfd.get()); // best effort: some filesystems refuse directory fsync
    }
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT)
            return std::nullopt;
        fail("cannot open", path);
    }
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fail("cannot read", path);
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

} // namespace nvlblock
