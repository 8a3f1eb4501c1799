// The shared memory behind the default session store. The supervisor (or a lone
// server process) creates it once, sized by `session.memory`, and workers inherit
// it (KILN_SESSION_FD), so every worker of the node sees the same sessions and a
// worker's crash or a reload loses none. Untouched pages cost nothing: memory is
// used as sessions arrive.
#pragma once
#include <memory>
#include <string>

#include <kiln/server.hpp>

#include "app/session_table.hpp"

namespace kiln::server {

inline constexpr const char* kEnvSessionFd = "KILN_SESSION_FD";

class SessionSegment {
public:
    SessionSegment() = default;
    SessionSegment(const SessionSegment&) = delete;
    SessionSegment& operator=(const SessionSegment&) = delete;
    ~SessionSegment();

    // A new, formatted segment; "" or why not (naming the config keys to change).
    std::string create(const ServerOptions& o);
    // The segment a supervisor passed down: "" or why it cannot be used (none passed,
    // or one this build cannot read).
    std::string adopt_from_env();
    // A worker that keeps its sessions elsewhere: the segment passed down, if any, is
    // closed, so a handler's child processes cannot inherit it.
    static void drop_env();

    int fd() const { return fd_; }
    SessionStore* store() const { return table_.get(); }

private:
    bool map(size_t size);
    int fd_ = -1;
    void* base_ = nullptr;
    size_t size_ = 0;
    std::unique_ptr<app::SharedSessionTable> table_;
};

}  // namespace kiln::server
