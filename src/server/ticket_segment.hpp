// TLS session-ticket keys shared by every worker of a node: made by the supervisor
// (or a lone server) in shared memory it passes down (KILN_TICKET_FD), so a client
// that resumes lands on any worker, and rotated every tls.ticket_rotate_s: a new key
// seals new tickets, the one before still opens the tickets it sealed, and older
// tickets are refused (a full handshake). The keys never leave memory: no file, no
// environment. A worker reads them at each handshake (a seqlock: the supervisor is
// the only writer, a reader retries while a rotation is half written).
#pragma once
#include <cstdint>
#include <string>

#include "net/tls.hpp"

namespace kiln::server {

inline constexpr const char* kEnvTicketFd = "KILN_TICKET_FD";

class TicketSegment final : public net::TicketKeySource {
public:
    TicketSegment() = default;
    TicketSegment(const TicketSegment&) = delete;
    TicketSegment& operator=(const TicketSegment&) = delete;
    ~TicketSegment();

    std::string create();  // two fresh keys; "" or why not
    bool adopt_from_env();
    void rotate();  // the writer only: a new current key, the current one becomes the previous
    int fd() const { return fd_; }

    net::TicketKeys read() const override;

private:
    struct Shared;
    int fd_ = -1;
    Shared* shared_ = nullptr;
    bool owner_ = false;  // create() made it: the supervisor (or a lone server)
};

}  // namespace kiln::server
