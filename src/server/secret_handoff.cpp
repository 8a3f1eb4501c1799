#include "server/secret_handoff.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace kiln::server {
namespace {

// The memfd holds from_env, a NUL, generated, a NUL, tls_pem: the layout of every
// version (no environment value can contain a NUL, and PEM is text). After the PEM
// come a NUL, kTrailer, and the URLs, each "=VALUE" when its variable was set ("="
// alone when set empty) and nothing when it was not, separated by NULs. A reload can
// start an older worker binary under this supervisor (a rollback): it reads the first
// three values as ever (its PEM reader stops at the key's END line) and has no URLs;
// and a newer one under an older supervisor finds no trailer.
constexpr std::string_view kTrailer = "kiln-urls/1";

void read_url(std::string_view field, std::optional<std::string>* out) {
    if (field.starts_with('=')) *out = std::string(field.substr(1));
}

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
    std::string_view rest(all);
    auto next = [&rest](std::string* out) {  // up to the next NUL (or the end); false at the end
        size_t nul = rest.find('\0');
        *out = std::string(rest.substr(0, nul));
        rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
        return nul != std::string_view::npos;
    };
    std::string trailer, db, redis;
    if (next(&s.from_env) && next(&s.generated) && next(&s.tls_pem) && next(&trailer) && trailer == kTrailer) {
        next(&db);
        next(&redis);
        read_url(db, &s.database_url);
        read_url(redis, &s.redis_url);
    }
    return s;
}

namespace {

// Takes one variable: its value, wiped where it lies (unsetenv() only unlinks the
// string, and /proc/PID/environ shows the block the process started with).
std::optional<std::string> take_variable(const char* name) {
    char* v = std::getenv(name);
    if (!v) return std::nullopt;
    std::string value = v;
    std::memset(v, 0, value.size());
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
        s.from_env = take_variable(kEnvSecret).value_or("");
    }
    // A worker gets the URLs from the memfd, unless an older supervisor (a reload onto
    // a newer binary) left them in its environment and not in the memfd.
    if (!s.database_url) s.database_url = take_variable(kEnvDatabaseUrl);
    if (!s.redis_url) s.redis_url = take_variable(kEnvRedisUrl);
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
    std::string all = secrets.from_env;
    all.push_back('\0');
    all += secrets.generated;
    all.push_back('\0');
    all += secrets.tls_pem;
    all.push_back('\0');
    all += kTrailer;
    for (const std::optional<std::string>* url : {&secrets.database_url, &secrets.redis_url}) {
        all.push_back('\0');
        if (*url) all += "=" + **url;
    }
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
