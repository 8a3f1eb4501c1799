// server::make_secret_memfd / read_secret_memfd: what the supervisor hands its workers
// (the signing secret, its random stand-in, the self-signed TLS pair, the database
// and Redis URLs) comes back whole, a URL set empty stays distinct from one not set;
// the memfd is sealed, so nothing a worker runs can change it for the next worker;
// and a reload mixing versions (the binary on disk is what a new worker runs) still
// works both ways: a newer worker reads an older supervisor's memfd, and an older
// worker finds its three values where they always were.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optional>
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

std::string contents(int fd) {
    std::string all(static_cast<size_t>(lseek(fd, 0, SEEK_END)), '\0');
    EXPECT_EQ(pread(fd, all.data(), all.size(), 0), static_cast<ssize_t>(all.size()));
    return all;
}

// Every value set, as a supervisor with a secret, URLs and --tls-self-signed hands down.
EnvSecrets all_set() {
    EnvSecrets in;
    in.from_env = "a-secret-of-thirty-two-characters";
    in.generated = "0123456789abcdef";
    in.database_url = "postgresql://app:p%40ss@127.0.0.1:5432/app?sslmode=disable";
    in.redis_url = "redis://:pw@[::1]:6380/2";
    in.tls_pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
    return in;
}

TEST(SecretHandoff, EveryValueComesBackWhole) {
    EnvSecrets in = all_set();
    std::string err;
    int fd = kiln::server::make_secret_memfd(in, &err);
    ASSERT_GE(fd, 0) << err;
    expect_same(kiln::server::read_secret_memfd(fd), in);
    // Sealed: neither written over nor grown.
    EXPECT_EQ(pwrite(fd, "x", 1, 0), -1);
    EXPECT_EQ(ftruncate(fd, 4096), -1);
    close(fd);
}

TEST(SecretHandoff, AUrlSetEmptyIsNotAUrlNotSet) {
    EnvSecrets in;
    in.database_url = "";  // KILN_DATABASE_URL= : clears kiln.toml's database.url
    std::string err;
    int fd = kiln::server::make_secret_memfd(in, &err);
    ASSERT_GE(fd, 0) << err;
    EnvSecrets out = kiln::server::read_secret_memfd(fd);
    expect_same(out, in);
    EXPECT_TRUE(out.database_url.has_value());
    EXPECT_FALSE(out.redis_url.has_value());
    close(fd);
}

TEST(SecretHandoff, AnOlderSupervisorsMemfdIsRead) {
    // Before the URLs travelled this way: secret, NUL, generated, NUL, PEM.
    int fd = memfd_create("old-secret", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string old("the-secret-from-env");
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

TEST(SecretHandoff, AnOlderWorkerFindsItsValuesWhereTheyWere) {
    // An older worker splits at the first two NULs and hands the rest to its PEM
    // reader, which stops at the key's END line.
    EnvSecrets in = all_set();
    std::string err;
    int fd = kiln::server::make_secret_memfd(in, &err);
    ASSERT_GE(fd, 0) << err;
    std::string all = contents(fd);
    size_t first = all.find('\0'), second = all.find('\0', first + 1);
    EXPECT_EQ(all.substr(0, first), in.from_env);
    EXPECT_EQ(all.substr(first + 1, second - first - 1), in.generated);
    EXPECT_EQ(all.substr(second + 1, in.tls_pem.size()), in.tls_pem);
    EXPECT_EQ(all[second + 1 + in.tls_pem.size()], '\0');
    close(fd);
}

}  // namespace
