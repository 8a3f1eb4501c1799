#include "net/tls.hpp"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace kiln::net {
namespace {

// TLS 1.2's suites: forward secrecy and AEAD only (Mozilla's "intermediate" list).
// TLS 1.3 keeps OpenSSL's own three.
constexpr const char* kCiphers12 =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
// Key exchange on elliptic curves only, for TLS 1.2 and 1.3 alike. OpenSSL's default
// list also offers the finite-field groups (RFC 7919), and the client picks: one
// ClientHello for ffdhe8192 costs the server about 400 times an X25519 handshake.
constexpr const char* kGroups = "X25519:P-256:P-384";
// ALPN, in wire form: what this server speaks, best first.
struct AlpnList {
    const unsigned char* wire;
    unsigned size;
};
constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr unsigned char kH2Http11[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
constexpr AlpnList kAlpnHttp11{kHttp11, sizeof kHttp11};
constexpr AlpnList kAlpnH2{kH2Http11, sizeof kH2Http11};
constexpr size_t kMaxPendingOutput = 256 * 1024;  // encrypted, not yet sent: then writev waits
constexpr size_t kRecord = 16 * 1024;             // TLS's largest record
// What writev can leave waiting: under the bound, one more seal of up to four records
// with their overheads (about 320 KiB in all). Past this, the peer is cut off.
constexpr size_t kMaxHeldOutput = kMaxPendingOutput + 8 * kRecord;
// A TLS 1.3 peer may ask for new keys (KeyUpdate), and each costs a key derivation
// and, when it asks for ours too, an answer. Nothing in TLS bounds how often: a few
// are free, then one per MiB of plaintext read. A client needs one per 2^24 records
// or so (RFC 8446 5.5); one that asks for more is cut off.
constexpr uint32_t kFreeKeyUpdates = 16;
constexpr uint64_t kPlaintextPerKeyUpdate = 1 << 20;

std::string ssl_error() {
    unsigned long e = ERR_get_error();
    char buf[256];
    if (!e) return "unknown OpenSSL error";
    ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

// The DNS names a certificate is for: its subjectAltName, else its CN.
std::vector<std::string> names_of(X509* cert) {
    std::vector<std::string> out;
    if (auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))) {
        for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
            const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
            if (n->type != GEN_DNS) continue;
            const unsigned char* p = ASN1_STRING_get0_data(n->d.dNSName);
            out.push_back(lower(std::string_view(reinterpret_cast<const char*>(p),
                                                 static_cast<size_t>(ASN1_STRING_length(n->d.dNSName)))));
        }
        GENERAL_NAMES_free(sans);
    }
    if (out.empty()) {
        char cn[256];
        if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
            out.push_back(lower(cn));
    }
    return out;
}

int on_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
            void* arg) {
    const auto* ours = static_cast<const AlpnList*>(arg);
    unsigned char* chosen = nullptr;
    if (SSL_select_next_proto(&chosen, outlen, ours->wire, ours->size, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;  // nothing in common: go on without ALPN
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

SSL_CTX* new_ctx(bool h2, std::string* error) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        *error = ssl_error();
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);  // idle connections give their buffers back
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);  // resumption by tickets, no server-side cache
    SSL_CTX_set_alpn_select_cb(ctx, on_alpn, const_cast<AlpnList*>(h2 ? &kAlpnH2 : &kAlpnHttp11));
    if (SSL_CTX_set_cipher_list(ctx, kCiphers12) != 1 || SSL_CTX_set1_groups_list(ctx, kGroups) != 1) {
        *error = ssl_error();
        SSL_CTX_free(ctx);
        return nullptr;
    }
    return ctx;
}

