// What a Session is attached to while a handler runs: the store, the cookie
// settings and the response that carries its cookie. Filled by App::handle. With
// an AsyncSessionStore, what the cookie names was loaded before the handler ran
// (the app awaited it): Session::begin takes it from here.
#pragma once
#include <cstdint>
#include <string>

#include <kiln/response.hpp>
#include <kiln/session.hpp>

namespace kiln {

struct Session::Binding {
    SessionStore* store = nullptr;       // one of the two
    AsyncSessionStore* remote = nullptr;
    size_t max_bytes = 0;                // the store's
    const SessionOptions* options = nullptr;
    Response* response = nullptr;
    bool secure = false;  // the cookie gets Secure (session.secure, and whether the request is)
    int64_t now = 0;      // wall-clock seconds
    // remote: the session the cookie names, loaded ahead (in the Session's load buffer).
    bool found = false;
    bool failed = false;  // the load failed: using the session answers 503
    // Written (or its write failed): an error page that runs after it cannot begin
    // the session again, which nothing would save (or would save to no store).
    bool closed = false;
};

struct Session::Write {
    // Replace: `from` removed (destroyed), then `id` created (written after the destroy).
    enum class Kind : uint8_t { None, Create, Update, Rename, Replace, Remove } kind = Kind::None;
    SessionId id{};
    SessionId from{};  // Rename, Replace
    bool make_if_gone = true;  // Rename: `from` gone meanwhile, `id` is made all the same
    std::string data;
};

}  // namespace kiln
