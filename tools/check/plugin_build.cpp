// SPDX-License-Identifier: GPL-2.0-or-later
#include "plugin_build.hpp"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>

namespace nvlblock::check {
namespace {

// The value of "key=" in a line of space-separated key=value words.
std::string word_value(std::string_view line, std::string_view key) {
    for (std::size_t at = 0; at < line.size();) {
        const std::size_t end = std::min(line.find(' ', at), line.size());
        const std::string_view word = line.substr(at, end - at);
        if (word.size() > key.size() && word.substr(0, key.size()) == key && word[key.size()] == '=')
            return std::string(word.substr(key.size() + 1));
        at = end + 1;
    }
    return "";
}

bool is_release(std::string_view s) {
    int dots = 0;
    for (char c : s) {
        if (c == '.')
            ++dots;
        else if (!std::isdigit(static_cast<unsigned char>(c)))
            return false;
    }
    return dots == 2 && s.front() != '.' && s.back() != '.';
}

} // namespace

std::optional<PluginBuild> find_plugin_build(std::string_view bytes) {
    const std::size_t at = bytes.find(kPluginBuildMarker);
    if (at == std::string_view::npos)
        return std::nullopt;
    const std::size_t from = at + std::string_view(kPluginBuildMarker).size();
    const std::size_t end = bytes.find('\0', from);
    const std::string_view line = bytes.substr(from, (end == std::string_view::npos ? bytes.size() : end) - from);
    PluginBuild b{word_value(line, "nvlblock"), word_value(line, "slurm")};
    if (b.slurm.empty())
        return std::nullopt;
    return b;
}

std::optional<int> slurm_generation_of(std::string_view release) {
    int year = 0, month = 0;
    char dot = 0;
    if (std::sscanf(std::string(release).c_str(), "%2d.%2d%c", &year, &month, &dot) != 3 || dot != '.' || month < 1 ||
        month > 12)
        return std::nullopt;
    return year * 100 + month;
}

std::optional<std::string> slurm_release_of(std::string_view out) {
    const std::size_t at = out.find("slurm ");
    if (at == std::string_view::npos)
        return std::nullopt;
    std::string_view rest = out.substr(at + 6);
    std::size_t n = 0;
    while (n < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[n])) || rest[n] == '.'))
        ++n;
    if (!is_release(rest.substr(0, n)))
        return std::nullopt;
    // "slurm 24.11.5-4+deb13u1": Debian's revision is not Slurm's. "slurm
    // 26.11.0-0rc1": a development snapshot's META Release (it starts with
    // 0) is, and it is kept: slurmctld 26.11.0 has the same
    // SLURM_VERSION_NUMBER, so only this string tells the two apart.
    if (n + 1 < rest.size() && rest[n] == '-' && rest[n + 1] == '0') {
        std::size_t end = n + 1;
        while (end < rest.size() && std::isalnum(static_cast<unsigned char>(rest[end])))
            ++end;
        n = end;
    }
    return std::string(rest.substr(0, n));
}

std::vector<PluginFinding> check_plugin_builds(const std::string& dir, const std::string& release) {
    std::vector<PluginFinding> out;
    for (const char* file : kPluginFiles) {
        PluginFinding f;
        f.file = file;
        f.path = dir + "/" + file;
        std::ifstream in(f.path, std::ios::binary);
        if (!in) {
            out.push_back(f);
            continue;
        }
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (const auto b = find_plugin_build(bytes)) {
            f.build = *b;
            f.state = b->slurm == release ? PluginState::kMatches : PluginState::kOtherRelease;
        } else {
            f.state = PluginState::kUnmarked;
        }
        out.push_back(f);
    }
    return out;
}

} // namespace nvlblock::check