// Whether the file's text holds `word` (its first 64 KiB: a PEM's header is at the top).
bool file_mentions(const std::string& path, std::string_view word) {
    std::ifstream in(path, std::ios::binary);
    std::string text(64 * 1024, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    return text.find(word) != std::string::npos;
}

// The certificate, its chain and its key, from files or from one PEM in memory.
bool load(SSL_CTX* ctx, const TlsCertificate& c, std::string* error) {
    std::string where = c.pem.empty() ? c.cert_file : std::string("the generated certificate");
    if (c.pem.empty()) {
        if (SSL_CTX_use_certificate_chain_file(ctx, c.cert_file.c_str()) != 1) {
            *error = c.cert_file + ": " + ssl_error();
            return false;
        }
        const std::string& key = c.key_file.empty() ? c.cert_file : c.key_file;
        // An encrypted key would make OpenSSL ask for its passphrase on the terminal,
        // in every worker, with no timeout: no passphrase is given, the start fails.
        SSL_CTX_set_default_passwd_cb(ctx, [](char*, int, int, void*) { return -1; });
        if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
            *error = key + ": " + ssl_error();
            if (file_mentions(key, "ENCRYPTED"))
                *error = key + ": the private key is encrypted, and kiln asks for no passphrase "
                               "(decrypt it: openssl pkey -in KEY -out PLAIN_KEY, readable by the server only)";
            return false;
        }
    } else {
        BIO* bio = BIO_new_mem_buf(c.pem.data(), static_cast<int>(c.pem.size()));
        X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
        EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
        bool ok = cert && key && SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1;
        if (!ok) *error = where + ": " + ssl_error();
        X509_free(cert);
        EVP_PKEY_free(key);
        BIO_free(bio);
        if (!ok) return false;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        *error = where + ": the private key does not belong to the certificate";
        return false;
    }
    return true;
}

}  // namespace

// ------------------------------------------------------------------ TlsContext

std::unique_ptr<TlsContext> TlsContext::create(const std::vector<TlsCertificate>& certificates, bool h2,
                                               std::string* error) {
    if (certificates.empty()) {
        *error = "no certificate";
        return nullptr;
    }
    std::unique_ptr<TlsContext> t(new TlsContext());
    for (const TlsCertificate& c : certificates) {
        Entry e;
        e.ctx = new_ctx(h2, error);
        if (!e.ctx) return nullptr;
        t->entries_.push_back(e);  // freed by ~TlsContext from here, also on failure
        if (!load(e.ctx, c, error)) return nullptr;
        t->entries_.back().names = names_of(SSL_CTX_get0_certificate(e.ctx));
    }
    SSL_CTX_set_tlsext_servername_callback(t->entries_.front().ctx, on_servername);
    SSL_CTX_set_tlsext_servername_arg(t->entries_.front().ctx, t.get());
    return t;
}

TlsContext::~TlsContext() {
    for (Entry& e : entries_) SSL_CTX_free(e.ctx);
}

SSL* TlsContext::new_ssl() const { return SSL_new(entries_.front().ctx); }

namespace {
int context_index() {
    static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}
}  // namespace

void TlsContext::use_ticket_keys(const TicketKeySource* keys, long lifetime_s) {
    tickets_ = keys;
    for (Entry& e : entries_) {
        SSL_CTX_set_ex_data(e.ctx, context_index(), this);
        SSL_CTX_set_tlsext_ticket_key_evp_cb(e.ctx, on_ticket);
        SSL_CTX_set_timeout(e.ctx, lifetime_s);
    }
}

