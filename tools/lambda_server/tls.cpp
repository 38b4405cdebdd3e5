#include "tls.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <ctime>
#include <cstring>
#include <stdexcept>

namespace lambda_server {

namespace {

void add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) throw std::runtime_error("tls: bad certificate extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// Offers h2 when the client does (curl, nghttp2 clients), else HTTP/1.1 (boto3, urllib3).
int select_alpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned inlen, void*) {
  static const unsigned char preferred[] = "\x02h2\x08http/1.1";
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, preferred, sizeof preferred - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

SSL_CTX* make_tls_context(const std::string& ca_path) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (!key || !cert) throw std::runtime_error("tls: cannot make a key");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), static_cast<long>(std::time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 7L * 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  add_ext(cert, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  add_ext(cert, NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert, NID_key_usage, "critical,digitalSignature,keyCertSign");
  add_ext(cert, NID_subject_key_identifier, "hash");
  if (!X509_sign(cert, key, EVP_sha256())) throw std::runtime_error("tls: cannot sign the certificate");

  FILE* f = std::fopen(ca_path.c_str(), "w");
  if (!f) throw std::runtime_error("tls: cannot write " + ca_path);
  PEM_write_X509(f, cert);
  std::fclose(f);

  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_use_certificate(ctx, cert);
  SSL_CTX_use_PrivateKey(ctx, key);
  SSL_CTX_set_alpn_select_cb(ctx, &select_alpn, nullptr);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ctx;
}

}  // namespace lambda_server
