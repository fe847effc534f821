// TLS on client connections (docs/security.md), with OpenSSL from Debian:
// a context per worker thread (certificate, key, CA, protocols, ciphers,
// client-certificate policy: Redis's tls-* directives) and a non-blocking
// session per connection that reads and writes like a socket.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace peregrine {

struct TlsSettings {
  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;
  std::string ca_cert_file;
  std::string ca_cert_dir;
  std::string dh_params_file;
  enum class AuthClients : uint8_t { kNo, kYes, kOptional };
  AuthClients auth_clients = AuthClients::kYes;
  std::string protocols;     // "TLSv1.2 TLSv1.3" (empty: those two)
  std::string ciphers;       // TLS 1.2 and below (OpenSSL's cipher list syntax)
  std::string ciphersuites;  // TLS 1.3
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int session_cache_size = 20480;
  int session_cache_timeout = 300;
  bool operator==(const TlsSettings&) const = default;
};

// One context: built from the settings at start (and again by a worker
// when they change), used by one thread only.
class TlsContext {
 public:
  ~TlsContext();
  // nullptr with *err (Redis's wording where it has one) if the settings
  // cannot make a context (missing certificate, bad protocol name ...).
  // `client`: for connections this server makes (a replica's link to its
  // primary, tls-replication): the peer's certificate is verified against
  // the CA; this server's certificate, when set, is presented.
  static std::unique_ptr<TlsContext> Create(const TlsSettings& s, std::string* err, bool client = false);
  SSL_CTX* get() const { return ctx_; }

 private:
  explicit TlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  static std::unique_ptr<TlsContext> CreateClient(const TlsSettings& s, std::string* err);
  SSL_CTX* ctx_;
};

// A server-side session over a non-blocking socket. Read and Write return
// what read(2) and write(2) would: bytes, 0 at the peer's end (Read), or -1
// with errno EAGAIN (the handshake or a record needs more I/O: see
// wants_write) or another errno on failure (the connection is to be
// closed).
class TlsSession {
 public:
  // (`client`: this side connected; the handshake is the client's.)
  TlsSession(TlsContext& ctx, int fd, bool client = false);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  ssize_t Read(char* buf, size_t n);
  ssize_t Write(const char* buf, size_t n);
  // Decrypted bytes already read from the socket but not yet returned:
  // epoll will not tell about them, the caller reads again.
  bool HasPending() const;
  // The last Read or Write stopped because the socket must become
  // writable first (a handshake or renegotiation message to send).
  bool wants_write() const { return wants_write_; }
  // The last failure, for the log.
  const std::string& error() const { return error_; }

 private:
  ssize_t Result(int ret);
  SSL* ssl_;
  bool wants_write_ = false;
  std::string error_;
};

}  // namespace peregrine
