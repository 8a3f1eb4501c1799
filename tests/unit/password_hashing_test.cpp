// auth::hash_password / verify_password: Argon2id on the blocking-work threads, each
// holding 64 MiB while it runs; a process runs at most kMaxHashing at once, and a
// hash asked for past that is refused at once with 503 (a log-in flood cannot take
// the memory of every pool thread of every worker). A log-in refused so tried no
// password, and costs no throttle count, unless the hash refused was its second (a
// guess was checked). A hang-up cuts no give-back. And a throttle limit of 0 is off. Passwords
// are hashed and checked in Unicode NFKC, and a hash of one as typed is made again so.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <kiln/app.hpp>
#include <kiln/auth.hpp>
#include <kiln/db.hpp>
#include <kiln/kiln.hpp>
#include <kiln/store.hpp>
#include <kiln/testing.hpp>

#include "auth/failure_counts.hpp"
#include "auth/hash_slot.hpp"
#include "net/async.hpp"
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

// An app with one account (ada@example.org, "correct horse") and a log-in at
// GET /login?pw=...: 200 "in", 401 with the refusal's message, or what was thrown.
class LogInApp {
public:
    explicit LogInApp(kiln::auth::Options options = {})
        : path_(std::filesystem::temp_directory_path() /
                ("kiln-hashing-" + std::to_string(getpid()) + "-" + std::to_string(++made_) + ".sqlite")) {
        std::filesystem::remove(path_);
        {
            kiln::db::Database setup(path_);
            setup.exec(
                "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL, "
                "password_hash TEXT NOT NULL, epoch INTEGER NOT NULL, created_at INTEGER NOT NULL)");
            setup.exec(
                "CREATE TABLE auth_failures (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, "
                "failures INTEGER NOT NULL, window_start INTEGER NOT NULL)");
        }
        store_ = std::make_unique<kiln::Store>(path_);
        accounts_ = std::make_unique<kiln::auth::Accounts>(*store_, options);
        options_ = options;
        app_.get("/signup", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            co_await accounts_->sign_up(req, "ada@example.org", "Ada", "correct horse");
            res.text("signed up");
        });
        app_.get("/login", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            try {
                co_await accounts_->log_in(req, "ada@example.org", std::string(req.query("pw").value_or("")));
                res.text("in");
            } catch (const kiln::auth::Error& e) {
                res.status(401).text(e.what());
            }
        });
        // Someone else's sign-up, and a password change of the account logged in.
        app_.get("/signup-other", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            co_await accounts_->sign_up(req, "bob@example.org", "Bob", "battery staple");
            res.text("signed up");
        });
        app_.get("/change", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            co_await accounts_->change_password(req, std::string(req.query("pw").value_or("")), "correct horse 2");
            res.text("changed");
        });
        // Any address and password: a sign-up, a log-in, and ada's hash made of the
        // bytes as typed (what kiln stored before passwords were normalized).
        app_.get("/signup-as", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            try {
                co_await accounts_->sign_up(req, std::string(req.query("email").value_or("")), "Someone",
                                            std::string(req.query("pw").value_or("")));
                res.text("signed up");
            } catch (const kiln::auth::Error& e) {
                res.status(422).text(e.what());
            }
        });
        app_.get("/login-as", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            try {
                co_await accounts_->log_in(req, std::string(req.query("email").value_or("")),
                                           std::string(req.query("pw").value_or("")));
                res.text("in");
            } catch (const kiln::auth::Error& e) {
                res.status(401).text(e.what());
            }
        });
        // A log-in whose request the give-back hook may cut (HangUpAtGiveBack).
        app_.get("/login-hanging-up", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            hanging_up = kiln::net::AsyncScope::current();
            try {
                co_await accounts_->log_in(req, "ada@example.org", std::string(req.query("pw").value_or("")));
                res.text("in");
            } catch (const kiln::auth::Error& e) {
                res.status(401).text(e.what());
            }
        });
        // Ada's hash made at the cheapest cost (a dormant account, hashed before the
        // cost was raised).
        app_.get("/hash-cheaply", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            std::string hash = co_await kiln::auth::hash_password(std::string(req.query("pw").value_or("")),
                                                                  {.passes = 1, .memory = 8 * 1024});
            co_await store_->execute("UPDATE users SET password_hash = ? WHERE email = 'ada@example.org'", hash);
            res.text("stored");
        });
        app_.get("/hash-as-typed", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            std::string hash = co_await kiln::auth::hash_password(std::string(req.query("pw").value_or("")));
            co_await store_->execute("UPDATE users SET password_hash = ? WHERE email = 'ada@example.org'", hash);
            res.text("stored");
        });
        // An app's own key in the session (a cart), and who the session says is in.
        app_.get("/put", [](kiln::Request& req, kiln::Response& res) {
            req.session().set("cart", std::string(req.query("cart").value_or("")));
            res.text("put");
        });
        app_.get("/whoami", [this](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
            std::optional<kiln::auth::User> u = co_await accounts_->current_user(req);
            kiln::Session* s = req.existing_session();
            res.text((u ? u->email : "nobody") + "," + std::string(s ? s->get("cart").value_or("") : ""));
        });
        client_ = std::make_unique<kiln::testing::Client>(app_);
        EXPECT_EQ(client_->get("/signup").status, 200);
    }
    ~LogInApp() {
        client_.reset();
        accounts_.reset();
        store_.reset();
        std::filesystem::remove(path_);
    }

    kiln::testing::Client& client() { return *client_; }
    kiln::App& app() { return app_; }
    // The same app and database under other options (an operator changed them).
    void reconfigure(kiln::auth::Options options) {
        accounts_ = std::make_unique<kiln::auth::Accounts>(*store_, options);
        options_ = options;
    }
    std::string stored_hash() {
        kiln::db::Database db(path_);
        return db.scalar<std::string>("SELECT password_hash FROM users");
    }
    // Log-in failure counts above 0 (the sign-up's own count aside), read with a
    // connection of the test's own.
    int64_t failure_rows() {
        kiln::db::Database db(path_);
        return db.scalar<int64_t>("SELECT count(*) FROM auth_failures WHERE failures > 0 AND key NOT LIKE 'sign-up:%'");
    }
    void delete_account(const std::string& email) {
        kiln::db::Database db(path_);
        db.exec("DELETE FROM users WHERE email = ?", email);
    }
    // The failures counted under the keys that begin with `prefix`.
    int64_t failures_of(const std::string& prefix) {
        kiln::db::Database db(path_);
        return db.scalar<int64_t>("SELECT coalesce(sum(failures), 0) FROM auth_failures WHERE substr(key, 1, ?) = ?",
                                  static_cast<int64_t>(prefix.size()), prefix);
    }
    // The sign-ups counted against the test client's address.
    int64_t sign_ups_counted() {
        kiln::db::Database db(path_);
        return db.scalar<int64_t>("SELECT coalesce(sum(failures), 0) FROM auth_failures WHERE key LIKE 'sign-up:%'");
    }

    // The request /login-hanging-up serves, while it runs.
    static inline kiln::net::AsyncScope* hanging_up = nullptr;

