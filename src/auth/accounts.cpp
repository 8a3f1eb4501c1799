#include <sodium.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include <kiln/auth.hpp>
#include <kiln/csrf.hpp>  // flash
#include <kiln/sleep.hpp>
#include <kiln/view.hpp>  // url_encode

#include "auth/failure_counts.hpp"
#include "auth/hash_slot.hpp"
#include "auth/password_form.hpp"
#include "auth/timing_pad.hpp"
#include "auth/wipe.hpp"
#include "net/async.hpp"
#include "util/log.hpp"
#include "util/random.hpp"
#include "util/utf8.hpp"

namespace kiln::auth {
namespace {

constexpr std::string_view kUserKey = "kiln.user_id";
constexpr std::string_view kEpochKey = "kiln.user_epoch";

int64_t now_seconds() { return static_cast<int64_t>(std::time(nullptr)); }

// A name as shown to others, or an address at sign-up: no control character (a NUL
// would also be cut by SQLite's length() and refused by PostgreSQL), and none that
// hides or turns text: C1 controls, no-break and other spaces that are not ASCII's,
// zero widths, bidirectional marks, embeddings, overrides and isolates, line
// separators, the byte-order mark ("ada@example.org" and "ada@example.org\u00A0"
// would be two accounts that look the same). A name may hold the zero-width joiner
// and non-joiner (Persian and Indic names, emoji sequences need them).
// REQUIRES: s is UTF-8.
bool printable(std::string_view s, bool name) {
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = 0;
        size_t len = utf8::sequence_at(s, i, &cp);
        if (len == 0) return false;
        i += len;
        if (name && (cp == 0x200C || cp == 0x200D)) continue;
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x061C || cp == 0x1680 || cp == 0x180E ||
            (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F) ||
            cp == 0x3000 || cp == 0xFEFF)
            return false;
    }
    return true;
}

// Characters (code points) in s, or nullopt if it is not UTF-8.
std::optional<size_t> chars(std::string_view s) {
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++n) {
        size_t len = utf8::sequence_at(s, i);
        if (len == 0) return std::nullopt;
        i += len;
    }
    return n;
}

// "3 minutes", "1 minute": a wait of `seconds`, rounded up.
std::string minutes(int64_t seconds) {
    int64_t m = (seconds + 59) / 60;
    return std::to_string(m) + (m == 1 ? " minute" : " minutes");
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
    return s;
}

// 1 to 2^40: a new account's first session epoch.
int64_t first_epoch() {
    uint64_t r = 0;
    util::random_bytes(&r, sizeof r);
    return static_cast<int64_t>(r & ((uint64_t{1} << 40) - 1)) + 1;
}

// How long checking a hash made at one cost took in this process lately: a moving
// average over the decoy's checks and making, and the checks of accounts hashed at
// that cost. Zero before the first, and for another cost (a new cost starts it over;
// two Accounts at two costs in one process would keep starting it over).
class CheckTimes {
public:
    void note(const PasswordCost& cost, std::chrono::nanoseconds took) {
        std::lock_guard<std::mutex> hold(m_);
        if (cost_ == cost && average_.count() > 0) average_ += (took - average_) / 8;
        else average_ = took;
        cost_ = cost;
    }
    std::chrono::nanoseconds typical(const PasswordCost& cost) {
        std::lock_guard<std::mutex> hold(m_);
        return cost_ == cost ? average_ : std::chrono::nanoseconds{0};
    }

private:
    std::mutex m_;
    PasswordCost cost_;
    std::chrono::nanoseconds average_{0};
};

CheckTimes& check_times() {
    static CheckTimes times;
    return times;
}

// Hashed in place of an unknown account's, so a wrong e-mail address costs what a
// wrong password does. Made once per loop thread and cost, on first use (a coroutine
// resumes on its own loop's thread, so nothing here is shared between threads).
Task<std::string> decoy_hash(PasswordCost cost) {
    thread_local std::string made;
    thread_local PasswordCost made_at;
    if (made.empty() || !(made_at == cost)) {
        const auto started = std::chrono::steady_clock::now();
        made = co_await hash_password("kiln decoy password, never anyone's", cost);
        made_at = cost;
        check_times().note(cost, std::chrono::steady_clock::now() - started);  // a hash takes what a check does
    }
    co_return made;
}

