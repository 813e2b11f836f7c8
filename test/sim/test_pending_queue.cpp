// SPDX-License-Identifier: GPL-2.0-or-later
//
// The pending queue as one sorted array (tools/sim/pending_queue.hpp): it
// holds and walks the same jobs in the same order as the std::set it
// replaced, including walks during which jobs leave (starts) and come back
// (requeues), the case a std::set iterator that is not erased survives; and
// beside each job the time before which it may not start, which the
// backfill's walk reads instead of the job.
#include "pending_queue.hpp"
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace nvlblock::sim {
namespace {

using Key = PendingQueue::Key;

std::vector<Key> walked(const PendingQueue& q) {
    std::vector<Key> out;
    q.for_each([&](Key k) {
        out.push_back(k);
        return false;
    });
    return out;
}

TEST(PendingQueue, HoldsAndWalksWhatAStdSetHolds) {
    PendingQueue q;
    std::set<Key> ref;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> pct(0, 99);
    std::uint32_t next_job = 0;
    Seconds clock = 0;
    std::vector<Key> started;
    for (int step = 0; step < 20000; ++step) {
        const int r = pct(rng);
        if (r < 45 || ref.empty()) { // a submission at the end
            const Key k{clock += pct(rng) % 3, next_job++};
            q.insert(k);
            ref.insert(k);
        } else if (r < 90) { // a start: often the head, else anywhere
            auto it = ref.begin();
            if (r % 3 != 0)
                std::advance(it, static_cast<long>(rng() % ref.size()));
            const Key k = *it;
            q.erase(k);
            ref.erase(it);
            if (r % 7 == 0) { // requeued at once in its old place (RequeueOrder::kSubmit)
                q.insert(k);
                ref.insert(k);
            } else if (r % 5 == 0) {
                started.push_back(k); // requeued in its old place later, after walks stepped over its gap
            }
        } else if (r < 94 && !started.empty()) { // back in its old place
            const std::size_t i = rng() % started.size();
            q.insert(started[i]);
            ref.insert(started[i]);
            started.erase(started.begin() + static_cast<long>(i));
        } else { // a job put back in the middle with a time of its own
            const Key k{clock - pct(rng), next_job++};
            q.insert(k);
            ref.insert(k);
        }
        ASSERT_EQ(q.size(), ref.size());
        if (step % 13 == 0) {
            ASSERT_EQ(walked(q), std::vector<Key>(ref.begin(), ref.end())) << "step " << step;
        }
        const Key probe{clock - pct(rng), static_cast<std::uint32_t>(rng() % (next_job + 1))};
        ASSERT_EQ(q.contains(probe), ref.count(probe) == 1);
        ASSERT_EQ(q.erase(probe), ref.erase(probe) == 1); // a job not queued: no change, as std::set
        if (!ref.empty()) {
            ASSERT_FALSE(q.insert(*ref.begin())); // queued already: no change
        }
    }
}

// A walk that starts jobs as it goes (each step may erase the job it reads
// and requeue others) reads what a std::set walk reads when it steps its
// iterator before each change.
TEST(PendingQueue, AWalkThatChangesTheQueueReadsWhatASetWalkReads) {
    for (unsigned seed = 1; seed <= 30; ++seed) {
        std::mt19937 rng(seed);
        std::vector<Key> jobs;
        for (std::uint32_t j = 0; j < 300; ++j)
            jobs.push_back({static_cast<Seconds>(j / 2), j});
        PendingQueue q;
        std::set<Key> ref;
        std::vector<Key> gone; // started, to be requeued in their place
        for (const Key& k : jobs) {
            q.insert(k);
            ref.insert(k);
        }
        std::uint32_t next_job = 300;
        // The same random changes, applied to both after each job read.
        std::vector<std::vector<int>> plan;
        std::vector<Key> read_q, read_ref;
        auto change = [&](std::size_t step, Key at, auto&& insert, auto&& erase) {
            while (plan.size() <= step) {
                std::vector<int> p;
                for (int i = 0; i < 3; ++i)
                    p.push_back(static_cast<int>(rng() % 100));
                plan.push_back(p);
            }
            const std::vector<int>& p = plan[step];
            if (p[0] < 60)
                erase(at); // it started
            if (p[1] < 10) // a job requeued far ahead or behind
                insert(Key{static_cast<Seconds>(p[2] * 2), next_job + static_cast<std::uint32_t>(step)});
        };
        std::size_t step = 0;
        for (PendingQueue::Cursor c = q.first(); !c.done; ++step) {
            const Key k = c.key;
            read_q.push_back(k);
            q.advance(c);
            change(
                step, k, [&](Key n) { q.insert(n); }, [&](Key n) { q.erase(n); });
        }
        step = 0;
        for (auto it = ref.begin(); it != ref.end(); ++step) {
            const Key k = *it;
            read_ref.push_back(k);
            ++it;
            change(
                step, k, [&](Key n) { ref.insert(n); }, [&](Key n) { ref.erase(n); });
        }
        ASSERT_EQ(read_q, read_ref) << "seed " << seed;
        ASSERT_EQ(walked(q), std::vector<Key>(ref.begin(), ref.end())) << "seed " << seed;
        next_job += 1000;
    }
}

Seconds not_before_of(const PendingQueue& q, Key k) {
    for (PendingQueue::Cursor c = q.first(); !c.done; q.advance(c))
        if (c.key == k)
            return c.not_before;
    ADD_FAILURE() << "job " << k.second << " is not queued";
    return -1;
}

TEST(PendingQueue, EachJobKeepsTheTimeBeforeWhichItMayNotStart) {
    PendingQueue q;
    for (std::uint32_t i = 0; i < 200; ++i)
        q.insert({static_cast<Seconds>(i), i}, 1000 + i);
    q.insert({-5, 500}, 7); // into the middle: the entries behind it move
    EXPECT_EQ(not_before_of(q, {-5, 500}), 7);
    EXPECT_EQ(not_before_of(q, {150, 150}), 1150);
    q.hold({150, 150}, 2000);
    EXPECT_EQ(not_before_of(q, {150, 150}), 2000);
    q.hold({150, 150}, 10); // never earlier
    EXPECT_EQ(not_before_of(q, {150, 150}), 2000);
    for (std::uint32_t i = 0; i < 190; ++i) // gaps outnumber jobs: closed
        q.erase({static_cast<Seconds>(i), i});
    EXPECT_EQ(not_before_of(q, {195, 195}), 1195);
    q.insert({150, 150}, 30); // requeued in its old place: its new time
    EXPECT_EQ(not_before_of(q, {150, 150}), 30);
    q.hold({1, 1}, 99); // not queued: nothing
    EXPECT_EQ(q.size(), 12u);
}

// A job that preempted others waits for them to go (a grace time): the
// queue's time for it is then the end of that wait, as for every queued job
// it is World::not_before(job).
TEST(PendingQueue, AJobWaitingForTheJobsItPreemptedIsNotBeforeTheirEnd) {
    SimOptions o = test::two_racks();
    o.victims.grace_time = 120;
    o.victims.kill_wait = 30;
    World w(o, make_policy(PolicyKind::kNvlblock, o.shape, PreemptionMode::kAll));
    for (const char* name : {"P1", "P2"}) { // preemptible work fills both racks' slices
        const std::uint32_t p = w.submit(test::job(name, 0, 16, 5000, true), 0);
        ASSERT_TRUE(w.job(p).preemptible);
        const nvlblock::Placement at = w.attempt(w.job(p), 0);
        ASSERT_TRUE(at.placed());
        ASSERT_TRUE(w.start(p, at, 0));
    }
    const std::uint32_t j = w.submit(test::job("J", 40, 16, 600), 40);
    const nvlblock::Placement at = w.attempt(w.job(j), 50);
    ASSERT_TRUE(at.placed());
    EXPECT_FALSE(w.start(j, at, 50)); // it waits for P1 or P2
    EXPECT_EQ(w.job(j).preempting_until, 50 + 120 + 30);
    EXPECT_EQ(not_before_of(w.pending(), {w.job(j).queued_at, j}), 200);
    for (PendingQueue::Cursor c = w.pending().first(); !c.done; w.pending().advance(c))
        EXPECT_EQ(c.not_before, World::not_before(w.job(c.key.second))) << "job " << c.key.second;
}

} // namespace
} // namespace nvlblock::sim