int TlsContext::on_ticket(SSL* ssl, unsigned char* name, unsigned char* iv, EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac,
                          int encrypt) {
    auto* self = static_cast<const TlsContext*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), context_index()));
    if (!self || !self->tickets_) return -1;
    struct Wiped {  // the copy of the keys, whichever way this returns
        TicketKeys keys;
        ~Wiped() { OPENSSL_cleanse(&keys, sizeof keys); }
    } held{self->tickets_->read()};
    const TicketKeys& keys = held.keys;
    const TicketKey* key = &keys.current;
    int found = 1;
    if (encrypt) {
        std::memcpy(name, keys.current.name, sizeof keys.current.name);
        if (RAND_bytes(iv, EVP_MAX_IV_LENGTH) != 1) return -1;
    } else if (std::memcmp(name, keys.current.name, sizeof keys.current.name) == 0) {
        found = 1;
    } else if (std::memcmp(name, keys.previous.name, sizeof keys.previous.name) == 0) {
        key = &keys.previous;
        found = 2;  // opens, and the client gets a ticket under the current key
    } else {
        return 0;  // older than two keys: a full handshake
    }
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string("key", const_cast<unsigned char*>(key->hmac), sizeof key->hmac),
                           OSSL_PARAM_construct_utf8_string("digest", digest, 0), OSSL_PARAM_construct_end()};
    int ok = encrypt ? EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key->aes, iv)
                     : EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key->aes, iv);
    ok = ok && EVP_MAC_CTX_set_params(mac, params);
    return ok ? found : -1;
}

const TlsContext::Entry* TlsContext::match(std::string_view host) const {
    std::string h = lower(host);
    for (const Entry& e : entries_)
        for (const std::string& n : e.names)
            if (n == h) return &e;
    size_t dot = h.find('.');
    if (dot == std::string::npos) return nullptr;
    std::string wildcard = "*" + h.substr(dot);  // one label only, as browsers match
    for (const Entry& e : entries_)
        for (const std::string& n : e.names)
            if (n == wildcard) return &e;
    return nullptr;
}

int TlsContext::on_servername(SSL* ssl, int*, void* arg) {
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (!name) return SSL_TLSEXT_ERR_OK;  // no SNI: the default certificate
    const Entry* e = static_cast<const TlsContext*>(arg)->match(name);
    if (e && e->ctx != SSL_get_SSL_CTX(ssl)) SSL_set_SSL_CTX(ssl, e->ctx);
    return SSL_TLSEXT_ERR_OK;  // an unknown name gets the default one, as nginx does
}

// ------------------------------------------------------------------ self-signed

std::string make_self_signed_pem(std::string* error) {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    std::string pem;
    bool ok = key && cert;
    if (ok) {
        X509_set_version(cert, 2);
        unsigned char serial[16];
        RAND_bytes(serial, sizeof serial);
        serial[0] &= 0x7f;  // positive
        BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
        BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
        BN_free(bn);
        X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
        X509_gmtime_adj(X509_getm_notAfter(cert), 30L * 24 * 3600);
        X509_set_pubkey(cert, key);
        X509_NAME* name = X509_get_subject_name(cert);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("kiln (self-signed)"), -1, -1, 0);
        X509_set_issuer_name(cert, name);
        X509V3_CTX v3;
        X509V3_set_ctx_nodb(&v3);
        X509V3_set_ctx(&v3, cert, cert, nullptr, nullptr, 0);
        for (auto [nid, value] : {std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1"},
                                  std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                                  std::pair{NID_ext_key_usage, "serverAuth"}}) {
            X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
            ok = ok && ext && X509_add_ext(cert, ext, -1) == 1;
            X509_EXTENSION_free(ext);
        }
        ok = ok && X509_sign(cert, key, EVP_sha256()) > 0;
    }
    if (ok) {
        BIO* bio = BIO_new(BIO_s_mem());
        ok = PEM_write_bio_X509(bio, cert) == 1 && PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
        char* data = nullptr;
        long len = BIO_get_mem_data(bio, &data);
        if (ok && len > 0) pem.assign(data, static_cast<size_t>(len));
        BIO_free(bio);
    }
    if (!ok) *error = "making a self-signed certificate: " + ssl_error();
    X509_free(cert);
    EVP_PKEY_free(key);
    return ok ? pem : std::string();
}

// ------------------------------------------------------------------ TlsStream

