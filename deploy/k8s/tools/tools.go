// Command avk8s-tools is the one program of the test cluster's own image
// (no registry is reached): as "pause" it holds a pod's namespaces open
// until told to stop (the CRI sandbox image); "serve PORT..." accepts TCP
// connections on each port; "dial HOST:PORT" exits 0 when a connection
// opens within two seconds, 1 when it does not (the isolation probes).
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == "pause" || len(args) == 0 {
		wait()
		return
	}
	switch args[0] {
	case "serve":
		for _, p := range args[1:] {
			l, err := net.Listen("tcp", ":"+p)
			if err != nil {
				fmt.Fprintln(os.Stderr, "serve:", err)
				os.Exit(1)
			}
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		wait()
	case "dial":
		if len(args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: dial HOST:PORT")
			os.Exit(2)
		}
		c, err := net.DialTimeout("tcp", args[1], 2*time.Second)
		if err != nil {
			fmt.Println("refused:", err)
			os.Exit(1)
		}
		c.Close()
		fmt.Println("connected")
	default:
		fmt.Fprintln(os.Stderr, "usage: pause | serve PORT... | dial HOST:PORT")
		os.Exit(2)
	}
}

func wait() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
