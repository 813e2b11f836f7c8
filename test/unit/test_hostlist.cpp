// SPDX-License-Identifier: GPL-2.0-or-later
//
// Hostlist expressions: expansion in written order, padding, products,
// suffixes, every error with its message, and compress() round trips.
#include "model/hostlist.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace nvlblock::hostlist {
namespace {

using Names = std::vector<std::string>;

// gb0001..gbNNNN-style names with the given prefix, width and range.
Names seq(const std::string& prefix, int first, int last, int width, const std::string& suffix = "") {
    Names out;
    for (int i = first; i <= last; ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%0*d", width, i);
        out.push_back(prefix + buf + suffix);
    }
    return out;
}

// The message of the HostlistError that expand(expr) throws; "" if none.
std::string expand_error(const std::string& expr) {
    try {
        expand(expr);
    } catch (const HostlistError& e) {
        return e.what();
    }
    return "";
}

TEST(HostlistExpand, SingleName) {
    EXPECT_EQ(expand("gb0001"), Names{"gb0001"});
    EXPECT_EQ(expand("login"), Names{"login"});
}

TEST(HostlistExpand, PaddedRangeOfARack) {
    const Names got = expand("gb[0001-0018]");
    ASSERT_EQ(got.size(), 18u);
    EXPECT_EQ(got, seq("gb", 1, 18, 4));
    EXPECT_EQ(got.front(), "gb0001");
    EXPECT_EQ(got.back(), "gb0018");
}

TEST(HostlistExpand, RangeAndSingleInOneBracket) {
    Names want = seq("gb", 1, 16, 3);
    want.push_back("gb018");
    EXPECT_EQ(expand("gb[001-016,018]"), want);
}

TEST(HostlistExpand, SeveralPatternsAtTopLevel) {
    EXPECT_EQ(expand("a[1-2],b7"), (Names{"a1", "a2", "b7"}));
    EXPECT_EQ(expand("x,y,z"), (Names{"x", "y", "z"}));
}

TEST(HostlistExpand, SeveralRangesKeepWrittenOrder) {
    EXPECT_EQ(expand("n[5-6,1-2,9]"), (Names{"n5", "n6", "n1", "n2", "n9"}));
    EXPECT_EQ(expand("b[3-4],a[1-2]"), (Names{"b3", "b4", "a1", "a2"}));
}

TEST(HostlistExpand, TwoBracketsExpandAsAProduct) {
    EXPECT_EQ(expand("rack[1-2]-n[01-03]"),
              (Names{"rack1-n01", "rack1-n02", "rack1-n03", "rack2-n01", "rack2-n02", "rack2-n03"}));
}

TEST(HostlistExpand, SuffixAfterTheBracket) {
    EXPECT_EQ(expand("n[1-3]-ib"), (Names{"n1-ib", "n2-ib", "n3-ib"}));
    EXPECT_EQ(expand("n[1-2]x[3]"), (Names{"n1x3", "n2x3"}));
}

TEST(HostlistExpand, PaddingFollowsTheLowBound) {
    // Leading zeros set the width; numbers that outgrow it are written in full.
    EXPECT_EQ(expand("n[08-10]"), (Names{"n08", "n09", "n10"}));
    EXPECT_EQ(expand("n[8-10]"), (Names{"n8", "n9", "n10"}));
    EXPECT_EQ(expand("n[098-100]"), (Names{"n098", "n099", "n100"}));
    EXPECT_EQ(expand("n[0]"), (Names{"n0"}));
}

TEST(HostlistExpand, BracketOnlyName) {
    EXPECT_EQ(expand("[1-3]"), (Names{"1", "2", "3"}));
}

TEST(HostlistExpand, DuplicatesAreKept) {
    EXPECT_EQ(expand("n[1-2],n1"), (Names{"n1", "n2", "n1"}));
}

TEST(HostlistExpand, SingleElementRange) {
    EXPECT_EQ(expand("n[5-5]"), (Names{"n5"}));
}

TEST(HostlistExpand, LargestAllowedRange) {
    const Names got = expand("n[1-" + std::to_string(kMaxHosts) + "]");
    ASSERT_EQ(got.size(), kMaxHosts);
    EXPECT_EQ(got.back(), "n" + std::to_string(kMaxHosts));
}

TEST(HostlistErrors, MissingCloseBracket) {
    EXPECT_EQ(expand_error("gb[1-3"), "bad hostlist 'gb[1-3': missing ']'");
    EXPECT_EQ(expand_error("a[1-2],b[3"), "bad hostlist 'a[1-2],b[3': missing ']'");
}

TEST(HostlistErrors, CloseWithoutOpen) {
    EXPECT_EQ(expand_error("a]"), "bad hostlist 'a]': ']' without '['");
    EXPECT_EQ(expand_error("a[1]]"), "bad hostlist 'a[1]]': ']' without '['");
}

TEST(HostlistErrors, BackwardsRange) {
    EXPECT_EQ(expand_error("gb[3-1]"), "bad hostlist 'gb[3-1]': range 3-1 runs backwards");
}

TEST(HostlistErrors, Empty) {
    EXPECT_EQ(expand_error(""), "bad hostlist '': empty");
    EXPECT_EQ(expand_error("a[]"), "bad hostlist 'a[]': empty brackets");
}

TEST(HostlistErrors, NonDigitInBrackets) {
    EXPECT_EQ(expand_error("gb[a-3]"), "bad hostlist 'gb[a-3]': 'a' is not a number or range");
    EXPECT_EQ(expand_error("gb[1-x]"), "bad hostlist 'gb[1-x]': 'x' is not a number or range");
    EXPECT_EQ(expand_error("gb[1-2-3]"), "bad hostlist 'gb[1-2-3]': '2-3' is not a number or range");
    EXPECT_EQ(expand_error("gb[-3]"), "bad hostlist 'gb[-3]': empty number in range");
    EXPECT_EQ(expand_error("gb[3-]"), "bad hostlist 'gb[3-]': empty number in range");
}

TEST(HostlistErrors, TooLarge) {
    EXPECT_EQ(expand_error("n[1-99999999]"), "bad hostlist 'n[1-99999999]': range 1-99999999 is too large");
    EXPECT_EQ(expand_error("n[1-" + std::to_string(kMaxHosts + 1) + "]"),
              "bad hostlist 'n[1-" + std::to_string(kMaxHosts + 1) + "]': range 1-" + std::to_string(kMaxHosts + 1) +
                  " is too large");
    // Each bracket alone is fine; their product is not.
    EXPECT_EQ(expand_error("a[1-2048]b[1-2048]"), "bad hostlist 'a[1-2048]b[1-2048]': expands to too many hosts");
    EXPECT_EQ(expand_error("n[1234567890123456789]"),
              "bad hostlist 'n[1234567890123456789]': number '1234567890123456789' is too long");
}

TEST(HostlistErrors, Nested) {
    EXPECT_EQ(expand_error("n[1-[2]]"), "bad hostlist 'n[1-[2]]': nested '['");
}

TEST(HostlistErrors, EmptyBetweenCommas) {
    EXPECT_EQ(expand_error("a,,b"), "bad hostlist 'a,,b': empty host name between commas");
    EXPECT_EQ(expand_error(",a"), "bad hostlist ',a': empty host name between commas");
    EXPECT_EQ(expand_error("a,"), "bad hostlist 'a,': empty host name between commas");
    EXPECT_EQ(expand_error("a[1,,2]"), "bad hostlist 'a[1,,2]': empty item in brackets");
    EXPECT_EQ(expand_error("a[1,]"), "bad hostlist 'a[1,]': empty item in brackets");
}

TEST(HostlistErrors, WhiteSpaceInName) {
    EXPECT_EQ(expand_error(" a"), "bad hostlist ' a': white space in host name ' a'");
    EXPECT_EQ(expand_error("a[1-2], b"), "bad hostlist 'a[1-2], b': white space in host name ' b'");
}

TEST(HostlistErrors, IsAnInvalidArgument) {
    EXPECT_THROW(expand("gb[1-3"), std::invalid_argument);
}

TEST(HostlistCompress, EmptyAndSingle) {
    EXPECT_EQ(compress({}), "");
    EXPECT_EQ(compress({"gb0001"}), "gb0001");
    EXPECT_EQ(compress({"login"}), "login");
}

TEST(HostlistCompress, ARack) {
    EXPECT_EQ(compress(seq("gb", 1, 18, 4)), "gb[0001-0018]");
}

TEST(HostlistCompress, RangesAndSingles) {
    EXPECT_EQ(compress({"gb01", "gb02", "gb03", "gb07"}), "gb[01-03,07]");
    Names v = seq("gb", 1, 16, 3);
    v.push_back("gb018");
    EXPECT_EQ(compress(v), "gb[001-016,018]");
}

TEST(HostlistCompress, PreservesOrder) {
    // Not sorted: names come back in the order given.
    EXPECT_EQ(compress({"n5", "n6", "n1", "n2"}), "n[5-6,1-2]");
    EXPECT_EQ(compress({"b3", "a1", "a2"}), "b3,a[1-2]");
    EXPECT_EQ(compress({"n3", "n2", "n1"}), "n[3,2,1]");
}

TEST(HostlistCompress, DifferentPrefixesOrWidthsAreSeparate) {
    EXPECT_EQ(compress({"a1", "a2", "b1", "b2"}), "a[1-2],b[1-2]");
    EXPECT_EQ(compress({"n01", "n02", "n3"}), "n[01-02],n3");
    EXPECT_EQ(compress({"a1", "login", "a2"}), "a1,login,a2");
}

TEST(HostlistCompress, KeepsSuffixes) {
    EXPECT_EQ(compress({"n1-ib", "n2-ib", "n3-ib"}), "n[1-3]-ib");
    EXPECT_EQ(compress({"n1-ib", "n2-ib", "n3-eth"}), "n[1-2]-ib,n3-eth");
    EXPECT_EQ(compress({"rack1-n01", "rack1-n02", "rack2-n01"}), "rack1-n[01-02],rack2-n01");
}

TEST(HostlistCompress, RoundTrips) {
    const char* exprs[] = {"gb[0001-0018]", "gb[001-016,018]", "a[1-2],b7",    "rack[1-2]-n[01-03]",  "n[1-3]-ib",
                           "n[08-10]",      "n[8-10]",         "n[5-6,1-2,9]", "login,gb[0001-0004]", "x"};
    for (const char* e : exprs) {
        const Names names = expand(e);
        const std::string c = compress(names);
        EXPECT_EQ(expand(c), names) << e << " compressed to " << c;
    }
}

TEST(HostlistCompress, CanonicalFormsAreFixedPoints) {
    for (const char* e : {"gb[0001-0018]", "gb[001-016,018]", "a[1-2],b7", "n[1-3]-ib", "n[5-6,1-2]"})
        EXPECT_EQ(compress(expand(e)), e);
}

} // namespace
} // namespace nvlblock::hostlist
