// Which socket of a SO_REUSEPORT group takes a new connection. The kernel hashes each
// connection to one of the group's sockets whether or not a process accepts on it:
// the share of a worker that is dead, or waiting out its back-off, waits in that
// socket's queue until a successor comes. A classic BPF program attached to the group
// (SO_ATTACH_REUSEPORT_CBPF, unprivileged) picks among the sockets that accept instead.
//
// A socket's index in its group is the order it was put to listen() in; the group's
// sockets must all stay open (the supervisor holds them for the node's life), or the
// kernel moves the last one into the gap.
#pragma once
#include <string>
#include <vector>

namespace kiln::net {

// Up to this many accepting sockets are steered to; past it, the kernel's own choice.
inline constexpr size_t kMaxSteeredSockets = 1024;

// Has new connections to the group of `fd` (size sockets) go to the sockets whose
// indices `accepting` lists, at random (each as likely). None, all of them, or more
// than kMaxSteeredSockets: the kernel's own choice, by a hash of the addresses.
// "" or why not.
std::string steer_reuseport(int fd, const std::vector<unsigned>& accepting, size_t size);

}  // namespace kiln::net
