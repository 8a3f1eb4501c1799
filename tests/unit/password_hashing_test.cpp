// auth::hash_password / verify_password: Argon2id on the blocking-work threads, each
// holding 64 MiB while it runs; a process runs at most kMaxHashing at once, and a
// hash asked for past that is refused at once with 503 (a log-in flood cannot take
// the memory of every pool thread of every worker).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/auth.hpp>

#include "support/async_test.hpp"

namespace {

TEST(PasswordHashing, AHashVerifiesItsPasswordAndNoOther) {
    kiln::test::run([]() -> kiln::Task<> {
        std::string h = co_await kiln::auth::hash_password("correct horse");
        EXPECT_TRUE(co_await kiln::auth::verify_password(h, "correct horse"));
        EXPECT_FALSE(co_await kiln::auth::verify_password(h, "correct horsE"));
        EXPECT_FALSE(co_await kiln::auth::verify_password("not a hash", "correct horse"));
    });
}

TEST(PasswordHashing, PastTheLimitAHashIsRefusedWith503AndTheOthersFinish) {
    const int n = kiln::auth::kMaxHashing + 3;
    int hashed = 0, refused = 0, other = 0;
    kiln::test::run([&]() -> kiln::Task<> {
        auto one = [&](int i) -> kiln::Task<> {
            try {
                std::string h = co_await kiln::auth::hash_password("password " + std::to_string(i));
                if (!h.empty()) ++hashed;
            } catch (const kiln::HttpError& e) {
                if (e.status() == 503) ++refused;
                else ++other;
            }
        };
        std::vector<kiln::Task<>> all;
        for (int i = 0; i < n; ++i) {
            all.push_back(one(i));
            all.back().start();  // all asked for before any is done
        }
        co_await kiln::test::join(all);
        // The slots are free again: one more goes through.
        EXPECT_FALSE((co_await kiln::auth::hash_password("afterwards")).empty());
    });
    EXPECT_EQ(hashed, kiln::auth::kMaxHashing);
    EXPECT_EQ(refused, n - kiln::auth::kMaxHashing);
    EXPECT_EQ(other, 0);
}

}  // namespace