private:
    static inline int made_ = 0;
    std::filesystem::path path_;
    std::unique_ptr<kiln::Store> store_;
    std::unique_ptr<kiln::auth::Accounts> accounts_;
    kiln::auth::Options options_;
    kiln::App app_;
    std::unique_ptr<kiln::testing::Client> client_;
};

TEST(PasswordHashing, ALogInRefusedBecauseEverySlotIsTakenCostsNoAttempt) {
    LogInApp app;  // at most 5 failures of one account from one address
    {
        std::vector<std::unique_ptr<kiln::auth::HashSlot>> held;
        for (int i = 0; i < kiln::auth::kMaxHashing; ++i) held.push_back(std::make_unique<kiln::auth::HashSlot>());
        for (int i = 0; i < 8; ++i) {  // past the limit of 5, had they counted
            auto r = app.client().get("/login?pw=correct%20horse");
            EXPECT_EQ(r.status, 503) << i << " " << r.body;
            EXPECT_EQ(r.header("retry-after"), "1");
        }
        EXPECT_EQ(app.failure_rows(), 0);
    }
    auto r = app.client().get("/login?pw=correct%20horse");  // its owner is not locked out
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, "in");
}

// The same for a sign-up, a password change and a log-in of an unknown address (its
// decoy hash): a 503 for want of a slot gives back what it counted.
TEST(PasswordHashing, EveryPasswordCheckRefusedForWantOfASlotGivesItsCountsBack) {
    LogInApp app;
    ASSERT_EQ(app.client().get("/login?pw=correct%20horse").status, 200);  // for /change
    const int64_t signed_up = app.sign_ups_counted();
    ASSERT_EQ(signed_up, 1);
    {
        std::vector<std::unique_ptr<kiln::auth::HashSlot>> held;
        for (int i = 0; i < kiln::auth::kMaxHashing; ++i) held.push_back(std::make_unique<kiln::auth::HashSlot>());
        for (int i = 0; i < 8; ++i) {
            EXPECT_EQ(app.client().get("/signup-other").status, 503) << i;
            EXPECT_EQ(app.client().get("/change?pw=correct%20horse").status, 503) << i;
        }
        EXPECT_EQ(app.sign_ups_counted(), signed_up);
        EXPECT_EQ(app.failure_rows(), 0);
    }
    EXPECT_EQ(app.client().get("/change?pw=correct%20horse").status, 200);
    EXPECT_EQ(app.client().get("/signup-other").status, 200);
}

