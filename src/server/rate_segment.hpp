// The shared memory behind limits.rate (http::RateTable): made once by the
// supervisor (or a lone server process) when the setting is on, inherited by every
// worker (KILN_RATE_FD), so the workers of a node count one client's requests
// together, and a reload or a worker's crash does not reset anyone's bucket.
#pragma once
#include <string>

#include <kiln/server.hpp>

#include "http/rate_table.hpp"

namespace kiln::server {

inline constexpr const char* kEnvRateFd = "KILN_RATE_FD";

class RateSegment {
public:
    RateSegment() = default;
    RateSegment(const RateSegment&) = delete;
    RateSegment& operator=(const RateSegment&) = delete;
    ~RateSegment();

    // A new table of limits.rate_table slots; "" or why not.
    std::string create(const ServerOptions& o);
    // The table a supervisor passed down; false if none was.
    bool adopt_from_env();

    int fd() const { return fd_; }
    http::RateTable* table() const { return table_; }

private:
    bool map(size_t size);
    int fd_ = -1;
    void* base_ = nullptr;
    size_t size_ = 0;
    http::RateTable* table_ = nullptr;
};

}  // namespace kiln::server
