#include "server/session_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln::server {

SessionSegment::~SessionSegment() {
    table_.reset();
    if (base_) munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
}

bool SessionSegment::map(size_t size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return false;
    madvise(p, size, MADV_DONTDUMP);  // every session's data: never in a core dump
    base_ = p;
    size_ = size;
    return true;
}

std::string SessionSegment::create(const ServerOptions& o) {
    app::SessionTableParams p{o.session_memory, o.session_max_bytes, o.session_idle_timeout_s, o.session_max_age_s};
    if (app::SharedSessionTable::capacity(p) == 0)
        return "session.memory = " + std::to_string(o.session_memory) + " bytes holds no session of session.max_bytes = " +
               std::to_string(o.session_max_bytes) + "; raise session.memory";
    fd_ = memfd_create("kiln-sessions", MFD_CLOEXEC);
    if (fd_ < 0) return std::string("session store: memfd_create: ") + std::strerror(errno);
    if (ftruncate(fd_, static_cast<off_t>(p.memory_bytes)) != 0 || !map(p.memory_bytes))
        return "session store: cannot map session.memory = " + std::to_string(p.memory_bytes) + " bytes: " +
               std::strerror(errno);
    app::SharedSessionTable::format(base_, p);
    table_ = app::SharedSessionTable::attach(base_, size_);
    return {};
}

std::string SessionSegment::adopt_from_env() {
    const char* text = std::getenv(kEnvSessionFd);
    if (!text)
        return "no session store came from the supervisor: it keeps sessions elsewhere (session.store was "
               "changed to \"memory\" since it started?); restart the server, a reload cannot add one";
    fd_ = std::atoi(text);
    unsetenv(kEnvSessionFd);
    fcntl(fd_, F_SETFD, FD_CLOEXEC);  // every session, read-write: not for a handler's children
    off_t size = lseek(fd_, 0, SEEK_END);
    if (size <= 0 || !map(static_cast<size_t>(size)))
        return std::string("cannot map the supervisor's session store: ") + std::strerror(errno);
    table_ = app::SharedSessionTable::attach(base_, size_);
    if (!table_)
        return "the supervisor's session store has another layout (a binary of another kiln version was "
               "reloaded into it); restart the server";
    return {};
}

void SessionSegment::drop_env() {
    const char* text = std::getenv(kEnvSessionFd);
    if (!text) return;
    ::close(std::atoi(text));
    unsetenv(kEnvSessionFd);
}

}  // namespace kiln::server
