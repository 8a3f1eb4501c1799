// What a Session is attached to while a handler runs: the store, the cookie
// settings and the response that carries its cookie. Filled by App::handle.
#pragma once
#include <cstdint>

#include <kiln/response.hpp>
#include <kiln/session.hpp>

namespace kiln {

struct Session::Binding {
    SessionStore* store = nullptr;
    const SessionOptions* options = nullptr;
    Response* response = nullptr;
    bool secure = false;  // the cookie gets Secure (session.secure, and whether the request is)
    int64_t now = 0;      // wall-clock seconds
};

}  // namespace kiln