TlsStream::TlsStream(SSL* ssl) : ssl_(ssl), rbio_(BIO_new(BIO_s_mem())), wbio_(BIO_new(BIO_s_mem())) {
    BIO_set_mem_eof_return(rbio_, -1);  // empty means "more to come", not end of stream
    SSL_set_bio(ssl_, rbio_, wbio_);    // ssl_ owns both now
    SSL_set_accept_state(ssl_);
    SSL_set_msg_callback(ssl_, on_message);
    SSL_set_msg_callback_arg(ssl_, this);
}

void TlsStream::on_message(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
    auto* self = static_cast<TlsStream*>(arg);
    if (!write_p && self->established_ && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
        *static_cast<const unsigned char*>(buf) == SSL3_MT_KEY_UPDATE)
        ++self->key_updates_;
}

bool TlsStream::over_budget() const {
    return key_updates_ > kFreeKeyUpdates + plaintext_in_ / kPlaintextPerKeyUpdate;
}

void TlsStream::trim() {
    constexpr size_t kKeep = 4 * 1024;
    if (out_off_ < out_.size()) return;
    if (out_.capacity() > kKeep) std::string().swap(out_);
    out_off_ = 0;
    if (bio_peak_ <= kKeep || BIO_ctrl_pending(rbio_) != 0 || BIO_ctrl_pending(wbio_) != 0) return;
    BIO* r = BIO_new(BIO_s_mem());
    BIO* w = BIO_new(BIO_s_mem());
    if (!r || !w) {  // keep the ones we have
        BIO_free(r);
        BIO_free(w);
        return;
    }
    BIO_set_mem_eof_return(r, -1);
    SSL_set_bio(ssl_, r, w);  // frees the old pair
    rbio_ = r;
    wbio_ = w;
    bio_peak_ = 0;
}

TlsStream::~TlsStream() { SSL_free(ssl_); }

bool TlsStream::drain_wbio() {
    size_t pending = BIO_ctrl_pending(wbio_);
    if (pending == 0) return false;
    bio_peak_ = std::max(bio_peak_, pending);
    if (out_off_ == out_.size()) {
        out_.clear();
        out_off_ = 0;
    } else if (out_off_ > kRecord && out_off_ > out_.size() / 2) {
        out_.erase(0, out_off_);
        out_off_ = 0;
    }
    size_t old = out_.size();
    out_.resize(old + pending);
    int got = BIO_read(wbio_, out_.data() + old, static_cast<int>(pending));
    out_.resize(old + static_cast<size_t>(got > 0 ? got : 0));
    return true;
}

