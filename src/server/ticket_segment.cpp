#include "server/ticket_segment.hpp"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln::server {

struct TicketSegment::Shared {
    std::atomic<uint32_t> seq;  // odd while a rotation is written
    net::TicketKeys keys;
};

namespace {
bool fresh(net::TicketKey& k) {
    return RAND_bytes(k.name, sizeof k.name) == 1 && RAND_bytes(k.hmac, sizeof k.hmac) == 1 &&
           RAND_bytes(k.aes, sizeof k.aes) == 1;
}
}  // namespace

TicketSegment::~TicketSegment() {
    if (shared_) {
        // The mapping is the node's, not this process's: a worker that exits (a
        // reload's old generation, a recycled or failed worker) leaves the keys to the
        // others. Only their maker wipes them, when the node ends.
        if (owner_) std::memset(static_cast<void*>(&shared_->keys), 0, sizeof shared_->keys);
        munmap(shared_, sizeof(Shared));
    }
    if (fd_ >= 0) ::close(fd_);
}

std::string TicketSegment::create() {
    fd_ = memfd_create("kiln-tickets", MFD_CLOEXEC);
    if (fd_ < 0) return std::string("tls: memfd_create: ") + std::strerror(errno);
    if (ftruncate(fd_, sizeof(Shared)) != 0) return std::string("tls: ticket keys: ") + std::strerror(errno);
    void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return std::string("tls: ticket keys: ") + std::strerror(errno);
    madvise(p, sizeof(Shared), MADV_DONTDUMP);  // the node's ticket keys: never in a core dump
    shared_ = new (p) Shared();
    owner_ = true;
    if (!fresh(shared_->keys.current) || !fresh(shared_->keys.previous)) return "tls: no randomness for ticket keys";
    return {};
}

bool TicketSegment::adopt_from_env() {
    const char* text = std::getenv(kEnvTicketFd);
    if (!text) return false;
    fd_ = std::atoi(text);
    unsetenv(kEnvTicketFd);
    fcntl(fd_, F_SETFD, FD_CLOEXEC);  // not for a handler's children
    if (lseek(fd_, 0, SEEK_END) != static_cast<off_t>(sizeof(Shared))) return false;
    void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return false;
    madvise(p, sizeof(Shared), MADV_DONTDUMP);
    shared_ = static_cast<Shared*>(p);
    return true;
}

void TicketSegment::rotate() {
    net::TicketKey next;
    if (!fresh(next)) return;  // keep the keys we have rather than weak ones
    shared_->seq.fetch_add(1, std::memory_order_acq_rel);  // odd: readers wait
    std::atomic_thread_fence(std::memory_order_release);
    shared_->keys.previous = shared_->keys.current;
    shared_->keys.current = next;
    shared_->seq.fetch_add(1, std::memory_order_release);  // even again
    std::memset(&next, 0, sizeof next);
}

net::TicketKeys TicketSegment::read() const {
    net::TicketKeys out;
    for (;;) {
        uint32_t before = shared_->seq.load(std::memory_order_acquire);
        if (before & 1) continue;  // a rotation is half written: it takes microseconds
        std::memcpy(&out, &shared_->keys, sizeof out);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (shared_->seq.load(std::memory_order_relaxed) == before) return out;
    }
}

}  // namespace kiln::server
