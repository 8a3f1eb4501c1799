// kiln::Session: per-user state found again through a cookie, and the store
// interface behind it.
//
// `req.session()` loads the session named by the request's cookie, or starts a new
// one (an unknown, malformed or expired cookie starts a new one; it is never an
// error). A new session costs nothing until it holds data (or its id is read): only
// then is it stored and its cookie set, so visitors who never log in or submit a
// form take no room. Data is saved when the handler returns, and only if it
// changed; a request never brings back a session another request destroyed. Ids
// are 128 bits from the kernel's CSPRNG, sent as 32 hex digits. Values are typed:
// strings, integers and small blobs; a session's serialized size is bounded
// (`session.max_bytes`).
//
// The default store is a hash table in shared memory created by the supervisor:
// every worker process of a node sees the same sessions, and they survive a worker
// crash and a graceful reload. When it is full, the least recently used session
// is evicted (one nobody came back for first). With `session.store = "redis"`
// sessions live in Redis, shared by every node (an AsyncSessionStore). A Session
// belongs to the thread running the handler.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/task.hpp>

namespace kiln {
namespace app {
struct SessionRecord;
}
class Request;
class App;

using SessionId = std::array<uint8_t, 16>;

// Where sessions live. Implementations must be safe to call from several threads
// (hybrid model) and, for a node-wide store, from several processes.
class SessionStore {
public:
    enum class SaveMode : uint8_t {
        Create,  // a new session: store it, making room if needed
        Update,  // a loaded one: write it only if it still exists
    };
    virtual ~SessionStore() = default;
    // Copies the session's serialized data into `data` and refreshes its idle
    // deadline; false if the id is unknown or the session expired (idle or absolute).
    virtual bool load(const SessionId& id, int64_t now, std::string& data) = 0;
    // Writes the session. Update returns false, writing nothing, when the id is gone
    // (destroyed or expired since the load): a logged-out session stays logged out.
    // Throws std::length_error past max_bytes().
    virtual bool save(const SessionId& id, int64_t now, std::string_view data, SaveMode mode) = 0;
    // Moves a loaded session to a new id with `data`, as one step: the old id stops
    // working as the new one starts, and nothing is lost if the store is full.
    // False (nothing written) when `from` is gone.
    virtual bool rename(const SessionId& from, const SessionId& to, int64_t now, std::string_view data) = 0;
    virtual void remove(const SessionId& id) = 0;
    // The largest serialized session the store takes.
    virtual size_t max_bytes() const = 0;
    // Live sessions dropped to make room, since the store was made (for /metrics).
    virtual uint64_t evictions() const { return 0; }
};

// A store across the network (Redis): its calls wait, on the loop. The app loads
// the session a request's cookie names before the middleware chain runs and writes
// what changed after the handler returned, both awaited; handlers use the same
// req.session(). Only a cookie that is a well-formed id is ever looked up. When the
// store fails (it is down), a request that uses its session, or changed one, gets
// 503: never a fresh empty session that would log its user out. The calls mean
// what SessionStore's do; a failure throws.
class AsyncSessionStore {
public:
    virtual ~AsyncSessionStore() = default;
    // The serialized data, refreshing its idle deadline; nullopt if unknown or expired.
    virtual Task<std::optional<std::string>> load(SessionId id, int64_t now) = 0;
    virtual Task<bool> save(SessionId id, int64_t now, std::string data, SessionStore::SaveMode mode) = 0;
    virtual Task<bool> rename(SessionId from, SessionId to, int64_t now, std::string data) = 0;
    virtual Task<> remove(SessionId id) = 0;
    virtual size_t max_bytes() const = 0;
    // For the health endpoint: "" if the store answers, else why not.
    virtual Task<std::string> check() { co_return std::string(); }
};

// How sessions reach the client (config `session.cookie`, `session.secure`);
// expiry is the store's.
struct SessionOptions {
    enum class Secure : uint8_t {
        Auto,    // Secure when the request is (TLS, or a trusted proxy says https)
        Always,  // always (a __Host- or __Secure- cookie name implies it)
        Never,
    };
    std::string cookie = "kiln_sid";
    Secure secure = Secure::Auto;
};

class Session {
public:
    enum class Kind : uint8_t { String = 1, Int = 2, Blob = 3 };