int TlsStream::flush(int fd) {
    while (out_off_ < out_.size()) {
        ssize_t w = ::write(fd, out_.data() + out_off_, out_.size() - out_off_);
        if (w > 0) {
            out_off_ += static_cast<size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        return -1;
    }
    if (out_.capacity() > 4 * kRecord) std::string().swap(out_);  // an idle connection keeps no large buffer
    else out_.clear();
    out_off_ = 0;
    return 1;
}

std::string_view TlsStream::alpn() const {
    const unsigned char* p = nullptr;
    unsigned len = 0;
    SSL_get0_alpn_selected(ssl_, &p, &len);
    return p ? std::string_view(reinterpret_cast<const char*>(p), len) : std::string_view();
}

ssize_t TlsStream::read(int fd, char* buf, size_t n) {
    for (;;) {
        if (!established_) {
            ERR_clear_error();
            int r = SSL_do_handshake(ssl_);
            if (drain_wbio() && flush(fd) < 0) {
                errno = EPIPE;
                return -1;
            }
            if (r == 1) {
                established_ = true;
            } else if (SSL_get_error(ssl_, r) != SSL_ERROR_WANT_READ) {
                ERR_clear_error();
                errno = EPROTO;  // not TLS, or a handshake we refuse
                return -1;
            }
        }
        if (established_) {
            size_t got = 0;
            bool failed = false;
            while (got < n) {
                size_t k = 0;
                ERR_clear_error();
                if (SSL_read_ex(ssl_, buf + got, n - got, &k) == 1) {
                    got += k;
                    continue;
                }
                int e = SSL_get_error(ssl_, 0);
                if (e == SSL_ERROR_ZERO_RETURN) eof_ = true;  // close_notify
                else if (e != SSL_ERROR_WANT_READ) failed = true;
                break;
            }
            plaintext_in_ += got;
            if (drain_wbio()) flush(fd);  // post-handshake messages (a KeyUpdate's answer)
            // A peer that asks for new keys past its budget, or for answers it does not
            // read, would hold the loop and our memory: cut off, whatever else it sent.
            if (over_budget() || out_.size() - out_off_ > kMaxHeldOutput) {
                ERR_clear_error();
                errno = EPROTO;
                return -1;
            }
            if (got > 0) return static_cast<ssize_t>(got);
            if (failed) {
                ERR_clear_error();
                errno = EPROTO;
                return -1;
            }
            if (eof_) return 0;
        }
        if (eof_) return 0;
        char cipher[kRecord + 512];
        ssize_t k = ::read(fd, cipher, sizeof cipher);
        if (k > 0) {
            BIO_write(rbio_, cipher, static_cast<int>(k));
            bio_peak_ = std::max(bio_peak_, BIO_ctrl_pending(rbio_));
            continue;
        }
        if (k == 0) {
            eof_ = true;  // FIN without close_notify: the framing of HTTP says what was complete
            return 0;
        }
        if (errno == EINTR) continue;
        return -1;  // EAGAIN: the socket is drained, and no record is complete
    }
}

ssize_t TlsStream::writev(int fd, const iovec* iov, int count) {
    if (!established_) {
        errno = EPIPE;
        return -1;
    }
    if (out_.size() - out_off_ >= kMaxPendingOutput) {
        if (flush(fd) < 0) return -1;
        if (out_.size() - out_off_ >= kMaxPendingOutput) {
            errno = EAGAIN;
            return -1;
        }
    }
    // Small pieces (a head, a short body) are gathered into one record; large ones go
    // to OpenSSL as they are (it cuts them into records itself).
    auto refuse = [](int e) -> ssize_t {
        errno = e;
        return -1;
    };
    char scratch[kRecord];
    size_t held = 0, taken = 0;
    auto seal = [&](const char* data, size_t len) {
        size_t done = 0;
        ERR_clear_error();
        if (SSL_write_ex(ssl_, data, len, &done) != 1) return false;  // memory BIOs: all or an error
        drain_wbio();
        return true;
    };
    for (int i = 0; i < count && out_.size() - out_off_ < kMaxPendingOutput; ++i) {
        const char* p = static_cast<const char*>(iov[i].iov_base);
        size_t left = iov[i].iov_len;
        while (left > 0 && out_.size() - out_off_ < kMaxPendingOutput) {
            if (held > 0 || left < kRecord) {
                size_t k = std::min(left, kRecord - held);
                std::memcpy(scratch + held, p, k);
                held += k;
                p += k;
                left -= k;
                taken += k;
                if (held == kRecord) {
                    if (!seal(scratch, held)) return refuse(EPROTO);
                    held = 0;
                }
            } else {
                size_t k = std::min<size_t>(left, 4 * kRecord);
                if (!seal(p, k)) return refuse(EPROTO);
                p += k;
                left -= k;
                taken += k;
            }
        }
    }
    if (held > 0 && !seal(scratch, held)) return refuse(EPROTO);
    if (flush(fd) < 0) return -1;
    if (taken == 0) return refuse(EAGAIN);
    return static_cast<ssize_t>(taken);
}

void TlsStream::shutdown(int fd) {
    if (!established_) return;
    ERR_clear_error();
    SSL_shutdown(ssl_);
    ERR_clear_error();
    drain_wbio();
    flush(fd);
}

}  // namespace kiln::net
