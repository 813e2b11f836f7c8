// SPDX-License-Identifier: GPL-2.0-or-later
//
// The operator's report (per-block tallies, health, spares, stranded nodes)
// and its three renderings: scontrol lines, JSON and Prometheus text. The
// JSON is parsed back with a small strict parser so that a stray comma or an
// unescaped quote fails the test.
#include "core/planner.hpp"
#include "test_support.hpp"
#include "writers/json_writer.hpp"
#include "writers/status_report.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace nvlblock {
namespace {

using test::range;
using test::set;

// ---- A minimal strict JSON parser (RFC 8259 subset: no surrogate pairs) -------

struct Json {
    enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
    bool b = false;
    double number = 0;
    std::string text; // string value, or the number as written
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> members;

    const Json& operator[](const std::string& key) const {
        for (const auto& [k, v] : members)
            if (k == key)
                return v;
        throw std::out_of_range("no key '" + key + "'");
    }
    const Json& operator[](std::size_t i) const { return items.at(i); }
    std::size_t size() const { return kind == kArray ? items.size() : members.size(); }
};

class JsonParser {
  public:
    explicit JsonParser(const std::string& s) : s_(s) {}

    Json parse_document() {
        Json v = parse_value();
        skip_ws();
        if (pos_ != s_.size())
            fail("trailing text");
        return v;
    }

  private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("invalid JSON at offset " + std::to_string(pos_) + ": " + what);
    }
    void skip_ws() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
            ++pos_;
    }
    bool eat(char c) {
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c))
            fail(std::string("expected '") + c + "'");
    }
    bool literal(const char* word) {
        const std::string w(word);
        if (s_.compare(pos_, w.size(), w) == 0) {
            pos_ += w.size();
            return true;
        }
        return false;
    }
    Json parse_value() {
        skip_ws();
        if (pos_ >= s_.size())
            fail("unexpected end");
        Json v;
        const char c = s_[pos_];
        if (c == '{') {
            ++pos_;
            v.kind = Json::kObject;
            if (eat('}'))
                return v;
            do {
                skip_ws();
                std::string k = parse_string();
                expect(':');
                v.members.emplace_back(std::move(k), parse_value());
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++pos_;
            v.kind = Json::kArray;
            if (eat(']'))
                return v;
            do
                v.items.push_back(parse_value());
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.kind = Json::kString;
            v.text = parse_string();
        } else if (literal("true")) {
            v.kind = Json::kBool;
            v.b = true;
        } else if (literal("false")) {
            v.kind = Json::kBool;
        } else if (literal("null")) {
            v.kind = Json::kNull;
        } else {
            v.kind = Json::kNumber;
            const std::size_t start = pos_;
            if (s_[pos_] == '-')
                ++pos_;
            if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
                fail("bad value");
            if (s_[pos_] == '0' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))
                fail("leading zero");
            while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
                ++pos_;
            if (pos_ < s_.size() && s_[pos_] == '.') {
                ++pos_;
                if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
                    fail("bad fraction");
                while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
                    ++pos_;
            }
            v.text = s_.substr(start, pos_ - start);
            v.number = std::stod(v.text);
        }
        return v;
    }
    std::string parse_string() {
        if (pos_ >= s_.size() || s_[pos_] != '"')
            fail("expected a string");
        ++pos_;
        std::string out;
        while (true) {
            if (pos_ >= s_.size())
                fail("unterminated string");
            const unsigned char c = static_cast<unsigned char>(s_[pos_++]);
            if (c == '"')
                return out;
            if (c < 0x20)
                fail("control character in string");
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (pos_ >= s_.size())
                fail("bad escape");
            const char e = s_[pos_++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'u': {
                if (pos_ + 4 > s_.size())
                    fail("bad \\u escape");
                const unsigned long cp = std::stoul(s_.substr(pos_, 4), nullptr, 16);
                pos_ += 4;
                if (cp >= 0x80)
                    fail("only ASCII \\u escapes are expected here");
                out += static_cast<char>(cp);
                break;
            }
            default:
                fail("bad escape");
            }
        }
    }

    const std::string& s_;
    std::size_t pos_ = 0;
};

Json parse_json(const std::string& s) {
    return JsonParser(s).parse_document();
}

