// How the signing secret reaches worker processes: never through the environment,
// which every process a handler starts (system(), popen) would inherit and which
// /proc/PID/environ shows, but through a sealed memfd the supervisor writes once
// (KILN_SECRET_FD). It carries two values: the secret KILN_SECRET gave the
// supervisor (applied at the environment's place in the config precedence, so a
// --flag still overrides it) and the random one the supervisor made when nothing
// configured any (used only if the worker's own config names none either).
// KILN_SECRET itself is removed from the environment the first time it is read.
// KILN_DATABASE_URL and KILN_REDIS_URL may hold passwords, so they travel the same
// way. The same memfd carries the node's self-signed TLS pair (--tls-self-signed),
// made once by the supervisor so every worker presents the same certificate.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kiln::server {

inline constexpr const char* kEnvSecretFd = "KILN_SECRET_FD";
inline constexpr const char* kEnvSecret = "KILN_SECRET";
inline constexpr const char* kEnvDatabaseUrl = "KILN_DATABASE_URL";
inline constexpr const char* kEnvRedisUrl = "KILN_REDIS_URL";

struct EnvSecrets {
    std::string from_env;   // KILN_SECRET, or the supervisor's copy of it
    std::string generated;  // the supervisor's random key, when nothing set one
    std::string tls_pem;    // the self-signed certificate and key, when asked for
    std::optional<std::string> database_url;  // KILN_DATABASE_URL (set, maybe empty), or the supervisor's copy
    std::optional<std::string> redis_url;     // KILN_REDIS_URL, likewise
};

// Whether an environment variable is one take_env_secrets() takes (the settings
// loader leaves those to it).
bool is_env_secret(std::string_view name);

// This process's secrets from its environment: read (and removed from it: the
// variable, the memfd closed) on the first call, the same values after that.
const EnvSecrets& take_env_secrets();

// What a memfd made by make_secret_memfd (of this version or an older one) holds.
EnvSecrets read_secret_memfd(int fd);

// Supervisor: a sealed, close-on-exec memfd holding all of them, for
// Supervisor::inherit(fd, kEnvSecretFd). Returns -1 and sets *err on failure.
int make_secret_memfd(const EnvSecrets& secrets, std::string* err);

}  // namespace kiln::server
