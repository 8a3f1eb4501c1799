// The server's TLS from its settings: whether any is configured, and the context
// (certificates, SNI) every worker builds for itself from the files, so a reload
// (SIGHUP) reads renewed certificates while the old workers finish their
// connections with the old ones. A self-signed pair is made once per node.
#pragma once
#include <memory>
#include <string>

#include <kiln/server.hpp>

#include "net/tls.hpp"

namespace kiln::server {

bool tls_configured(const ServerOptions& o);
// The certificates of tls.cert/tls.key, tls.certificates and the self-signed pair
// (o.tls_generated_pem); nullptr and *error ("tls.cert: FILE: why") if one fails.
std::unique_ptr<net::TlsContext> make_tls_context(const ServerOptions& o, std::string* error);

}  // namespace kiln::server
