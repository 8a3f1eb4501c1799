// kiln::auth: accounts for an app: sign-up, log-in, log-out and password change,
// on the app's own kiln::Store (SQLite or PostgreSQL) and its sessions.
//
//   kiln::auth::Accounts accounts(store);
//   app.post("/login", [&](kiln::Request& req, kiln::Response& res) -> kiln::Task<> {
//       try {
//           co_await accounts.log_in(req, form_email, form_password);
//           res.redirect("/", 303);
//       } catch (const kiln::auth::Error& e) { ... show the form again with e.what() ... }
//   });
//   app.use(accounts.require_login([](const kiln::Request& r) { return r.path().starts_with("/admin"); }));
//   std::optional<kiln::auth::User> me = co_await accounts.current_user(req);
//
// Passwords are hashed with Argon2id (libsodium's crypto_pwhash, by default its
// "interactive" cost: 64 MiB and a few tens of milliseconds; Options::password_cost sets
// another, and a hash made at an older cost is made again when its account next logs
// in), on kiln's blocking-work threads so
// the event loop never waits for one; a hash is never logged, shown or compared by
// hand. A log-in with an unknown e-mail address costs the same hash as a known one
// (no timing tells which addresses have accounts), and both get the same message.
//
// Log-in throttling: failures are counted per account from each client address
// (Request::client_block), per account from all addresses together and per
// address, in the store's auth_failures table, so every node that shares the
// database shares the counts. Past max_failures_* within the window a log-in is
// refused before any password is checked (Error::Kind::Throttled, with the seconds to
// wait); a success clears its account's counts. One guesser thus stops after 5 tries
// at an account while its owner, elsewhere, still logs in; only guesses spread over
// many addresses (50 in all by default) lock the account for everyone. An IPv6
// client counts by its /64. Each attempt is counted before its password is checked
// (given back when it succeeds, or when a limit refuses it), in one statement per
// count that also checks the limit, so attempts that arrive together see each other:
// a burst cannot pass a limit by its own size. A client whose address is unknown (a
// unix socket listener) is counted for its account only: it is not stopped by
// address, and can lock an account alone (use the PROXY protocol on such a listener).
// The rows of windows that are over are deleted, once a window.
//
// Sign-up throttling: every sign-up that passes the field checks costs a hash, and
// one for a taken address tells that it has an account. So sign-ups are counted per
// client address too ("sign-up:<address>", max_sign_ups_per_address in the window),
// success or not, and refused beyond with Throttled before any hash (not counted
// when the address is unknown).
//
// Sessions: a log-in regenerates the session id (an id seen before it is worth
// nothing) and stores the user's id and the account's session epoch; changing the
// password bumps the epoch, so every other session of the account is logged out.
// An account's first epoch is random, so a session of a deleted account does not
// fit a later one that got its id again (SQLite reuses the highest id).
// The account, or the new password, is stored before the session is (after the
// handler): a session store that cannot save it (Redis unreachable: 503) leaves the
// account made, or the password changed, and its user logs in again. Never the
// other way round: no session names an account that was not stored.
// The tables (users, auth_failures) are the app's: `kiln generate auth` writes their
// migration, a controller and views.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include <kiln/app.hpp>
#include <kiln/model.hpp>
#include <kiln/request.hpp>
#include <kiln/response.hpp>
#include <kiln/store.hpp>
#include <kiln/task.hpp>

