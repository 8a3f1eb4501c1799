#include "net/reuseport_steer.hpp"

#include <linux/filter.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace kiln::net {

std::string steer_reuseport(int fd, const std::vector<unsigned>& accepting, size_t size) {
    std::vector<sock_filter> code;
    if (accepting.empty() || accepting.size() >= size || accepting.size() > kMaxSteeredSockets) {
        // An index past the group's end: the kernel falls back to its own hash.
        code.push_back(BPF_STMT(BPF_RET | BPF_K, 0xffffffffu));
    } else {
        const auto n = static_cast<uint32_t>(accepting.size());
        code.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_RANDOM)));
        code.push_back(BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n));
        for (uint32_t k = 0; k + 1 < n; ++k) {  // A == k: the k-th accepting socket
            code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 1));
            code.push_back(BPF_STMT(BPF_RET | BPF_K, accepting[k]));
        }
        code.push_back(BPF_STMT(BPF_RET | BPF_K, accepting[n - 1]));
    }
    sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
    if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) != 0)
        return std::string("SO_ATTACH_REUSEPORT_CBPF: ") + std::strerror(errno);
    return {};
}

}  // namespace kiln::net
