#include "server/secret_handoff.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::server {
namespace {

// The memfd holds a version line, then the values NUL-separated with the PEM last
// (no environment value can contain a NUL, and PEM is text). A reload may start a
// newer worker binary under an older supervisor, whose memfd has no version line and
// three values: from_env, generated, tls_pem.
constexpr std::string_view kFormat2 = "kiln-secrets/2\n";

}  // namespace

EnvSecrets read_secret_memfd(int fd) {
    std::string all;
    char buf[512];
    for (off_t at = 0;;) {
        ssize_t n = pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        all.append(buf, static_cast<size_t>(n));
        at += n;
    }
    EnvSecrets s;
    std::vector<std::string*> fields{&s.from_env, &s.generated, &s.tls_pem};
    std::string_view rest(all);
    if (rest.starts_with(kFormat2)) {
        rest.remove_prefix(kFormat2.size());
        fields = {&s.from_env, &s.generated, &s.database_url, &s.redis_url, &s.tls_pem};
    }
    for (size_t i = 0; i < fields.size(); ++i) {
        size_t nul = i + 1 == fields.size() ? std::string_view::npos : rest.find('\0');
        *fields[i] = std::string(rest.substr(0, nul));
        if (nul == std::string_view::npos) break;
        rest.remove_prefix(nul + 1);
    }
    return s;
}

namespace {

// Takes one variable: its value, wiped where it lies (unsetenv() only unlinks the
// string, and /proc/PID/environ shows the block the process started with).
std::string take_variable(const char* name) {
    std::string value;
    if (char* v = std::getenv(name)) {
        value = v;
        std::memset(v, 0, value.size());
    }
    return value;
}

EnvSecrets read_environment() {
    EnvSecrets s;
    if (const char* fd_text = std::getenv(kEnvSecretFd)) {  // a worker: the supervisor's values
        int fd = std::atoi(fd_text);
        if (fd > STDERR_FILENO) {
            s = read_secret_memfd(fd);
            ::close(fd);
        }
        unsetenv(kEnvSecretFd);
    } else {
        s.from_env = take_variable(kEnvSecret);
    }
    // A worker gets the URLs from the memfd, unless an older supervisor (a reload onto
    // a newer binary) left them in its environment and not in the memfd.
    if (s.database_url.empty()) s.database_url = take_variable(kEnvDatabaseUrl);
    if (s.redis_url.empty()) s.redis_url = take_variable(kEnvRedisUrl);
    // In a worker too: a stale copy must not outlive the handoff.
    for (const char* name : {kEnvSecret, kEnvDatabaseUrl, kEnvRedisUrl}) unsetenv(name);
    return s;
}

}  // namespace

bool is_env_secret(std::string_view name) {
    return name == kEnvSecret || name == kEnvDatabaseUrl || name == kEnvRedisUrl;
}

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
    std::string all(kFormat2);
    for (const std::string* v : {&secrets.from_env, &secrets.generated, &secrets.database_url, &secrets.redis_url}) {
        all += *v;
        all.push_back('\0');
    }
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