// Whether `password` is the account's (`user`, or none: then a decoy hash is checked,
// so an unknown address costs what a wrong password does). Past `max_bytes`: wrong,
// with no hash paid for it.
Task<bool> password_matches(const User* user, const std::string& password, const Options& options) {
    std::string hash;
    if (user) hash = user->password_hash;
    else hash = co_await decoy_hash(options.password_cost);
    if (password.size() > options.max_password_bytes) co_return false;
    std::optional<PasswordCost> pad;
    bool at_today = !user;
    if (user) {
        std::optional<PasswordCost> stored = cost_of(hash);
        if (stored) pad = timing_pad(*stored, options.password_cost);
        at_today = stored && *stored == options.password_cost;
    }
    const auto started = std::chrono::steady_clock::now();
    bool ok = co_await verify_password(std::move(hash), secret_copy(password));
    const std::chrono::nanoseconds took = std::chrono::steady_clock::now() - started;
    if (at_today) check_times().note(options.password_cost, took);
    if (!ok && pad) {  // made at a lower cost than the decoy: as long as it, or the address shows
        bool busy = false;
        try {
            co_await hash_password("kiln timing pad, never anyone's", *pad);
        } catch (const HashingBusy&) {
            busy = true;
        }
        // Every slot taken: the answer does not wait for one, but for as long as a
        // check at today's cost lately took, less this one (no memory held meanwhile).
        const std::chrono::nanoseconds typical = check_times().typical(options.password_cost);
        if (busy && typical > took)
            co_await sleep(std::chrono::duration_cast<std::chrono::milliseconds>(typical - took));
    }
    co_return ok;
}

// Which form of a password typed matches: the normalized one (normalize_password),
// or, for an account made before passwords were normalized, the bytes as typed.
enum class Match { None, Normalized, AsTyped };

// Tries `form`, then `typed` if it differs (whether or not the account exists: an
// unknown address costs the same two hashes). Both outlive the call (the caller's
// TypedPassword). Every hashing slot taken for the second hash: a 503 that is not a
// HashingBusy, as a guess was checked already, so its throttle count stays (else a
// guesser who types one letter full-width and keeps the slots busy is never counted).
// (No co_await in a condition or a catch: tests/lint/co_await_conditions.py, GCC 12.)
Task<Match> password_form_matches(const User* user, const std::string& form, const std::string& typed,
                                  const Options& options) {
    bool ok = co_await password_matches(user, form, options);
    if (ok) co_return Match::Normalized;
    if (typed == form) co_return Match::None;
    bool busy = false;
    try {
        ok = co_await password_matches(user, typed, options);
    } catch (const HashingBusy&) {
        busy = true;
    }
    if (busy) throw HttpError(503, "Service Unavailable: too many passwords being checked; try again");
    co_return ok ? Match::AsTyped : Match::None;
}

// A password typed, in the form it is hashed in (normalize_password) and as typed.
// These two copies are wiped when they go (the hashing functions wipe theirs; the
// caller wipes the text they are made from).
struct TypedPassword {
    WipedText typed, form;
    TypedPassword(const std::string& text, size_t max_bytes) {
        typed.text = secret_copy(text);
        // (Past max_bytes it matches nothing: no work spent on it.)
        form.text = typed.text.size() <= max_bytes ? normalize_password(typed.text) : secret_copy(typed.text);
    }
};

Task<> nothing() { co_return; }

// Awaits `work`. When it found every hashing slot taken, a 503 that tried no password,
// awaits `give_back` (the throttle counts the attempt took) before passing the 503 on.
// (GCC 12: no co_await inside a catch.)
template <class T>
Task<T> giving_back_when_busy(Task<T> work, Task<> give_back) {
    std::exception_ptr busy;
    std::optional<T> out;
    try {
        out.emplace(co_await work);
    } catch (const HashingBusy&) {
        busy = std::current_exception();
    }
    if (busy) {
        {
            net::AsyncScope::Enter whole(nullptr);  // a hang-up must not cut it (take_attempt says why)
            co_await give_back;
        }
        std::rethrow_exception(busy);
    }
    co_return std::move(*out);
}

}  // namespace

