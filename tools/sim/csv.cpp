// SPDX-License-Identifier: GPL-2.0-or-later
#include "csv.hpp"

namespace nvlblock::sim {

// Fields of a line: split at commas, carriage returns dropped, blanks
// trimmed around each. `out` keeps its strings from line to line (a trace
// of hundreds of thousands of rows allocates nothing per field).
void split_csv_line(std::string_view line, std::vector<std::string>& out) {
    std::size_t n = 0;
    for (std::size_t pos = 0;; ++n) {
        const std::size_t comma = line.find(',', pos);
        std::string_view field = line.substr(pos, comma == std::string_view::npos ? comma : comma - pos);
        if (n == out.size())
            out.emplace_back();
        std::string& f = out[n];
        f.assign(field);
        if (field.find('\r') != std::string_view::npos)
            std::erase(f, '\r');
        const auto b = f.find_first_not_of(" \t");
        if (b == std::string::npos) {
            f.clear();
        } else {
            f.erase(f.find_last_not_of(" \t") + 1);
            f.erase(0, b);
        }
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }
    out.resize(n + 1);
}

CsvReader::CsvReader(const std::string& path) : path_(path), in_(path) {
    if (!in_)
        throw CsvError(path + ": cannot open");
    std::string line;
    while (std::getline(in_, line)) {
        ++line_;
        if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        std::vector<std::string> names;
        split_csv_line(line, names);
        // A repeated name would leave one of its columns unreachable and
        // the row width below shorter than the header: refuse it.
        for (std::size_t i = 0; i < names.size(); ++i)
            if (!columns_.emplace(names[i], i).second)
                fail("column '" + names[i] + "' appears twice in the header");
        width_ = names.size();
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
    std::string& line = row_; // kept: one allocation for the file, not one per row
    while (std::getline(in_, line)) {
        ++line_;
        if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        split_csv_line(line, fields);
        if (fields.size() < width_)
            fields.resize(width_);
        return true;
    }
    return false;
}

void CsvReader::fail(const std::string& message) const {
    throw CsvError(path_ + ":" + std::to_string(line_) + ": " + message);
}

} // namespace nvlblock::sim
