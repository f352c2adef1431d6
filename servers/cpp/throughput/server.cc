// throughput study (seed 002): grpc++ server streaming a payload allocated before it serves.
//
// The synchronous API: one call at a time is all this study makes, and its blocking
// Write() keeps exactly one message in flight per stream, as the seed's server did.
#include <grpcpp/grpcpp.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "common.h"
#include "data.grpc.pb.h"

namespace {

// A random block repeated: nothing on the path compresses, and filling gigabytes from a
// generator would take longer than the cell.
constexpr size_t kBlockBytes = 1 << 20;

// The payload's pages are mapped with MAP_POPULATE, so the kernel faults them in at once
// instead of one trap per page as the fill first touches them (the Python and Go servers do
// the same): the same 4 KiB anonymous pages a std::string of this size gets from malloc.
// At 10 GiB that is a few seconds less before READY back to back; on a VM that hands idle
// memory back to its host, the host's own faults after a pause outweigh it.
class Payload {
 public:
  explicit Payload(size_t size) : size_(size) {
    void* pages = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (pages == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + strerror(errno));
    data_ = static_cast<char*>(pages);
    std::mt19937_64 random(std::random_device{}());
    size_t first = std::min(size, kBlockBytes);
    for (size_t i = 0; i + 8 <= first; i += 8) {
      uint64_t word = random();
      std::memcpy(data_ + i, &word, 8);
    }
    for (size_t off = first; off < size; off += first) {
      std::memcpy(data_ + off, data_, std::min(first, size - off));
    }
  }
  ~Payload() { munmap(data_, size_); }
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;

  std::string_view view() const { return {data_, size_}; }

 private:
  char* data_ = nullptr;
  const size_t size_;
};

class DataService final : public throughput::DataService::Service {
 public:
  DataService(std::string_view payload, size_t chunk) : payload_(payload), chunk_(chunk) {}

  grpc::Status GiveMeData(grpc::ServerContext* context, const throughput::DataRequest* request,
                          grpc::ServerWriter<throughput::DataResponse>* writer) override {
    size_t end = payload_.size();
    if (request->limit_bytes() > 0 && request->limit_bytes() < end) end = request->limit_bytes();
    throughput::DataResponse response;
    for (size_t off = 0; off < end; off += chunk_) {
      response.set_data(payload_.data() + off, std::min(chunk_, end - off));
      if (!writer->Write(response)) {
        return context->IsCancelled() ? grpc::Status::CANCELLED
                                      : grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed");
      }
    }
    return grpc::Status::OK;
  }

 private:
  const std::string_view payload_;
  const size_t chunk_;
};

std::shared_ptr<grpc::ServerCredentials> credentials(const std::string& security,
                                                     const std::string& dir) {
  if (security == "none") return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      security == "mtls" ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                         : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back(
      {perflab::read_file(dir + "/server.key"), perflab::read_file(dir + "/server.pem")});
  if (security == "mtls") options.pem_root_certs = perflab::read_file(dir + "/ca.pem");
  return grpc::SslServerCredentials(options);
}

}  // namespace

int main(int argc, char** argv) {
  // Block SIGTERM/SIGINT before anything of grpc++ (even its credentials) starts threads, so only the waiter gets them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto args = perflab::parse_args(argc, argv,
                                  {{"host", ""},
                                   {"port", "0"},
                                   {"size", "0"},
                                   {"chunk_bytes", "0"},
                                   {"security", "none"},
                                   {"tls_dir", ""},
                                   {"checksum", "0"}});
  const size_t size = std::stoull(args["size"]);
  const size_t chunk = std::stoull(args["chunk_bytes"]);
  const std::string security = args["security"];
  if (args["host"].empty() || std::stoi(args["port"]) <= 0 || size == 0 || chunk == 0 ||
      (security != "none" && security != "tls" && security != "mtls")) {
    std::cerr << "usage: throughput_server_cpp --host H --port P --size N --chunk_bytes N "
                 "[--security none|tls|mtls --tls_dir D]\n";
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> creds;
  try {
    creds = credentials(security, args["tls_dir"]);
  } catch (const std::exception& error) {
    std::cerr << "cannot set up " << security << ": " << error.what() << "\n";
    return 1;
  }

  std::unique_ptr<Payload> payload;
  try {
    payload = std::make_unique<Payload>(size);
  } catch (const std::exception& error) {
    std::cerr << "cannot map the payload: " << error.what() << "\n";
    return 1;
  }
  if (args["checksum"] == "1") {
    perflab::Sha256 sum;
    sum.update(payload->view().data(), payload->view().size());
    std::cout << "SHA256 " << sum.hex() << std::endl;
  }
  DataService service(payload->view(), chunk);
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(args["host"] + ":" + args["port"], creds, &bound_port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    std::cerr << "cannot listen on " << args["host"] << ":" << args["port"] << "\n";
    return 1;
  }
  std::thread waiter([&server, &stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    // A short deadline: an in-flight stream of gigabytes is cancelled, not awaited.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  });
  std::cout << "READY" << std::endl;
  server->Wait();
  waiter.join();
  return 0;
}
