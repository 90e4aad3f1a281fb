package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// dnsTrap is a DNS server that answers nothing and remembers every name it
// was asked for. The load run points the system resolver at it (make
// load: a network namespace with only loopback, its resolv.conf naming
// the trap), so any lookup the stack makes shows up as a name here: the
// stack must send nothing beyond loopback, and a name like the Compose
// service "egress" means it tried.
type dnsTrap struct {
	udp *net.UDPConn
	tcp net.Listener

	mu    sync.Mutex
	names []string
}

// startDNSTrap listens on addr (UDP and TCP), e.g. 127.0.0.1:53.
func startDNSTrap(addr string) (*dnsTrap, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil || !ua.IP.IsLoopback() {
		return nil, fmt.Errorf("dns trap: %q is not a loopback address", addr)
	}
	t := &dnsTrap{}
	if t.udp, err = net.ListenUDP("udp", ua); err != nil {
		return nil, fmt.Errorf("dns trap: %w", err)
	}
	if t.tcp, err = net.Listen("tcp", ua.String()); err != nil {
		t.udp.Close()
		return nil, fmt.Errorf("dns trap: %w", err)
	}
	go t.serveUDP()
	go t.serveTCP()
	return t, nil
}

func (t *dnsTrap) serveUDP() {
	buf := make([]byte, 1500)
	for {
		n, from, err := t.udp.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if reply := t.note(buf[:n]); reply != nil {
			_, _ = t.udp.WriteToUDP(reply, from)
		}
	}
}

func (t *dnsTrap) serveTCP() {
	for {
		c, err := t.tcp.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			var l [2]byte
			if _, err := io.ReadFull(c, l[:]); err != nil {
				t.record("(tcp connection without a query)")
				return
			}
			msg := make([]byte, binary.BigEndian.Uint16(l[:]))
			if _, err := io.ReadFull(c, msg); err != nil {
				t.record("(short tcp query)")
				return
			}
			if reply := t.note(msg); reply != nil {
				binary.BigEndian.PutUint16(l[:], uint16(len(reply)))
				_, _ = c.Write(append(l[:], reply...))
			}
		}()
	}
}

// note records the question of a query and returns a REFUSED answer, so
// the asker fails at once rather than waiting.
func (t *dnsTrap) note(msg []byte) []byte {
	name, err := questionName(msg)
	if err != nil {
		t.record("(malformed query)")
		return nil
	}
	t.record(name)
	reply := append([]byte(nil), msg...)
	reply[2] |= 0x80             // QR: a response
	reply[3] = reply[3]&0xf0 | 5 // RCODE REFUSED
	return reply
}

func (t *dnsTrap) record(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.names = append(t.names, name)
}

// Names are the names asked for so far, in order.
func (t *dnsTrap) Names() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.names...)
}

// Err is nil when nobody asked; else it names what was asked.
func (t *dnsTrap) Err() error {
	if n := t.Names(); len(n) > 0 {
		return fmt.Errorf("the stack looked up %d name(s) beyond loopback: %s", len(n), strings.Join(n, ", "))
	}
	return nil
}

// Close stops listening.
func (t *dnsTrap) Close() {
	t.udp.Close()
	t.tcp.Close()
}

// questionName reads the first question's name of a DNS message.
func questionName(msg []byte) (string, error) {
	if len(msg) < 12 || binary.BigEndian.Uint16(msg[4:6]) == 0 {
		return "", errors.New("no question")
	}
	var labels []string
	for i := 12; i < len(msg); {
		n := int(msg[i])
		if n == 0 {
			return strings.Join(labels, ".") + ".", nil
		}
		if n&0xc0 != 0 || i+1+n > len(msg) {
			return "", errors.New("bad label")
		}
		labels = append(labels, string(msg[i+1:i+1+n]))
		i += 1 + n
	}
	return "", errors.New("unterminated name")
}