// Takes the last slot as the log-in asks for its second hash (the password as typed),
// so that hash alone is refused (the hook: src/auth/hash_slot.hpp).
struct SecondHashRefused {
    static inline int asked = 0;
    static inline std::unique_ptr<kiln::auth::HashSlot> taken;
    static void on_ask() {
        if (++asked == 2) taken = std::make_unique<kiln::auth::HashSlot>();  // asks once more: 3
    }
    SecondHashRefused() { kiln::auth::set_slot_request_hook(&on_ask); }
    ~SecondHashRefused() {
        kiln::auth::set_slot_request_hook(nullptr);
        taken.reset();
    }
    static void next() {
        asked = 0;
        taken.reset();
    }
};

// A wrong password with a full-width letter costs two hashes: normalized (NFKC makes
// the letter ASCII), then as typed (an account made before passwords were
// normalized). The second refused for want of a slot is still a 503, but a guess was
// checked: it keeps its throttle count, and the sixth is refused as too many. (Before,
// a guesser who typed so while keeping the slots busy was never counted.)
TEST(PasswordHashing, ALogInRefusedAtItsSecondHashKeepsItsAttemptCounted) {
    LogInApp app;  // at most 5 failures of one account from one address
    std::vector<std::unique_ptr<kiln::auth::HashSlot>> held;
    for (int i = 0; i < kiln::auth::kMaxHashing - 1; ++i) held.push_back(std::make_unique<kiln::auth::HashSlot>());
    const std::string wrong = "%EF%BD%97rong%20horse";  // U+FF57 FULLWIDTH LATIN SMALL LETTER W
    {
        SecondHashRefused refuse;
        for (int i = 0; i < 5; ++i) {
            SecondHashRefused::next();
            auto r = app.client().get("/login?pw=" + wrong);
            EXPECT_EQ(r.status, 503) << i << " " << r.body;
            EXPECT_EQ(SecondHashRefused::asked, 3) << i;  // both hashes asked for a slot
        }
        SecondHashRefused::next();
        auto r = app.client().get("/login?pw=" + wrong);
        EXPECT_EQ(r.status, 401) << r.body;
        EXPECT_EQ(r.body.rfind("Too many failed log-ins", 0), 0u) << r.body;
        EXPECT_EQ(SecondHashRefused::asked, 0);  // refused before any hash
    }
    EXPECT_GT(app.failure_rows(), 0);
}

// Cancels /login-hanging-up's request as the first give-back begins: the client hangs
// up at that moment (the hook: src/auth/failure_counts.hpp).
struct HangUpAtGiveBack {
    static inline int cuts = 0;
    static void on_give_back() {
        if (!LogInApp::hanging_up) return;
        LogInApp::hanging_up->cancel();
        LogInApp::hanging_up = nullptr;
        ++cuts;
    }
    HangUpAtGiveBack() {
        cuts = 0;
        kiln::auth::set_give_back_hook(&on_give_back);
    }
    ~HangUpAtGiveBack() {
        kiln::auth::set_give_back_hook(nullptr);
        LogInApp::hanging_up = nullptr;
    }
};

