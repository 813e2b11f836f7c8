// SPDX-License-Identifier: GPL-2.0-or-later
#include "csv.hpp"

namespace nvlblock::sim {

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : line) {
        if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    for (auto& f : out) { // trim blanks around fields
        const auto b = f.find_first_not_of(" \t");
        const auto e = f.find_last_not_of(" \t");
        f = b == std::string::npos ? std::string() : f.substr(b, e - b + 1);
    }
    return out;
}

CsvReader::CsvReader(const std::string& path) : path_(path), in_(path) {
    if (!in_)
        throw CsvError(path + ": cannot open");
    std::string line;
    while (std::getline(in_, line)) {
        ++line_;
        if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const auto names = split_csv_line(line);
        // A name seen twice would leave a column index past the row width
        // that next() guarantees: refuse it rather than pick one of the two.
        for (std::size_t i = 0; i < names.size(); ++i)
            if (!columns_.emplace(names[i], i).second)
                fail("column '" + names[i] + "' appears twice in the header");
        return;
    }
    throw CsvError(path + ": empty file (a header line is required)");
}

std::size_t CsvReader::column(const std::string& name) const {
    auto it = columns_.find(name);
    if (it == columns_.end())
        throw CsvError(path_ + ":1: no column '" + name + "' in the header");
    return it->second;
}

bool CsvReader::next(std::vector<std::string>& fields) {
    std::string line;
    while (std::getline(in_, line)) {
        ++line_;
        if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        fields = split_csv_line(line);
        if (fields.size() < columns_.size())
            fields.resize(columns_.size());
        return true;
    }
    return false;
}

void CsvReader::fail(const std::string& message) const {
    throw CsvError(path_ + ":" + std::to_string(line_) + ": " + message);
}

} // namespace nvlblock::sim
