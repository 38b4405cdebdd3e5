#include "token.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace cppless::lease {

std::string to_hex(const unsigned char* data, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = digits[data[i] >> 4];
    out[2 * i + 1] = digits[data[i] & 15];
  }
  return out;
}

std::string hmac_sha256_hex(const std::string& key, const std::string& message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  ::HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
         message.size(), mac, &len);
  return to_hex(mac, len);
}

std::string sha256_hex_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx, chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, digest, &len);
  EVP_MD_CTX_free(ctx);
  return to_hex(digest, len);
}

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (::RAND_bytes(raw.data(), static_cast<int>(bytes)) != 1) throw std::runtime_error("RAND_bytes failed");
  return to_hex(raw.data(), raw.size());
}

bool same_mac(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string lease_token::signed_text() const {
  // '|' cannot occur in ids the resource manager makes; user names are checked on load.
  std::ostringstream s;
  s << "cppless-lease-v1|" << lease << '|' << user << '|' << manager << '|' << expires_ms << '|' << cores << '|'
    << memory_mb << '|' << mode;
  return s.str();
}

std::string lease_token::problem(const std::string& cluster_key, const std::string& for_manager, std::int64_t now_ms) const {
  if (!same_mac(mac, hmac_sha256_hex(cluster_key, signed_text()))) return "token signature is not valid";
  if (manager != for_manager) return "token is for executor manager '" + manager + "', not '" + for_manager + "'";
  if (expires_ms <= now_ms) return "token expired " + std::to_string(now_ms - expires_ms) + " ms ago";
  if (mode != "hot" && mode != "warm") return "token has unknown mode '" + mode + "'";
  return {};
}

nlohmann::json lease_token::to_json() const {
  return {{"lease", lease}, {"user", user}, {"manager", manager}, {"expires_ms", expires_ms},
          {"cores", cores}, {"memory_mb", memory_mb}, {"mode", mode}, {"mac", mac}};
}

lease_token lease_token::from_json(const nlohmann::json& j) {
  lease_token t;
  t.lease = j.at("lease").get<std::string>();
  t.user = j.at("user").get<std::string>();
  t.manager = j.at("manager").get<std::string>();
  t.expires_ms = j.at("expires_ms").get<std::int64_t>();
  t.cores = j.at("cores").get<unsigned>();
  t.memory_mb = j.at("memory_mb").get<unsigned>();
  t.mode = j.at("mode").get<std::string>();
  t.mac = j.at("mac").get<std::string>();
  return t;
}

secrets secrets::load(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot read secrets file " + path);
  if ((st.st_mode & 077) != 0)
    throw std::runtime_error("secrets file " + path + " may be read by other users (chmod 600 it)");
  std::ifstream in(path);
  secrets s;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, secret, extra;
    words >> name >> secret;
    if (name.empty()) continue;
    if (secret.empty() || (words >> extra))
      throw std::runtime_error(path + ":" + std::to_string(number) + ": expected 'NAME SECRET'");
    if (name.find('|') != std::string::npos) throw std::runtime_error(path + ":" + std::to_string(number) + ": '|' in a name");
    if (secret.size() < 16)
      throw std::runtime_error(path + ":" + std::to_string(number) + ": secret shorter than 16 characters");
    if (name == "@managers") s.cluster_key = secret;
    else s.users[name] = secret;
  }
  if (s.cluster_key.empty()) throw std::runtime_error("secrets file " + path + " has no '@managers' line (the cluster key)");
  return s;
}

std::string secret_from_env(const char* variable) {
  if (const char* text = std::getenv(variable); text && *text) return text;
  const std::string file_var = std::string(variable) + "_FILE";
  if (const char* file = std::getenv(file_var.c_str()); file && *file) {
    std::ifstream in(file);
    std::string line;
    if (!in || !std::getline(in, line) || line.empty()) throw std::runtime_error(file_var + ": cannot read a secret from " + file);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    return line;
  }
  return {};
}

}  // namespace cppless::lease