// An attempt refused at the account's limit gives back what it counted at its address
// and its pair, even when its client hangs up as it does: the throttle's bookkeeping
// runs to its end. (Before, the hang-up cancelled the give-backs, and each refused
// attempt cut so kept its counts: refusals added up.)
TEST(PasswordHashing, AHangUpDuringAGiveBackLeavesNoCount) {
    kiln::auth::Options options;
    options.max_failures_per_account = 1;
    LogInApp app(options);
    EXPECT_EQ(app.client().get("/login?pw=wrong%20horse").body, "Wrong email address or password");
    const int64_t address = app.failures_of("address:"), pair = app.failures_of("account:ada@example.org from:");
    ASSERT_EQ(address, 1);
    ASSERT_EQ(pair, 1);
    ASSERT_EQ(app.failures_of("account:ada@example.org"), 2);  // the account's own, and the pair's
    HangUpAtGiveBack cut;
    for (int i = 0; i < 3; ++i) {
        app.client().get("/login-hanging-up?pw=wrong%20horse");  // refused at the account's 1, cut
        EXPECT_EQ(HangUpAtGiveBack::cuts, i + 1);
        EXPECT_EQ(app.failures_of("address:"), address) << i;
        EXPECT_EQ(app.failures_of("account:ada@example.org from:"), pair) << i;
    }
}

// A dormant account's hash, made at a lower cost, checks fast: a hash of the
// difference pads a wrong password's answer to the decoy's time (timing_pad). When
// every slot is taken for that pad, the answer waits as long instead, without one
// (before, it came at once: the address showed it had an account).
TEST(PasswordHashing, ADormantAccountsWrongPasswordIsPaddedWhenNoSlotIsFree) {
    using clock = std::chrono::steady_clock;
    LogInApp app;
    ASSERT_EQ(app.client().get("/hash-cheaply?pw=correct%20horse").status, 200);
    // An unknown address: the decoy, at today's cost (the first may make the decoy);
    // the quicker of two more.
    EXPECT_EQ(app.client().get("/login-as?email=nobody@example.org&pw=wrong%20horse").status, 401);
    auto unknown = clock::duration::max();
    for (int i = 0; i < 2; ++i) {
        auto started = clock::now();
        EXPECT_EQ(app.client().get("/login-as?email=nobody@example.org&pw=wrong%20horse").status, 401);
        unknown = std::min(unknown, clock::now() - started);
    }
    std::vector<std::unique_ptr<kiln::auth::HashSlot>> held;
    for (int i = 0; i < kiln::auth::kMaxHashing - 1; ++i) held.push_back(std::make_unique<kiln::auth::HashSlot>());
    SecondHashRefused refuse;  // the second asked for is the pad's
    SecondHashRefused::next();
    auto started = clock::now();
    auto r = app.client().get("/login?pw=wrong%20horse");
    const auto known = clock::now() - started;
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_EQ(SecondHashRefused::asked, 3);  // the check, then the pad, refused
    // Loosely (the machine may be busy): without the wait it is a cheap hash's time,
    // a small fraction of the decoy's.
    EXPECT_GT(known, unknown / 3) << std::chrono::duration_cast<std::chrono::microseconds>(known).count() << " us, "
                                  << std::chrono::duration_cast<std::chrono::microseconds>(unknown).count() << " us";
}

TEST(PasswordHashing, ThrottleLimitsOf0AreOff) {
    kiln::auth::Options options;
    options.max_failures_per_account_and_address = 0;
    options.max_failures_per_account = 0;
    options.max_failures_per_address = 0;
    LogInApp app(options);
    for (int i = 0; i < 2; ++i) {  // a limit of 0 that counted would refuse the second
        auto r = app.client().get("/login?pw=wrong%20horse");
        EXPECT_EQ(r.status, 401) << i;
        EXPECT_EQ(r.body, "Wrong email address or password") << i;
    }
    EXPECT_EQ(app.failure_rows(), 0);  // nothing counted
    EXPECT_EQ(app.client().get("/login?pw=correct%20horse").status, 200);
}

