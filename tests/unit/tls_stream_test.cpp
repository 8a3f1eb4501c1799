// net::TlsStream against an OpenSSL client over a socket pair: what a peer can make
// the server do after the handshake. TLS 1.3 lets a peer ask for new keys (KeyUpdate)
// as often as it likes, and each one costs the server a key derivation and an answer;
// a client that asked without end held the loop (read() decrypted until the socket
// was empty) and, reading none of the answers, the server's memory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "net/tls.hpp"

namespace {

using kiln::net::TlsContext;
using kiln::net::TlsStream;

struct Pair {
    int server = -1, client = -1;
    Pair() {
        int fds[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return;
        server = fds[0];
        client = fds[1];
        for (int fd : fds) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    ~Pair() {
        close(server);
        close(client);
    }
};

// A server stream and a TLS 1.3 client, handshake done.
class TlsStreamTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string error;
        std::string pem = kiln::net::make_self_signed_pem(&error);
        ASSERT_FALSE(pem.empty()) << error;
        kiln::net::TlsCertificate cert;
        cert.pem = pem;
        context_ = TlsContext::create({cert}, false, &error);
        ASSERT_TRUE(context_) << error;
        ASSERT_GE(pair_.server, 0);
        server_ = std::make_unique<TlsStream>(context_->new_ssl());
        client_ctx_ = SSL_CTX_new(TLS_client_method());
        SSL_CTX_set_min_proto_version(client_ctx_, TLS1_3_VERSION);
        client_ = SSL_new(client_ctx_);
        SSL_set_fd(client_, pair_.client);
        SSL_set_connect_state(client_);
        for (int i = 0; i < 100 && !(server_->established() && SSL_is_init_finished(client_)); ++i) {
            SSL_do_handshake(client_);
            char buf[1024];
            ssize_t r = server_->read(pair_.server, buf, sizeof buf);
            ASSERT_TRUE(r == -1 && errno == EAGAIN) << "the handshake failed: " << r << " errno " << errno;
        }
        ASSERT_TRUE(server_->established() && SSL_is_init_finished(client_));
    }
    void TearDown() override {
        SSL_free(client_);
        SSL_CTX_free(client_ctx_);
    }

    // Reads what the server can: false once it cuts the connection (EPROTO).
    bool drain() {
        for (;;) {
            ssize_t r = server_->read(pair_.server, buf_.data(), buf_.size());
            if (r > 0) {
                received_ += static_cast<size_t>(r);
                continue;
            }
            if (r == -1 && errno == EAGAIN) return true;
            cut_errno_ = r == -1 ? errno : 0;
            return false;
        }
    }
    // The client asks for new keys (and for the server's): false if the server cut it.
    bool key_update() {
        if (SSL_key_update(client_, SSL_KEY_UPDATE_REQUESTED) != 1) return false;
        while (SSL_do_handshake(client_) != 1) {
            if (SSL_get_error(client_, 0) != SSL_ERROR_WANT_WRITE || !drain()) return false;
        }
        return drain();
    }
    bool send(const std::string& data) {
        size_t done = 0;
        while (SSL_write_ex(client_, data.data(), data.size(), &done) != 1) {
            if (SSL_get_error(client_, 0) != SSL_ERROR_WANT_WRITE || !drain()) return false;
        }
        return drain();
    }

    Pair pair_;
    std::unique_ptr<TlsContext> context_;
    std::unique_ptr<TlsStream> server_;
    SSL_CTX* client_ctx_ = nullptr;
    SSL* client_ = nullptr;
    std::vector<char> buf_ = std::vector<char>(64 * 1024);
    size_t received_ = 0;
    int cut_errno_ = 0;
};

TEST_F(TlsStreamTest, AClientThatAsksForNewKeysAgainAndAgainIsCutOff) {
    int taken = 0;
    while (taken < 10000 && key_update()) ++taken;
    EXPECT_EQ(taken, 16) << "the first 16 are free, the 17th with no data read is one too many";
    EXPECT_EQ(cut_errno_, EPROTO);
}

TEST_F(TlsStreamTest, AClientThatSendsDataMayAskForNewKeysNowAndThen) {
    for (int i = 0; i < 16; ++i) ASSERT_TRUE(key_update()) << "free key update " << i;
    const std::string mib(1 << 20, 'x');
    for (int i = 0; i < 8; ++i) {
        ASSERT_TRUE(send(mib)) << "MiB " << i << ": errno " << cut_errno_;
        ASSERT_TRUE(key_update()) << "key update after MiB " << i << ": errno " << cut_errno_;
    }
    ASSERT_TRUE(send("and the end"));
    EXPECT_EQ(received_, 8 * mib.size() + 11) << "every byte sent under the new keys arrives";
    EXPECT_FALSE(key_update()) << "one more, past what 8 MiB pays for, is cut off";
}

}  // namespace
