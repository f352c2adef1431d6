// hello study: the Go reference server, plain grpc-go as its documentation sets it up.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"

	pb "perflab/servers/go/gen/hellopb"
)

type greeter struct {
	pb.UnimplementedGreeterServer
}

func (greeter) SayHello(_ context.Context, req *pb.HelloRequest) (*pb.HelloReply, error) {
	return &pb.HelloReply{Message: "Hello " + req.GetName()}, nil
}

func main() {
	host := flag.String("host", "", "address to listen on")
	port := flag.Int("port", 0, "port to listen on")
	flag.Parse()
	if *host == "" || *port <= 0 {
		fmt.Fprintln(os.Stderr, "usage: hello_server_go --host H --port P")
		os.Exit(2)
	}

	listener, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot listen:", err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	pb.RegisterGreeterServer(server, greeter{})

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		server.GracefulStop()
	}()

	fmt.Println("READY")
	if err := server.Serve(listener); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
