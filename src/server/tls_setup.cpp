#include "server/tls_setup.hpp"

namespace kiln::server {

bool tls_configured(const ServerOptions& o) {
    return !o.tls_cert.empty() || !o.tls_certificates.empty() || o.tls_self_signed;
}

std::unique_ptr<net::TlsContext> make_tls_context(const ServerOptions& o, std::string* error) {
    std::vector<net::TlsCertificate> certs;
    if (!o.tls_cert.empty()) certs.push_back({o.tls_cert, o.tls_key, {}});
    for (const std::string& f : o.tls_certificates) certs.push_back({f, {}, {}});
    if (o.tls_self_signed) {
        if (o.tls_generated_pem.empty()) {
            *error = "tls.self_signed: no certificate was made for this node";
            return nullptr;
        }
        certs.push_back({{}, {}, o.tls_generated_pem});
    }
    std::string why;
    auto ctx = net::TlsContext::create(certs, o.http2, &why);
    if (!ctx) *error = "tls: " + why;
    return ctx;
}

}  // namespace kiln::server
