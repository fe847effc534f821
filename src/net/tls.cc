// TLS contexts and sessions (see tls.h), set up as Redis's tls.c does.
#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <strings.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace peregrine {
namespace {

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

int PasswordCallback(char* buf, int size, int, void* user) {
  const auto* pass = static_cast<const std::string*>(user);
  if (pass == nullptr || pass->empty()) return 0;
  const int n = std::min(size - 1, static_cast<int>(pass->size()));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  buf[n] = '\0';
  return n;
}

// tls-protocols: which of TLSv1 ... TLSv1.3 to allow (Redis's
// parseProtocolsConfig); -1 on a bad name.
int ProtocolOptions(const std::string& protocols) {
  if (protocols.empty()) return SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;  // TLSv1.2 and TLSv1.3
  int allowed = 0;  // bits: 1 TLSv1, 2 TLSv1.1, 4 TLSv1.2, 8 TLSv1.3
  std::istringstream in(protocols);
  std::string p;
  while (in >> p) {
    if (strcasecmp(p.c_str(), "tlsv1") == 0) allowed |= 1;
    else if (strcasecmp(p.c_str(), "tlsv1.1") == 0) allowed |= 2;
    else if (strcasecmp(p.c_str(), "tlsv1.2") == 0) allowed |= 4;
    else if (strcasecmp(p.c_str(), "tlsv1.3") == 0) allowed |= 8;
    else return -1;
  }
  int options = 0;
  if (!(allowed & 1)) options |= SSL_OP_NO_TLSv1;
  if (!(allowed & 2)) options |= SSL_OP_NO_TLSv1_1;
  if (!(allowed & 4)) options |= SSL_OP_NO_TLSv1_2;
  if (!(allowed & 8)) options |= SSL_OP_NO_TLSv1_3;
  return options;
}

// tls-ciphers (TLS 1.2 and below) and tls-ciphersuites (TLS 1.3), when set.
bool SetCiphers(SSL_CTX* ctx, const TlsSettings& s, std::string* err) {
  if (!s.ciphers.empty() && !SSL_CTX_set_cipher_list(ctx, s.ciphers.c_str())) {
    *err = "Failed to configure ciphers: " + s.ciphers;
    return false;
  }
  if (!s.ciphersuites.empty() && !SSL_CTX_set_ciphersuites(ctx, s.ciphersuites.c_str())) {
    *err = "Failed to configure ciphersuites: " + s.ciphersuites;
    return false;
  }
  return true;
}

}  // namespace

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

std::unique_ptr<TlsContext> TlsContext::Create(const TlsSettings& s, std::string* err, bool client) {
  if (client) return CreateClient(s, err);
  if (s.cert_file.empty()) {
    *err = "No tls-cert-file configured!";
    return nullptr;
  }
  if (s.key_file.empty()) {
    *err = "No tls-key-file configured!";
    return nullptr;
  }
  const int protocols = ProtocolOptions(s.protocols);
  if (protocols < 0) {
    *err = "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.";
    return nullptr;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    *err = "Failed to create TLS context: " + OpenSslError();
    return nullptr;
  }
  std::unique_ptr<TlsContext> out(new TlsContext(ctx));
  // (OpenSSL 3 refuses client renegotiation unless allowed.)
  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | static_cast<uint64_t>(protocols));
  if (s.prefer_server_ciphers) SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (s.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, s.session_cache_size);
    SSL_CTX_set_timeout(ctx, s.session_cache_timeout);
    static const unsigned char kSessionId[] = "peregrine";
    SSL_CTX_set_session_id_context(ctx, kSessionId, sizeof(kSessionId) - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  switch (s.auth_clients) {
    case TlsSettings::AuthClients::kYes:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
    case TlsSettings::AuthClients::kOptional:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case TlsSettings::AuthClients::kNo:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
  }
  SSL_CTX_set_default_passwd_cb(ctx, PasswordCallback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&s.key_file_pass));
  if (SSL_CTX_use_certificate_chain_file(ctx, s.cert_file.c_str()) <= 0) {
    *err = "Failed to load certificate: " + s.cert_file + ": " + OpenSslError();
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, s.key_file.c_str(), SSL_FILETYPE_PEM) <= 0) {
    *err = "Failed to load private key: " + s.key_file + ": " + OpenSslError();
    return nullptr;
  }
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);  // (the settings may not outlive the context)
  if ((!s.ca_cert_file.empty() || !s.ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(ctx, s.ca_cert_file.empty() ? nullptr : s.ca_cert_file.c_str(),
                                    s.ca_cert_dir.empty() ? nullptr : s.ca_cert_dir.c_str()) <= 0) {
    *err = "Failed to configure CA certificate(s) file/directory: " + OpenSslError();
    return nullptr;
  }
  if (s.ca_cert_file.empty() && s.ca_cert_dir.empty() && s.auth_clients != TlsSettings::AuthClients::kNo) {
    *err = "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or "
           "tls-auth-clients are enabled!";
    return nullptr;
  }
  if (!s.dh_params_file.empty()) {
    // OpenSSL 3 picks DH parameters itself; a file given is still checked.
    FILE* f = std::fopen(s.dh_params_file.c_str(), "r");
    if (f == nullptr) {
      *err = "Failed to load " + s.dh_params_file + ": " + std::strerror(errno);
      return nullptr;
    }
    std::fclose(f);
  }
  SSL_CTX_set_dh_auto(ctx, 1);
  if (!SetCiphers(ctx, s, err)) return nullptr;
  return out;
}

