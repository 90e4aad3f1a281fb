// Command descset writes the google.api HTTP annotation protos, as compiled into
// the pinned genproto module, as a FileDescriptorSet for protoc's
// --descriptor_set_in. It exists because the Buf Schema Registry is out of reach:
// the descriptors come from the Go module proxy instead.
package main

import (
	"fmt"
	"os"

	_ "google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: descset OUT.binpb")
		os.Exit(2)
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, path := range []string{"google/api/annotations.proto", "google/api/http.proto"} {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "descset: %s: %v\n", path, err)
			os.Exit(1)
		}
		add(fd)
	}
	out, err := proto.Marshal(set)
	if err != nil {
		fmt.Fprintf(os.Stderr, "descset: marshal: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], out, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "descset: %v\n", err)
		os.Exit(1)
	}
}