// An operator changes the cost: each account's hash is made again at the new one when
// it next logs in (with the right password), and only then.
TEST(PasswordHashing, AHashMadeAtAnotherCostIsMadeAgainAtTheNextLogIn) {
    LogInApp app;  // signed up at the default cost
    std::string old_hash = app.stored_hash();
    EXPECT_NE(old_hash.find("$argon2id$v=19$m=65536,t=2,"), std::string::npos) << old_hash;
    EXPECT_FALSE(kiln::auth::password_needs_rehash(old_hash, {}));

    kiln::auth::Options cheaper;
    cheaper.password_cost = {.passes = 1, .memory = 64 * 1024};
    EXPECT_TRUE(kiln::auth::password_needs_rehash(old_hash, cheaper.password_cost));
    app.reconfigure(cheaper);
    EXPECT_EQ(app.client().get("/login?pw=wrong%20horse").status, 401);
    EXPECT_EQ(app.stored_hash(), old_hash);  // a wrong password changes nothing
    auto r = app.client().get("/login?pw=correct%20horse");  // the old hash still verifies
    EXPECT_EQ(r.status, 200) << r.body;
    std::string new_hash = app.stored_hash();
    EXPECT_NE(new_hash.find("$argon2id$v=19$m=64,t=1,"), std::string::npos) << new_hash;
    EXPECT_EQ(app.client().get("/login?pw=correct%20horse").status, 200);  // and the new one
    EXPECT_EQ(app.stored_hash(), new_hash);                                // made once
    EXPECT_TRUE(kiln::auth::password_needs_rehash("$2b$10$not.argon2", cheaper.password_cost));  // another algorithm

    kiln::auth::Options refused;
    refused.password_cost = {.passes = 0, .memory = 64 * 1024};
    EXPECT_THROW(app.reconfigure(refused), std::invalid_argument);
    // Past what libsodium takes (every hash would throw: every sign-up a 500), and
    // memory not in whole KiB (every log-in would hash again: the stored m= rounds).
    refused.password_cost = {.passes = (1ull << 32), .memory = 64 * 1024};
    EXPECT_THROW(app.reconfigure(refused), std::invalid_argument);
    refused.password_cost = {.passes = 1, .memory = 64 * 1024 + 1};
    EXPECT_THROW(app.reconfigure(refused), std::invalid_argument);
}

// Passwords are Unicode NFKC: what looks the same is the same password.
TEST(PasswordHashing, APasswordIsNormalizedToNFKC) {
    using kiln::auth::normalize_password;
    EXPECT_EQ(normalize_password("correct horse"), "correct horse");
    EXPECT_EQ(normalize_password("caf\x65\xCC\x81 au lait"), "caf\xC3\xA9 au lait");  // e + U+0301: é
    EXPECT_EQ(normalize_password("\xEF\xBC\xA1\xEF\xBC\xA2"), "AB");                 // full-width Ａ Ｂ
    EXPECT_EQ(normalize_password("\xEF\xAC\x81"), "fi");                                // the ligature ﬁ
    const std::string not_utf8("pass\xFF\xFEword\0x", 12);
    EXPECT_EQ(normalize_password(not_utf8), not_utf8);  // bytes as they are
    std::string many;  // U+FDFA, 18 code points each once decomposed: more than the first guess
    for (int i = 0; i < 50; ++i) many += "\xEF\xB7\xBA";
    std::string once = normalize_password("\xEF\xB7\xBA");
    EXPECT_GT(once.size(), 18u);
    std::string expected;
    for (int i = 0; i < 50; ++i) expected += once;
    EXPECT_EQ(normalize_password(many), expected);
    EXPECT_EQ(normalize_password(""), "");
}

// Signed up with "café" typed one way (e and a combining accent, as some keyboards
// send it), the account logs in with it typed the other way (é), and the other way round.
TEST(PasswordHashing, ThePasswordLogsInHoweverItsAccentsWereTyped) {
    LogInApp app;
    const std::string decomposed = "caf%65%CC%81%20au%20lait", composed = "caf%C3%A9%20au%20lait";
    ASSERT_EQ(app.client().get("/signup-as?email=carol@example.org&pw=" + decomposed).status, 200);
    EXPECT_EQ(app.client().get("/login-as?email=carol@example.org&pw=" + composed).status, 200);
    EXPECT_EQ(app.client().get("/login-as?email=carol@example.org&pw=" + decomposed).status, 200);
    EXPECT_EQ(app.client().get("/login-as?email=carol@example.org&pw=cafe%20au%20lait").status, 401);
    // Eight characters as typed (four e's, four accents), four once normalized: too short.
    auto r = app.client().get("/signup-as?email=dan@example.org&pw=e%CC%81e%CC%81e%CC%81e%CC%81");
    EXPECT_EQ(r.status, 422);
    EXPECT_EQ(r.body, "Password must be at least 8 characters");
}

