// server::make_secret_memfd / read_secret_memfd: what the supervisor hands its workers
// (the signing secret, its random stand-in, the database and Redis URLs, the
// self-signed TLS pair) comes back whole; the memfd is sealed, so nothing a worker
// runs can change it for the next worker; and a newer worker still reads the memfd
// of an older supervisor (a reload starts the binary on disk now).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "server/secret_handoff.hpp"

namespace {

using kiln::server::EnvSecrets;

void expect_same(const EnvSecrets& got, const EnvSecrets& want) {
    EXPECT_EQ(got.from_env, want.from_env);
    EXPECT_EQ(got.generated, want.generated);
    EXPECT_EQ(got.database_url, want.database_url);
    EXPECT_EQ(got.redis_url, want.redis_url);
    EXPECT_EQ(got.tls_pem, want.tls_pem);
}

TEST(SecretHandoff, EveryValueComesBackWhole) {
    EnvSecrets in;
    in.from_env = "a-secret-of-thirty-two-characters";
    in.generated = "0123456789abcdef";
    in.database_url = "postgresql://app:p%40ss@127.0.0.1:5432/app?sslmode=disable";
    in.redis_url = "redis://:pw@[::1]:6380/2";
    in.tls_pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    std::string err;
    int fd = kiln::server::make_secret_memfd(in, &err);
    ASSERT_GE(fd, 0) << err;
    expect_same(kiln::server::read_secret_memfd(fd), in);
    // Sealed: neither written over nor grown.
    EXPECT_EQ(pwrite(fd, "x", 1, 0), -1);
    EXPECT_EQ(ftruncate(fd, 4096), -1);
    close(fd);
}

TEST(SecretHandoff, EmptyValuesStayEmpty) {
    EnvSecrets in;
    in.redis_url = "redis://127.0.0.1";
    std::string err;
    int fd = kiln::server::make_secret_memfd(in, &err);
    ASSERT_GE(fd, 0) << err;
    expect_same(kiln::server::read_secret_memfd(fd), in);
    close(fd);
}

TEST(SecretHandoff, AnOlderSupervisorsMemfdIsRead) {
    // Before the URLs travelled this way: secret, NUL, generated, NUL, PEM.
    int fd = memfd_create("old-secret", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string old("the-secret-from-env", 19);
    old.push_back('\0');
    old += "generated-key";
    old.push_back('\0');
    old += "-----BEGIN PRIVATE KEY-----\n";
    ASSERT_EQ(write(fd, old.data(), old.size()), static_cast<ssize_t>(old.size()));
    EnvSecrets want;
    want.from_env = "the-secret-from-env";
    want.generated = "generated-key";
    want.tls_pem = "-----BEGIN PRIVATE KEY-----\n";
    expect_same(kiln::server::read_secret_memfd(fd), want);
    close(fd);
}

}  // namespace
