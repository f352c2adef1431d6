// throughput study: what the C++ server and client share (argument parsing, files, hashing).
#pragma once

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace perflab {

// "--key value" pairs; a key not in `known` is an error, so a typo never goes unnoticed.
// A repeated key takes its last value.
inline std::map<std::string, std::string> parse_args(int argc, char** argv,
                                                     std::map<std::string, std::string> known) {
  for (int i = 1; i < argc; i += 2) {
    std::string key = argv[i];
    if (key.rfind("--", 0) != 0 || i + 1 >= argc || !known.count(key.substr(2))) {
      std::cerr << "unknown or incomplete option " << key << "\n";
      std::exit(2);
    }
    // The command passes --tls_dir {home}/tls; an empty one from the matrix keeps it.
    if (key == "--tls_dir" && std::string(argv[i + 1]).empty()) continue;
    known[key.substr(2)] = argv[i + 1];
  }
  return known;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Incremental SHA-256 (test mode only), through OpenSSL which grpc++ links anyway.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const char* data, size_t n) { EVP_DigestUpdate(ctx_, data, n); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, digest, &n);
    std::string out;
    char byte[3];
    for (unsigned int i = 0; i < n; ++i) {
      std::snprintf(byte, sizeof byte, "%02x", digest[i]);
      out += byte;
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

}  // namespace perflab