std::unique_ptr<TlsContext> TlsContext::CreateClient(const TlsSettings& s, std::string* err) {
  const int protocols = ProtocolOptions(s.protocols);
  if (protocols < 0) {
    *err = "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.";
    return nullptr;
  }
  if (s.ca_cert_file.empty() && s.ca_cert_dir.empty()) {
    *err = "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or "
           "tls-auth-clients are enabled!";
    return nullptr;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    *err = "Failed to create TLS context: " + OpenSslError();
    return nullptr;
  }
  std::unique_ptr<TlsContext> out(new TlsContext(ctx));
  SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | static_cast<uint64_t>(protocols));
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(ctx, s.ca_cert_file.empty() ? nullptr : s.ca_cert_file.c_str(),
                                    s.ca_cert_dir.empty() ? nullptr : s.ca_cert_dir.c_str()) <= 0) {
    *err = "Failed to configure CA certificate(s) file/directory: " + OpenSslError();
    return nullptr;
  }
  // This server's certificate, for a primary that asks for one.
  if (!s.cert_file.empty()) {
    SSL_CTX_set_default_passwd_cb(ctx, PasswordCallback);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, const_cast<std::string*>(&s.key_file_pass));
    const bool ok = SSL_CTX_use_certificate_chain_file(ctx, s.cert_file.c_str()) > 0 &&
                    SSL_CTX_use_PrivateKey_file(ctx, s.key_file.c_str(), SSL_FILETYPE_PEM) > 0;
    SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
    if (!ok) {
      *err = "Failed to load certificate or private key: " + OpenSslError();
      return nullptr;
    }
  }
  if (!SetCiphers(ctx, s, err)) return nullptr;
  return out;
}

TlsSession::TlsSession(TlsContext& ctx, int fd, bool client) : ssl_(SSL_new(ctx.get())) {
  if (ssl_ != nullptr) {
    SSL_set_fd(ssl_, fd);
    if (client)
      SSL_set_connect_state(ssl_);
    else
      SSL_set_accept_state(ssl_);
  }
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

ssize_t TlsSession::Result(int ret) {
  wants_write_ = false;
  if (ret > 0) return ret;
  const int e = SSL_get_error(ssl_, ret);
  switch (e) {
    case SSL_ERROR_WANT_READ:
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:
      wants_write_ = true;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;  // the peer's close_notify
    case SSL_ERROR_SYSCALL:
      if (errno == 0 || ERR_peek_error() == 0) {
        // The peer closed without close_notify (or a socket error).
        if (errno == 0) return 0;
        error_ = std::strerror(errno);
        return -1;
      }
      [[fallthrough]];
    default:
      error_ = OpenSslError();
      errno = EPROTO;
      return -1;
  }
}

ssize_t TlsSession::Read(char* buf, size_t n) {
  if (ssl_ == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  ERR_clear_error();
  errno = 0;
  return Result(SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, 1 << 30))));
}

ssize_t TlsSession::Write(const char* buf, size_t n) {
  if (ssl_ == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  ERR_clear_error();
  errno = 0;
  const ssize_t r = Result(SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(n, 1 << 30))));
  if (r == 0) {  // (SSL_write never returns 0 on success)
    errno = EPIPE;
    return -1;
  }
  return r;
}

bool TlsSession::HasPending() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }

}  // namespace peregrine
