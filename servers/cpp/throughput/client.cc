// throughput study (seed 002): grpc++ client reading one server stream to its end.
//
// Warm-up with a short stream on the same channel, then --calls timed calls one after
// another, each for the whole payload; every message is dropped after its bytes are counted
// (and the first call's hashed in test mode). client.json has the throughput over all of
// them (their bytes over their seconds) and each call's seconds. A wrong byte count in any
// call, a failed call or the deadline fails with exit code 1.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <vector>

#include "common.h"
#include "data.grpc.pb.h"

namespace {

struct Received {
  int64_t bytes = 0;
  int64_t messages = 0;
  grpc::Status status;
};

Received stream(throughput::DataService::Stub& stub, uint64_t limit,
                std::chrono::system_clock::time_point deadline, perflab::Sha256* sum) {
  grpc::ClientContext context;
  context.set_deadline(deadline);
  throughput::DataRequest request;
  request.set_limit_bytes(limit);
  auto reader = stub.GiveMeData(&context, request);
  throughput::DataResponse response;
  Received got;
  while (reader->Read(&response)) {
    got.bytes += static_cast<int64_t>(response.data().size());
    got.messages++;
    if (sum) sum->update(response.data().data(), response.data().size());
  }
  got.status = reader->Finish();
  return got;
}

std::shared_ptr<grpc::ChannelCredentials> credentials(const std::string& security,
                                                      const std::string& dir) {
  if (security == "none") return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = perflab::read_file(dir + "/ca.pem");
  if (security == "mtls") {
    options.pem_private_key = perflab::read_file(dir + "/client.key");
    options.pem_cert_chain = perflab::read_file(dir + "/client.pem");
  }
  return grpc::SslCredentials(options);
}

// grpc++ 1.51 has no name for a status code; these are the codes of grpc/status.h, in order.
std::string describe(const grpc::Status& status) {
  static const char* const kNames[] = {
      "OK",       "CANCELLED",         "UNKNOWN",          "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS",   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",     "UNIMPLEMENTED",    "INTERNAL",
      "UNAVAILABLE", "DATA_LOSS",      "UNAUTHENTICATED"};
  int code = status.error_code();
  std::string name = code >= 0 && code <= 16 ? kNames[code] : std::to_string(code);
  return name + ": " + status.error_message();
}

int fail(const std::string& message) {
  std::cerr << message << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto args = perflab::parse_args(argc, argv,
                                  {{"target", ""},
                                   {"out", ""},
                                   {"security", "none"},
                                   {"tls_dir", ""},
                                   {"expect_bytes", "0"},
                                   {"warmup_bytes", "0"},
                                   {"max_receive_bytes", "67108864"},
                                   {"timeout_s", "600"},
                                   {"checksum", "0"},
                                   {"calls", "1"}});
  const int64_t expect = std::stoll(args["expect_bytes"]);
  const int calls = std::stoi(args["calls"]);
  const std::string security = args["security"];
  if (args["target"].empty() || args["out"].empty() || expect <= 0 || calls < 1 ||
      (security != "none" && security != "tls" && security != "mtls")) {
    return fail(
        "usage: throughput_client_cpp --target H:P --out F --expect_bytes N [--calls K>=1] [...]");
  }
  std::shared_ptr<grpc::ChannelCredentials> creds;
  try {
    creds = credentials(security, args["tls_dir"]);
  } catch (const std::exception& error) {
    return fail("cannot set up " + security + ": " + error.what());
  }
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(std::stoi(args["max_receive_bytes"]));
  auto channel = grpc::CreateCustomChannel(args["target"], creds, channel_args);
  auto stub = throughput::DataService::NewStub(channel);
  // One deadline over warm-up and measurement: a bad certificate ends the run, never hangs.
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(std::stod(args["timeout_s"]) * 1000));

  const uint64_t warmup = std::stoull(args["warmup_bytes"]);
  if (warmup > 0) {
    Received got = stream(*stub, warmup, deadline, nullptr);
    if (!got.status.ok()) {
      return fail("warm-up call failed: " + describe(got.status));
    }
  }
  std::unique_ptr<perflab::Sha256> sum;
  if (args["checksum"] == "1") sum = std::make_unique<perflab::Sha256>();
  Received got;
  double seconds = 0;
  std::vector<double> call_seconds;
  for (int call = 1; call <= calls; ++call) {
    auto start = std::chrono::steady_clock::now();
    // Only the first call is hashed: it is the payload; the rest are checked by count.
    Received one = stream(*stub, 0, deadline, call == 1 ? sum.get() : nullptr);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string which = std::to_string(call) + " of " + std::to_string(calls);
    if (!one.status.ok()) {
      return fail("timed call " + which + " failed after " + std::to_string(one.bytes) +
                  " bytes: " + describe(one.status));
    }
    if (one.bytes != expect) {
      return fail("byte count mismatch in timed call " + which + ": received " +
                  std::to_string(one.bytes) + " bytes, expected " + std::to_string(expect));
    }
    got.bytes += one.bytes;
    got.messages += one.messages;
    seconds += took;
    call_seconds.push_back(took);
  }
  std::ofstream out(args["out"]);
  out.precision(12);
  out << "{\n  \"metrics\": [\n"
      << "    {\"metric\": \"throughput\", \"value\": " << got.bytes / double(1ull << 30) / seconds
      << ", \"unit\": \"GiB/s\"},\n"
      << "    {\"metric\": \"stream_seconds\", \"value\": " << seconds << ", \"unit\": \"s\"},\n"
      << "    {\"metric\": \"bytes\", \"value\": " << got.bytes << ", \"unit\": \"B\"},\n"
      << "    {\"metric\": \"messages\", \"value\": " << got.messages
      << ", \"unit\": \"count\"},\n"
      << "    {\"metric\": \"calls\", \"value\": " << calls << ", \"unit\": \"count\"},\n"
      // The warm-up stream's bytes: CPU of the whole process covers it too.
      << "    {\"metric\": \"warmup_bytes\", \"value\": " << warmup
      << ", \"unit\": \"B\"}\n  ],\n"
      << "  \"bytes\": " << got.bytes << ",\n  \"messages\": " << got.messages
      << ",\n  \"seconds\": " << seconds << ",\n  \"security\": \"" << security
      << "\",\n  \"warmup_bytes\": " << warmup << ",\n  \"max_receive_bytes\": "
      << args["max_receive_bytes"] << ",\n  \"calls\": " << calls << ",\n  \"call_seconds\": [";
  for (size_t i = 0; i < call_seconds.size(); ++i) out << (i ? ", " : "") << call_seconds[i];
  out << "]";
  if (sum) out << ",\n  \"sha256\": \"" << sum->hex() << "\"";
  out << "\n}\n";
  return out.good() ? 0 : fail("cannot write " + args["out"]);
}
