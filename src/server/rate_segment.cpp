#include "server/rate_segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln::server {

RateSegment::~RateSegment() {
    if (base_) munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
}

bool RateSegment::map(size_t size) {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) return false;
    base_ = p;
    size_ = size;
    return true;
}

std::string RateSegment::create(const ServerOptions& o) {
    size_t bytes = http::RateTable::bytes_for(o.rate_table_slots);
    fd_ = memfd_create("kiln-rate", MFD_CLOEXEC);
    if (fd_ < 0) return std::string("limits.rate: memfd_create: ") + std::strerror(errno);
    if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0 || !map(bytes))
        return "limits.rate: cannot map " + std::to_string(bytes) + " bytes for limits.rate_table = " +
               std::to_string(o.rate_table_slots) + ": " + std::strerror(errno);
    http::RateTable::format(base_, o.rate_table_slots);
    table_ = http::RateTable::attach(base_, size_);
    return {};
}

bool RateSegment::adopt_from_env() {
    const char* text = std::getenv(kEnvRateFd);
    if (!text) return false;
    fd_ = std::atoi(text);
    unsetenv(kEnvRateFd);
    fcntl(fd_, F_SETFD, FD_CLOEXEC);  // not for a handler's children
    off_t size = lseek(fd_, 0, SEEK_END);
    if (size <= 0 || !map(static_cast<size_t>(size))) return false;
    table_ = http::RateTable::attach(base_, size_);
    return table_ != nullptr;
}

}  // namespace kiln::server
