// A loop's topic table (detail::WsTopics, under kiln::publish): each subscriber of
// a topic gets each message once, whatever order subscribers joined and left in,
// including leaving (itself or another) and joining from inside a delivery.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/task.hpp>

#include "app/ws_internal.hpp"
#include "support/async_test.hpp"

using kiln::Task;
using kiln::detail::WsTopics;

namespace {

struct Subscriber {
    std::map<std::string, int> got;  // message -> times delivered
    std::vector<std::pair<Subscriber*, std::string>> leave_on_message;  // (who, topic)
    std::vector<std::pair<Subscriber*, std::string>> join_on_message;
};

void on_message(void* self, std::string_view data, bool) {
    auto* s = static_cast<Subscriber*>(self);
    ++s->got[std::string(data)];
    for (auto& [who, topic] : std::exchange(s->leave_on_message, {})) WsTopics::leave(who, topic);
    for (auto& [who, topic] : std::exchange(s->join_on_message, {})) WsTopics::join(who, &on_message, topic);
}

}  // namespace

TEST(WsTopics, EachSubscriberGetsEachMessageOnceThroughRandomJoinsAndLeaves) {
    kiln::test::run([]() -> Task<> {
        std::vector<Subscriber> subs(400);
        std::set<Subscriber*> in;  // the model: who is subscribed to "t"
        std::mt19937 rng(7);
        for (int step = 0; step < 4000; ++step) {
            Subscriber* s = &subs[rng() % subs.size()];
            if (rng() % 2) {
                WsTopics::join(s, &on_message, "t");  // joining twice is joining once
                in.insert(s);
            } else {
                WsTopics::leave(s, "t");
                in.erase(s);
            }
            if (step % 500 != 499) continue;
            std::string m = "m" + std::to_string(step);
            WsTopics::deliver("t", m, false);
            for (Subscriber& each : subs)
                EXPECT_EQ(each.got[m], in.count(&each) ? 1 : 0) << "subscriber " << (&each - subs.data()) << ", " << m;
        }
        for (Subscriber* s : in) WsTopics::leave(s, "t");
        WsTopics::deliver("t", "after", false);
        for (Subscriber& each : subs) EXPECT_EQ(each.got["after"], 0);
        co_return;
    });
}

TEST(WsTopics, LeavingAndJoiningInsideADeliveryTakesEffectForTheNextMessage) {
    kiln::test::run([]() -> Task<> {
        std::vector<Subscriber> subs(6);
        for (Subscriber& s : subs) WsTopics::join(&s, &on_message, "t");
        // The first leaves itself and the last (not yet delivered to), then joins
        // the last again: within one delivery, a blanked place and a new one.
        subs[0].leave_on_message = {{&subs[0], "t"}, {&subs[5], "t"}};
        subs[0].join_on_message = {{&subs[5], "t"}};
        subs[2].leave_on_message = {{&subs[3], "t"}};  // one after it
        WsTopics::deliver("t", "one", false);
        EXPECT_EQ(subs[0].got["one"], 1);
        EXPECT_EQ(subs[1].got["one"], 1);
        EXPECT_EQ(subs[2].got["one"], 1);
        EXPECT_EQ(subs[3].got["one"], 0);  // left before its turn
        EXPECT_EQ(subs[4].got["one"], 1);
        EXPECT_EQ(subs[5].got["one"], 0);  // left before its turn; joined again after it
        WsTopics::deliver("t", "two", false);
        std::vector<int> two;
        for (Subscriber& s : subs) two.push_back(s.got["two"]);
        EXPECT_EQ(two, (std::vector<int>{0, 1, 1, 0, 1, 1}));
        // And the table still knows each place: every one left, nobody hears a third.
        for (Subscriber& s : subs) WsTopics::leave(&s, "t");
        WsTopics::deliver("t", "three", false);
        for (Subscriber& s : subs) EXPECT_EQ(s.got["three"], 0);
        co_return;
    });
}
