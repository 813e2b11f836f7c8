// SPDX-License-Identifier: GPL-2.0-or-later
//
// The little CSV the simulator reads: comma-separated, a header line naming
// the columns, no quoting (none of our inputs quote), '#' lines and blank
// lines skipped. Columns are found by name so that extra ones are ignored.
#pragma once

#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvlblock::sim {

class CsvError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class CsvReader {
  public:
    // Opens `path` and reads its header; throws CsvError ("path: ...").
    explicit CsvReader(const std::string& path);

    // The index of a column; throws CsvError if the header lacks it.
    std::size_t column(const std::string& name) const;
    bool has_column(const std::string& name) const { return columns_.count(name) != 0; }

    // The next data row; false at the end of the file.
    bool next(std::vector<std::string>& fields);
    unsigned line() const { return line_; }
    const std::string& path() const { return path_; }
    // "path:line: message", for errors about the current row.
    [[noreturn]] void fail(const std::string& message) const;

  private:
    std::string path_;
    std::ifstream in_;
    std::map<std::string, std::size_t> columns_;
    std::size_t width_ = 0; // fields in the header: every row is read at least this wide
    unsigned line_ = 0;
    std::string row_; // the line next() reads
};

// The fields of a line into `out`, its strings reused: split at commas, carriage
// returns dropped, blanks trimmed around each.
void split_csv_line(std::string_view line, std::vector<std::string>& out);

} // namespace nvlblock::sim
