// TLS on kiln's sockets (OpenSSL 3), buffered in user space: OpenSSL works on
// memory BIOs and the connection moves the bytes itself, so the engine's
// edge-triggered reads and gathered writes keep their shape. The kernel's TLS
// (kTLS) is not used: the kernels kiln is measured on lack its `tls` module.
//
// TlsContext: the certificates of one server (the first is the default; a client's
// SNI picks among them by their DNS names, wildcards included), TLS 1.2 and 1.3
// only, a modern cipher list (forward secrecy, AEAD), ALPN (`h2`, `http/1.1`), no
// renegotiation, session tickets. Read-only once made: every loop of a process
// shares one.
//
// TlsStream: one connection's TLS state. read() drives the handshake and then
// decrypts; writev() encrypts; the encrypted bytes wait in the stream until the
// socket takes them (flush()). A client that sends anything but a TLS ClientHello
// fails the handshake and is closed.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct bio_st BIO;
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_mac_ctx_st EVP_MAC_CTX;

namespace kiln::net {

// Session-ticket keys (AES-256-CBC and HMAC-SHA256, as OpenSSL's own tickets): the
// current one seals, the current and the previous one open.
struct TicketKey {
    unsigned char name[16];
    unsigned char hmac[32];
    unsigned char aes[32];
};
struct TicketKeys {
    TicketKey current;
    TicketKey previous;
};
// Where a context gets them at each handshake (shared by a node's workers).
class TicketKeySource {
public:
    virtual TicketKeys read() const = 0;

protected:
    ~TicketKeySource() = default;
};

struct TlsCertificate {
    std::string cert_file;  // PEM: the certificate, then its chain
    std::string key_file;   // PEM private key; empty: in cert_file, after the chain
    std::string pem;        // or both in memory (a generated self-signed pair)
};

class TlsContext {
public:
    // Loads every certificate; nullptr and *error (naming the file) if one fails.
    // h2: ALPN offers "h2" before "http/1.1".
    static std::unique_ptr<TlsContext> create(const std::vector<TlsCertificate>& certificates, bool h2,
                                              std::string* error);
    ~TlsContext();
    TlsContext(const TlsContext&) = delete;
    TlsContext& operator=(const TlsContext&) = delete;

    SSL* new_ssl() const;
    // Tickets sealed with these keys instead of OpenSSL's per-process ones, valid for
    // `lifetime_s` (a rotation period: a ticket outlives its key by at most one more).
    // REQUIRES: keys outlives the context.
    void use_ticket_keys(const TicketKeySource* keys, long lifetime_s);
    // The DNS names of certificate i (its SAN, else its CN), for the log.
    const std::vector<std::string>& names(size_t i) const { return entries_[i].names; }
    size_t size() const { return entries_.size(); }

private:
    struct Entry {
        SSL_CTX* ctx = nullptr;
        std::vector<std::string> names;  // lower case; "*.example.org" for wildcards
    };
    TlsContext() = default;
    static int on_servername(SSL* ssl, int* alert, void* arg);
    static int on_ticket(SSL* ssl, unsigned char* name, unsigned char* iv, EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac,
                         int encrypt);
    const TicketKeySource* tickets_ = nullptr;
    const Entry* match(std::string_view host) const;
    std::vector<Entry> entries_;
};

// A self-signed certificate for trying HTTPS locally (localhost, 127.0.0.1, ::1;
// EC P-256, valid 30 days), as one PEM: the certificate, then the key.
std::string make_self_signed_pem(std::string* error);

class TlsStream {
public:
    explicit TlsStream(SSL* ssl);  // takes ownership
    ~TlsStream();
    TlsStream(const TlsStream&) = delete;
    TlsStream& operator=(const TlsStream&) = delete;

    // Like read(2) on the plaintext: > 0 bytes; 0 the peer closed; -1 with errno
    // EAGAIN (nothing complete yet, and the socket is drained) or EPROTO (a TLS
    // error: the connection is to be closed). Drives the handshake first.
    ssize_t read(int fd, char* buf, size_t n);
    // Like writev(2): encrypts what it takes (all of it unless much is already
    // waiting), sends what the socket takes; returns the plaintext bytes taken, or -1
    // with errno EAGAIN (nothing taken) or another (an error).
    ssize_t writev(int fd, const iovec* iov, int count);
    // Sends waiting encrypted bytes: 1 all sent, 0 the socket is full, -1 an error.
    int flush(int fd);
    bool has_output() const { return out_off_ < out_.size(); }
    bool established() const { return established_; }
    std::string_view alpn() const;  // the protocol ALPN chose ("h2", "http/1.1"), or ""
    // A close_notify, sent if the socket takes it at once (best effort).
    void shutdown(int fd);
    // Between requests: gives back the memory a large message grew (OpenSSL's memory
    // BIOs never shrink, and out_ keeps its capacity), so an idle connection holds a
    // few KiB, not its largest response's records. With output still to send: nothing.
    void trim();

private:
    bool drain_wbio();  // what OpenSSL wrote, into out_
    // Counts the peer's KeyUpdates (OpenSSL's message callback).
    static void on_message(int write_p, int version, int content_type, const void* buf, size_t len, SSL* ssl,
                           void* arg);
    bool over_budget() const;  // more KeyUpdates than the plaintext read pays for
    SSL* ssl_;
    BIO* rbio_;  // ciphertext in (owned by ssl_)
    BIO* wbio_;  // ciphertext out (owned by ssl_)
    std::string out_;
    size_t out_off_ = 0;
    size_t bio_peak_ = 0;  // the most either BIO held since the last trim()
    uint64_t plaintext_in_ = 0;  // bytes read, once established
    uint32_t key_updates_ = 0;   // KeyUpdate messages the peer sent
    bool established_ = false;
    bool eof_ = false;
};

}  // namespace kiln::net
