// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/load_topology.hpp"

#include "readers/topology_conf_reader.hpp"
#include "readers/yaml_reader.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nvlblock {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::string dirname_of(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string path_in(const std::string& dir, const std::string& name) {
    if (!name.empty() && name[0] == '/')
        return name;
    return (dir == "/" ? "" : dir) + "/" + name;
}

SourceFormat guess_format(const std::string& path) {
    return ends_with(path, ".yaml") || ends_with(path, ".yml") ? SourceFormat::kYaml : SourceFormat::kTopologyConf;
}

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ConfigError({path, 0}, std::string("cannot read the file: ") + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.find('\0') != std::string::npos)
        throw ConfigError({path, 0}, "the file contains a NUL byte; is it a text file?");
    return text;
}

TopologySpec read_topology_spec_text(const std::string& text, const std::string& label, SourceFormat format,
                                     const std::string& base_dir, int slurm_release) {
    return format == SourceFormat::kYaml ? read_yaml_topology(text, label, base_dir, slurm_release)
                                         : read_topology_conf(text, label, base_dir, slurm_release);
}

TopologySpec read_topology_spec(const std::string& path, int slurm_release) {
    return read_topology_spec_text(read_text_file(path), path, guess_format(path), dirname_of(path), slurm_release);
}

Topology load_topology(const std::string& path, const std::vector<std::string>* universe, int slurm_release) {
    return build_topology(read_topology_spec(path, slurm_release), universe);
}

} // namespace nvlblock
