// SPDX-License-Identifier: GPL-2.0-or-later
//
// Errors in configuration files. Every problem an operator can cause names the
// file, the line and what is wrong, in the form compilers use
// ("file:line: message"), so that editors and scripts can jump to it.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace nvlblock {

struct SourceLocation {
    std::string file;  // as given by the caller; "<string>" for in-memory text
    unsigned line = 0; // 1-based; 0 when the problem is not tied to a line

    std::string str() const { return line ? file + ":" + std::to_string(line) : file; }
};

struct Diagnostic {
    SourceLocation where;
    std::string message;
    // A warning's kind (common/warning_names.hpp); empty for errors and notes.
    std::string name = {};

    std::string str() const { return where.str() + ": " + message; }
};

// Thrown by readers and validation; carries every problem found, first one first.
class ConfigError : public std::runtime_error {
  public:
    explicit ConfigError(std::vector<Diagnostic> problems)
        : std::runtime_error(join(problems)), problems_(std::move(problems)) {}
    ConfigError(SourceLocation where, std::string message)
        : ConfigError(std::vector<Diagnostic>{{std::move(where), std::move(message)}}) {}

    const std::vector<Diagnostic>& problems() const { return problems_; }
    const Diagnostic& first() const { return problems_.front(); }

  private:
    static std::string join(const std::vector<Diagnostic>& problems) {
        std::string out;
        for (const auto& d : problems) {
            if (!out.empty())
                out += '\n';
            out += d.str();
        }
        return out;
    }
    std::vector<Diagnostic> problems_;
};

// Collects problems so a reader can report all of them at once instead of the
// first only; throw_if_any() turns the collection into a ConfigError.
class Diagnostics {
  public:
    void add(SourceLocation where, std::string message) { items_.push_back({std::move(where), std::move(message)}); }
    bool empty() const { return items_.empty(); }
    const std::vector<Diagnostic>& items() const { return items_; }
    void throw_if_any() const {
        if (!items_.empty())
            throw ConfigError(items_);
    }

  private:
    std::vector<Diagnostic> items_;
};

} // namespace nvlblock