std::string normalize_email(std::string_view email) {
    std::string_view t = trim(email);
    size_t at = t.find('@');
    bool ok = t.size() >= 3 && t.size() <= 254 && at != std::string_view::npos && at > 0 && at + 1 < t.size() &&
              t.find('@', at + 1) == std::string_view::npos;
    for (char c : t) ok = ok && static_cast<unsigned char>(c) > 0x20 && c != 0x7f;
    if (!ok || !chars(t)) throw Error(Error::Kind::Invalid, "email", "Email must be one address such as ada@example.org");
    std::string out(t);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

std::string local_path_or(std::string_view next, std::string_view fallback) {
    bool local = !next.empty() && next[0] == '/' && (next.size() == 1 || next[1] != '/');
    for (char c : next) local = local && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f && c != '\\';
    return std::string(local ? next : fallback);
}

Accounts::Accounts(Store& store, Options options) : store_(store), options_(std::move(options)) {
    const PasswordCost& c = options_.password_cost;
    // (What libsodium takes: passes to 2^32 - 1; memory in whole KiB, else every stored
    // hash reads as made at another cost and is made again at each log-in.)
    if (c.passes < 1 || c.passes > 0xFFFFFFFFull || c.memory < 8192 || c.memory > (size_t{4} << 30) || c.memory % 1024)
        throw std::invalid_argument("kiln::auth::Options::password_cost: passes must be 1 to 2^32 - 1 and memory "
                                    "8 KiB to 4 GiB, in whole KiB");
}

std::string Accounts::check_password(std::string_view password) const {
    if (password.size() > options_.max_password_bytes)
        return "Password must be at most " + std::to_string(options_.max_password_bytes) + " bytes";
    std::optional<size_t> n = chars(password);
    if (!n) return "Password must be text (UTF-8)";
    if (has_unassigned(password)) return "Password must not contain characters Unicode has not assigned";
    if (*n < options_.min_password_chars)
        return "Password must be at least " + std::to_string(options_.min_password_chars) + " characters";
    return {};
}

void Accounts::start_session(Request& req, const User& user, bool renewal) {
    Session& s = req.session();
    // Another account's session (still logged in on this browser) is not this user's
    // to keep: it starts empty. So does one of a deleted account whose id the user got
    // again (SQLite reuses the highest), told by its epoch, and one its own password
    // change logged out. A visitor's (a cart before the log-in) and the same user's
    // keep what they hold, as does the session a password change renews (its epoch
    // was the one before).
    std::optional<int64_t> was = s.get_int(kUserKey);
    if (was && (*was != user.id || (!renewal && s.get_int(kEpochKey) != user.epoch))) s.clear();
    // An id seen before the log-in is worth nothing after it. A renewal (a password
    // change) must not bring the session back if a log-out removed it meanwhile.
    s.regenerate(/*log_in=*/!renewal);
    s.set_int(kUserKey, user.id);
    s.set_int(kEpochKey, user.epoch);
    req.set_local(user);
}

Task<User> Accounts::sign_up(Request& req, std::string email, std::string name, std::string password) {
    WipeOnExit wipe(password);  // also when refused before it is hashed
    User u;
    u.email = normalize_email(email);
    // (At sign-up only: an account made before this rule still logs in.)
    if (!printable(u.email, false)) throw Error(Error::Kind::Invalid, "email", "Email must be one address such as ada@example.org");
    std::string_view shown = trim(name);
    std::optional<size_t> n = chars(shown);
    if (shown.empty() || !n || *n > 100)
        throw Error(Error::Kind::Invalid, "name", "Name must be 1 to 100 characters");
    if (!printable(shown, true))
        throw Error(Error::Kind::Invalid, "name", "Name must not hold control characters or invisible ones");
    u.name = std::string(shown);
    TypedPassword typed(password, options_.max_password_bytes);
    if (std::string why = check_password(typed.typed.text); !why.empty()) throw Error(Error::Kind::Invalid, "password", why);
    if (std::string why = check_password(typed.form.text); !why.empty()) throw Error(Error::Kind::Invalid, "password", why);
    int64_t now = now_seconds();
    // Counted before the hash, and only while under the limit (one statement: sign-ups
    // that arrive together cannot pass it by their number). A client of unknown
    // address (a unix socket) is not counted: all of them would share one count.
    FailureCounts counts(store_, options_.throttle_window);
    std::string key;
    if (std::string block = req.client_block(); !block.empty() && options_.max_sign_ups_per_address > 0) {
        key = "sign-up:" + block;
        co_await purge_now_and_then(counts, now);
        const bool within = co_await counts.count_within(key, options_.max_sign_ups_per_address, now);
        if (!within) {
            int64_t wait = co_await counts.wait_of(key, now);
            throw Error(Error::Kind::Throttled, "email",
                        "Too many sign-ups from your address: try again in " + minutes(wait), wait);
        }
    }
    // Plain statements around each co_await: GCC 12 mis-destroys temporaries of a
    // co_await beside ?: or && (a double free).
    Task<> give_back = key.empty() ? nothing() : counts.give_back(key, now);
    u.password_hash = co_await giving_back_when_busy(
        hash_password(secret_copy(typed.form.text), options_.password_cost), std::move(give_back));
    u.created_at = now;
    u.epoch = first_epoch();
    bool taken = false;
    try {
        co_await store_.insert(u);
    } catch (const db::ConstraintViolation& e) {  // the unique index on email; any other is not "taken"
        if (e.constraint() != db::Constraint::Unique) throw;
        taken = true;
    }
    if (taken) throw Error(Error::Kind::Taken, "email", "An account with this email address exists already");
    start_session(req, u);
    co_return u;
}

Accounts::ThrottleKeys Accounts::throttle_keys(std::optional<std::string_view> account, const Request& req) const {
    std::string address = req.client_block();  // IPv6 by its /64; "" when unknown (a unix socket)
    ThrottleKeys keys;
    // An account is a normalized address (no spaces), so "account:<email>" and
    // "account:<email> from:<address>" can never be taken one for the other.
    if (account) keys.account = "account:" + std::string(*account);
    if (account && !address.empty()) keys.pair = keys.account + " from:" + address;
    if (!address.empty()) keys.address = "address:" + address;
    // A limit of 0 (or less) is off: its key counts nothing.
    if (options_.max_failures_per_account_and_address <= 0) keys.pair.clear();
    if (options_.max_failures_per_account <= 0) keys.account.clear();
    if (options_.max_failures_per_address <= 0) keys.address.clear();
    return keys;
}

Task<> Accounts::take_attempt(const ThrottleKeys& keys, int64_t now) {
    // Counted as a failure until it succeeds, and before anything is checked, so
    // attempts that arrive together see each other. An attempt refused at one key
    // gives back what it took at the others, so refusals never add up (a guesser
    // stopped at its 5 tries cannot go on to lock the account). The address first: a
    // client at its limit adds no row for each account it names. The pair before the
    // account: a guesser refused at its 5 never touches the count every address shares
    // (a give-back a hang-up cancelled would leave it there: a lock-out from one address).
    //
    // All of it runs to its end even when the request is cancelled meanwhile (the
    // client hung up, its deadline passed, the server is stopping): its waits belong to
    // no request. Cut between a count and a give-back, a refused attempt would keep the
    // counts it took; cut in a count, no one could tell whether it was taken. The
    // request's own next wait throws kiln::Cancelled as before. (So do forget_attempt
    // and give_back_attempt; each is a few statements of one row, bounded by the
    // database's own timeouts: SQLite's busy timeout, PostgreSQL's reply timeout.)
    net::AsyncScope::Enter whole(nullptr);
    const std::pair<const std::string*, int> limits[] = {
        {&keys.address, options_.max_failures_per_address},
        {&keys.pair, options_.max_failures_per_account_and_address},
        {&keys.account, options_.max_failures_per_account},
    };
    FailureCounts counts(store_, options_.throttle_window);
    co_await purge_now_and_then(counts, now);
    for (size_t i = 0; i < std::size(limits); ++i) {
        const std::string& key = *limits[i].first;
        if (key.empty()) continue;  // no account, or no known address
        const bool within = co_await counts.count_within(key, limits[i].second, now);
        if (within) continue;
        for (size_t j = 0; j < i; ++j)
            if (!limits[j].first->empty()) co_await counts.give_back(*limits[j].first, now);
        int64_t wait = co_await counts.wait_of(key, now);
        throw Error(Error::Kind::Throttled, "", "Too many failed log-ins: try again in " + minutes(wait), wait);
    }
}

Task<> Accounts::forget_attempt(const ThrottleKeys& keys, int64_t counted_at) {
    // The account's counts start over; its address gets back what this attempt took.
    net::AsyncScope::Enter whole(nullptr);  // a hang-up must not cut it (take_attempt says why)
    FailureCounts counts(store_, options_.throttle_window);
    if (!keys.account.empty() || !keys.pair.empty()) co_await counts.forget(keys.account, keys.pair);
    if (!keys.address.empty()) co_await counts.give_back(keys.address, counted_at);
}

Task<> Accounts::give_back_attempt(const ThrottleKeys& keys, int64_t counted_at) {
    net::AsyncScope::Enter whole(nullptr);  // a hang-up must not cut it (take_attempt says why)
    FailureCounts counts(store_, options_.throttle_window);
    for (const std::string* key : {&keys.address, &keys.account, &keys.pair})
        if (!key->empty()) co_await counts.give_back(*key, counted_at);
}

Task<> Accounts::purge_now_and_then(FailureCounts& counts, int64_t now) {
    // Once a window per Accounts (so per worker): rows of windows that are over.
    int64_t due = next_purge_.load(std::memory_order_relaxed);
    if (now < due || !next_purge_.compare_exchange_strong(due, now + options_.throttle_window.count())) co_return;
    co_await counts.purge(now);
}

Task<User> Accounts::log_in(Request& req, std::string email, std::string password) {
    WipeOnExit wipe(password);  // also when refused before it is hashed
    int64_t now = now_seconds();
    std::optional<std::string> normalized;
    try {
        normalized = normalize_email(email);
    } catch (const Error&) {
        // Not an address: it matches no account, so only its client's failures count
        // (its text must not reach the account keys, where it could name another's).
    }
    ThrottleKeys keys = throttle_keys(normalized, req);
    co_await take_attempt(keys, now);
    // Text that is not an address names no account whatever its timing: no hash.
    if (!normalized) throw Error(Error::Kind::BadCredentials, "", "Wrong email address or password");
    std::vector<User> found = co_await store_.where<User>("email = ?", *normalized);
    const bool known = !found.empty();
    TypedPassword typed(password, options_.max_password_bytes);
    const User* user = known ? &found.front() : nullptr;
    const Match match = co_await giving_back_when_busy(
        password_form_matches(user, typed.form.text, typed.typed.text, options_), give_back_attempt(keys, now));
    if (!known || match == Match::None) throw Error(Error::Kind::BadCredentials, "", "Wrong email address or password");
    co_await forget_attempt(keys, now);
    start_session(req, found.front());
    // Hashed as typed (before passwords were normalized), or at another cost: hashed
    // again now that it proved right, normalized unless that form would be refused
    // (NFKC can lengthen a password past max_password_bytes: its owner would be locked
    // out), then as typed.
    const bool stale = password_needs_rehash(found.front().password_hash, options_.password_cost);
    const bool form_fits = check_password(typed.form.text).empty();
    if (match == Match::AsTyped && form_fits) co_await rehash(found.front(), typed.form.text);
    else if (stale && match == Match::AsTyped) co_await rehash(found.front(), typed.typed.text);
    else if (stale) co_await rehash(found.front(), typed.form.text);
    co_return found.front();
}

Task<> Accounts::rehash(const User& user, const std::string& password) {
    std::string made;
    try {
        made = co_await hash_password(secret_copy(password), options_.password_cost);
        // Only over the hash just verified: a password changed meanwhile stays.
        co_await store_.execute("UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?", made, user.id,
                                user.password_hash);
    } catch (const HashingBusy&) {  // every slot taken: at a later log-in
    } catch (const std::exception& e) {
        util::log(util::LogLevel::Warn, "kiln::auth: re-hashing a password at the new cost failed: %s", e.what());
    }
}

void Accounts::log_out(Request& req) {
    if (Session* s = req.existing_session()) s->destroy();
    req.set_local(User{});  // current_user sees no one for the rest of this request
}

Task<> Accounts::change_password(Request& req, std::string current, std::string next) {
    WipeOnExit wipe_current(current), wipe_next(next);  // also when refused before they are hashed
    std::optional<User> me = co_await current_user(req);
    if (!me) throw Error(Error::Kind::NotLoggedIn, "", "Log in first");
    int64_t now = now_seconds();
    ThrottleKeys keys = throttle_keys(me->email, req);
    co_await take_attempt(keys, now);
    TypedPassword was(current, options_.max_password_bytes);
    const Match right = co_await giving_back_when_busy(password_form_matches(&*me, was.form.text, was.typed.text, options_),
                                                       give_back_attempt(keys, now));
    if (right == Match::None) throw Error(Error::Kind::BadCredentials, "current_password", "The current password is wrong");
    co_await forget_attempt(keys, now);  // the password was right, whatever becomes of the new one
    TypedPassword will(next, options_.max_password_bytes);
    if (std::string why = check_password(will.typed.text); !why.empty()) throw Error(Error::Kind::Invalid, "password", why);
    if (std::string why = check_password(will.form.text); !why.empty()) throw Error(Error::Kind::Invalid, "password", why);
    me->password_hash = co_await hash_password(secret_copy(will.form.text), options_.password_cost);
    // Only if no other change came first (both read this epoch): the later one would
    // put its password back and keep its session at the epoch the first one gave.
    int64_t changed = co_await store_.execute("UPDATE users SET password_hash = ?, epoch = epoch + 1 WHERE id = ? AND epoch = ?",
                                              me->password_hash, me->id, me->epoch);
    if (changed == 0) {
        log_out(req);
        throw Error(Error::Kind::NotLoggedIn, "", "The password was changed meanwhile: log in again");
    }
    ++me->epoch;  // every other session of the account ends
    start_session(req, *me, /*renewal=*/true);
}

std::optional<int64_t> Accounts::session_user_id(Request& req) {
    Session* s = req.existing_session();
    return s ? s->get_int(kUserKey) : std::nullopt;
}

Task<std::optional<User>> Accounts::current_user(Request& req) {
    if (User* cached = req.local<User>()) {
        if (cached->id == 0) co_return std::nullopt;  // looked up already: nobody
        co_return *cached;
    }
    Session* s = req.existing_session();
    std::optional<int64_t> id = s ? s->get_int(kUserKey) : std::nullopt;
    if (!id) {
        req.set_local(User{});
        co_return std::nullopt;
    }
    std::optional<User> u = co_await store_.find<User>(*id);
    if (!u || s->get_int(kEpochKey) != u->epoch) {  // deleted, or its password changed since
        s->clear();  // logged out: nothing of that user's stays (for the next to log in here)
        req.set_local(User{});
        co_return std::nullopt;
    }
    req.set_local(*u);
    co_return u;
}

void Accounts::send_to_login(Request& req, Response& res) const {
    flash(req, "notice", "Please log in first.");
    // Back to the same page, as the client wrote it: the path decoded would be another
    // (/files/50%25 is not /files/50%, /a%3Fb not /a?b).
    std::string_view target = req.target();
    std::string next;
    if (target.starts_with('/')) {
        next = std::string(target);
    } else {  // absolute-form (a proxy's): the path, and the query as sent
        next = std::string(req.path());
        if (auto q = target.find('?'); q != std::string_view::npos) next += target.substr(q);
    }
    res.redirect(options_.login_path + "?next=" + url_encode(next), 303);
}

AsyncMiddleware Accounts::require_login(std::function<bool(const Request&)> which) {
    return [this, which = std::move(which)](Request& req, Response& res, Next& next) -> Task<> {
        if (which && !which(req)) co_return co_await next;
        if (req.path() == options_.login_path) co_return co_await next;  // the way in stays open
        std::optional<User> me = co_await current_user(req);
        if (!me) co_return send_to_login(req, res);
        co_await next;
    };
}

}  // namespace kiln::auth
