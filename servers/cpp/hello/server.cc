// hello study: the C++ reference server, grpc++'s callback API.
//
// It is the calibration target: the load generator's ceiling is measured against it, so
// it must be the fastest server we have. The callback API runs handlers on grpc++'s own
// event engine threads without a per-call thread hop, the fastest unary path Debian's
// grpc++ (1.51) offers.
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "hello.grpc.pb.h"

namespace {

class Greeter final : public helloworld::Greeter::CallbackService {
  grpc::ServerUnaryReactor* SayHello(grpc::CallbackServerContext* context,
                                     const helloworld::HelloRequest* request,
                                     helloworld::HelloReply* reply) override {
    reply->set_message("Hello " + request->name());
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

struct Args {
  std::string host;
  int port = 0;
};

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key == "--host") {
      args.host = argv[i + 1];
    } else if (key == "--port") {
      args.port = std::atoi(argv[i + 1]);
    } else {
      std::cerr << "unknown option " << key << "\n";
      std::exit(2);
    }
  }
  if (args.host.empty() || args.port <= 0) {
    std::cerr << "usage: hello_server_cpp --host H --port P\n";
    std::exit(2);
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv);

  // Block SIGTERM/SIGINT before grpc++ starts its threads, so they inherit the mask and
  // only the waiter below receives them: a signal handler may not call Shutdown().
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Greeter service;
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(args.host + ":" + std::to_string(args.port),
                           grpc::InsecureServerCredentials(), &bound_port);
  // A leftover server on the same port must make this one fail, not share the load.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound_port == 0) {
    std::cerr << "cannot listen on " << args.host << ":" << args.port << "\n";
    return 1;
  }

  std::thread waiter([&server, &stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
  std::cout << "READY" << std::endl;
  server->Wait();
  waiter.join();
  return 0;
}
