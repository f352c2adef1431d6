// pyclients study: the numbers service in C++ (gRPC sync API), so that the Python
// clients, not the server, are what the study measures.
//
//   numbers_server --host 127.0.0.1 --port 50051
//
// Prints READY once serving; exits 0 on SIGTERM or SIGINT after a graceful shutdown.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "numbers.grpc.pb.h"

namespace {

class NumbersService final : public numbers::Numbers::Service {
  grpc::Status SayHello(grpc::ServerContext* /*context*/, const numbers::HelloRequest* request,
                        numbers::HelloReply* reply) override {
    reply->set_message("Hello, " + request->name());
    return grpc::Status::OK;
  }

  grpc::Status StreamNumbers(grpc::ServerContext* context, const numbers::StreamRequest* request,
                             grpc::ServerWriter<numbers::NumberReply>* writer) override {
    if (request->count() < 0) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "count must not be negative"};
    }
    numbers::NumberReply reply;
    for (int32_t number = 1; number <= request->count(); ++number) {
      reply.set_number(number);
      if (!writer->Write(reply)) {
        return {grpc::StatusCode::CANCELLED, "client went away"};
      }
    }
    (void)context;
    return grpc::Status::OK;
  }
};

void usage(const char* argv0) {
  std::cerr << "usage: " << argv0 << " --host HOST --port PORT\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string host;
  std::string port;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--host") {
      host = argv[i + 1];
    } else if (key == "--port") {
      port = argv[i + 1];
    } else {
      usage(argv[0]);
    }
  }
  if (host.empty() || port.empty() || argc % 2 == 0) {
    usage(argv[0]);
  }

  // Block the stop signals before gRPC starts its threads, so that only sigwait below
  // sees them and the shutdown runs on an ordinary thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  NumbersService service;
  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(host + ":" + port, grpc::InsecureServerCredentials(), &selected_port);
  // A leftover server on the same port must make this one fail, not share the load.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server(builder.BuildAndStart());
  if (!server || selected_port == 0) {
    std::cerr << "cannot listen on " << host << ":" << port << "\n";
    return 1;
  }

  std::thread stopper([&server, &stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  std::cout << "READY" << std::endl;
  server->Wait();
  stopper.join();
  return 0;
}
