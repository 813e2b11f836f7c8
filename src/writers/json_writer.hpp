// SPDX-License-Identifier: GPL-2.0-or-later
//
// A small streaming JSON writer: enough for status files, tool output and
// simulator results, with correct string escaping and stable number format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvlblock {

class JsonWriter {
  public:
    explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(const std::string& k);

    JsonWriter& value(const std::string& s);
    JsonWriter& value(const char* s) { return value(std::string(s)); }
    JsonWriter& value(bool b);
    JsonWriter& value(std::int64_t v);
    JsonWriter& value(std::uint64_t v);
    JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
    JsonWriter& value(unsigned v) { return value(static_cast<std::uint64_t>(v)); }
    JsonWriter& value(double v, int decimals = 3);
    JsonWriter& null();

    template <typename T>
    JsonWriter& field(const std::string& k, const T& v) {
        key(k);
        return value(v);
    }
    JsonWriter& field(const std::string& k, double v, int decimals) {
        key(k);
        return value(v, decimals);
    }

    const std::string& str() const { return out_; }

    static std::string escape(const std::string& s);

  private:
    void before_value();
    void newline();

    struct Level {
        bool array;
        bool first = true;
    };
    std::string out_;
    std::vector<Level> stack_;
    bool pretty_;
    bool after_key_ = false;
};

} // namespace nvlblock
