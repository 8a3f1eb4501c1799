// The hash that makes up a dormant account's cheaper hash (timing_pad.hpp): the cost
// a stored Argon2id string was made at, and the pad that brings it to today's.
#include <gtest/gtest.h>

#include "auth/timing_pad.hpp"

using kiln::auth::cost_of;
using kiln::auth::PasswordCost;
using kiln::auth::timing_pad;

TEST(TimingPad, TheCostOfAStoredHashIsReadFromItsParameters) {
    auto c = cost_of("$argon2id$v=19$m=65536,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2g");
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->passes, 2u);
    EXPECT_EQ(c->memory, size_t{64} << 20);
    EXPECT_FALSE(cost_of("$2b$10$another.algorithm"));
    EXPECT_FALSE(cost_of("$argon2id$v=19$t=2,p=1$no-memory"));
    EXPECT_FALSE(cost_of("$argon2id$v=19$m=,t=2,p=1$x"));
    EXPECT_FALSE(cost_of("$argon2id$v=19$m=65536,t=0,p=1$x"));
    EXPECT_FALSE(cost_of("$argon2id$v=19$m=99999999999,t=1,p=1$x"));  // past 4 GiB
    EXPECT_FALSE(cost_of(""));
}

TEST(TimingPad, AHashMadeCheaperIsMadeUpToTodaysCostAndNoOtherIs) {
    const PasswordCost today{.passes = 2, .memory = size_t{256} << 20};
    // 2 × 64 MiB made, 2 × 256 MiB wanted: 384 MiB-passes between, in at most today's
    // 256 MiB: two passes of 256 MiB (the rounding up: a little more, never less).
    auto pad = timing_pad({.passes = 2, .memory = size_t{64} << 20}, today);
    ASSERT_TRUE(pad.has_value());
    EXPECT_EQ(pad->passes, 2u);
    EXPECT_EQ(pad->memory, size_t{256} << 20);
    // 1 × 64 MiB made, 1 × 128 MiB wanted: one pass of the 64 MiB between.
    pad = timing_pad({.passes = 1, .memory = size_t{64} << 20}, {.passes = 1, .memory = size_t{128} << 20});
    ASSERT_TRUE(pad.has_value());
    EXPECT_EQ(pad->passes, 1u);
    EXPECT_EQ(pad->memory, size_t{64} << 20);
    EXPECT_FALSE(timing_pad(today, today));
    EXPECT_FALSE(timing_pad({.passes = 4, .memory = size_t{256} << 20}, today));  // dearer: nothing to add
    EXPECT_FALSE(timing_pad({.passes = 2, .memory = (size_t{256} << 20) - 2048}, today));  // 4 KiB short: below Argon2's least
}