namespace kiln::auth {

class FailureCounts;  // src/auth/failure_counts.hpp

struct User {
    int64_t id = 0;
    std::string email;          // the log-in name: trimmed, lower-cased, unique
    std::string name;           // shown
    std::string password_hash;  // Argon2id in libsodium's string form; never shown
    int64_t epoch = 1;          // random at sign-up, bumped by a password change: older sessions end
    int64_t created_at = 0;     // unix seconds
};

// A failed log-in counter (the auth_failures table): "account:<email>",
// "account:<email> from:<address>" or "address:<address>", or a sign-up counter,
// "sign-up:<address>"; an IPv6 address counts by its /64 ("2001:db8:1:2::/64").
struct Failures {
    int64_t id = 0;
    std::string key;  // unique
    int64_t failures = 0;
    int64_t window_start = 0;  // unix seconds
};

class Error : public std::runtime_error {
public:
    enum class Kind : uint8_t {
        Invalid,         // a field's value is refused (field() names it)
        Taken,           // sign-up: an account has this e-mail address
        BadCredentials,  // log-in or password change: wrong e-mail address or password
        Throttled,       // too many failures: retry_after() seconds to wait
        NotLoggedIn,     // a call that needs a logged-in user
    };
    Error(Kind kind, std::string field, const std::string& message, int64_t retry_after = 0)
        : std::runtime_error(message), kind_(kind), field_(std::move(field)), retry_after_(retry_after) {}
    Kind kind() const { return kind_; }
    const std::string& field() const { return field_; }  // "email", "name", "password", "current_password" or ""
    int64_t retry_after() const { return retry_after_; }

private:
    Kind kind_;
    std::string field_;
    int64_t retry_after_;
};

// Argon2id's cost: passes over memory (libsodium's opslimit and memlimit). The default
// is libsodium's "interactive" one. A stored hash made at another cost still verifies,
// and is made again at this one when its account next logs in.
struct PasswordCost {
    unsigned long long passes = 2;   // 1 to 2^32 - 1
    size_t memory = size_t{64} << 20;  // bytes, 8 KiB to 4 GiB, in whole KiB
    bool operator==(const PasswordCost&) const = default;
};

// A throttle limit of 0 turns that count off (a site behind one NAT address may want
// no per-address limit); the others still hold.
struct Options {
    std::chrono::seconds throttle_window{15 * 60};
    int max_failures_per_account_and_address = 5;  // one account from one address, within the window
    int max_failures_per_account = 50;             // one account from all addresses together
    int max_failures_per_address = 50;  // within the window (many users may share one address)
    int max_sign_ups_per_address = 50;  // sign-ups that reach the hash, from one address within the window
    size_t min_password_chars = 8;
    size_t max_password_bytes = 1024;
    std::string login_path = "/login";  // where require_login sends the logged-out
    PasswordCost password_cost;         // for new hashes (sign-up, password change, re-hash at log-in)
};

// Argon2id, on a blocking-work thread (a coroutine awaits it; the loop goes on).
// Each holds its cost's memory (64 MiB by default) while it runs: at most kMaxHashing
// run at once in a process, and one past that throws HttpError 503 (with Retry-After)
// at once. A log-in, sign-up or password change so refused before it checked a
// password costs no throttle count; one refused at its second hash (a log-in's or a
// change's current password as typed, after the normalized form was wrong) keeps its
// count, as one was checked.
inline constexpr int kMaxHashing = 4;
Task<std::string> hash_password(std::string password, PasswordCost cost = {});
Task<bool> verify_password(std::string hash, std::string password);
// Whether `hash` was made at another cost (or another algorithm) than `cost`.
bool password_needs_rehash(const std::string& hash, PasswordCost cost);
// A password in the form Accounts hashes and checks it in: Unicode NFKC (as NIST SP
// 800-63B advises), so "é" typed as one character or as "e" and a combining accent,
// or a full-width "Ａ" and "A", are the same password. Bytes that are not UTF-8 are
// returned as they are. Accounts made before this rule still log in with the bytes
// they chose; their hash is then made again, normalized.
std::string normalize_password(std::string_view password);

// Trimmed and lower-cased; throws Error(Invalid, "email") unless it is one address
// of 3 to 254 bytes with an @ inside and no spaces or control characters.
std::string normalize_email(std::string_view email);

// Where to send a visitor once logged in: `next` (what require_login put in
// login_path?next=) when it is a path of this site, else `fallback`. A path of this
// site starts with one '/' and holds no backslash and no control character: a browser
// reads "//host", "/\host" and "/<TAB>/host" (it drops tabs and newlines) as another site.
std::string local_path_or(std::string_view next, std::string_view fallback);

class Accounts {
public:
    // Throws std::invalid_argument for a password cost libsodium refuses.
    explicit Accounts(Store& store, Options options = {});
    Accounts(const Accounts&) = delete;
    Accounts& operator=(const Accounts&) = delete;

