package confine

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// filterVM runs a seccomp program in user space. The VM loads words big
// endian, so seccompData writes each 32-bit word of struct seccomp_data
// that way; the kernel loads them natively.
func filterVM(t *testing.T, prog []byte) *bpf.VM {
	t.Helper()
	raw := make([]bpf.RawInstruction, len(prog)/8)
	for i := range raw {
		b := prog[i*8:]
		raw[i] = bpf.RawInstruction{Op: binary.NativeEndian.Uint16(b), Jt: b[2], Jf: b[3], K: binary.NativeEndian.Uint32(b[4:])}
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter has instructions the test VM does not know")
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatalf("loading the filter: %v", err)
	}
	return vm
}

// seccompData is struct seccomp_data {nr, arch, ip, args[6]} of a little
// endian machine, with args[0] set.
func seccompData(nr, arch uint32, arg0 uint64) []byte {
	d := make([]byte, 64)
	binary.BigEndian.PutUint32(d[0:], nr)
	binary.BigEndian.PutUint32(d[4:], arch)
	binary.BigEndian.PutUint32(d[16:], uint32(arg0))
	binary.BigEndian.PutUint32(d[20:], uint32(arg0>>32))
	return d
}

// The tree filter BuildFilter installs must decide every syscall as the
// plain list of the same rules does.
func TestFilterTreeMatchesList(t *testing.T) {
	arch, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		t.Skipf("no audit architecture for %s in this test", runtime.GOARCH)
	}
	list, err := buildFilter(false)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := BuildFilter()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(list, tree) {
		t.Skip("this libseccomp builds no tree (needs 2.5): BuildFilter installs the list")
	}
	listVM, treeVM := filterVM(t, list), filterVM(t, tree)
	verdict := func(vm *bpf.VM, nr, arch uint32, arg0 uint64) int {
		v, err := vm.Run(seccompData(nr, arch, arg0))
		if err != nil {
			t.Fatalf("running the filter: %v", err)
		}
		return v
	}

	const sigchld = uint64(unix.SIGCHLD)
	args := []uint64{0, 1, 2, 0xffff_ffff, 1 << 32, 0xffff_ffff_0000_0000, ^uint64(0),
		sigchld, unix.CLONE_VM | unix.CLONE_VFORK | sigchld,
		unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD | unix.CLONE_SYSVSEM}
	for _, f := range namespaceFlags {
		args = append(args, f, f|sigchld, f<<32, ^f)
	}
	// x32 syscall numbers on x86-64 carry bit 30.
	for _, a := range []uint32{arch, unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64, 0} {
		for _, base := range []uint32{0, 0x4000_0000} {
			for nr := base; nr < base+1024; nr++ {
				for _, a0 := range args {
					if l, tr := verdict(listVM, nr, a, a0), verdict(treeVM, nr, a, a0); l != tr {
						t.Fatalf("syscall %#x (arch %#x, arg0 %#x): list says %#x, tree %#x", nr, a, a0, l, tr)
					}
				}
			}
		}
	}

	// And the verdicts are the intended ones.
	const sigchld64 = uint64(unix.SIGCHLD)
	errno := func(e unix.Errno) int { return unix.SECCOMP_RET_ERRNO | int(e) }
	for _, c := range []struct {
		name string
		nr   uint32
		arch uint32
		arg0 uint64
		want int
	}{
		{"getpid", unix.SYS_GETPID, arch, 0, unix.SECCOMP_RET_ALLOW},
		{"socket", unix.SYS_SOCKET, arch, unix.AF_INET, errno(unix.EACCES)},
		{"setsid", unix.SYS_SETSID, arch, 0, errno(unix.EPERM)},
		{"getpgid(0)", unix.SYS_GETPGID, arch, 0, unix.SECCOMP_RET_ALLOW},
		{"getpgid(1)", unix.SYS_GETPGID, arch, 1, errno(unix.ESRCH)},
		{"clone(SIGCHLD)", unix.SYS_CLONE, arch, sigchld64, unix.SECCOMP_RET_ALLOW},
		{"clone(CLONE_NEWUSER)", unix.SYS_CLONE, arch, unix.CLONE_NEWUSER | sigchld64, errno(unix.EPERM)},
		{"clone3", unix.SYS_CLONE3, arch, 0, errno(unix.ENOSYS)},
		{"another architecture", unix.SYS_GETPID, unix.AUDIT_ARCH_I386, 0, unix.SECCOMP_RET_KILL_PROCESS},
	} {
		if got := verdict(treeVM, c.nr, c.arch, c.arg0); got != c.want {
			t.Errorf("%s: verdict %#x, want %#x", c.name, got, c.want)
		}
	}
}
