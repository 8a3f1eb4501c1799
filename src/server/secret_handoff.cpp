#include "server/secret_handoff.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln::server {
namespace {

// The memfd holds from_env, a NUL (no environment value can contain one), generated,
// a NUL, tls_pem (PEM is text: no NUL in it either).
EnvSecrets read_memfd(int fd) {
    EnvSecrets s;
    std::string all;
    char buf[512];
    for (off_t at = 0;;) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        all.append(buf, static_cast<size_t>(n));
        at += n;
    }
    size_t nul = all.find('\0');
    s.from_env = all.substr(0, nul);
    if (nul == std::string::npos) return s;
    size_t second = all.find('\0', nul + 1);
    s.generated = all.substr(nul + 1, second == std::string::npos ? std::string::npos : second - nul - 1);
    if (second != std::string::npos) s.tls_pem = all.substr(second + 1);
    return s;
}

EnvSecrets read_environment() {
    EnvSecrets s;
    if (const char* fd_text = std::getenv(kEnvSecretFd)) {  // a worker: the supervisor's values
        int fd = std::atoi(fd_text);
        if (fd > STDERR_FILENO) {
            s = read_memfd(fd);
            ::close(fd);
        }
        unsetenv(kEnvSecretFd);
    } else if (char* v = std::getenv(kEnvSecret)) {
        s.from_env = v;
        // unsetenv() only unlinks the string: /proc/PID/environ shows the block the
        // process started with, so the value is wiped where it lies.
        std::memset(v, 0, s.from_env.size());
    }
    unsetenv(kEnvSecret);  // in a worker too: a stale copy must not outlive the handoff
    return s;
}

}  // namespace

const EnvSecrets& take_env_secrets() {
    static const EnvSecrets secrets = read_environment();
    return secrets;
}

int make_secret_memfd(const EnvSecrets& secrets, std::string* err) {
    int fd = memfd_create("kiln-secret", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        *err = std::string("memfd_create: ") + std::strerror(errno);
        return -1;
    }
    std::string all = secrets.from_env;
    all.push_back('\0');
    all += secrets.generated;
    all.push_back('\0');
    all += secrets.tls_pem;
    // Sealed once written: a worker (or anything it runs) cannot change what the
    // next worker reads.
    if (::write(fd, all.data(), all.size()) != static_cast<ssize_t>(all.size()) ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        *err = std::string("secret memfd: ") + std::strerror(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace kiln::server