// A code point Unicode has not assigned may get another normal form once a later
// version does (and the library is upgraded): a new password with one is refused
// (422) rather than hashed in a form its owner could lose. A character assigned,
// however rare or recent, is taken.
TEST(PasswordHashing, ANewPasswordWithAnUnassignedCodePointIsRefused) {
    LogInApp app;
    // U+40000 (plane 4 holds nothing) and U+FDD0 (a noncharacter, unassigned for good).
    for (const char* unassigned : {"%F1%80%80%80", "%EF%B7%90"}) {
        auto r = app.client().get(std::string("/signup-as?email=eve@example.org&pw=correct%20horse") + unassigned);
        EXPECT_EQ(r.status, 422) << unassigned;
        EXPECT_EQ(r.body, "Password must not contain characters Unicode has not assigned") << unassigned;
    }
    // U+1F600 (an emoji) and U+4E00 (a CJK ideograph).
    EXPECT_EQ(app.client().get("/signup-as?email=eve@example.org&pw=correct%20horse%F0%9F%98%80%E4%B8%80").status, 200);
    EXPECT_EQ(app.client().get("/login-as?email=eve@example.org&pw=correct%20horse%F0%9F%98%80%E4%B8%80").status, 200);
}

// An account made before passwords were normalized holds the hash of the bytes as
// typed: it logs in with them, and its hash is then made of the normalized form, so
// the other way of typing works from then on.
TEST(PasswordHashing, AHashOfThePasswordAsTypedIsMadeAgainNormalized) {
    LogInApp app;
    const std::string decomposed = "caf%65%CC%81%20au%20lait", composed = "caf%C3%A9%20au%20lait";
    ASSERT_EQ(app.client().get("/hash-as-typed?pw=" + decomposed).status, 200);
    const std::string as_typed = app.stored_hash();
    EXPECT_EQ(app.client().get("/login-as?email=ada@example.org&pw=" + composed).status, 401);
    EXPECT_EQ(app.stored_hash(), as_typed);
    EXPECT_EQ(app.client().get("/login-as?email=ada@example.org&pw=" + decomposed).status, 200);
    EXPECT_NE(app.stored_hash(), as_typed);
    EXPECT_EQ(app.client().get("/login-as?email=ada@example.org&pw=" + composed).status, 200);

    // One whose normalized form would be refused (U+FDFA is 3 bytes, 33 once
    // normalized: 40 of them pass 1,024 bytes) stays hashed as typed, and logs in
    // again (hashed normalized, its owner would have been locked out).
    std::string long_one;
    for (int i = 0; i < 40; ++i) long_one += "%EF%B7%BA";
    ASSERT_EQ(app.client().get("/hash-as-typed?pw=" + long_one).status, 200);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(app.client().get("/login-as?email=ada@example.org&pw=" + long_one).status, 200) << i;
}

}  // namespace

// A session its user's password change logged out (another browser changed it) kept
// the rest of what it held: the next account to log in on that browser inherited it.
TEST(PasswordHashing, ASessionLoggedOutByAPasswordChangeKeepsNothingOfItsUser) {
    LogInApp app;  // the client signed up: ada is logged in on it
    EXPECT_EQ(app.client().get("/put?cart=three%20books").status, 200);
    EXPECT_EQ(app.client().get("/whoami").body, "ada@example.org,three books");
    kiln::testing::Client other(app.app());
    EXPECT_EQ(other.get("/login?pw=correct%20horse").body, "in");
    EXPECT_EQ(other.get("/change?pw=correct%20horse").body, "changed");
    EXPECT_EQ(app.client().get("/whoami").body, "nobody,");
}

// An account deleted while logged in on a browser, and a new one that got its id
// again (SQLite reuses the highest): logging in there, the new one inherited what the
// old one's session held (start_session compared the ids, not the epochs).
TEST(PasswordHashing, ANewAccountWithADeletedOnesIdKeepsNothingOfItsSession) {
    LogInApp app;  // the client signed up: ada is logged in on it
    EXPECT_EQ(app.client().get("/put?cart=three%20books").status, 200);
    EXPECT_EQ(app.client().get("/whoami").body, "ada@example.org,three books");
    app.delete_account("ada@example.org");
    kiln::testing::Client other(app.app());
    ASSERT_EQ(other.get("/signup-as?email=carol@example.org&pw=battery%20staple").status, 200);
    auto r = app.client().get("/login-as?email=carol@example.org&pw=battery%20staple");
    EXPECT_EQ(r.body, "in");
    EXPECT_EQ(app.client().get("/whoami").body, "carol@example.org,");
    // Its own session, logged in again, keeps what it holds.
    EXPECT_EQ(app.client().get("/put?cart=a%20pen").status, 200);
    EXPECT_EQ(app.client().get("/login-as?email=carol@example.org&pw=battery%20staple").body, "in");
    EXPECT_EQ(app.client().get("/whoami").body, "carol@example.org,a pen");
}