    // The id. Reading it keeps even an empty new session (stored, cookie set): an id
    // shown to the client or used as a key must mean the same on the next request.
    std::string_view id() const;
    bool is_new() const { return new_; }

    // A string or blob value; nullopt if absent or an integer.
    std::optional<std::string_view> get(std::string_view key) const;
    std::optional<int64_t> get_int(std::string_view key) const;
    std::optional<std::span<const std::byte>> get_blob(std::string_view key) const;
    bool contains(std::string_view key) const { return find(key) != nullptr; }

    // Throws std::length_error if the session would exceed the store's max_bytes.
    void set(std::string_view key, std::string_view value);
    void set(std::string_view key, const char* value) { set(key, std::string_view(value)); }
    void set_int(std::string_view key, int64_t value);
    void set_blob(std::string_view key, std::span<const std::byte> value);
    bool erase(std::string_view key);
    void clear();

    // New id, same data: call at login so an id seen before it is worth nothing.
    // The CSRF token is renewed too (a token seen before the login is worth nothing).
    // log_in (the default): the session now is whoever just logged in, so if another
    // request removed the old id meanwhile (a double-submitted log-in renamed it) the
    // new one is made all the same: each ends with a session of its own. false: a
    // renewal of a session already logged in (a password change), which must not
    // outlive a log-out that removed the old id meanwhile: then nothing is made.
    void regenerate(bool log_in = true);
    // Ends the session: removed from the store, its cookie expired. Whatever the
    // handler writes after it (a flash message at logout) goes into a new session,
    // with a new id, as on a first visit; the old one stays gone.
    void destroy();

    struct Binding;  // what a session is attached to while a handler runs (app/session_binding.hpp)
    struct Write;    // what the end of a request writes to the store

private:
    friend class Request;             // begin() on first use
    friend class App;                 // end() after the handler
    friend struct app::SessionRecord; // the record format (app/session_record.hpp)
    struct Entry {
        std::string key;
        Kind kind;
        std::string value;  // strings and blobs as is; integers as 8 little-endian bytes
    };
    // Loads the session the cookie names; if there is none, starts a new one, or
    // (create == false) stays detached and returns false.
    bool begin(Binding* binding, std::string_view cookie_value, bool create = true);
    // Detaches; returns what is to be written to the store (if `save`).
    Write end(bool save);
    // Writes it to a SessionStore. Throws what the store throws.
    static void write_to(SessionStore& store, const Write& w, int64_t now);
    bool active() const { return binding_ != nullptr; }
    // The record a store keeps: one entry after another.
    static void serialize(const std::vector<Entry>& entries, std::string& out);
    static bool deserialize(std::string_view data, std::vector<Entry>& out);

    const Entry* find(std::string_view key) const;
    void put(std::string_view key, Kind kind, std::string_view value);
    void fresh_id();
    void keep() const;  // a new session will be stored: its cookie goes out now
    void send_cookie() const;  // the cookie naming the current id, on the response

    Binding* binding_ = nullptr;
    std::vector<Entry> entries_;
    std::string load_buf_;  // the store's bytes; kept, like entries_, for the next request
    SessionId id_{};
    SessionId old_id_{};  // after regenerate(): removed from the store at the end
    char hex_[32] = {};
    bool new_ = false;
    mutable bool kept_ = false;  // a new session's cookie is set (it holds data, or its id was read)
    bool dirty_ = false;
    bool regenerated_ = false;
    bool make_if_gone_ = true;  // regenerate(log_in)
    bool dropped_ = false;  // destroy() on a stored session: drop_id_ is removed at the end
    SessionId drop_id_{};
    size_t size_ = 0;  // serialized size of entries_
};

// Parses 32 hex digits into an id; false for anything else.
bool parse_session_id(std::string_view text, SessionId& out);

}  // namespace kiln