    // A new account, logged in on this request's session. Throws Error: Invalid
    // (with its field), Throttled (field "email"; nothing checked), Taken.
    Task<User> sign_up(Request& req, std::string email, std::string name, std::string password);
    // Throws Error: Throttled (nothing checked), BadCredentials (counted).
    Task<User> log_in(Request& req, std::string email, std::string password);
    // Ends the session (its data and cookie go).
    void log_out(Request& req);
    // Checks `current` (a failure counts as a log-in failure), stores `next`, bumps
    // the epoch (every other session of the account ends) and regenerates this
    // session's id. Throws Error: NotLoggedIn, Throttled, BadCredentials, Invalid.
    Task<> change_password(Request& req, std::string current, std::string next);

    // The logged-in user (read once per request, then kept in req.local<User>()), or
    // nullopt: no session, no user id in it, the account is gone or its epoch moved.
    Task<std::optional<User>> current_user(Request& req);
    // The user id in the request's session, without a database read (nullopt if none).
    // Not for deciding access: a session a password change ended still holds its id
    // (current_user checks the epoch).
    static std::optional<int64_t> session_user_id(Request& req);

    // A middleware for the requests `which` selects (all when empty): a logged-out
    // client is sent to login_path?next=<the path it asked for> (303) with a flash
    // notice; a logged-in one goes on, its User in req.local<User>().
    AsyncMiddleware require_login(std::function<bool(const Request&)> which = {});
    // What require_login answers: the redirect to the log-in page.
    void send_to_login(Request& req, Response& res) const;

    const Options& options() const { return options_; }

private:
    struct ThrottleKeys {  // the auth_failures rows one attempt counts in ("": none)
        std::string account, pair, address;
    };
    // No account (nullopt): the attempt named none, and counts for its address only;
    // no known address (a unix socket): for its account only.
    // A limit of 0 turns its key off.
    ThrottleKeys throttle_keys(std::optional<std::string_view> account, const Request& req) const;
    // Counts the attempt under each key (its address, the account from that address,
    // the account from all), each only while under its limit; at a key already at its
    // limit, gives back what it took at the others and throws Throttled. This and the
    // two below run to their end when the request is cancelled meanwhile.
    Task<> take_attempt(const ThrottleKeys& keys, int64_t now);
    // A success: the account's counts go, the address's gives back the count this
    // attempt took at counted_at.
    Task<> forget_attempt(const ThrottleKeys& keys, int64_t counted_at);
    // An attempt that checked no password (every hashing slot was taken, 503): each
    // key gives back the count it took at counted_at.
    Task<> give_back_attempt(const ThrottleKeys& keys, int64_t counted_at);
    // Drops the rows of windows that are over, once per window.
    Task<> purge_now_and_then(FailureCounts& counts, int64_t now);
    // renewal: the same session after a password change (not brought back if a
    // log-out removed it meanwhile); else a log-in or sign-up.
    void start_session(Request& req, const User& user, bool renewal = false);
    // After a log-in: the account's hash made again at options_.password_cost (skipped
    // when hashing is full; a failure is logged, never the log-in's).
    Task<> rehash(const User& user, const std::string& password);
    std::string check_password(std::string_view password) const;  // "" or why not

    Store& store_;
    Options options_;
    std::atomic<int64_t> next_purge_{0};  // unix seconds
};

}  // namespace kiln::auth

template <>
struct kiln::db::Model<kiln::auth::User> {
    static constexpr auto table = "users";
    static constexpr auto fields = std::make_tuple(
        field("id", &kiln::auth::User::id), field("email", &kiln::auth::User::email),
        field("name", &kiln::auth::User::name), field("password_hash", &kiln::auth::User::password_hash),
        field("epoch", &kiln::auth::User::epoch), field("created_at", &kiln::auth::User::created_at));
};

template <>
struct kiln::db::Model<kiln::auth::Failures> {
    static constexpr auto table = "auth_failures";
    static constexpr auto fields = std::make_tuple(field("id", &kiln::auth::Failures::id),
                                                   field("key", &kiln::auth::Failures::key),
                                                   field("failures", &kiln::auth::Failures::failures),
                                                   field("window_start", &kiln::auth::Failures::window_start));
};
