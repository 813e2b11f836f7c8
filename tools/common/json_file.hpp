// SPDX-License-Identifier: GPL-2.0-or-later
//
// Reading the JSON files the tools consume (node reports, the status file)
// with json-c: strict parsing, errors with the line of the problem, and typed
// accessors that name the member path ("blocks[3].name") when the shape is
// not what the schema says.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

struct json_object;

namespace nvlblock::tool {

// Wrong shape: what() is "member.path: what is wrong".
class JsonShapeError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class JsonDoc {
  public:
    // Throws ConfigError("label:line: JSON syntax error: ...").
    static JsonDoc parse(const std::string& text, const std::string& label);
    static JsonDoc load(const std::string& path); // read_text_file + parse

    JsonDoc(JsonDoc&& other) noexcept : root_(other.root_) { other.root_ = nullptr; }
    JsonDoc& operator=(JsonDoc&&) = delete;
    JsonDoc(const JsonDoc&) = delete;
    ~JsonDoc();

    json_object* root() const { return root_; }

  private:
    explicit JsonDoc(json_object* root) : root_(root) {}
    json_object* root_;
};

namespace json {

bool is_object(const json_object* o);
bool is_array(const json_object* o);
bool is_null(const json_object* o); // missing or JSON null

// Member `key` of object `o` (nullptr if absent); throws if `o` is not an object.
json_object* member(json_object* o, const char* key, const std::string& path);
json_object* required(json_object* o, const char* key, const std::string& path);
std::size_t array_size(json_object* a, const std::string& path); // throws if not an array
json_object* at(json_object* a, std::size_t i);

std::string string(json_object* o, const char* key, const std::string& path);
std::string string_or(json_object* o, const char* key, const std::string& path, const std::string& fallback);
std::int64_t integer(json_object* o, const char* key, const std::string& path);
std::int64_t integer_or(json_object* o, const char* key, const std::string& path, std::int64_t fallback);
double number(json_object* o, const char* key, const std::string& path);
bool boolean_or(json_object* o, const char* key, const std::string& path, bool fallback);

std::string string_value(json_object* v, const std::string& path); // v itself must be a string

} // namespace json
} // namespace nvlblock::tool