TEST(JsonParserSelfTest, RejectsBrokenDocuments) {
    for (const char* bad : {"{", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "\"x", "{\"a\":01}", "[1] x", "{a:1}", "\"\t\""})
        EXPECT_THROW(parse_json(bad), std::runtime_error) << bad;
    EXPECT_EQ(parse_json("{\"a\":[1,2.5,true,null,\"x\\ny\"]}")["a"][4].text, "x\ny");
}

// ---- JsonWriter ----------------------------------------------------------------

TEST(JsonWriter, Escaping) {
    EXPECT_EQ(JsonWriter::escape("plain"), "\"plain\"");
    EXPECT_EQ(JsonWriter::escape(""), "\"\"");
    EXPECT_EQ(JsonWriter::escape("say \"hi\""), "\"say \\\"hi\\\"\"");
    EXPECT_EQ(JsonWriter::escape("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(JsonWriter::escape("l1\nl2\r\tx"), "\"l1\\nl2\\r\\tx\"");
    EXPECT_EQ(JsonWriter::escape(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
    EXPECT_EQ(JsonWriter::escape(std::string("nul\0x", 5)), "\"nul\\u0000x\"");
    // UTF-8 passes through untouched; '/' needs no escape.
    EXPECT_EQ(JsonWriter::escape("r\xc3\xa4"
                                 "ck/01"),
              "\"r\xc3\xa4"
              "ck/01\"");
    EXPECT_EQ(JsonWriter::escape("\x7f"), "\"\x7f\"");
}

TEST(JsonWriter, EscapedStringsParseBack) {
    const std::string nasty = "q\"b\\n\nt\tc\x02 end";
    JsonWriter w(false);
    w.begin_object().field(nasty, nasty).end_object();
    const Json j = parse_json(w.str());
    ASSERT_EQ(j.members.size(), 1u);
    EXPECT_EQ(j.members[0].first, nasty);
    EXPECT_EQ(j.members[0].second.text, nasty);
}

TEST(JsonWriter, CompactOutput) {
    JsonWriter w(false);
    w.begin_object();
    w.field("s", "x").field("b", true).field("f", false).field("i", -3).field("u", 7u);
    w.field("big", std::numeric_limits<std::uint64_t>::max());
    w.field("neg", std::numeric_limits<std::int64_t>::min());
    w.field("d", 0.5).field("d1", 2.0 / 3.0, 1);
    w.key("n").null();
    w.key("a").begin_array().value(1).value("two").begin_object().end_object().begin_array().end_array().end_array();
    w.key("o").begin_object().end_object();
    w.end_object();
    EXPECT_EQ(w.str(), "{\"s\":\"x\",\"b\":true,\"f\":false,\"i\":-3,\"u\":7,\"big\":18446744073709551615,"
                       "\"neg\":-9223372036854775808,\"d\":0.500,\"d1\":0.7,\"n\":null,"
                       "\"a\":[1,\"two\",{},[]],\"o\":{}}");
    const Json j = parse_json(w.str());
    EXPECT_EQ(j["a"].size(), 4u);
    EXPECT_EQ(j["big"].text, "18446744073709551615");
}

TEST(JsonWriter, PrettyOutput) {
    JsonWriter w;
    w.begin_object();
    w.field("name", "rack01");
    w.key("list").begin_array().value(1).value(2).end_array();
    w.key("empty").begin_array().end_array();
    w.end_object();
    EXPECT_EQ(w.str(), "{\n"
                       "  \"name\": \"rack01\",\n"
                       "  \"list\": [\n"
                       "    1,\n"
                       "    2\n"
                       "  ],\n"
                       "  \"empty\": []\n"
                       "}\n");
    EXPECT_NO_THROW(parse_json(w.str()));
}

TEST(JsonWriter, NonFiniteNumbersBecomeNull) {
    JsonWriter w(false);
    w.begin_array()
        .value(std::numeric_limits<double>::infinity())
        .value(std::numeric_limits<double>::quiet_NaN())
        .value(-1.25, 2)
        .value(3.0, 0)
        .end_array();
    EXPECT_EQ(w.str(), "[null,null,-1.25,3]");
    EXPECT_NO_THROW(parse_json(w.str()));
}

TEST(JsonWriter, TopLevelScalar) {
    JsonWriter w;
    w.value("only");
    EXPECT_EQ(w.str(), "\"only\"");
}

// ---- The report ------------------------------------------------------------------

// rack01: lending on, 16 free, 2 lent.
// rack02: degraded: 2 down + 1 drained (more than its 2 spares), 8 busy, 7 free.
// rack03: down: 10 of 18 failed (at least half: a block fault), 8 free.
// rack04: gb0055 failed under job 77, which waits to restart there; 17 free.
class ReportTest : public ::testing::Test {
  protected:
    ReportTest()
        : planner(test::yaml_topology("defaults:\n  slice: 16\n  spares: 2\n  reserve: idle\nblocks:\n"
                                      "  - name: rack01\n    nodes: gb[0001-0018]\n    lending: true\n"
                                      "  - name: rack02\n    nodes: gb[0019-0036]\n"
                                      "  - name: rack03\n    nodes: gb[0037-0054]\n"
                                      "  - name: rack04\n    nodes: gb[0055-0072]\n")) {
        states = test::all(planner.topology());
        set(states, {16, 17}, NodeState::kLent);
        set(states, {18, 19}, NodeState::kDown);
        set(states, {20}, NodeState::kDrained);
        set(states, range(21, 28), NodeState::kBusy);
        set(states, range(36, 45), NodeState::kDown);
        set(states, {54}, NodeState::kDown);
        // An earlier recovery, done: job 88 restarted in place on rack01 with one spare.
        planner.job_failed(88, range(0, 15), std::vector<NodeIndex>{3}, 900);
        std::vector<NodeIndex> again = range(0, 16);
        again.erase(again.begin() + 3);
        planner.job_started(88, again, 950);
        // Job 77 lost gb0055 and waits for rack04 (held until 1300).
        planner.job_failed(77, range(54, 69), std::vector<NodeIndex>{54}, 1000);
    }

    ClusterReport report(std::int64_t now = 1100) { return make_report(planner, states, now); }

    Planner planner;
    std::vector<NodeState> states;
};

TEST_F(ReportTest, HealthyBlockWithLentSpares) {
    const ClusterReport r = report();
    ASSERT_EQ(r.blocks.size(), 4u);
    const BlockReport& b = r.blocks[0];
    EXPECT_EQ(b.name, "rack01");
    EXPECT_EQ(b.nodes, "gb[0001-0018]");
    EXPECT_EQ(b.size, 18);
    EXPECT_EQ(b.slice, 16);
    EXPECT_EQ(b.spares, 2);
    EXPECT_TRUE(b.lending);
    EXPECT_EQ(b.health, BlockHealth::kHealthy);
    EXPECT_EQ(b.healthy, 18);
    EXPECT_EQ(b.failed, 0);
    EXPECT_EQ(b.failed_nodes, "");
    EXPECT_EQ(b.busy, 0);
    EXPECT_EQ(b.lent, 2);
    EXPECT_EQ(b.free, 16);
    EXPECT_EQ(b.spares_free, 0);
    EXPECT_EQ(b.spares_used, 0);
    EXPECT_EQ(b.spares_lent, 2);
    EXPECT_EQ(b.held, 0);
    EXPECT_EQ(b.ordinary_free, 16);
    EXPECT_EQ(b.stranded, 0);
}

TEST_F(ReportTest, DegradedBlock) {
    const BlockReport b = report().blocks[1]; // a copy: the report is a temporary
    EXPECT_EQ(b.name, "rack02");
    EXPECT_EQ(b.health, BlockHealth::kDegraded);
    EXPECT_EQ(b.failed, 3);
    EXPECT_EQ(b.down, 2);
    EXPECT_EQ(b.drained, 1);
    EXPECT_EQ(b.healthy, 15);
    EXPECT_EQ(b.failed_nodes, "gb[0019-0021]");
    EXPECT_EQ(b.busy, 8);
    EXPECT_EQ(b.lent, 0);
    EXPECT_EQ(b.free, 7);
    EXPECT_EQ(b.spares_used, 2); // both spares stand in for failed nodes
    EXPECT_EQ(b.spares_free, 0);
    EXPECT_EQ(b.spares_lent, 0);
    EXPECT_EQ(b.ordinary_free, 7);
    EXPECT_EQ(b.stranded, 7); // 7 free nodes, short of a slice of 16
}

TEST_F(ReportTest, DownBlock) {
    const BlockReport b = report().blocks[2]; // a copy: the report is a temporary
    EXPECT_EQ(b.name, "rack03");
    EXPECT_EQ(b.health, BlockHealth::kDown);
    EXPECT_EQ(b.failed, 10);
    EXPECT_EQ(b.failed_nodes, "gb[0037-0046]");
    EXPECT_EQ(b.free, 8);
    EXPECT_EQ(b.spares_used, 2);
    EXPECT_EQ(b.spares_free, 0);
    // A faulted block offers nothing, so strands nothing.
    EXPECT_EQ(b.ordinary_free, 0);
    EXPECT_EQ(b.stranded, 0);
}

TEST_F(ReportTest, BlockHeldForARecovery) {
    const BlockReport b = report().blocks[3]; // a copy: the report is a temporary
    EXPECT_EQ(b.name, "rack04");
    EXPECT_EQ(b.health, BlockHealth::kHealthy);
    EXPECT_EQ(b.failed, 1);
    EXPECT_EQ(b.failed_nodes, "gb0055");
    EXPECT_EQ(b.free, 17);
    EXPECT_EQ(b.held, 16);
    EXPECT_EQ(b.spares_used, 1);
    EXPECT_EQ(b.spares_free, 1);
    EXPECT_EQ(b.ordinary_free, 0);
    EXPECT_EQ(b.stranded, 0);
    // Once the hold has expired the block's nodes are ordinary capacity again.
    const BlockReport later = report(1300).blocks[3];
    EXPECT_EQ(later.held, 0);
    EXPECT_EQ(later.ordinary_free, 16);
}

TEST_F(ReportTest, ClusterTotals) {
    const ClusterReport r = report();
    EXPECT_EQ(r.generated_at, 1100);
    EXPECT_EQ(r.nodes, 72);
    EXPECT_EQ(r.nodes_in_blocks, 72);
    EXPECT_EQ(r.healthy, 18 + 15 + 8 + 17);
    EXPECT_EQ(r.failed, 0 + 3 + 10 + 1);
    EXPECT_EQ(r.busy, 8);
    EXPECT_EQ(r.lent, 2);
    EXPECT_EQ(r.free, 16 + 7 + 8 + 17);
    EXPECT_EQ(r.ordinary_free, 16 + 7);
    EXPECT_EQ(r.stranded, 7);
    EXPECT_DOUBLE_EQ(r.fragmentation, 7.0 / 23.0);
    EXPECT_EQ(r.counters.failures, 2u);
    EXPECT_EQ(r.counters.in_place, 1u);
    EXPECT_EQ(r.counters.elsewhere, 0u);
    ASSERT_EQ(r.recent.size(), 1u);
    EXPECT_EQ(r.recent[0].job_id, 88u);
    EXPECT_EQ(r.recent[0].spares_used, 1u);
    ASSERT_EQ(r.pending.size(), 1u);
    EXPECT_EQ(r.pending[0].job_id, 77u);
    EXPECT_EQ(r.pending[0].blocks, "rack04");
    EXPECT_EQ(r.pending[0].lost, 1u);
    EXPECT_EQ(r.pending[0].failed_at, 1000);
    EXPECT_EQ(r.pending[0].fallback_at, 1300);
    EXPECT_FALSE(r.pending[0].fallback);
}

TEST(Report, IdleClusterHasNoFragmentation) {
    const Planner planner(test::racks(2));
    std::vector<NodeState> states = test::all(planner.topology(), NodeState::kBusy);
    const ClusterReport r = make_report(planner, states, 5);
    EXPECT_EQ(r.free, 0);
    EXPECT_EQ(r.ordinary_free, 0);
    EXPECT_EQ(r.fragmentation, 0.0);
    EXPECT_EQ(r.blocks[0].spares_free, 0);
    EXPECT_TRUE(r.pending.empty());
    // All free: each block offers 16 of 18 (2 spares), one whole slice.
    states = test::all(planner.topology());
    const ClusterReport f = make_report(planner, states, 5);
    EXPECT_EQ(f.blocks[0].spares_free, 2);
    EXPECT_EQ(f.blocks[0].ordinary_free, 16);
    EXPECT_EQ(f.stranded, 0);
}

TEST(Report, LentNodesWithoutLendingCountAsBusy) {
    const Planner planner(test::racks(1));
    std::vector<NodeState> states = test::all(planner.topology());
    set(states, {0, 1}, NodeState::kLent);
    const BlockReport b = make_report(planner, states, 0).blocks[0];
    EXPECT_EQ(b.lent, 0);
    EXPECT_EQ(b.busy, 2);
    EXPECT_EQ(b.spares_lent, 0);
    EXPECT_EQ(b.spares_free, 2);
    EXPECT_EQ(b.ordinary_free, 14);
    EXPECT_EQ(b.stranded, 14);
}

TEST(Report, HealthNames) {
    EXPECT_STREQ(health_name(BlockHealth::kHealthy), "healthy");
    EXPECT_STREQ(health_name(BlockHealth::kDegraded), "degraded");
    EXPECT_STREQ(health_name(BlockHealth::kDown), "down");
}

TEST_F(ReportTest, BlockLines) {
    const ClusterReport r = report();
    EXPECT_EQ(block_line(r.blocks[0]), "BlockName=rack01 Nodes=gb[0001-0018] BlockSize=18 Slice=16 "
                                       "Spares=2 SparesFree=0 SparesUsed=0 "
                                       "SparesLent=2 Lending=yes Reserve=idle Health=healthy Free=16 Busy=0 "
                                       "Lent=2 Held=0 Failed=0 FailedNodes=(null) SpareDeficit=0 "
                                       "ShortOfSliceSeconds=0 Lemons=(null)");
    EXPECT_EQ(block_line(r.blocks[1]),
              "BlockName=rack02 Nodes=gb[0019-0036] BlockSize=18 Slice=16 Spares=2 SparesFree=0 "
              "SparesUsed=2 "
              "SparesLent=0 Lending=no Reserve=idle Health=degraded Free=7 Busy=8 Lent=0 Held=0 Failed=3 "
              "FailedNodes=gb[0019-0021] SpareDeficit=3 ShortOfSliceSeconds=0 Lemons=(null)");
    EXPECT_EQ(block_line(r.blocks[3]), "BlockName=rack04 Nodes=gb[0055-0072] BlockSize=18 Slice=16 "
                                       "Spares=2 SparesFree=1 SparesUsed=1 "
                                       "SparesLent=0 Lending=no Reserve=idle Health=healthy Free=17 Busy=0 "
                                       "Lent=0 Held=16 Failed=1 FailedNodes=gb0055 SpareDeficit=1 "
                                       "ShortOfSliceSeconds=0 Lemons=(null)");
    EXPECT_EQ(summary_line(r),
              "nvlblock: Blocks=4 Nodes=72 Healthy=58 Failed=14 Stranded=7 Recoveries=2 InPlace=1 "
              "Fallbacks=0 Abandoned=0 Pending=1 Lemons=0 RecoveriesByTrigger=node_down:2,drained:0,after_end:0 "
              "RecoveriesByPath=node_fail:2,exit_code:0,requeue:0");
}

TEST_F(ReportTest, JsonIsValidAndComplete) {
    const std::string text = report_json(report());
    Json j;
    ASSERT_NO_THROW(j = parse_json(text)) << text;
    ASSERT_EQ(j.kind, Json::kObject);
    EXPECT_EQ(j["schema"].text, "nvlblock-status/1");
    EXPECT_EQ(j["generated_at"].number, 1100);
    const Json& c = j["cluster"];
    EXPECT_EQ(c["nodes"].number, 72);
    EXPECT_EQ(c["nodes_in_blocks"].number, 72);
    EXPECT_EQ(c["healthy"].number, 58);
    EXPECT_EQ(c["failed"].number, 14);
    EXPECT_EQ(c["busy"].number, 8);
    EXPECT_EQ(c["lent"].number, 2);
    EXPECT_EQ(c["free"].number, 48);
    EXPECT_EQ(c["ordinary_free"].number, 23);
    EXPECT_EQ(c["stranded"].number, 7);
    EXPECT_EQ(c["fragmentation"].text, "0.3043");
    const Json& rec = j["recoveries"];
    EXPECT_EQ(rec["failures"].number, 2);
    EXPECT_EQ(rec["in_place"].number, 1);
    EXPECT_EQ(rec["fallbacks"].number, 0);
    EXPECT_EQ(rec["abandoned"].number, 0);
    ASSERT_EQ(rec["pending"].size(), 1u);
    EXPECT_EQ(rec["pending"][0]["job_id"].number, 77);
    EXPECT_EQ(rec["pending"][0]["blocks"].text, "rack04");
    EXPECT_EQ(rec["pending"][0]["fallback"].kind, Json::kBool);
    EXPECT_FALSE(rec["pending"][0]["fallback"].b);
    ASSERT_EQ(rec["recent"].size(), 1u);
    EXPECT_EQ(rec["recent"][0]["outcome"].text, "in_place");
    EXPECT_EQ(rec["recent"][0]["seconds"].number, 50);
    const Json& blocks = j["blocks"];
    ASSERT_EQ(blocks.kind, Json::kArray);
    ASSERT_EQ(blocks.size(), 4u);
    EXPECT_EQ(blocks[0]["name"].text, "rack01");
    EXPECT_TRUE(blocks[0]["lending"].b);
    EXPECT_EQ(blocks[0]["spares_lent"].number, 2);
    EXPECT_EQ(blocks[0]["failed_nodes"].text, "");
    EXPECT_EQ(blocks[1]["health"].text, "degraded");
    EXPECT_EQ(blocks[1]["failed_nodes"].text, "gb[0019-0021]");
    EXPECT_EQ(blocks[1]["down"].number, 2);
    EXPECT_EQ(blocks[1]["drained"].number, 1);
    EXPECT_EQ(blocks[2]["health"].text, "down");
    EXPECT_EQ(blocks[3]["held"].number, 16);
    EXPECT_EQ(blocks[3]["spares_free"].number, 1);
    for (const char* key :
         {"name",         "nodes",  "size",          "slice",    "spares",        "lending",
          "reserve",      "health", "healthy",       "failed",   "down",          "drained",
          "failed_nodes", "busy",   "lent",          "free",     "spares_free",   "spares_used",
          "spares_lent",  "held",   "ordinary_free", "stranded", "spare_deficit", "short_of_slice_seconds",
          "lemons"})
        EXPECT_NO_THROW(blocks[3][key]) << key;
    EXPECT_EQ(blocks[3].size(), 25u);
    EXPECT_EQ(blocks[3]["reserve"].text, "idle");
}

TEST(Report, ReclaimedSparesAreFreeNodesFirstThenTheWorkOnThem) {
    // reserve: reclaim, 18-node rack: a 16-node job and a 1-node job; one
    // node free. The free node is a spare ready at once; the other spare runs
    // the 1-node job and would be reclaimed. Ordinary work may take the free node.
    const Planner planner(test::racks(1, 18, 16, 2, false, "  reserve: reclaim\n"));
    std::vector<NodeState> states = test::all(planner.topology());
    test::set(states, test::range(0, 16), NodeState::kBusy);
    const ClusterReport r = make_report(planner, states, 0);
    ASSERT_EQ(r.blocks.size(), 1u);
    EXPECT_TRUE(r.blocks[0].reclaim);
    EXPECT_EQ(r.blocks[0].spares_free, 1);
    EXPECT_EQ(r.blocks[0].spares_lent, 1);
    EXPECT_EQ(r.blocks[0].ordinary_free, 1);
    EXPECT_NE(block_line(r.blocks[0]).find(" Reserve=reclaim "), std::string::npos) << block_line(r.blocks[0]);
    const Json j = parse_json(report_json(r));
    EXPECT_EQ(j["blocks"][0]["reserve"].text, "reclaim");
}

TEST(Report, ReclaimPassesReportSlurmsLocksHeld) {
    // What the plugin's reclaim passes held Slurm's write locks for
    // (plugin/topology/status_thread.c): reported where a block reclaims,
    // per pass and per open recovery looked at.
    Planner planner(test::racks(1, 18, 16, 2, false, "  reserve: reclaim\n"));
    planner.note_reclaim_pass(120, 100, 2);
    planner.note_reclaim_pass(900, 300, 3);
    planner.note_reclaim_pass(-5, -1, 0); // a clock step back counts as nothing
    std::vector<NodeState> states = test::all(planner.topology());
    const ClusterReport r = make_report(planner, states, 0);
    const Json j = parse_json(report_json(r));
    const Json& passes = j["recoveries"]["reclaim_passes"];
    EXPECT_EQ(passes["passes"].number, 3);
    EXPECT_EQ(passes["recoveries"].number, 5);
    EXPECT_EQ(passes["lock_held_us_total"].number, 1020);
    EXPECT_EQ(passes["lock_held_us_max"].number, 900);
    EXPECT_EQ(passes["cpu_us_total"].number, 400);
    EXPECT_EQ(passes["cpu_us_max"].number, 300);
    const std::string text = report_prometheus(r);
    for (const char* sample :
         {"\nnvlblock_reclaim_passes_total 3\n", "\nnvlblock_reclaim_pass_recoveries_total 5\n",
          "\nnvlblock_reclaim_pass_lock_seconds_total 0.00102\n", "\nnvlblock_reclaim_pass_lock_seconds_max 0.0009\n",
          "\nnvlblock_reclaim_pass_cpu_seconds_total 0.0004\n"})
        EXPECT_NE(text.find(sample), std::string::npos) << sample << text;
    // Without a reclaiming block there is no pass to report.
    Planner idle(test::racks(1, 18, 16, 2, false));
    const std::string none = report_json(make_report(idle, states, 0));
    EXPECT_EQ(none.find("reclaim_passes"), std::string::npos);
    EXPECT_EQ(report_prometheus(make_report(idle, states, 0)).find("nvlblock_reclaim_pass"), std::string::npos);
}

TEST(Report, JsonEscapesNames) {
    const Planner planner(
        test::yaml_topology("defaults:\n  slice: 2\n  spares: 0\nblocks:\n  - name: 'r\"1\\x'\n    nodes: n[1-2]\n"));
    std::vector<NodeState> states = test::all(planner.topology());
    const Json j = parse_json(report_json(make_report(planner, states, 0)));
    EXPECT_EQ(j["blocks"][0]["name"].text, "r\"1\\x");
}

TEST(Report, PrometheusEscapesLabelValues) {
    const Planner planner(
        test::yaml_topology("defaults:\n  slice: 2\n  spares: 0\nblocks:\n  - name: 'r\"1\\x'\n    nodes: n[1-2]\n"));
    std::vector<NodeState> states = test::all(planner.topology());
    const std::string text = report_prometheus(make_report(planner, states, 0));
    EXPECT_NE(text.find("\nnvlblock_block_nodes{block=\"r\\\"1\\\\x\"} 2\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nnvlblock_block_health{block=\"r\\\"1\\\\x\"} 0\n"), std::string::npos) << text;
}

TEST_F(ReportTest, Prometheus) {
    const std::string text = report_prometheus(report());
    std::map<std::string, std::string> samples; // "name{labels}" -> value
    std::map<std::string, std::string> types;
    std::map<std::string, int> helps;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        ASSERT_FALSE(line.empty());
        if (line.rfind("# HELP ", 0) == 0) {
            const std::string rest = line.substr(7);
            ++helps[rest.substr(0, rest.find(' '))];
            continue;
        }
        if (line.rfind("# TYPE ", 0) == 0) {
            std::istringstream f(line.substr(7));
            std::string name, type;
            f >> name >> type;
            types[name] = type;
            continue;
        }
        ASSERT_NE(line[0], '#') << line;
        const auto sp = line.rfind(' ');
        ASSERT_NE(sp, std::string::npos) << line;
        const std::string key = line.substr(0, sp);
        EXPECT_EQ(samples.count(key), 0u) << "duplicate sample " << key;
        samples[key] = line.substr(sp + 1);
        // Every sample's metric has HELP and TYPE before it.
        const std::string metric = key.substr(0, key.find('{'));
        EXPECT_EQ(helps[metric], 1) << metric;
        EXPECT_TRUE(types.count(metric)) << metric;
    }
    EXPECT_EQ(types["nvlblock_block_nodes"], "gauge");
    EXPECT_EQ(types["nvlblock_recoveries_total"], "counter");
    EXPECT_EQ(types["nvlblock_node_failures_total"], "counter");
    EXPECT_EQ(samples["nvlblock_block_nodes{block=\"rack01\"}"], "18");
    EXPECT_EQ(samples["nvlblock_block_healthy_nodes{block=\"rack02\"}"], "15");
    EXPECT_EQ(samples["nvlblock_block_failed_nodes{block=\"rack03\"}"], "10");
    EXPECT_EQ(samples["nvlblock_block_allocated_nodes{block=\"rack02\"}"], "8");
    EXPECT_EQ(samples["nvlblock_block_lent_nodes{block=\"rack01\"}"], "2");
    EXPECT_EQ(samples["nvlblock_block_free_nodes{block=\"rack04\"}"], "17");
    EXPECT_EQ(samples["nvlblock_block_spares{block=\"rack04\"}"], "2");
    EXPECT_EQ(samples["nvlblock_block_spares_free{block=\"rack04\"}"], "1");
    EXPECT_EQ(samples["nvlblock_block_spares_used{block=\"rack02\"}"], "2");
    EXPECT_EQ(samples["nvlblock_block_spares_lent{block=\"rack01\"}"], "2");
    EXPECT_EQ(samples["nvlblock_block_held_nodes{block=\"rack04\"}"], "16");
    EXPECT_EQ(samples["nvlblock_block_stranded_nodes{block=\"rack02\"}"], "7");
    EXPECT_EQ(samples["nvlblock_block_health{block=\"rack01\"}"], "0");
    EXPECT_EQ(samples["nvlblock_block_health{block=\"rack02\"}"], "1");
    EXPECT_EQ(samples["nvlblock_block_health{block=\"rack03\"}"], "2");
    EXPECT_EQ(samples["nvlblock_stranded_nodes"], "7");
    EXPECT_NEAR(std::stod(samples["nvlblock_fragmentation_ratio"]), 7.0 / 23.0, 1e-5);
    EXPECT_EQ(samples["nvlblock_recoveries_total{outcome=\"in_place\"}"], "1");
    EXPECT_EQ(samples["nvlblock_recoveries_total{outcome=\"fallback\"}"], "0");
    EXPECT_EQ(samples["nvlblock_recoveries_total{outcome=\"abandoned\"}"], "0");
    EXPECT_EQ(samples["nvlblock_node_failures_total"], "2");
    EXPECT_EQ(samples["nvlblock_recoveries_pending"], "1");
    EXPECT_EQ(samples["nvlblock_status_generated_seconds"], "1100");
    EXPECT_EQ(samples["nvlblock_reclaims_total"], "0");
    EXPECT_EQ(samples["nvlblock_reclaimed_jobs_total"], "0");
    EXPECT_EQ(samples["nvlblock_recovery_triggers_total{trigger=\"node_down\"}"], "2");
    EXPECT_EQ(samples["nvlblock_recovery_triggers_total{trigger=\"after_end\"}"], "0");
    EXPECT_EQ(samples["nvlblock_recovery_paths_total{path=\"node_fail\"}"], "2");
    EXPECT_EQ(samples["nvlblock_recovery_paths_total{path=\"exit_code\"}"], "0");
    // 16 per-block metrics for 4 blocks (the spare deficit, the time short
    // of a slice and the lemons among them), plus 10 cluster-wide samples
    // and the recoveries by trigger (3) and requeue path (3); no lemon here.
    EXPECT_EQ(samples.size(), 16u * 4 + 10 + 3 + 3);
    EXPECT_EQ(text.back(), '\n');
}

TEST(Report, GroupsSumTheirBlocks) {
    const Topology t = test::racks(4, 18, 16, 2, false,
                                   "hierarchy:\n  levels:\n    - name: su\n      groups:\n"
                                   "        su1: rack[01-02]\n        su2: rack03\n");
    Planner planner{t};
    auto s = test::all(t);
    set(s, range(0, 7), NodeState::kBusy);   // rack01: 8 busy
    set(s, range(18, 20), NodeState::kDown); // rack02: 3 failed (degraded)
    const ClusterReport r = make_report(planner, s, 1000);
    ASSERT_EQ(r.groups.size(), 2u); // rack04, in no SU, is left out
    const GroupReport& su1 = r.groups[0];
    EXPECT_EQ(group_line(su1), "GroupName=su1 Level=su Blocks=rack[01-02] BlockCount=2 Nodes=36 Healthy=33 "
                               "Failed=3 Free=25 OrdinaryFree=23 SparesFree=2 Busy=8 Lent=0 Held=0 DegradedBlocks=1");
    EXPECT_EQ(r.groups[1].blocks, "rack03");
    const Json j = parse_json(report_json(r));
    EXPECT_EQ(j["groups"][0]["name"].text, "su1");
    EXPECT_EQ(j["groups"][0]["ordinary_free"].number, 23);
    const std::string prom = report_prometheus(r);
    EXPECT_NE(prom.find("nvlblock_group_free_nodes{group=\"su1\",level=\"su\"} 25\n"), std::string::npos) << prom;
    EXPECT_NE(prom.find("nvlblock_group_degraded_blocks{group=\"su2\",level=\"su\"} 0\n"), std::string::npos);
}

} // namespace
} // namespace nvlblock
