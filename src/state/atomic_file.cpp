// SPDX-License-Identifier: GPL-2.0-or-later
#include "state/atomic_file.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <random>
#include <sys/random.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace nvlblock {
namespace {

[[noreturn]] void fail_with(int err, const std::string& what, const std::string& path) {
    throw std::system_error(err, std::generic_category(), what + " " + path);
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
    fail_with(errno, what, path);
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

// 64 random bits as hex: from the kernel; a name nobody can guess in advance.
std::string random_suffix() {
    std::array<unsigned char, 8> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            // No getrandom (an old kernel): random_device reads /dev/urandom.
            std::random_device rd;
            for (auto& b : bytes)
                b = static_cast<unsigned char>(rd());
            break;
        }
        got += static_cast<std::size_t>(n);
    }
    std::string out;
    char hex[3];
    for (unsigned char b : bytes) {
        std::snprintf(hex, sizeof hex, "%02x", b);
        out += hex;
    }
    return out;
}

struct Split {
    std::string dir, base;
};

Split split_path(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return {".", path};
    return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::string reason_for(const struct stat& st, const std::string& dir) {
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        return "directory " + dir +
               " is writable by every user and has no sticky bit (anyone could replace nvlblock's files "
               "there): chmod o-w or chmod +t it, or choose another directory";
    return "";
}

} // namespace

std::string unsafe_directory_reason(const std::string& dir) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
        fail("cannot inspect directory", dir);
    return reason_for(st, dir);
}

void write_file_atomically(const std::string& path, const std::string& contents, mode_t mode, bool durable) {
    const Split where = split_path(path);
    if (where.base.empty() || where.base == "." || where.base == "..")
        fail_with(EINVAL, "not a file name:", path);
    // Everything below is relative to this one open directory, so a rename
    // of a path component midway cannot redirect the write.
    Fd dfd(::open(where.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dfd.get() < 0)
        fail("cannot open directory", where.dir);
    struct stat st {};
    if (::fstat(dfd.get(), &st) != 0)
        fail("cannot inspect directory", where.dir);
    if (const std::string why = reason_for(st, where.dir); !why.empty())
        throw std::system_error(EPERM, std::generic_category(), "refusing to write " + path + ": " + why);

    std::string tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
        tmp = "." + where.base + ".tmp." + random_suffix();
        fd = ::openat(dfd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST)
            fail("cannot create", where.dir + "/" + tmp);
    }
    if (fd < 0)
        fail("cannot create a temporary file beside", path);
    Fd file(fd);
    auto undo = [&](const std::string& what, const std::string& shown) {
        const int e = errno;
        ::unlinkat(dfd.get(), tmp.c_str(), 0);
        fail_with(e, what, shown);
    };
    // The umask must not decide who may read the state.
    if (::fchmod(file.get(), mode) != 0)
        undo("cannot set the mode of", where.dir + "/" + tmp);
    std::size_t done = 0;
    while (done < contents.size()) {
        const ssize_t n = ::write(file.get(), contents.data() + done, contents.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            undo("cannot write", where.dir + "/" + tmp);
        }
        done += static_cast<std::size_t>(n);
    }
    if (durable && ::fsync(file.get()) != 0)
        undo("cannot fsync", where.dir + "/" + tmp);
    if (::close(file.release()) != 0)
        undo("cannot close", where.dir + "/" + tmp);
    // rename() replaces the entry at the target name, whatever it is (a
    // planted symlink included); it never writes through it.
    if (::renameat(dfd.get(), tmp.c_str(), dfd.get(), where.base.c_str()) != 0)
        undo("cannot rename onto", path);
    if (durable)
        ::fsync(dfd.get()); // best effort: some filesystems refuse directory fsync
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) {
        if (errno == ENOENT)
            return std::nullopt;
        if (errno == ELOOP)
            fail_with(ELOOP, "refusing to read a symbolic link:", path);
        fail("cannot open", path);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        fail("cannot inspect", path);
    if (!S_ISREG(st.st_mode))
        fail_with(EINVAL, "not a regular file:", path);
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
